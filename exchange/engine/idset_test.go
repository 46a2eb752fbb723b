package engine

import (
	"maps"
	"testing"
)

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

// TestIDSetFrozenSparse: the sparse words handed to a frozen copy keep
// what they held at the freeze while the set takes more far ids and grows
// its dense run over some of them (words moving out of the map), read on
// another goroutine meanwhile, as the snapshot writer does (the race
// detector sees a write into memory the two share); and the set itself
// keeps every id.
func TestIDSetFrozenSparse(t *testing.T) {
	var s idSet
	far := int64(1) << 40
	for i := range int64(2000) {
		s.add(far + 64*i)
	}
	s.add(3000) // a far word the dense run reaches later
	for id := int64(0); id < 100; id++ {
		s.add(id)
	}
	words := func(m sparseWords) map[int64]uint64 {
		all := map[int64]uint64{}
		for _, shard := range m {
			maps.Copy(all, shard)
		}
		return all
	}
	want := words(s.sparse)
	frozen := s.frozenSparse()
	done := make(chan map[int64]uint64)
	go func() { done <- words(frozen) }()
	for i := range int64(2000) {
		s.add(far + 64*i + 1)
	}
	for id := int64(100); id < 5000; id++ { // the dense run takes word 3000/64
		s.add(id)
	}
	if got := <-done; !maps.Equal(got, want) {
		t.Fatalf("frozen sparse words changed: %d words, want %d", len(got), len(want))
	}
	if !maps.Equal(words(frozen), want) {
		t.Fatal("frozen sparse words changed after the writes")
	}
	for i := range int64(2000) {
		if !s.has(far+64*i) || !s.has(far+64*i+1) {
			t.Fatalf("far id %d lost", far+64*i)
		}
	}
	for id := int64(0); id < 5000; id++ {
		if !s.has(id) {
			t.Fatalf("has(%d) = false", id)
		}
	}
}
