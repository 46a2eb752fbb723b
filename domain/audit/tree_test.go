package audit

import (
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// mth is the Merkle Tree Hash of RFC 6962 §2.1 written from its
// definition: the reference the frontier is checked against.
func mth(records []domain.Hash) domain.Hash {
	switch n := len(records); n {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return sha256.Sum256(append([]byte{0}, records[0][:]...))
	default:
		k := 1
		for k<<1 < n {
			k <<= 1
		}
		l, r := mth(records[:k]), mth(records[k:])
		return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
	}
}

func TestTreeFrontierRootIsRFC6962(t *testing.T) {
	var f TreeFrontier
	var records []domain.Hash
	if got, want := f.Root(), mth(nil); got != want {
		t.Fatalf("empty root %s, want %s", got, want)
	}
	var stored []domain.Hash
	for i := 0; i < 300; i++ {
		r := domain.Hash(sha256.Sum256([]byte{byte(i), byte(i >> 8)}))
		records = append(records, r)
		before := len(stored)
		stored = f.Add(r, stored)
		// One leaf plus one hash per subtree the record completes: the
		// trailing ones of its index.
		want := 1
		for n := i; n&1 == 1; n >>= 1 {
			want++
		}
		if got := len(stored) - before; got != want {
			t.Fatalf("record %d stored %d hashes, want %d", i, got, want)
		}
		if got, want := f.Root(), mth(records); got != want {
			t.Fatalf("root of %d records %s, want %s", i+1, got, want)
		}
		// The last stored hash is the subtree the record completed.
		lvl := want - 1
		if got, want := stored[len(stored)-1], mth(records[len(records)-1<<lvl:]); got != want {
			t.Fatalf("record %d: completed subtree %s, want %s", i, got, want)
		}
		// A frontier rebuilt from the subtrees' hashes is the same.
		levels, idx := FrontierLevels(f.Size())
		hs := make([]domain.Hash, len(levels))
		for j, l := range levels {
			hs[j] = mth(records[idx[j]<<l : (idx[j]+1)<<l])
		}
		g, err := NewTreeFrontier(f.Size(), hs)
		if err != nil || g != f {
			t.Fatalf("rebuilt frontier of %d records differs (%v)", f.Size(), err)
		}
	}
	if _, err := NewTreeFrontier(3, []domain.Hash{{}}); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("frontier of 3 records from one hash: %v, want EINVALID", err)
	}
}

// TestFindRecord: every position of a sparse tree is found from any
// guess (right, wrong, off the tree), a right guess costs one probe, a
// missing position is ENOTFOUND, and at's error comes back as it is.
func TestFindRecord(t *testing.T) {
	positions := []uint64{1, 2, 5, 9, 10, 11, 40}
	size := int64(len(positions))
	for want, pos := range positions {
		for _, guess := range []int64{int64(want), 0, size - 1, -1, size, 3} {
			probes := 0
			got, err := FindRecord(size, pos, guess, func(i int64) (uint64, error) {
				probes++
				if i < 0 || i >= size {
					t.Fatalf("probe %d off the tree", i)
				}
				return positions[i], nil
			})
			if err != nil || got != int64(want) {
				t.Fatalf("FindRecord(%d, guess %d) = %d, %v, want %d", pos, guess, got, err, want)
			}
			if guess == int64(want) && probes != 1 {
				t.Errorf("FindRecord(%d, guess %d): %d probes, want 1", pos, guess, probes)
			}
		}
	}
	for _, pos := range []uint64{0, 3, 12, 41} {
		if _, err := FindRecord(size, pos, 2, func(i int64) (uint64, error) { return positions[i], nil }); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("FindRecord(%d) err = %v, want ENOTFOUND", pos, err)
		}
	}
	if _, err := FindRecord(0, 1, 0, func(int64) (uint64, error) { t.Fatal("probed an empty tree"); return 0, nil }); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("empty tree: err = %v, want ENOTFOUND", err)
	}
	boom := errors.New("boom")
	if _, err := FindRecord(size, 9, 1, func(int64) (uint64, error) { return 0, boom }); err != boom {
		t.Errorf("err = %v, want at's error", err)
	}
}
