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

type balanceRow struct {
	Exchange, Asset    string
	TimeMs             int64
	Available, OnOrder int64
	Position           uint64
}

type assetValueRow struct {
	Exchange, Base string
	TimeMs, Amount int64
	Position       uint64
}

// batch holds the rows waiting for the next flush. Rows that replace one
// another (an order's states, a day's aggregate) are kept once, the latest.
type batch struct {
	orders      map[int64]orderRow
	fills       []fillRow
	daily       map[dailyKey]dailyRow
	balances    []balanceRow
	assetValues []assetValueRow
	last        uint64 // position of the last event applied into the batch
}

func newBatch() *batch {
	return &batch{orders: make(map[int64]orderRow), daily: make(map[dailyKey]dailyRow)}
}

// rows is the number of rows to write.
func (b *batch) rows() int {
	return len(b.orders) + len(b.fills) + len(b.daily) + len(b.balances) + len(b.assetValues)
}

func (b *batch) reset() {
	clear(b.orders)
	clear(b.daily)
	b.fills = b.fills[:0]
	b.balances = b.balances[:0]
	b.assetValues = b.assetValues[:0]
}

// dayOf returns the UTC day number of a time in ms.
func dayOf(ms int64) int64 {
	d := ms / 86400000
	if ms < 0 && ms%86400000 != 0 {
		d--
	}
	return d
}

// dayDate is the time ClickHouse's Date column takes for a day number.
func dayDate(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

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
