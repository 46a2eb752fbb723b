package projections

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// listChunks keeps what it is given, in the order given, whether its
// entries pack or not: close times and ids (packed), then a run of sparse
// ids, of far times, of many pairs (kept whole), with inserts anywhere and
// a sort; most chunks of the first kind stay packed.
func TestListChunksKeepEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	var c listChunks
	var want []listEntry
	tm, id := int64(1_700_000_000_000), int64(1)
	for i := range 30_000 {
		tm += rng.Int64N(5000)
		id++
		e := listEntry{time: tm, id: id, pair: uint32(rng.IntN(20)), kind: uint8(rng.IntN(4)), sell: rng.IntN(2) == 0}
		switch {
		case i >= 20_000 && i < 21_000: // sparse ids (an imported history)
			e.id = rng.Int64N(1 << 50)
		case i >= 22_000 && i < 22_100: // a slow bot: days apart
			tm += 3 * 86_400_000
			e.time = tm
		case i >= 24_000 && i < 25_000: // many pairs
			e.pair = uint32(rng.IntN(5000))
		}
		if i%7 == 0 && len(want) > 0 { // a late request, anywhere
			j := rng.IntN(len(want) + 1)
			e.time -= rng.Int64N(40 * 86_400_000)
			c.insert(j, e)
			want = slices.Insert(want, j, e)
		} else {
			c.push(e)
			want = append(want, e)
		}
	}
	check := func(when string) {
		t.Helper()
		if c.len() != len(want) {
			t.Fatalf("%s: %d entries, want %d", when, c.len(), len(want))
		}
		for i, w := range want {
			if got := c.get(i); got != w {
				t.Fatalf("%s: entry %d = %+v, want %+v", when, i, got, w)
			}
		}
	}
	check("pushed and inserted")
	c.sort()
	slices.SortStableFunc(want, func(a, b listEntry) int { return cmp.Compare(a.time, b.time) })
	check("sorted")
	packed := 0
	for _, ch := range c.chunks {
		if ch.wide == nil {
			packed++
		}
	}
	if packed < len(c.chunks)/2 {
		t.Fatalf("%d of %d chunks packed", packed, len(c.chunks))
	}
}
