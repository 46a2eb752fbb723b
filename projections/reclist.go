package projections

import (
	"slices"
	"sort"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// recList holds a pair's order records in fixed-size chunks rather than one
// slice: a slice of a million records grows by copying the whole history
// (the largest cost of a replay after decoding) and carries up to a quarter
// of unused capacity, which is most of the heap the records cost beyond
// their own size. Chunks never move once full, so growth copies nothing but
// a small pair's first chunk, and the unused capacity is at most one chunk
// per pair.
//
// It also keeps the records' amounts that a decimal.Compact cannot hold
// (wide: rare — more than about 10^6 with 12 decimals, 10^10 with 8), which
// the records point to by index; records never change once stored, so the
// table only grows.
type recList struct {
	chunks [][]orderRecord `snap:"shallow"` // every chunk but the last holds recChunk records
	n      int
	wide   []decimal.Decimal
	// frozen chunks (the first frozen) are shared with a frozen copy of
	// the Ledger (Ledger.Freeze): insert copies one before it writes
	// into it. A push appends past what the copy sees.
	frozen int `snap:"-"`
}

// put returns the compact form of d for a record of this list, keeping d in
// the side table when it needs it.
func (l *recList) put(d decimal.Decimal) decimal.Compact {
	if c, ok := decimal.CompactOf(d); ok {
		return c
	}
	l.wide = append(l.wide, d)
	return decimal.CompactRef(len(l.wide) - 1)
}

// get returns the value of a record's amount.
func (l *recList) get(c decimal.Compact) decimal.Decimal {
	if i, ok := c.Ref(); ok {
		return l.wide[i]
	}
	return c.Decimal()
}

const (
	recChunkBits = 10
	recChunk     = 1 << recChunkBits // records per chunk (112 KiB)
	recFirstCap  = 8                 // capacity of a pair's first chunk
)

// len returns the number of records.
func (l *recList) len() int { return l.n }

// at returns record i (0 ≤ i < len).
func (l *recList) at(i int) *orderRecord {
	return &l.chunks[i>>recChunkBits][i&(recChunk-1)]
}

// push appends r.
func (l *recList) push(r orderRecord) {
	k := len(l.chunks) - 1
	if k < 0 || len(l.chunks[k]) == recChunk {
		// A pair's first chunk grows from small (most pairs hold few
		// records); the next ones are for pairs that hold many.
		size := recChunk
		if k < 0 {
			size = recFirstCap
		}
		l.chunks = append(l.chunks, make([]orderRecord, 0, size))
		k++
	}
	c := l.chunks[k]
	if len(c) == cap(c) {
		grown := make([]orderRecord, len(c), min(2*cap(c), recChunk))
		copy(grown, c)
		c = grown
	}
	l.chunks[k] = append(c, r)
	l.n++
}

// insert puts r at index i (0 ≤ i ≤ len), moving the records from i on up
// by one: a cost proportional to how far from the end i is, which is small
// for the late fills that need it.
func (l *recList) insert(i int, r orderRecord) {
	l.push(orderRecord{})
	l.own(i >> recChunkBits)
	for j := l.n - 1; j > i; j-- {
		*l.at(j) = *l.at(j - 1)
	}
	*l.at(i) = r
}

// own copies the chunks from k on that a frozen copy shares, before
// they are written into.
func (l *recList) own(k int) {
	for j := k; j < l.frozen; j++ {
		l.chunks[j] = slices.Clone(l.chunks[j])
	}
	l.frozen = min(l.frozen, k)
}

// search returns the smallest index i in [0, len) at which f is true (len
// if none), f being false then true along the list (sort.Search).
func (l *recList) search(f func(r *orderRecord) bool) int {
	return sort.Search(l.n, func(i int) bool { return f(l.at(i)) })
}
