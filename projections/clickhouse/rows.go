package clickhouse

import (
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Row types, one per table. Amounts are Decimals, written as the tables
// hold them (wideText: an Int64 count of 10^-12, or exact text).

type orderRow struct {
	OrderID                                 int64
	Exchange, Pair, Side, Kind, Status      string
	Amount, Price, StopPrice, Filled, Value decimal.Decimal
	Fees                                    decimal.Decimal
	Fills                                   uint32
	CreatedMs, UpdatedMs                    int64
	Actor, Reason                           string
	Position                                uint64
}

// fillRow is a fills9 row: Position is its fill's log position (in the
// key), Version the row's (the position the fold had reached: a re-fold
// writes the row again).
type fillRow struct {
	Exchange, Pair               string
	TimeMs, OrderID              int64
	FillID, Side                 string
	Price, Quantity, Value, Fee  decimal.Decimal
	FeeAsset                     string
	Pnl, Cost, Unmatched, UnmVal decimal.Decimal
	Net                          decimal.Decimal
	Closing, First               uint8
	Position, Version            uint64
}

type dailyKey struct {
	Exchange, Pair string
	Day            int64 // days since the epoch (UTC)
}

type dailyRow struct {
	dailyKey
	Trades, Buys, Sells, Wins, Losses uint32
	Volume, Pnl, Fees, UnmVal         decimal.Decimal
	Position                          uint64
}

type pairKey struct{ Exchange, Pair string }

type bucketKey struct {
	pairKey
	Slot int64
}

// bucketRow is one pair's aggregate of one 15-minute slot (or, in
// pnl_overview9, of all time), as the in-memory Ledger's slot: fills are
// added by fold.PnlAgg.Add, the rule both share.
type bucketRow struct {
	bucketKey
	fold.PnlAgg[int64]
	Position uint64
}

// aggCols is the number of an aggregate's columns.
const aggCols = 27

// aggMoney names the aggregate's amounts, in the order of its columns
// (pnl_buckets9's, without _e12): columns 10 to 20, then hero (21) and
// fuckup (23) between the times.
var aggMoney = [13]string{"pnl", "profit", "loss", "fees", "cp_wins", "cp_losses", "buy_value", "sell_value", "volume",
	"unmatched_value", "invested", "hero", "fuckup"}

// money returns the aggregate's amounts in the order of aggMoney.
func money(a *fold.PnlAgg[int64]) [13]*decimal.Decimal {
	return [13]*decimal.Decimal{&a.Pnl, &a.Profit, &a.Loss, &a.Fees, &a.CpWins, &a.CpLosses, &a.BuyValue, &a.SellValue,
		&a.Volume, &a.Unmatched, &a.Invested, &a.Hero, &a.Fuck}
}

// values appends the row's aggregate columns to dst in the order of
// pnl_buckets9 (trades … last_ms), amounts as counts of 10^-12.
func (b *bucketRow) values(dst []i128) []i128 {
	m := money(&b.PnlAgg)
	for _, n := range []int64{b.Trades, b.Buys, b.Sells, b.Wins, b.Losses, b.Evens, b.UBuys, b.USells, b.UWins, b.ULosses} {
		dst = append(dst, i64(n))
	}
	for _, d := range m[:11] {
		dst = append(dst, unitsOf(*d))
	}
	return append(dst, unitsOf(b.Hero), i64(b.HeroT), unitsOf(b.Fuck), i64(b.FuckT), i64(b.FirstT), i64(b.LastT))
}

// cols returns the row's aggregate columns in the order of pnl_buckets9,
// its amounts through w.
func (b *bucketRow) cols(w *wideText) []any {
	m := money(&b.PnlAgg)
	out := make([]any, 0, aggCols)
	for _, n := range []int64{b.Trades, b.Buys, b.Sells, b.Wins, b.Losses, b.Evens, b.UBuys, b.USells, b.UWins, b.ULosses} {
		out = append(out, n)
	}
	for i, d := range m[:11] {
		out = append(out, w.col(aggMoney[i], *d))
	}
	return append(out, w.col("hero", b.Hero), b.HeroT, w.col("fuckup", b.Fuck), b.FuckT, b.FirstT, b.LastT)
}

// Zone shifts of the local-day rows of pnl_overview9: every whole-hour
// offset in use, from -12 h to +14 h (seconds east of UTC).
const (
	minShift   = -12 * 3600
	maxShift   = 14 * 3600
	shiftStep  = 3600
	numShifts  = (maxShift-minShift)/shiftStep + 1
	dayMs      = 86_400_000
	bucketSecs = bucketMs / 1000
)

// Kinds of pnl_overview9 rows, and the blocks its day and hour rows hold.
const (
	kindPair         = 0  // a pair's aggregate over all time and its inventory (v: pairCols)
	kindLocalDay     = 1  // a block of dayBlock local days under one shift (v: dayBlock × dayCols)
	kindHour         = 2  // a block of hourBlock UTC hours (v: hourBlock × dayCols)
	kindStrategy     = 3  // a pair's strategy (s)
	kindFirstHours   = 4  // the first hours of a kindLocalDay block's days (v: dayBlock × dayCols)
	kindLastQuarters = 5  // the last 15, 30 and 45 minutes of a kindLocalDay block's days (v: dayBlock × quarters × dayCols)
	quarters         = 3  // kindLastQuarters' figures per day: its last 1, 2 and 3 quarter-hours
	kindQuarterHours = 6  // a UTC day's quarterBlock buckets (v: quarterBlock × dayCols)
	quarterBlock     = 96 // buckets per kindQuarterHours row
	dayBlock         = 32 // local days per row
	hourBlock        = 24 // UTC hours per row
	dayCols          = 5  // trades, volume, pnl, unmatched value, invested
)

// hourRow is one pair's daily figures of the fills in one UTC hour: the
// day fields of the buckets starting in it. Every zone's local day with a
// whole-hour offset is a run of whole hours, so the local-day rows of
// every shift are sums of these.
type hourRow struct {
	dayAgg
	Position uint64
}

// shiftOf returns the offset (seconds east of UTC) of shift index i.
func shiftOf(i int) int64 { return int64(minShift + i*shiftStep) }

// hourDay returns the local day of UTC hour h under shift index i.
func hourDay(h int64, i int) int64 { return pnlread.FloorDiv(h*3600+shiftOf(i), 86400) }

// blockKey names a pnl_overview9 row of day or hour figures: the pair's
// book, the shift index (hourShift for hour rows) and the block number.
type blockKey struct {
	bk    *book
	shift int8
	block int64
}

const hourShift = -1

// orderPnlRow is an order_pnl9 row: a sell order's realized pnl and the
// trade time of its first closing fill.
type orderPnlRow struct {
	pairKey
	OrderID, FirstCloseMs int64
	Pnl                   decimal.Decimal
	Position              uint64
}

type pairRow struct {
	pairKey
	LotsQty, LotsCost, LastPrice, Balance decimal.Decimal
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
	Price    decimal.Decimal
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
	Available, OnOrder decimal.Decimal
	Position           uint64
}

// batch holds the rows waiting for the next flush. Rows that replace one
// another (an order's states, a day's aggregate, a pair's inventory) are
// kept once, the latest.
type batch struct {
	orders     map[int64]orderRow
	fills      []fillRow
	fillAt     map[uint64]int // fills' index by position: a fill written again replaces its row
	daily      map[dailyKey]dailyRow
	dayBooks   map[dailyKey]*book // the books of the days in daily, whose figures prepare sums
	buckets    map[bucketKey]bucketRow
	books      map[*book]struct{}   // pairs whose pnl_overview9 row changed since the last flush
	hours      map[hourKey]struct{} // hours (of the state's books) that changed since the last flush
	orderPnl   map[int64]orderPnlRow
	pairs      map[pairKey]pairRow
	strategies map[pairKey]strategyRow
	prices     map[priceKey]priceRow
	snapshots  []snapshotRow
	balances   []balanceRow
	ov         []overviewRow // pnl_overview9's rows, made by prepare at the flush
	conv       map[convRowKey]convRow
	convTotals []convTotalRow // made at the flush (state.convTotals)
	fees       []feeRow
	feeAt      map[uint64]int // fees' index by position
	rates      map[fold.CurrencyPair]rateRow
	settings   map[string]settingRow
}

func newBatch() *batch {
	return &batch{
		orders: make(map[int64]orderRow), daily: make(map[dailyKey]dailyRow), buckets: make(map[bucketKey]bucketRow),
		books: make(map[*book]struct{}), hours: make(map[hourKey]struct{}),
		orderPnl: make(map[int64]orderPnlRow), pairs: make(map[pairKey]pairRow),
		strategies: make(map[pairKey]strategyRow), prices: make(map[priceKey]priceRow),
		conv: make(map[convRowKey]convRow), rates: make(map[fold.CurrencyPair]rateRow), settings: make(map[string]settingRow),
		fillAt: make(map[uint64]int), feeAt: make(map[uint64]int), dayBooks: make(map[dailyKey]*book),
	}
}

// fill queues a fill row, replacing the batch's row of the same fill.
func (b *batch) fill(r fillRow) { b.fills = queueFillRow(b.fills, b.fillAt, r.Position, r) }

// fee queues a fill_fees9 row, replacing the batch's row of the same fill.
func (b *batch) fee(r feeRow) { b.fees = queueFillRow(b.fees, b.feeAt, r.position, r) }

// queueFillRow returns rows with r, the row of the fill at log position
// pos, in place of the row of that fill it holds (at holds each fill's
// index in rows), or appended.
func queueFillRow[R any](rows []R, at map[uint64]int, pos uint64, r R) []R {
	if i, ok := at[pos]; ok {
		rows[i] = r
		return rows
	}
	at[pos] = len(rows)
	return append(rows, r)
}

// rows is the number of rows to write (after prepare).
func (b *batch) rows() int { return b.pending() + len(b.ov) + len(b.convTotals) }

// pending is the number of rows that count towards BatchRows: all but
// pnl_overview9's, which are made from the state at the flush (the batch
// holds no copy) and at most one per pair and shift per hour of fills.
func (b *batch) pending() int {
	return len(b.orders) + len(b.fills) + len(b.daily) + len(b.buckets) + len(b.orderPnl) + len(b.pairs) +
		len(b.strategies) + len(b.prices) + len(b.snapshots) + len(b.balances) +
		len(b.conv) + len(b.fees) + len(b.rates) + len(b.settings)
}

func (b *batch) reset() {
	clear(b.orders)
	clear(b.daily)
	clear(b.dayBooks)
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
	clear(b.fillAt)
	clear(b.feeAt)
	b.fees = b.fees[:0]
	b.fills = b.fills[:0]
	b.snapshots = b.snapshots[:0]
	b.balances = b.balances[:0]
	b.ov = b.ov[:0]
	b.convTotals = b.convTotals[:0]
}

// dayOf returns the UTC day number of a time in ms.
func dayOf(ms int64) int64 { return pnlread.FloorDiv(ms, 86_400_000) }

// dayDate is the time ClickHouse's Date column takes for a day number.
func dayDate(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

// slotOf returns the 15-minute slot of a time in ms (as the in-memory
// PNL buckets and price points use).
func slotOf(ms int64) int64 { return pnlread.FloorDiv(ms, bucketMs) }

const bucketMs = 900_000
