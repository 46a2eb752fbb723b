package projections

import (
	"math/rand"
	"sort"
	"testing"
	"unsafe"
)

// TestRecListMatchesSlice inserts records in random (time, pos) order,
// mostly at the end and some far back, across several chunks, and checks
// the list against a sorted slice of the same records.
func TestRecListMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var b pairBook
	var want []orderRecord
	for i := 0; i < 3*recChunk+17; i++ {
		tm := int64(i)
		if rng.Intn(10) == 0 {
			tm = rng.Int63n(int64(i) + 1) // a late fill
		}
		r := orderRecord{time: tm, posSide: uint64(i + 1), id: int64(i)}
		if i%3 == 0 {
			r.posSide |= recSell
		}
		b.insert(r)
		want = append(want, r)
	}
	sort.SliceStable(want, func(i, j int) bool { return recLess(&want[i], &want[j]) })
	if got := b.recs.len(); got != len(want) {
		t.Fatalf("len=%d, want %d", got, len(want))
	}
	for i := range want {
		if got := *b.recs.at(i); got != want[i] {
			t.Fatalf("record %d = %+v, want %+v", i, got, want[i])
		}
	}
	for i, c := range b.recs.chunks[:len(b.recs.chunks)-1] {
		if len(c) != recChunk {
			t.Fatalf("chunk %d holds %d records, want %d", i, len(c), recChunk)
		}
	}
	mid := want[len(want)/2].time
	if got, want := b.recs.search(func(r *orderRecord) bool { return r.time >= mid }),
		sort.Search(len(want), func(i int) bool { return want[i].time >= mid }); got != want {
		t.Fatalf("search=%d, want %d", got, want)
	}
}

// TestOrderRecordSize guards the stored record's size, which is most of
// the heap per order (issue 19: ≤ 150 B per order for all read models).
// 16-byte decimals make it 200 until the records keep a compact form.
func TestOrderRecordSize(t *testing.T) {
	if got, want := unsafe.Sizeof(orderRecord{}), uintptr(200); got != want {
		t.Fatalf("orderRecord is %d bytes, want %d", got, want)
	}
	r := orderRecord{posSide: 42 | recSell}
	if r.pos() != 42 || !r.sell() {
		t.Fatalf("pos=%d sell=%v, want 42 true", r.pos(), r.sell())
	}
}
