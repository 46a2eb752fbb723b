package clickhouse

import (
	"encoding/binary"

	"github.com/tradeledger/tradeledger/domain"
)

// pnl_overview5 holds, in one table, what an overview over all time reads:
// per pair its aggregate and inventory (kindPair), its strategy
// (kindStrategy), and its daily figures in blocks: dayBlock local days
// under each whole-hour shift (kindLocalDay) and the same days' first
// hours (kindFirstHours, for the days when a zone's offset changes by an
// hour), and hourBlock UTC hours (kindHour, for other changes). One query with
// few columns and few rows answers an overview: the cost of a ClickHouse
// read here is mostly per column and part touched, then per row.

// overviewRow is one row of pnl_overview5.
type overviewRow struct {
	kind           uint8
	shift          int32 // kindLocalDay: the shift's offset (seconds east of UTC)
	n              int64 // kindLocalDay, kindHour: the block number
	exchange, pair string
	v              []int64
	s              string
	position       uint64
}

// pairCols is the length of a kindPair row's v: the aggregate's columns
// (bucketRow.values) then the inventory (lots quantity and cost, last
// price, position from logged fills).
const pairCols = aggCols + 4

// prepare makes b's pnl_overview5 rows from the state as it is now (the
// position being flushed): the pair rows of the books changed since the
// last flush, every day and hour block holding a changed hour, and the
// strategies set.
func (b *batch) prepare() {
	b.ov = b.ov[:0]
	for bk := range b.books {
		v := bk.total.values(make([]int64, 0, pairCols))
		v = append(v, decUnits(bk.lots.Qty()), decUnits(bk.lots.Cost()), decUnits(bk.lastPrice), decUnits(bk.posQty))
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
	add := func(v []int64, h int64) {
		if hr := hours[h]; hr != nil {
			v[0] += hr.Trades
			v[1] = addUnits(v[1], hr.Volume)
			v[2] = addUnits(v[2], hr.Pnl)
			v[3] = addUnits(v[3], hr.Unmatched)
			v[4] = addUnits(v[4], hr.Invested)
			r.position = max(r.position, hr.Position)
		}
	}
	if k.shift == hourShift {
		r.v = make([]int64, hourBlock*dayCols)
		for j := int64(0); j < hourBlock; j++ {
			add(r.v[j*dayCols:], k.block*hourBlock+j)
		}
		return append(ov, r)
	}
	r.kind, r.shift = kindLocalDay, int32(shiftOf(int(k.shift)))
	r.v = make([]int64, dayBlock*dayCols)
	first := make([]int64, dayBlock*dayCols)
	for j := int64(0); j < dayBlock; j++ {
		h0 := (k.block*dayBlock+j)*24 - int64(r.shift)/3600 // the day's first UTC hour
		for h := h0; h < h0+24; h++ {
			add(r.v[j*dayCols:], h)
		}
		add(first[j*dayCols:], h0)
	}
	f := r
	f.kind, f.v = kindFirstHours, first
	return append(ov, r, f)
}

// packInts encodes v as pnl_overview5's v column: zigzag varints
// (encoding/binary's AppendVarint): 1 byte for a zero or a count, 6 to 9
// for most amounts in units of 1e-12, instead of 8 each.
func packInts(v []int64) string {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.AppendVarint(b, x)
	}
	return string(b)
}

// unpackInts decodes a v column into dst (reused), or returns nil when s
// is not whole varints. It reads the string in place, as binary.Varint
// would read a []byte: converting each row's string to pass it there
// would copy it.
func unpackInts(dst []int64, s string) []int64 {
	dst = dst[:0]
	for i := 0; i < len(s); {
		u := uint64(s[i])
		i++
		if u >= 0x80 {
			u &= 0x7f
			for shift := uint(7); ; shift += 7 {
				if i == len(s) || shift > 63 {
					return nil
				}
				c := s[i]
				i++
				u |= uint64(c&0x7f) << shift
				if c < 0x80 {
					break
				}
			}
		}
		dst = append(dst, int64(u>>1)^-int64(u&1))
	}
	return dst
}
