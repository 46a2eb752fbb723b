package clickhouse

import (
	"sort"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// pnl_overview9 holds, in one table, what an overview over all time reads:
// per pair its aggregate and inventory (kindPair), its strategy
// (kindStrategy), and its daily figures in blocks: dayBlock local days
// under each whole-hour shift (kindLocalDay) and the same days' first
// hours (kindFirstHours, for the days when a zone's offset changes by an
// hour) and last quarter-hours (kindLastQuarters, for the zones of 15, 30
// and 45 minutes past the hour), and hourBlock UTC hours (kindHour, for
// other changes) and the same UTC day's buckets (kindQuarterHours, for the
// changes of zones not on whole hours). One query with
// few columns and few rows answers an overview: the cost of a ClickHouse
// read here is mostly per column and part touched, then per row.

// overviewRow is one row of pnl_overview9.
type overviewRow struct {
	kind           uint8
	shift          int32 // kindLocalDay: the shift's offset (seconds east of UTC)
	n              int64 // kindLocalDay, kindHour: the block number
	exchange, pair string
	v              []i128 // counts, times and amounts (counts of 10^-12)
	s              string
	position       uint64
}

// pairCols is the length of a kindPair row's v: the aggregate's columns
// (bucketRow.values) then the inventory (lots quantity and cost, last
// price, position from logged fills).
const pairCols = aggCols + 4

// prepare sums the figures of b's daily rows and makes its pnl_overview9
// rows from the state as it is now (the position being flushed): the pair
// rows of the books changed since the last flush, every day and hour block
// holding a changed hour, and the strategies set.
func (b *batch) prepare() {
	for k, bk := range b.dayBooks {
		d := b.daily[k]
		d.Trades, d.Buys, d.Sells, d.Wins, d.Losses = 0, 0, 0, 0, 0
		d.Volume, d.Pnl, d.Fees, d.UnmVal = decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero
		bk.day(&d)
		b.daily[k] = d
	}
	b.ov = b.ov[:0]
	for bk := range b.books {
		total := bucketRow{PnlAgg: bk.series.Total}
		v := total.values(make([]i128, 0, pairCols))
		v = append(v, unitsOf(bk.fold.Lots().Qty()), unitsOf(bk.fold.Lots().Cost()), unitsOf(bk.fold.LastPrice()), unitsOf(bk.fold.Position()))
		b.ov = append(b.ov, overviewRow{kind: kindPair, exchange: bk.key.Exchange, pair: bk.key.Pair, v: v, position: bk.pos})
	}
	blocks := make(map[blockKey]struct{}, len(b.hours))
	for hk := range b.hours {
		blocks[blockKey{hk.bk, hourShift, pnlread.FloorDiv(hk.hour, hourBlock)}] = struct{}{}
		for i := 0; i < numShifts; i++ {
			blocks[blockKey{hk.bk, int8(i), pnlread.FloorDiv(hourDay(hk.hour, i), dayBlock)}] = struct{}{}
		}
	}
	for k := range blocks {
		b.ov = k.rows(b.ov)
	}
	for _, r := range b.strategies {
		b.ov = append(b.ov, overviewRow{kind: kindStrategy, exchange: r.Exchange, pair: r.Pair, s: r.Strategy, position: r.Position})
	}
}

// rows appends the block's rows to ov: for each hour (or local day) of the
// block its dayCols figures, zero without fills, and for a block of days
// a kindFirstHours row of each day's first hour's figures (a day when a
// zone's offset changes by an hour is a day of one shift less its first
// hour, or plus the next day's) and a kindLastQuarters row of its last
// quarter-hours' (bk.lastQuarters); their position is the latest of the
// block's hours'.
func (k blockKey) rows(ov []overviewRow) []overviewRow {
	hours := k.bk.hours
	r := overviewRow{kind: kindHour, n: k.block, exchange: k.bk.key.Exchange, pair: k.bk.key.Pair}
	add := func(a *dayAgg, h int64) {
		if hr := hours[h]; hr != nil {
			a.merge(&hr.dayAgg)
			r.position = max(r.position, hr.Position)
		}
	}
	if k.shift == hourShift {
		r.v = make([]i128, 0, hourBlock*dayCols)
		for j := int64(0); j < hourBlock; j++ {
			var a dayAgg
			add(&a, k.block*hourBlock+j)
			r.v = a.figures(r.v)
		}
		q := r
		q.kind, q.v = kindQuarterHours, k.bk.quarterHours(make([]i128, 0, quarterBlock*dayCols), k.block*quarterBlock)
		return append(ov, r, q)
	}
	r.kind, r.shift = kindLocalDay, int32(shiftOf(int(k.shift)))
	r.v = make([]i128, 0, dayBlock*dayCols)
	first := make([]i128, 0, dayBlock*dayCols)
	last := make([]i128, 0, dayBlock*quarters*dayCols)
	for j := int64(0); j < dayBlock; j++ {
		h0 := (k.block*dayBlock+j)*24 - int64(r.shift)/3600 // the day's first UTC hour
		var day, fh dayAgg
		for h := h0; h < h0+24; h++ {
			add(&day, h)
		}
		add(&fh, h0)
		r.v, first = day.figures(r.v), fh.figures(first)
		last = k.bk.lastQuarters(last, 4*(h0+24))
	}
	f, l := r, r
	f.kind, f.v = kindFirstHours, first
	l.kind, l.v = kindLastQuarters, last
	return append(ov, r, f, l)
}

// quarterHours appends to dst the dayCols figures of bk's quarterBlock
// slots from slot from (a kindQuarterHours row: the days of a change of a
// zone not on whole hours are summed from them).
func (bk *book) quarterHours(dst []i128, from int64) []i128 {
	var v [quarterBlock]dayAgg
	s := bk.series.Slots
	for i := sort.Search(len(s), func(i int) bool { return s[i].Slot >= from }); i < len(s) && s[i].Slot < from+quarterBlock; i++ {
		a := &s[i].PnlAgg
		v[s[i].Slot-from] = dayAgg{Trades: a.Trades, Volume: a.Volume, Pnl: a.Pnl, Unmatched: a.Unmatched, Invested: a.Invested}
	}
	for i := range v {
		dst = v[i].figures(dst)
	}
	return dst
}

// lastQuarters appends to dst the dayCols figures of bk's slots in the
// last 1, 2 and 3 quarter-hours before slot end (a kindLastQuarters day):
// a zone whose offset is a shift plus q quarter-hours starts its day d q
// quarter-hours before the shift's, so its day is the shift's day d less
// the last q quarter-hours of d, plus those of d−1.
func (bk *book) lastQuarters(dst []i128, end int64) []i128 {
	s := bk.series.Slots
	var q [quarters]dayAgg
	for i := sort.Search(len(s), func(i int) bool { return s[i].Slot >= end-quarters }); i < len(s) && s[i].Slot < end; i++ {
		a := &s[i].PnlAgg
		d := dayAgg{Trades: a.Trades, Volume: a.Volume, Pnl: a.Pnl, Unmatched: a.Unmatched, Invested: a.Invested}
		for n := end - s[i].Slot; n <= quarters; n++ { // the slot is among the last n
			q[n-1].merge(&d)
		}
	}
	for n := range q {
		dst = q[n].figures(dst)
	}
	return dst
}
