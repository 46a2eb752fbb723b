package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

func TestTreeConformance(t *testing.T) {
	storetest.RunTree(t, func(t *testing.T) (domain.EventStore, audit.TreeStore) {
		s := openStore(t, filepath.Join(t.TempDir(), "events.db"))
		return s, s
	})
}

// dropTree makes the file at path look like one written before the tree
// existed.
func dropTree(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DROP TABLE tree`); err != nil {
		t.Fatal(err)
	}
}

// A log written before the tree existed gets it from BuildTree, while
// appends go on (they are left out of the tree until it catches up, then
// added as they commit); AppendBatch's groups add theirs too.
func TestTreeBuiltForAnOldLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := openStore(t, path)
	ctx := context.Background()
	var batch []domain.StreamAppend
	for i := 0; i < 3000; i++ {
		batch = append(batch, domain.StreamAppend{Stream: fmt.Sprintf("order-%d", i%700), Expected: domain.Any, Events: []domain.Event{storetest.Event("Tick", i)}})
	}
	if _, err := s.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dropTree(t, path)

	s = openStore(t, path)
	defer s.Close()
	if size, _ := s.TreeSize(ctx); size != 0 {
		t.Fatalf("tree of an old log: %d records before it is built, want 0", size)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Append(ctx, fmt.Sprintf("during-%d", i%7), domain.Any, storetest.Event("During", i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var reports []int64
	if err := s.BuildTree(ctx, func(n int64) { reports = append(reports, n) }); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if len(reports) == 0 || reports[len(reports)-1] < 3000 {
		t.Fatalf("progress %v, want it to reach the 3000 old events", reports)
	}
	storetest.CheckTree(t, s, s) // covers the appends made during the build
	// Once built, appends add their records as they commit.
	if _, err := s.AppendBatch(ctx, batch[:50]); err != nil { // retries: nothing new
		t.Fatal(err)
	}
	storetest.Event("After", 0)
	if _, err := s.Append(ctx, "after", domain.NoStream, storetest.Event("After", 0)); err != nil {
		t.Fatal(err)
	}
	storetest.CheckTree(t, s, s)
}

// Another process (an operator command) appending to the same file keeps
// the tree whole: each writer picks up the other's records before adding
// its own.
func TestTreeTwoWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	a, b := openStore(t, path), openStore(t, path)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		w := a
		if i%3 == 0 {
			w = b
		}
		if _, err := w.Append(ctx, fmt.Sprintf("s-%d", i%4), domain.Any, storetest.Event("Tick", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	storetest.CheckTree(t, a, a)
}

// A store that does not keep the tree (a process of an earlier version)
// appending beside one that does leaves events out of the tree; the
// writer then stops adding records until BuildTree fills the gap.
func TestTreeGapFromAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := openStore(t, path)
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Append(ctx, "a", domain.Any, storetest.Event("Tick", 1)); err != nil {
		t.Fatal(err)
	}
	old := sqlite.NewStoreWithoutTree(path)
	if err := old.Open(); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Append(ctx, "b", domain.Any, storetest.Event("Tick", 2)); err != nil {
		t.Fatal(err)
	}
	old.Close()
	if _, err := s.Append(ctx, "a", domain.Any, storetest.Event("Tick", 3)); err != nil {
		t.Fatal(err)
	}
	if size, _ := s.TreeSize(ctx); size != 1 {
		t.Fatalf("tree of %d records after a gap, want 1 (the records before it)", size)
	}
	if err := s.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	storetest.CheckTree(t, s, s)
}

// A record missing from the tree table (a damaged file) is an EINTERNAL
// error naming it, never a zero hash in a proof.
func TestTreeMissingRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := openStore(t, path)
	ctx := context.Background()
	for i := 0; i < 16; i++ {
		if _, err := s.Append(ctx, "s", domain.Any, storetest.Event("Tick", i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM tree WHERE record = 2`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s = openStore(t, path)
	defer s.Close()
	if _, err := s.ReadTreeHashes(ctx, []int64{0, tlog.StoredHashIndex(0, 2)}); domain.ErrorCode(err) != domain.EINTERNAL || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("a missing record: %v, want EINTERNAL naming record 2", err)
	}
	if _, err := s.RecordPosition(ctx, 2); domain.ErrorCode(err) != domain.EINTERNAL {
		t.Fatalf("position of a missing record: %v, want EINTERNAL", err)
	}
}
