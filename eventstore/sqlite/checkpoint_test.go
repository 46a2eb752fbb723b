package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

// walFrame is a WAL frame's size: a page and its header.
const walFrame = 4096 + 24

// TestCheckpointBesideWriter: past the checkpoint pages the WAL is copied
// into the database file by the checkpointer, not inside the writer's
// commit, while the store stays open; the WAL starts over, and every event
// reads back after a reopen.
func TestCheckpointBesideWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := openStore(t, path)
	s.SetCheckpointPages(64)
	ctx := context.Background()
	before := fileSize(t, path)
	most := appendBigCommits(t, s, path, 40, 20, 3000)
	// The checkpointer runs beside the writer: wait for its first.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if bg, _ := s.CheckpointCounts(); bg > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint beside the writer after 10 s: the WAL was past its checkpoint pages")
		}
		time.Sleep(5 * time.Millisecond)
	}
	bg, inline := s.CheckpointCounts()
	t.Logf("checkpoints beside the writer %d, by the writer %d; the WAL's most %d frames", bg, inline, most/walFrame)
	// 40 commits of about 20 pages each, 800 pages in all: the WAL starts
	// over, within catchUpPages × 64 pages and a commit.
	if frames := most / walFrame; frames > 2*64+40 {
		t.Errorf("the WAL grew to %d frames, want at most %d", frames, 2*64+40)
	}
	if after := fileSize(t, path); after <= before {
		t.Errorf("the database file did not grow while the store was open (%d → %d bytes): nothing was checkpointed", before, after)
	}
	want := storetest.ReadAll(t, s.ReadAll(ctx, 0, 0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fileSize(t, path+"-wal"); n > 0 {
		t.Errorf("the WAL is still there after Close (%d bytes)", n)
	}
	r := openStore(t, path)
	defer r.Close()
	got := storetest.ReadAll(t, r.ReadAll(ctx, 0, 0))
	if len(got) != len(want) || len(got) != 800 {
		t.Fatalf("read back %d events, want %d (800 appended)", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Hash != want[i].Hash {
			t.Fatalf("event %d differs after the reopen", i)
		}
	}
}

// TestCheckpointUnderSustainedWrites: writers that never let the store's
// writer pause still see the WAL start over (the writer checkpoints
// itself past catchUpPages × the checkpoint pages), and every append is
// there afterwards.
func TestCheckpointUnderSustainedWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := openStore(t, path)
	s.SetCheckpointPages(32)
	ctx := context.Background()
	const writers, each = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	stop := make(chan struct{})
	var most int64
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if st, err := os.Stat(path + "-wal"); err == nil {
				most = max(most, st.Size())
			}
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				e := domain.NewEvent(domain.SystemClock{}, "Big", map[string]string{"blob": strings.Repeat("y", 2000)})
				if _, err := s.Append(ctx, fmt.Sprintf("w%d-%d", w, i), domain.NoStream, e); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	bg, inline := s.CheckpointCounts()
	t.Logf("checkpoints beside the writer %d, by the writer %d; the WAL's most %d frames", bg, inline, most/walFrame)
	if bg+inline == 0 {
		t.Fatal("no checkpoint ran")
	}
	// 1,200 events of about half a page: the WAL starts over within
	// catchUpPages × 32 pages and the pages of a transaction of at most
	// MaxBatch appends.
	if frames := most / walFrame; frames > 2*32+200 {
		t.Errorf("the WAL grew to %d frames, want at most %d", frames, 2*32+200)
	}
	if n := len(storetest.ReadAll(t, s.ReadAll(ctx, 0, 0))); n != writers*each {
		t.Fatalf("read %d events, want %d", n, writers*each)
	}
}

// fileSize is the size of the file at path (0 when it does not exist).
// appendBigCommits appends commits batches (a commit each) of per events
// of about size bytes to s, the store at path, and returns the most bytes
// its WAL file held after a commit.
func appendBigCommits(t *testing.T, s *sqlite.Store, path string, commits, per, size int) int64 {
	t.Helper()
	var most int64
	for b := 0; b < commits; b++ {
		batch := make([]domain.StreamAppend, per)
		for i := range batch {
			e := domain.NewEvent(domain.SystemClock{}, "Big", map[string]string{"blob": strings.Repeat("x", size)})
			batch[i] = domain.StreamAppend{Stream: fmt.Sprintf("s-%d-%d", b, i), Expected: domain.NoStream, Events: []domain.Event{e}}
		}
		if _, err := s.AppendBatch(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		most = max(most, fileSize(t, path+"-wal"))
	}
	return most
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
