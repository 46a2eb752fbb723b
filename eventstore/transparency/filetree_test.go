package transparency_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/esdb"
	"github.com/tradeledger/tradeledger/eventstore/esdb/esdbtest"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// openESDB opens a store on a fresh EventStoreDB protocol test double
// (esdbtest: in-process, not EventStoreDB).
func openESDB(t *testing.T) *esdb.Store {
	t.Helper()
	srv, err := esdbtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	s := esdb.NewStore(srv.URL())
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	return s
}

func openFileTree(t *testing.T, dir string, s domain.EventStore) *transparency.FileTree {
	t.Helper()
	tree, err := transparency.OpenFileTree(context.Background(), dir, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return tree
}

func TestFileTreeConformance(t *testing.T) {
	storetest.RunTree(t, func(t *testing.T) (domain.EventStore, audit.TreeStore) {
		s := openESDB(t)
		return s, openFileTree(t, t.TempDir(), s)
	})
}

// The files survive a restart, follow new events, and are rebuilt when
// lost or when they describe another log.
func TestFileTreeReopenFollowRebuild(t *testing.T) {
	ctx := context.Background()
	s := openESDB(t)
	defer s.Close()
	dir := t.TempDir()
	for i := 0; i < 40; i++ {
		if _, err := s.Append(ctx, "s", domain.Any, storetest.Event("Tick", i)); err != nil {
			t.Fatal(err)
		}
	}
	tree := openFileTree(t, dir, s)
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	tree.Close()

	// Reopened: the records are there; Follow adds the new events.
	tree = openFileTree(t, dir, s)
	if n, _ := tree.TreeSize(ctx); n != 40 {
		t.Fatalf("reopened tree holds %d records, want 40", n)
	}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tree.Follow(fctx) }()
	var last domain.AppendResult
	for i := 0; i < 25; i++ {
		var err error
		if last, err = s.Append(ctx, "t", domain.Any, storetest.Event("Tock", i)); err != nil {
			t.Fatal(err)
		}
	}
	// BuildTree returns once the records up to the head are in, whoever
	// adds them.
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if pos, _ := tree.RecordPosition(ctx, 64); pos != last.LastPosition {
		t.Fatalf("record 64 at position %d, want the last append's %d", pos, last.LastPosition)
	}
	stop()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Follow ended with %v, want context.Canceled", err)
	}
	storetest.CheckTree(t, s, tree)
	tree.Close()

	// A torn write (hashes written, positions not) is dropped at open.
	f, err := os.OpenFile(filepath.Join(dir, "positions"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Truncate(st.Size() - 5)
	f.Close()
	tree = openFileTree(t, dir, s)
	if n, _ := tree.TreeSize(ctx); n != 64 {
		t.Fatalf("tree after a torn write holds %d records, want 64", n)
	}
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	storetest.CheckTree(t, s, tree)
	tree.Close()

	// The files of another log are not taken for this one's.
	other := openESDB(t)
	defer other.Close()
	if _, err := other.Append(ctx, "x", domain.Any, storetest.Event("Other", 1)); err != nil {
		t.Fatal(err)
	}
	tree = openFileTree(t, dir, other)
	if n, _ := tree.TreeSize(ctx); n != 0 {
		t.Fatalf("another log's tree files give %d records, want 0 (rebuilt)", n)
	}
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	storetest.CheckTree(t, other, tree)
}
