package clickhouse

import (
	"strconv"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Row types, one per table. Amounts are domain.Decimal units (1e-8).

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

// bucketRow is one pair's aggregate of one 15-minute slot, field for field
// the in-memory Ledger's bucket (projections/pnl.go).
type bucketRow struct {
	bucketKey
	Trades, Buys, Sells, Wins, Losses, Evens, UBuys, USells, UWins, ULosses int64
	Pnl, Profit, Loss, Fees, CpWins, CpLosses, BuyValue, SellValue, Volume  int64
	Unmatched, Invested, Hero, HeroT, Fuck, FuckT, FirstT, LastT            int64
	Position                                                                uint64
}

// bucketFill is what one fill adds to a bucket.
type bucketFill struct {
	t                                         int64
	sell, closing, first                      bool
	value, net, fee, pnl, unmatched, invested int64
}

// add is the Ledger's bucket.add.
func (b *bucketRow) add(fx *bucketFill) {
	if b.Trades == 0 || fx.t < b.FirstT {
		b.FirstT = fx.t
	}
	if fx.t > b.LastT {
		b.LastT = fx.t
	}
	b.Trades++
	b.Volume += fx.value
	b.Fees += fx.fee
	if fx.sell {
		b.Sells++
		b.SellValue += fx.net
		b.Unmatched += fx.unmatched
		if fx.first {
			b.USells++
		}
	} else {
		b.Buys++
		b.BuyValue += fx.net
		if fx.first {
			b.UBuys++
		}
	}
	if !fx.closing {
		return
	}
	closes := b.Wins + b.Losses + b.Evens
	b.Pnl += fx.pnl
	b.Invested += fx.invested
	switch {
	case fx.pnl > 0:
		b.Wins++
		b.Profit += fx.pnl
		b.CpWins += fx.net
	case fx.pnl < 0:
		b.Losses++
		b.Loss += fx.pnl
		b.CpLosses += fx.net
	default:
		b.Evens++
	}
	if closes == 0 || fx.pnl > b.Hero || (fx.pnl == b.Hero && fx.t < b.HeroT) {
		b.Hero, b.HeroT = fx.pnl, fx.t
	}
	if closes == 0 || fx.pnl < b.Fuck || (fx.pnl == b.Fuck && fx.t < b.FuckT) {
		b.Fuck, b.FuckT = fx.pnl, fx.t
	}
}

// unique moves a sell order's unique win/loss count from sign from to
// sign to (2: not counted), as the Ledger's bucket.unique.
func (b *bucketRow) unique(from, to int8) {
	switch from {
	case 1:
		b.UWins--
	case -1:
		b.ULosses--
	}
	switch to {
	case 1:
		b.UWins++
	case -1:
		b.ULosses++
	}
}

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
	orderPnl   map[orderPnlKey]orderPnlRow
	pairs      map[pairKey]pairRow
	strategies map[pairKey]strategyRow
	prices     map[priceKey]priceRow
	snapshots  []snapshotRow
	balances   []balanceRow
}

func newBatch() *batch {
	return &batch{
		orders: make(map[int64]orderRow), daily: make(map[dailyKey]dailyRow), buckets: make(map[bucketKey]bucketRow),
		orderPnl: make(map[orderPnlKey]orderPnlRow), pairs: make(map[pairKey]pairRow),
		strategies: make(map[pairKey]strategyRow), prices: make(map[priceKey]priceRow),
	}
}

// rows is the number of rows to write.
func (b *batch) rows() int {
	return len(b.orders) + len(b.fills) + len(b.daily) + len(b.buckets) + len(b.orderPnl) + len(b.pairs) +
		len(b.strategies) + len(b.prices) + len(b.snapshots) + len(b.balances)
}

func (b *batch) reset() {
	clear(b.orders)
	clear(b.daily)
	clear(b.buckets)
	clear(b.orderPnl)
	clear(b.pairs)
	clear(b.strategies)
	clear(b.prices)
	b.fills = b.fills[:0]
	b.snapshots = b.snapshots[:0]
	b.balances = b.balances[:0]
}

// dayOf returns the UTC day number of a time in ms.
func dayOf(ms int64) int64 { return floorDiv(ms, 86_400_000) }

// dayDate is the time ClickHouse's Date column takes for a day number.
func dayDate(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

// slotOf returns the 15-minute slot of a time in ms (as the in-memory
// PNL buckets and price points use).
func slotOf(ms int64) int64 { return floorDiv(ms, bucketMs) }

const bucketMs = 900_000

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// orderIDOf parses the id of an order stream ("order-42" → 42).
func orderIDOf(stream string) (int64, bool) {
	rest, ok := strings.CutPrefix(stream, "order-")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

func decUnits(d domain.Decimal) int64 { return d.Units() }
