package audit

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestIDSetAgainstMap feeds idSet sequences of every shape a log's ids
// take — increasing, a few places out of order, far out of order, random
// (legacy hash-only ids), all with repeats near and far — and checks each
// answer against a map of the ids added so far.
func TestIDSetAgainstMap(t *testing.T) {
	key := func(hi, lo uint64) [16]byte {
		var k [16]byte
		binary.BigEndian.PutUint64(k[:8], hi)
		binary.BigEndian.PutUint64(k[8:], lo)
		return k
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(i int) [16]byte{
		"increasing": func(i int) [16]byte { return key(uint64(i), rng.Uint64()) },
		// the import's: three ids of one millisecond in random order
		"same millisecond": func(i int) [16]byte { return key(uint64(i/3), rng.Uint64()) },
		// a few places out of order, now and then far (a late commit)
		"jittered": func(i int) [16]byte {
			j := i - rng.IntN(40)
			if rng.IntN(100) == 0 {
				j = i - 200 - rng.IntN(5000)
			}
			return key(uint64(max(j, 0)), rng.Uint64())
		},
		"random":    func(int) [16]byte { return key(rng.Uint64(), rng.Uint64()) },
		"equal top": func(i int) [16]byte { return key(7, uint64(rng.IntN(1<<20))) },
	}
	for name, next := range shapes {
		var s idSet
		if name == "increasing" {
			s.grow(100) // a sized set behaves the same
		}
		want := map[[16]byte]bool{}
		var added [][16]byte
		for i := 0; i < 30_000; i++ {
			k := next(i)
			// Repeats: the last id, one within the run's reach, one far
			// back, one of the first.
			switch r := rng.IntN(50); {
			case len(added) == 0:
			case r == 0:
				k = added[len(added)-1]
			case r == 1:
				k = added[len(added)-1-rng.IntN(min(len(added), idRunReach))]
			case r == 2:
				k = added[rng.IntN(len(added))]
			case r == 3:
				k = added[0]
			}
			got := s.seen(k)
			if got != want[k] {
				t.Fatalf("%s: id %d (%x): seen %v, want %v", name, i, k, got, want[k])
			}
			if !want[k] {
				want[k] = true
				added = append(added, k)
			}
		}
		if s.len() != len(want) {
			t.Errorf("%s: the set holds %d ids, want %d", name, s.len(), len(want))
		}
		for i := 1; i < len(s.run); i++ {
			if !keyLess(&s.run[i-1], &s.run[i]) {
				t.Fatalf("%s: run not strictly increasing at %d", name, i)
			}
		}
		t.Logf("%s: %d ids in the run, %d in the map", name, len(s.run), len(s.rest))
	}
}

// BenchmarkIDSet: the duplicate check of a log's ids in the import's
// order (three of one millisecond at random) against the map it replaced.
func BenchmarkIDSet(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1 << 20
	keys := make([][16]byte, n)
	for i := range keys {
		binary.BigEndian.PutUint64(keys[i][:8], uint64(i/3))
		binary.BigEndian.PutUint64(keys[i][8:], rng.Uint64())
	}
	b.Run("idSet", func(b *testing.B) {
		for range b.N {
			var s idSet
			s.grow(n)
			for _, k := range keys {
				s.seen(k)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/id")
	})
	b.Run("map", func(b *testing.B) {
		for range b.N {
			m := make(map[[16]byte]struct{}, n)
			for _, k := range keys {
				l := len(m)
				m[k] = struct{}{}
				_ = len(m) == l
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/id")
	})
}

// TestHeadRunAgainstMap: the order streams' heads as a sorted run give
// what a map gives, for streams opened in increasing, jittered, far out of
// order and random id order, each looked up and set again later, near and
// far, and each walks every head once, the run's in id order.
func TestHeadRunAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := map[string]func(i int) int64{
		"increasing": func(i int) int64 { return int64(i) },
		"jittered": func(i int) int64 {
			if rng.IntN(100) == 0 {
				return int64(i) - 100 - rng.Int64N(10_000)
			}
			return int64(i) - rng.Int64N(30)
		},
		"random":   func(int) int64 { return rng.Int64() - 1<<62 },
		"negative": func(i int) int64 { return -int64(i) },
	}
	for name, next := range shapes {
		var h headRun
		want := map[int64]verifiedStream{}
		var opened []int64
		for i := 0; i < 20_000; i++ {
			id := next(i)
			switch r := rng.IntN(4); {
			case len(opened) == 0:
			case r == 0: // the stream just opened
				id = opened[len(opened)-1]
			case r == 1: // a stream opened a while ago
				id = opened[rng.IntN(len(opened))]
			}
			got, ref := h.lookup(id)
			w, ok := want[id]
			if ref.found != ok || got != w {
				t.Fatalf("%s: stream %d (step %d): lookup %v %v, want %v %v", name, id, i, got, ref.found, w, ok)
			}
			v := verifiedStream{version: w.version + 1, time: int64(i)}
			v.hash[0] = byte(i)
			if rng.IntN(10) == 0 {
				h.put(id, v)
			} else {
				h.set(id, ref, v)
			}
			if !ok {
				opened = append(opened, id)
			}
			want[id] = v
		}
		if h.len() != len(want) {
			t.Fatalf("%s: %d heads, want %d", name, h.len(), len(want))
		}
		walked := map[int64]bool{}
		h.each(func(id int64, v verifiedStream) {
			if walked[id] || want[id] != v {
				t.Fatalf("%s: stream %d walked twice or with %v, want %v", name, id, v, want[id])
			}
			walked[id] = true
		})
		for i := 1; i < len(h.ids); i++ {
			if h.ids[i-1] >= h.ids[i] {
				t.Fatalf("%s: run not increasing at %d", name, i)
			}
		}
		t.Logf("%s: %d streams in the run, %d in the map", name, len(h.ids), len(h.rest))
	}
}
