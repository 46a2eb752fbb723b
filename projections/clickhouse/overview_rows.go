package clickhouse

import (
	"github.com/tradeledger/tradeledger/domain"
)

// pnl_overview9 holds, in one table, what an overview over all time reads:
// per pair its aggregate and inventory (kindPair), its strategy
// (kindStrategy), and its daily figures in blocks: dayBlock local days
// under each whole-hour shift (kindLocalDay) and the same days' first
// hours (kindFirstHours, for the days when a zone's offset changes by an
// hour), and hourBlock UTC hours (kindHour, for other changes). One query with
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
		d.Volume, d.Pnl, d.Fees, d.UnmVal = domain.Zero, domain.Zero, domain.Zero, domain.Zero
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
		blocks[blockKey{hk.bk, hourShift, domain.FloorDiv(hk.hour, hourBlock)}] = struct{}{}
		for i := 0; i < numShifts; i++ {
			blocks[blockKey{hk.bk, int8(i), domain.FloorDiv(hourDay(hk.hour, i), dayBlock)}] = struct{}{}
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
// hour, or plus the next day's); their position is the latest of the
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
		return append(ov, r)
	}
	r.kind, r.shift = kindLocalDay, int32(shiftOf(int(k.shift)))
	r.v = make([]i128, 0, dayBlock*dayCols)
	first := make([]i128, 0, dayBlock*dayCols)
	for j := int64(0); j < dayBlock; j++ {
		h0 := (k.block*dayBlock+j)*24 - int64(r.shift)/3600 // the day's first UTC hour
		var day, fh dayAgg
		for h := h0; h < h0+24; h++ {
			add(&day, h)
		}
		add(&fh, h0)
		r.v, first = day.figures(r.v), fh.figures(first)
	}
	f := r
	f.kind, f.v = kindFirstHours, first
	return append(ov, r, f)
}
