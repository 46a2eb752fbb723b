package engine

import "testing"

// TestIDSet checks the finished-id set against a map, over a dense run
// from 1, ids far past it (which must stay found once the run reaches
// them), negative ids and repeats.
func TestIDSet(t *testing.T) {
	var s idSet
	want := map[int64]bool{}
	ids := []int64{-1, -64, -65, 1 << 40, 5000, 200000, 70, 64*1024 + 3}
	for id := int64(1); id <= 300000; id += 3 {
		ids = append(ids, id)
	}
	ids = append(ids, 5000, 1<<40, 200001, 299999)
	for i, id := range ids {
		s.add(id)
		want[id] = true
		if i%1000 == 0 || i >= len(ids)-20 {
			for probe := id - 70; probe <= id+70; probe++ {
				if got := s.has(probe); got != want[probe] {
					t.Fatalf("after adding %d: has(%d) = %v, want %v", id, probe, got, want[probe])
				}
			}
		}
	}
	for id := range want {
		if !s.has(id) {
			t.Fatalf("has(%d) = false", id)
		}
	}
	for _, id := range []int64{0, 2, 3, -2, 1<<40 + 1, 4999, 200002, 1 << 62} {
		if s.has(id) != want[id] {
			t.Fatalf("has(%d) = %v", id, s.has(id))
		}
	}
}
