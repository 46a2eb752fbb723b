package transparency

import (
	"math/bits"
	"math/rand"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// treeReads is a tlog.HashReader that counts the hashes read from it of
// the levels the cache keeps.
type treeReads struct{ upper int }

func (r *treeReads) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if level, _ := tlog.SplitStoredHashIndex(x); level >= cacheLevel {
			r.upper++
		}
		out[i][0], out[i][1] = byte(x), byte(x>>8)
	}
	return out, nil
}

// Once warm, inclusion proofs read few of their upper hashes from the tree:
// the cache keeps most of them, whatever their level (the indexes of one
// level are 2^(level+1) apart, and a table indexed by their remainder kept
// few of them: about 11 of a proof's 12 upper hashes were read at 1M
// records). Its size follows the tree's.
func TestHashCacheKeepsUpperLevels(t *testing.T) {
	for _, size := range []int64{1_000_000, 3_000_000} {
		var c hashCache
		r := &treeReads{}
		hr := c.reader(r)
		rng := rand.New(rand.NewSource(1))
		for range 2_000 { // warm
			if _, err := tlog.ProveRecord(size, rng.Int63n(size), hr); err != nil {
				t.Fatal(err)
			}
		}
		r.upper = 0
		const proofs = 2_000
		for range proofs {
			if _, err := tlog.ProveRecord(size, rng.Int63n(size), hr); err != nil {
				t.Fatal(err)
			}
		}
		levels := bits.Len64(uint64(size)) - cacheLevel // upper hashes of a proof
		if got := float64(r.upper) / proofs; got > float64(levels)/2 {
			t.Errorf("%d records: %.2f of a proof's %d upper hashes read from the tree", size, got, levels)
		}
		if upper := size >> (cacheLevel - 1); len(c.slots) > 2*int(upper) { // a power of two
			t.Errorf("%d records: %d slots for about %d upper hashes", size, len(c.slots), upper)
		}
	}
}
