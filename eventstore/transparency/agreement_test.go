package transparency_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/esdb"
	"github.com/tradeledger/tradeledger/eventstore/esdb/esdbtest"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// esdbLog is an EventStoreDB log (the protocol double) whose tree is kept
// in local files, as serve keeps it, with checkpoints signed over it.
type esdbLog struct {
	t   *testing.T
	srv *esdbtest.Server
	dir string
	key *transparency.Key
}

func newESDBLog(t *testing.T) *esdbLog {
	t.Helper()
	srv, err := esdbtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &esdbLog{t: t, srv: srv, dir: t.TempDir(), key: newKey(t)}
}

// open connects a new client and opens the tree's files (a start).
func (l *esdbLog) open() (*esdb.Store, *transparency.FileTree, *transparency.Log) {
	l.t.Helper()
	s := esdb.NewStore(l.srv.URL())
	if err := s.Open(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { s.Close() })
	tree := openFileTree(l.t, l.dir, s)
	clock := domain.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	return s, tree, transparency.NewLog(s, tree, l.key, clock)
}

// grow appends n events and signs a checkpoint of the whole log, which
// the tree then adds (and keeps).
func (l *esdbLog) grow(s *esdb.Store, tree *transparency.FileTree, log *transparency.Log, n int) domain.CheckpointSigned {
	l.t.Helper()
	ctx := eventstore.WithActor(context.Background(), domain.ActorCore)
	for i := 0; i < n; i++ {
		if _, err := s.Append(ctx, "order-1", domain.Any, storetest.Event("Tick", i)); err != nil {
			l.t.Fatal(err)
		}
	}
	c, _, err := log.Issue(ctx, true)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := tree.BuildTree(ctx, nil); err != nil {
		l.t.Fatal(err)
	}
	return c
}

// An EventStoreDB log restored from an older backup (its last records
// gone) is not extended by the tree kept in local files: the tree keeps
// its records and refuses to grow, CheckAgreement names what was lost,
// and the kept checkpoint catches the twin (the tree's files cut too).
// AcceptCut goes on and records it.
func TestFileTreeCutLog(t *testing.T) {
	ctx := eventstore.WithActor(context.Background(), domain.ActorCLI)
	for _, twin := range []bool{false, true} {
		l := newESDBLog(t)
		s, tree, log := l.open()
		l.grow(s, tree, log, 20)
		c := l.grow(s, tree, log, 5) // checkpoint of 26: 20 events, a checkpoint, 5 events
		records, _ := tree.TreeSize(ctx)
		if kept, ok, err := tree.KeptCheckpoint(ctx); err != nil || !ok || kept.CheckpointSigned != c || records != c.Size+1 {
			t.Fatalf("kept %+v %v %v, tree %d: want the last checkpoint %+v, the tree one record more", kept, ok, err, records, c)
		}
		lastPos, _ := tree.RecordPosition(ctx, records-1)
		lostFrom, _ := tree.RecordPosition(ctx, records-3)
		if twin {
			// The tree cut too no longer names the first lost position:
			// the lost ones are those after the log's last.
			keptPos, _ := tree.RecordPosition(ctx, records-4)
			lostFrom = keptPos + 1
		}
		tree.Close()
		s.Close()

		// The last three records lost (two events and the checkpoint's).
		l.srv.CutAfter(l.srv.Len() - 3)
		if twin {
			cutFiles(t, l.dir, records-3)
		}
		s, tree, log = l.open()
		v, err := transparency.CheckAgreement(ctx, s, tree, l.key.VerifierKey())
		if err != nil {
			t.Fatal(err)
		}
		wantTree := records
		if twin {
			wantTree = records - 3
		}
		if v.Records != wantTree || v.Agreed != records-3 || v.Checkpoint != c.Size || v.LostFrom != lostFrom || v.LostTo != lastPos ||
			!strings.Contains(v.Problem, "the last checkpoint signed covers 26 events, but the log holds only 24 of them") {
			t.Fatalf("twin %v: verdict %+v, want tree %d, 24 agreed, positions %d to %d lost", twin, v, wantTree, lostFrom, lastPos)
		}
		if !twin {
			if err := tree.BuildTree(ctx, nil); err == nil || !strings.Contains(err.Error(), "cut") {
				t.Fatalf("BuildTree over the cut log: %v, want a refusal", err)
			}
		}
		if _, _, err := log.Issue(ctx, true); err == nil || !strings.Contains(err.Error(), "no checkpoint signed") && !strings.Contains(err.Error(), "was cut") {
			t.Fatalf("Issue over the cut log: %v, want a refusal", err)
		}

		cp, err := log.AcceptCut(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Size != records-2 || !strings.Contains(cp.Note, "\nlog cut accepted: 24 of") {
			t.Fatalf("checkpoint after the cut %+v, want 25 records and the extension line", cp)
		}
		if v, err := transparency.CheckAgreement(ctx, s, tree, l.key.VerifierKey()); err != nil || v.Problem != "" {
			t.Fatalf("after AcceptCut: %+v %v", v, err)
		}
		if err := tree.BuildTree(ctx, nil); err != nil {
			t.Fatal(err)
		}
		storetest.CheckTree(t, s, tree)
		sum, err := log.Verify(ctx, audit.VerifyOptions{})
		if err != nil || !sum.OK {
			t.Fatalf("Verify after the accepted cut: %+v %v", sum, err)
		}
	}
}

// cutFiles cuts a FileTree's files in dir to n records, as a restore of
// the tree from the same older backup would.
func cutFiles(t *testing.T, dir string, n int64) {
	t.Helper()
	if err := os.Truncate(filepath.Join(dir, "positions"), 8*n); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "hashes"), 32*tlog.StoredHashCount(n)); err != nil {
		t.Fatal(err)
	}
}

// Verify gives one verdict for the chains, the tree and the kept
// checkpoint: on the embedded store, a log cut at its end (the tree left)
// is not OK, with the sizes and the lost positions.
func TestVerifyNamesACutLog(t *testing.T) {
	e := newLogEnv(t)
	ctx := eventstore.WithActor(context.Background(), domain.ActorCore)
	e.append(30)
	if _, _, err := e.log.Issue(ctx, true); err != nil {
		t.Fatal(err)
	}
	sum, err := e.log.Verify(ctx, audit.VerifyOptions{})
	if err != nil || !sum.OK || sum.Tree == nil || sum.Tree.Records != 31 || sum.Tree.Checkpoint != 30 || sum.Tree.Root == "" {
		t.Fatalf("sound log: %+v %+v %v", sum, sum.Tree, err)
	}
	// Two rows removed under the store (another process, a hand).
	db := openRaw(t, e.store.Path)
	if _, err := db.Exec(`DELETE FROM events WHERE position > 29`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	sum, err = e.log.Verify(ctx, audit.VerifyOptions{})
	if err != nil || sum.OK || sum.Tree.Records != 31 || sum.Tree.LogEvents != 29 || sum.Tree.LostFrom != 30 || sum.Tree.LostTo != 31 ||
		!strings.Contains(sum.Problem, "the Merkle tree holds 31 records, the log only 29 events") ||
		!strings.Contains(sum.Problem, "does not extend the last checkpoint signed (30 events") {
		t.Fatalf("cut log: %+v %+v %v", sum, sum.Tree, err)
	}
}

// openRaw opens the embedded store's file with database/sql, as an
// operator's sqlite3 shell does.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// Only a checkpoint the log signed holds the log to it: one recorded in
// the checkpoints stream that does not open under the log's key (a key
// replaced since, or a record that was never signed) is not counted.
func TestCheckAgreementCountsOnlySignedCheckpoints(t *testing.T) {
	e := newLogEnv(t)
	ctx := context.Background()
	e.append(5)
	fake := domain.NewEvent(e.clock, domain.TypeCheckpointSigned, domain.CheckpointSigned{Origin: e.key.Origin(), Size: 5,
		Root: "cm9vdA==", Note: e.key.Origin() + "\n5\ncm9vdA==\n\n— " + e.key.Origin() + " c2ln\n"})
	if _, err := e.store.Append(ctx, domain.StreamCheckpoints, domain.Any, fake); err != nil {
		t.Fatal(err)
	}
	if v, err := transparency.CheckAgreement(ctx, e.store, e.store, ""); err != nil || !strings.Contains(v.Problem, "not the root cm9vdA==") {
		t.Fatalf("any checkpoint counted: %+v %v, want the record's root named", v, err)
	}
	v, err := transparency.CheckAgreement(ctx, e.store, e.store, e.key.VerifierKey())
	if err != nil || v.Problem != "" || v.Checkpoint != 0 || v.Records != 6 || v.Agreed != 6 {
		t.Fatalf("an unsigned record counted: %+v %v", v, err)
	}
	if _, _, err := e.log.Issue(eventstore.WithActor(ctx, domain.ActorCore), true); err != nil {
		t.Fatalf("Issue over a log with an unsigned record: %v", err)
	}
	if v, err := transparency.CheckAgreement(ctx, e.store, e.store, e.key.VerifierKey()); err != nil || v.Problem != "" || v.Checkpoint != 6 {
		t.Fatalf("after a signed checkpoint: %+v %v", v, err)
	}
}

// A tree kept in files that is only behind its log (its files cut or
// lost, the log whole) is not a cut log: the log still holds the kept
// checkpoint's event, and BuildTree catches the tree up.
func TestFileTreeBehindItsLogIsNoCut(t *testing.T) {
	ctx := context.Background()
	l := newESDBLog(t)
	s, tree, log := l.open()
	l.grow(s, tree, log, 10)
	c := l.grow(s, tree, log, 4)
	tree.Close()
	cutFiles(t, l.dir, 6)
	s, tree, _ = l.open()
	v, err := transparency.CheckAgreement(ctx, s, tree, l.key.VerifierKey())
	if err != nil || v.Problem != "" || v.Records != 6 || v.Checkpoint != c.Size {
		t.Fatalf("a tree behind its whole log: %+v %v, want no problem", v, err)
	}
	if err := tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	storetest.CheckTree(t, s, tree)
}
