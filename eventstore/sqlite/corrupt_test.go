package sqlite_test

import (
	"context"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

// fillLog appends n events over a few streams, each with a payload big
// enough to span many pages.
func fillLog(t *testing.T, s *sqlite.Store, n int) {
	t.Helper()
	clock := domain.SystemClock{}
	pad := strings.Repeat("x", 300)
	for i := 0; i < n; i++ {
		e := domain.NewEvent(clock, "Filler", map[string]any{"i": i, "pad": pad})
		if _, err := s.Append(context.Background(), "fill-"+string(rune('a'+i%4)), domain.Any, e); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// verifyChains fails the test if any stream's chain is broken.
func verifyChains(t *testing.T, evs []domain.Event) {
	t.Helper()
	last := map[string]domain.Event{}
	for _, e := range evs {
		p, ok := last[e.Stream]
		if (ok && (e.Version != p.Version+1 || e.PrevHash != p.Hash)) || (!ok && e.Version != 0) || domain.ComputeHash(&e) != e.Hash {
			t.Fatalf("chain broken at %s/%d", e.Stream, e.Version)
		}
		last[e.Stream] = e
	}
}

// A write-ahead log whose tail was torn (a crash mid-write) recovers to the
// last whole commit: a prefix of the log, every chain intact.
func TestTornWALTailRecoversToLastCommit(t *testing.T) {
	dir := t.TempDir()
	live := openStore(t, filepath.Join(dir, "events.db"))
	defer live.Close()
	fillLog(t, live, 200)
	all := storetest.ReadAll(t, live.ReadAll(context.Background(), 0, 0))

	// Copy the files as a crash would leave them: database plus WAL, the
	// WAL cut in the middle of a frame.
	torn := t.TempDir()
	copyFile(t, filepath.Join(dir, "events.db"), filepath.Join(torn, "events.db"))
	copyFile(t, filepath.Join(dir, "events.db-wal"), filepath.Join(torn, "events.db-wal"))
	wal := filepath.Join(torn, "events.db-wal")
	info, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() < 8192 {
		t.Fatalf("WAL is only %d bytes; the test needs uncheckpointed frames", info.Size())
	}
	if err := os.Truncate(wal, info.Size()-1500); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, filepath.Join(torn, "events.db"))
	defer s.Close()
	got := storetest.ReadAll(t, s.ReadAll(context.Background(), 0, 0))
	if len(got) == 0 || len(got) >= len(all) {
		t.Fatalf("recovered %d of %d events; want a proper prefix", len(got), len(all))
	}
	for i := range got {
		if got[i].ID != all[i].ID || got[i].Hash != all[i].Hash {
			t.Fatalf("recovered event %d differs from the original", i)
		}
	}
	verifyChains(t, got)
	if _, err := s.Append(context.Background(), "after", domain.Any, storetest.Event("After", 1)); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
}

// A database file whose tail pages were overwritten with garbage is refused
// with a clear error: the store never serves garbage as events.
func TestGarbageTailIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := openStore(t, path)
	fillLog(t, s, 400)
	if err := s.Close(); err != nil { // checkpoints the WAL into the file
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.Stat()
	garbage := make([]byte, 3*4096)
	rand.New(rand.NewSource(7)).Read(garbage)
	if _, err := f.WriteAt(garbage, info.Size()-int64(len(garbage))); err != nil {
		t.Fatal(err)
	}
	f.Close()

	bad := sqlite.NewStore(path)
	err = bad.Open()
	if err == nil {
		// Open does not read the whole file; the integrity check does, and
		// the store then refuses to write.
		defer bad.Close()
		err = bad.CheckIntegrity()
		if err == nil {
			t.Fatal("the integrity check passed a file with a garbage tail")
		}
		if _, aerr := bad.Append(context.Background(), "after", domain.Any, storetest.Event("After", 1)); domain.ErrorCode(aerr) != domain.EINTERNAL {
			t.Fatalf("append to a damaged file: err = %v, want the integrity error", aerr)
		}
	}
	if err == nil {
		it := bad.ReadAll(context.Background(), 0, 0)
		var evs []domain.Event
		for it.Next() {
			evs = append(evs, it.Event())
		}
		err = it.Err()
		it.Close()
		if err == nil {
			verifyChains(t, evs)
			t.Fatalf("a corrupt file opened and read %d events without an error", len(evs))
		}
	}
	if msg := err.Error(); !strings.Contains(msg, "integrity") && !strings.Contains(msg, "corrupt") && !strings.Contains(msg, "malformed") {
		t.Fatalf("error does not say the file is damaged: %v", err)
	}
}
