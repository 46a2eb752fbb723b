package projections

import (
	"math/rand"
	"testing"
)

// orderIndex answers like a map for dense, sparse, negative and
// out-of-order ids, including sparse ids that a later growth covers.
func TestOrderIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var x orderIndex
	want := map[int64]uint32{}
	for i := 0; i < 200000; i++ {
		var id int64
		switch rng.Intn(10) {
		case 0:
			id = rng.Int63n(1 << 40) // far away: sparse
		case 1:
			id = -rng.Int63n(100)
		case 2:
			id = int64(len(x.dense)) + rng.Int63n(3*denseSlack) // past the end, near or not
		default:
			id = rng.Int63n(int64(len(x.dense)) + 10)
		}
		v := uint32(rng.Int63n(1<<32 - 1))
		x.set(id, v)
		want[id] = v
	}
	for id, v := range want {
		if got, ok := x.get(id); !ok || got != v {
			t.Fatalf("get(%d) = %d, %v; want %d", id, got, ok, v)
		}
	}
	for i := 0; i < 10000; i++ {
		id := rng.Int63n(int64(len(x.dense)) * 2)
		_, inMap := want[id]
		if _, ok := x.get(id); ok != inMap {
			t.Fatalf("get(%d) present = %v, want %v", id, ok, inMap)
		}
	}
	if len(x.dense) == 0 || len(x.sparse) == 0 {
		t.Fatalf("the test should exercise both homes: dense %d, sparse %d", len(x.dense), len(x.sparse))
	}
	if len(x.dense) > 4*(x.used+len(x.sparse)+1)+denseSlack {
		t.Fatalf("dense slice of %d for %d ids: the density bound does not hold", len(x.dense), x.used+len(x.sparse))
	}
}

// Ids doubling each time (1, 2, 4, … 2⁴⁰) cost memory in proportion to
// their number, not to their size.
func TestOrderIndexSparseIdsStaySmall(t *testing.T) {
	var x orderIndex
	for i := 0; i <= 40; i++ {
		x.set(int64(1)<<i, uint32(i))
	}
	for i := 0; i <= 40; i++ {
		if v, ok := x.get(int64(1) << i); !ok || v != uint32(i) {
			t.Fatalf("get(2^%d) = %d, %v", i, v, ok)
		}
	}
	if len(x.dense) > 4*41+denseSlack {
		t.Fatalf("dense slice of %d entries for 41 ids", len(x.dense))
	}
}

// The Trader's ids (1, 2, 3 …) all land in the slice.
func TestOrderIndexDenseIds(t *testing.T) {
	var x orderIndex
	for id := int64(1); id <= 100000; id++ {
		x.set(id, uint32(id%7))
	}
	if len(x.sparse) != 0 || x.used != 100000 {
		t.Fatalf("dense ids: %d in the map, %d in the slice", len(x.sparse), x.used)
	}
	if v, ok := x.get(77777); !ok || v != 77777%7 {
		t.Fatalf("get(77777) = %d, %v", v, ok)
	}
}
