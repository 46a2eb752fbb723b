package clickhouse

import (
	"math"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Row types, one per table. Amounts are counts of 10^-12 (decUnits).

type orderRow struct {
	OrderID                                 int64
	Exchange, Pair, Side, Kind, Status      string
	Amount, Price, StopPrice, Filled, Value int64
	Fees                                    int64
	Fills                                   uint32
	CreatedMs, UpdatedMs                    int64
	Actor, Reason                           string
	Position                                uint64
}

type fillRow struct {
	Exchange, Pair               string
	TimeMs, OrderID              int64
	FillID, Side                 string
	Price, Quantity, Value, Fee  int64
	FeeAsset                     string
	Pnl, Cost, Unmatched, UnmVal int64
	Net                          int64
	Closing, First               uint8
	Position                     uint64
}

type dailyKey struct {
	Exchange, Pair string
	Day            int64 // days since the epoch (UTC)
}

type dailyRow struct {
	dailyKey
	Trades, Buys, Sells, Wins, Losses uint32
	Volume, Pnl, Fees, UnmVal         int64
	Position                          uint64
}

type pairKey struct{ Exchange, Pair string }

type bucketKey struct {
	pairKey
	Slot int64
}

// bucketRow is one pair's aggregate of one 15-minute slot (or, in
// pnl_overview5, of all time), as the in-memory Ledger's bucket: fills are
// added by domain.PnlAgg.Add, the rule both share.
type bucketRow struct {
	bucketKey
	domain.PnlAgg[int64]
	Position uint64
}

// aggCols is the number of an aggregate's columns.
const aggCols = 27

// values appends the row's aggregate columns to dst in the order of
// pnl_buckets (trades … last_ms).
func (b *bucketRow) values(dst []int64) []int64 {
	return append(dst, b.Trades, b.Buys, b.Sells, b.Wins, b.Losses, b.Evens, b.UBuys, b.USells, b.UWins, b.ULosses,
		decUnits(b.Pnl), decUnits(b.Profit), decUnits(b.Loss), decUnits(b.Fees), decUnits(b.CpWins), decUnits(b.CpLosses),
		decUnits(b.BuyValue), decUnits(b.SellValue), decUnits(b.Volume), decUnits(b.Unmatched), decUnits(b.Invested),
		decUnits(b.Hero), b.HeroT, decUnits(b.Fuck), b.FuckT, b.FirstT, b.LastT)
}

// cols returns the row's aggregate columns in the order of pnl_buckets.
func (b *bucketRow) cols() []any {
	var v [aggCols]int64
	out := make([]any, aggCols)
	for i, x := range b.values(v[:0]) {
		out[i] = x
	}
	return out
}

// Zone shifts of the local-day rows of pnl_overview5: every whole-hour
// offset in use, from -12 h to +14 h (seconds east of UTC).
const (
	minShift   = -12 * 3600
	maxShift   = 14 * 3600
	shiftStep  = 3600
	numShifts  = (maxShift-minShift)/shiftStep + 1
	dayMs      = 86_400_000
	bucketSecs = bucketMs / 1000
)

// Kinds of pnl_overview5 rows, and the blocks its day and hour rows hold.
const (
	kindPair       = 0  // a pair's aggregate over all time and its inventory (v: pairCols)
	kindLocalDay   = 1  // a block of dayBlock local days under one shift (v: dayBlock × dayCols)
	kindHour       = 2  // a block of hourBlock UTC hours (v: hourBlock × dayCols)
	kindStrategy   = 3  // a pair's strategy (s)
	kindFirstHours = 4  // the first hours of a kindLocalDay block's days (v: dayBlock × dayCols)
	dayBlock       = 32 // local days per row
	hourBlock      = 24 // UTC hours per row
	dayCols        = 5  // trades, volume, pnl, unmatched value, invested
)

// hourRow is one pair's daily figures of the fills in one UTC hour: the
// day fields of the buckets starting in it. Every zone's local day with a
// whole-hour offset is a run of whole hours, so the local-day rows of
// every shift are sums of these.
type hourRow struct {
	Trades                           int64
	Volume, Pnl, Unmatched, Invested int64
	Position                         uint64
}

// add adds a fill's day fields as domain.PnlAgg.Add adds them: every fill
// counts a trade and its value, a sell its unmatched value, a closing
// fill its pnl and the cost of the lots it consumed.
func (d *hourRow) add(f *domain.PnlFill) {
	d.Trades++
	d.Volume = addUnits(d.Volume, decUnits(f.Value))
	if f.Sell {
		d.Unmatched = addUnits(d.Unmatched, decUnits(f.Unmatched))
	}
	if f.Closing {
		d.Pnl = addUnits(d.Pnl, decUnits(f.Pnl))
		d.Invested = addUnits(d.Invested, decUnits(f.Invested))
	}
}

// shiftOf returns the offset (seconds east of UTC) of shift index i.
func shiftOf(i int) int64 { return int64(minShift + i*shiftStep) }

// hourDay returns the local day of UTC hour h under shift index i.
func hourDay(h int64, i int) int64 { return domain.FloorDiv(h*3600+shiftOf(i), 86400) }

// blockKey names a pnl_overview5 row of day or hour figures: the pair's
// book, the shift index (hourShift for hour rows) and the block number.
type blockKey struct {
	bk    *book
	shift int8
	block int64
}

const hourShift = -1

type orderPnlKey struct {
	OrderID, FirstCloseMs int64
}

type orderPnlRow struct {
	pairKey
	orderPnlKey
	Pnl      int64
	Position uint64
}

type pairRow struct {
	pairKey
	LotsQty, LotsCost, LastPrice, Balance int64
	Position                              uint64
}

type strategyRow struct {
	pairKey
	Strategy string
	Position uint64
}

type priceKey struct {
	pairKey
	Slot int64
}

type priceRow struct {
	priceKey
	Price    int64
	Position uint64
}

type snapshotRow struct {
	Exchange string
	Seq      uint64
	TimeMs   int64
	Position uint64
}

type balanceRow struct {
	Exchange           string
	Seq                uint64
	Asset              string
	TimeMs             int64
	Available, OnOrder int64
	Position           uint64
}

// batch holds the rows waiting for the next flush. Rows that replace one
// another (an order's states, a day's aggregate, a pair's inventory) are
// kept once, the latest.
type batch struct {
	orders     map[int64]orderRow
	fills      []fillRow
	daily      map[dailyKey]dailyRow
	buckets    map[bucketKey]bucketRow
	books      map[*book]struct{}   // pairs whose pnl_overview5 row changed since the last flush
	hours      map[hourKey]struct{} // hours (of the state's books) that changed since the last flush
	orderPnl   map[orderPnlKey]orderPnlRow
	pairs      map[pairKey]pairRow
	strategies map[pairKey]strategyRow
	prices     map[priceKey]priceRow
	snapshots  []snapshotRow
	balances   []balanceRow
	ov         []overviewRow // pnl_overview5's rows, made by prepare at the flush
	conv       map[convRowKey]convRow
	fees       []feeRow
	rates      map[domain.CurrencyPair]rateRow
	settings   map[string]settingRow
}

func newBatch() *batch {
	return &batch{
		orders: make(map[int64]orderRow), daily: make(map[dailyKey]dailyRow), buckets: make(map[bucketKey]bucketRow),
		books: make(map[*book]struct{}), hours: make(map[hourKey]struct{}),
		orderPnl: make(map[orderPnlKey]orderPnlRow), pairs: make(map[pairKey]pairRow),
		strategies: make(map[pairKey]strategyRow), prices: make(map[priceKey]priceRow),
		conv: make(map[convRowKey]convRow), rates: make(map[domain.CurrencyPair]rateRow), settings: make(map[string]settingRow),
	}
}

// rows is the number of rows to write (after prepare).
func (b *batch) rows() int { return b.pending() + len(b.ov) }

// pending is the number of rows that count towards BatchRows: all but
// pnl_overview5's, which are made from the state at the flush (the batch
// holds no copy) and at most one per pair and shift per hour of fills.
func (b *batch) pending() int {
	return len(b.orders) + len(b.fills) + len(b.daily) + len(b.buckets) + len(b.orderPnl) + len(b.pairs) +
		len(b.strategies) + len(b.prices) + len(b.snapshots) + len(b.balances) +
		len(b.conv) + len(b.fees) + len(b.rates) + len(b.settings)
}

func (b *batch) reset() {
	clear(b.orders)
	clear(b.daily)
	clear(b.buckets)
	clear(b.books)
	clear(b.hours)
	clear(b.orderPnl)
	clear(b.pairs)
	clear(b.strategies)
	clear(b.prices)
	clear(b.conv)
	clear(b.rates)
	clear(b.settings)
	b.fees = b.fees[:0]
	b.fills = b.fills[:0]
	b.snapshots = b.snapshots[:0]
	b.balances = b.balances[:0]
	b.ov = b.ov[:0]
}

// dayOf returns the UTC day number of a time in ms.
func dayOf(ms int64) int64 { return domain.FloorDiv(ms, 86_400_000) }

// dayDate is the time ClickHouse's Date column takes for a day number.
func dayDate(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

// slotOf returns the 15-minute slot of a time in ms (as the in-memory
// PNL buckets and price points use).
func slotOf(ms int64) int64 { return domain.FloorDiv(ms, bucketMs) }

const bucketMs = 900_000

// decUnits returns d in the units the tables hold: its exact count of
// 10^-12 (domain.Decimal.Coefficient). A value beyond an Int64 column's
// range (about ±9.2×10^6) becomes a bound, which the sink refuses to
// write (tooWide): never a rounded or cut number in the tables.
func decUnits(d domain.Decimal) int64 {
	v, ok := d.Coefficient()
	if !ok {
		if d.IsNeg() {
			return math.MinInt64 + 1
		}
		return math.MaxInt64
	}
	return v
}

// addUnits returns a+b, or decUnits' bound (tooWide) when either is one or
// the sum leaves an Int64: a sum the tables cannot hold stays refused.
func addUnits(a, b int64) int64 {
	s := a + b
	switch {
	case tooWide(a):
		return a
	case tooWide(b):
		return b
	case (a > 0 && b > 0 && s < 0) || s == math.MaxInt64:
		return math.MaxInt64
	case (a < 0 && b < 0 && s >= 0) || s <= math.MinInt64+1:
		return math.MinInt64 + 1
	}
	return s
}

// tooWide reports whether v is decUnits' bound of a value it could not hold.
func tooWide(v int64) bool { return v == math.MaxInt64 || v == math.MinInt64+1 }

// fromUnits returns the Decimal of a count of 10^-12 as the tables hold it.
func fromUnits(units int64) domain.Decimal { return domain.NewDecimal(units, -domain.DecimalPlaces) }

// num is the API number of a count of 10^-12 as the tables hold it.
func num(units int64) domain.Number { return domain.Number(fromUnits(units)) }
