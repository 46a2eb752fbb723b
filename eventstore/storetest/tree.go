package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// The conformance suite of audit.TreeStore: the Merkle tree a store keeps
// is checked against the tree golang.org/x/mod/sumdb/tlog builds itself
// from the log's events (an independent reference, as tlog's own tests
// check it against Certificate Transparency's).

// TreeOpenFunc returns a fresh, empty store and the tree kept over it
// (the same value for the embedded store); the suite closes the store.
type TreeOpenFunc func(t *testing.T) (domain.EventStore, audit.TreeStore)

// RunTree runs every tree case against stores from open.
func RunTree(t *testing.T, open TreeOpenFunc) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s domain.EventStore, tree audit.TreeStore)
	}{
		{"Empty", testTreeEmpty},
		{"Appends", testTreeAppends},
		{"ConcurrentAppends", testTreeConcurrent},
		{"KeepsTheLastCheckpoint", testTreeKeepsCheckpoint},
		{"Cut", testTreeCut},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, tree := open(t)
			defer s.Close()
			c.fn(t, s, tree)
		})
	}
}

func testTreeEmpty(t *testing.T, s domain.EventStore, tree audit.TreeStore) {
	ctx := context.Background()
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	CheckTree(t, s, tree)
	if _, err := tree.RecordPosition(ctx, 0); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("record 0 of an empty tree: %v, want ENOTFOUND", err)
	}
}

func testTreeAppends(t *testing.T, s domain.EventStore, tree audit.TreeStore) {
	ctx := context.Background()
	n := 0
	for i := 0; i < 70; i++ {
		// One, two or three events per append, over a few streams.
		evs := make([]domain.Event, 1+i%3)
		for j := range evs {
			evs[j] = Event("Tick", n)
			n++
		}
		mustAppend(t, s, fmt.Sprintf("tree-%d", i%5), domain.Any, evs...)
		if i == 10 || i == 31 {
			// A retry of stored events adds no record.
			e := Event("Retry", n)
			mustAppend(t, s, "retry", domain.Any, e)
			mustAppend(t, s, "retry", domain.Any, e)
		}
	}
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	CheckTree(t, s, tree)
}

func testTreeConcurrent(t *testing.T, s domain.EventStore, tree audit.TreeStore) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				if _, err := s.Append(ctx, fmt.Sprintf("w-%d-%d", w, i%3), domain.Any, Event("Tick", i)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	CheckTree(t, s, tree)
}

// checkpointEvent is a CheckpointSigned of size records (its root and
// note made up: the tree keeps what the log recorded).
func checkpointEvent(size int64) domain.Event {
	return domain.NewEvent(clock, domain.TypeCheckpointSigned, domain.CheckpointSigned{Origin: "tradeledger/log/test", Size: size,
		Root: fmt.Sprintf("root-%d", size), Note: fmt.Sprintf("note of %d\n", size)})
}

// The tree keeps beside it the CheckpointSigned of the checkpoints stream
// it added last (another stream's is not one), and never an older one in
// its place: a smaller one added later (a tree rebuilt from a cut log
// meets them) leaves it, until CutTree abandons it.
func testTreeKeepsCheckpoint(t *testing.T, s domain.EventStore, tree audit.TreeStore) {
	ctx := context.Background()
	build := func() {
		t.Helper()
		if err := tree.BuildTree(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() (audit.KeptCheckpoint, bool) {
		t.Helper()
		k, ok, err := tree.KeptCheckpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return k, ok
	}
	build()
	if k, ok := kept(); ok {
		t.Fatalf("an empty tree keeps %+v", k)
	}
	mustAppend(t, s, "a", domain.Any, Event("Tick", 0), Event("Tick", 1))
	mustAppend(t, s, "elsewhere", domain.Any, checkpointEvent(2))
	build()
	if k, ok := kept(); ok {
		t.Fatalf("a CheckpointSigned of another stream was kept: %+v", k)
	}
	res := mustAppend(t, s, domain.StreamCheckpoints, domain.Any, checkpointEvent(3))
	mustAppend(t, s, "a", domain.Any, Event("Tick", 2))
	build()
	if k, ok := kept(); !ok || k.Size != 3 || k.Position != res.LastPosition || k.Note != "note of 3\n" || k.Abandoned {
		t.Fatalf("kept %+v (%v), want the checkpoint of 3 at position %d", k, ok, res.LastPosition)
	}
	mustAppend(t, s, domain.StreamCheckpoints, domain.Any, checkpointEvent(2))
	build()
	if k, _ := kept(); k.Size != 3 {
		t.Fatalf("a smaller checkpoint replaced the kept one: %+v", k)
	}
	res = mustAppend(t, s, domain.StreamCheckpoints, domain.Any, checkpointEvent(6))
	build()
	if k, _ := kept(); k.Size != 6 || k.Position != res.LastPosition {
		t.Fatalf("kept %+v, want the checkpoint of 6", k)
	}
	size, _ := tree.TreeSize(ctx)
	if err := tree.CutTree(ctx, size); err != nil {
		t.Fatal(err)
	}
	if k, _ := kept(); k.Size != 6 || !k.Abandoned {
		t.Fatalf("after CutTree: kept %+v, want the checkpoint of 6, abandoned", k)
	}
	res = mustAppend(t, s, domain.StreamCheckpoints, domain.Any, checkpointEvent(4))
	build()
	if k, _ := kept(); k.Size != 4 || k.Position != res.LastPosition || k.Abandoned {
		t.Fatalf("after the abandoned one: kept %+v, want the checkpoint of 4", k)
	}
	CheckTree(t, s, tree)
}

// CutTree cuts the tree to a number of records within it (the records
// before are untouched: the tree grows from there again), and refuses
// one beyond it.
func testTreeCut(t *testing.T, s domain.EventStore, tree audit.TreeStore) {
	ctx := context.Background()
	for i := 0; i < 12; i++ {
		mustAppend(t, s, "a", domain.Any, Event("Tick", i))
	}
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	root := func(n int64) tlog.Hash {
		t.Helper()
		h, err := tlog.TreeHash(n, transparency.TreeHashReader(ctx, tree))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	want := root(12)
	if err := tree.CutTree(ctx, 13); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("cut beyond the tree: %v, want EINVALID", err)
	}
	if err := tree.CutTree(ctx, 12); err != nil {
		t.Fatal(err)
	}
	if n, _ := tree.TreeSize(ctx); n != 12 || root(12) != want {
		t.Fatalf("cut to its own size: %d records, root changed: %v", n, root(12) != want)
	}
	// Cut below the log: the tree lacks the last events, and gets them
	// back from BuildTree, the same records as before.
	if err := tree.CutTree(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if n, _ := tree.TreeSize(ctx); n != 8 {
		t.Fatalf("cut to 8: %d records", n)
	}
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := tree.TreeSize(ctx); n != 12 || root(12) != want {
		t.Fatalf("rebuilt after the cut: %d records, root changed: %v", n, root(12) != want)
	}
	CheckTree(t, s, tree)
}

// RefTree is the Merkle tree of a log as tlog builds it: every stored
// hash, in tlog's own layout, from tlog.StoredHashes.
type RefTree struct {
	Hashes []tlog.Hash
	// Records are the records' data: each event's recomputed hash.
	Records [][]byte
}

// NewRefTree builds the reference tree of events, in log order.
func NewRefTree(t testing.TB, events []domain.Event) *RefTree {
	t.Helper()
	r := &RefTree{}
	for i := range events {
		h := domain.ComputeHash(&events[i])
		r.Add(t, h[:])
	}
	return r
}

// Add adds the next record, whose data is data.
func (r *RefTree) Add(t testing.TB, data []byte) {
	t.Helper()
	hs, err := tlog.StoredHashes(int64(len(r.Records)), data, r)
	if err != nil {
		t.Fatal(err)
	}
	r.Hashes = append(r.Hashes, hs...)
	r.Records = append(r.Records, data)
}

// ReadHashes implements tlog.HashReader.
func (r *RefTree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(r.Hashes)) {
			return nil, fmt.Errorf("reference tree: no stored hash %d", x)
		}
		out[i] = r.Hashes[x]
	}
	return out, nil
}

// Root returns the root of the reference tree's first n records.
func (r *RefTree) Root(t testing.TB, n int64) tlog.Hash {
	t.Helper()
	h, err := tlog.TreeHash(n, r)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// CheckTree checks that tree covers store's whole log and is, hash for
// hash, the tree tlog builds from the events; that its roots, inclusion
// proofs and consistency proofs check against the reference's roots
// (tlog.CheckRecord, tlog.CheckTree); and that it maps every record to its
// event's position and back.
func CheckTree(t testing.TB, store domain.EventStore, tree audit.TreeStore) {
	t.Helper()
	ctx := context.Background()
	events := ReadAll(t, store.ReadAll(ctx, 0, 0))
	ref := NewRefTree(t, events)
	size, err := tree.TreeSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(events)) {
		t.Fatalf("tree size %d, want the log's %d events", size, len(events))
	}
	checkStoredHashes(t, ctx, tree, ref, size)
	checkProofs(t, ctx, tree, ref, size)
	checkRecordPositions(t, ctx, tree, events)
}

// checkStoredHashes checks that tree stores, index for index, the hashes
// of ref (a tree of size records), and none beyond them.
func checkStoredHashes(t testing.TB, ctx context.Context, tree audit.TreeStore, ref *RefTree, size int64) {
	t.Helper()
	count := tlog.StoredHashCount(size)
	if count != int64(len(ref.Hashes)) {
		t.Fatalf("tlog counts %d stored hashes, the reference has %d", count, len(ref.Hashes))
	}
	all := make([]int64, count)
	for i := range all {
		all[i] = int64(i)
	}
	got, err := tree.ReadTreeHashes(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if tlog.Hash(got[i]) != ref.Hashes[i] {
			level, n := tlog.SplitStoredHashIndex(int64(i))
			t.Fatalf("stored hash %d (level %d, n %d) differs from tlog's", i, level, n)
		}
	}
	if _, err := tree.ReadTreeHashes(ctx, []int64{count}); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("stored hash %d beyond the tree: %v, want EINVALID", count, err)
	}
}

// checkProofs checks, for a few sizes n up to size, that tree's root of n
// records is ref's, that its inclusion proofs of the first, middle and
// last record check against that root, and that its proof of n's
// consistency with size checks against ref's roots.
func checkProofs(t testing.TB, ctx context.Context, tree audit.TreeStore, ref *RefTree, size int64) {
	t.Helper()
	hr := transparency.TreeHashReader(ctx, tree)
	sizes := []int64{1, size / 3, size / 2, size - 1, size}
	for _, n := range sizes {
		if n <= 0 || n > size {
			continue
		}
		root, err := tlog.TreeHash(n, hr)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref.Root(t, n); root != want {
			t.Fatalf("root of %d records %s, want tlog's %s", n, root, want)
		}
		for _, i := range []int64{0, n / 2, n - 1} {
			p, err := tlog.ProveRecord(n, i, hr)
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.CheckRecord(p, n, ref.Root(t, n), i, tlog.RecordHash(ref.Records[i])); err != nil {
				t.Fatalf("inclusion of record %d in %d: %v", i, n, err)
			}
		}
		p, err := tlog.ProveTree(size, n, hr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckTree(p, size, ref.Root(t, size), n, ref.Root(t, n)); err != nil {
			t.Fatalf("consistency of %d with %d: %v", n, size, err)
		}
	}
}

// checkRecordPositions checks that tree maps record i to the position of
// events[i] and back, and answers ENOTFOUND past the last of them.
func checkRecordPositions(t testing.TB, ctx context.Context, tree audit.TreeStore, events []domain.Event) {
	t.Helper()
	for i, e := range events {
		pos, err := tree.RecordPosition(ctx, int64(i))
		if err != nil || pos != e.Position {
			t.Fatalf("record %d at position %d (%v), want %d", i, pos, err, e.Position)
		}
		idx, err := tree.RecordIndex(ctx, e.Position)
		if err != nil || idx != int64(i) {
			t.Fatalf("position %d is record %d (%v), want %d", e.Position, idx, err, i)
		}
	}
	size := int64(len(events))
	if _, err := tree.RecordPosition(ctx, size); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("record %d beyond the tree: %v, want ENOTFOUND", size, err)
	}
	if len(events) > 0 {
		if _, err := tree.RecordIndex(ctx, events[len(events)-1].Position+1); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("a position after the last event: %v, want ENOTFOUND", err)
		}
	}
}
