package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// When the WAL cannot be synced, no append is acknowledged: the batch and
// every later append fail with EUNAVAILABLE. The batch was committed, so
// after a restart the same append (same event ids) is answered from what is
// stored, and nothing is written twice.
func TestFailedSyncAcknowledgesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	ctx := context.Background()
	clock := domain.SystemClock{}
	first := domain.NewEvent(clock, "Changed", map[string]int{"n": 1})
	second := domain.NewEvent(clock, "Changed", map[string]int{"n": 2})

	s := NewStore(path)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "config", domain.NoStream, first); err != nil {
		t.Fatalf("first append: %v", err)
	}
	s.wal.syncFile = func(*os.File) error { return errors.New("input/output error") }
	for i, e := range []domain.Event{second, domain.NewEvent(clock, "Changed", nil)} {
		_, err := s.Append(ctx, "config", domain.Any, e)
		if domain.ErrorCode(err) != domain.EUNAVAILABLE {
			t.Fatalf("append %d after a failed sync: err = %v, want EUNAVAILABLE", i, err)
		}
	}
	if head, _ := s.Head(ctx); head != 1 {
		t.Fatalf("head = %d, want 1: an unsynced commit must not be published", head)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = NewStore(path)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Append(ctx, "config", domain.ExpectedVersion(0), second)
	if err != nil {
		t.Fatalf("retry after restart: %v", err)
	}
	if res.LastVersion != 1 || res.LastPosition != 2 {
		t.Fatalf("retry = %+v, want the stored version 1 at position 2", res)
	}
	if head, _ := s.Head(ctx); head != 2 {
		t.Fatalf("head after retry = %d, want 2 (nothing written twice)", head)
	}
}

// An integrity check that could not run gives no verdict: the write fails
// with EUNAVAILABLE and the next one checks again. A verdict, good or bad,
// is kept.
func TestIntegrityCheckRetriedUntilVerdict(t *testing.T) {
	s := openTempStore(t)
	ctx := context.Background()
	runs := 0
	s.checkFile = func(string, <-chan struct{}) (string, error) {
		runs++
		if runs == 1 {
			return "", errors.New("disk I/O error")
		}
		return "ok", nil
	}
	if _, err := s.Append(ctx, "s", domain.Any, domain.NewEvent(domain.SystemClock{}, "E", nil)); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("append while the check cannot run: %v, want EUNAVAILABLE", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := s.Append(ctx, "s", domain.Any, domain.NewEvent(domain.SystemClock{}, "E", nil)); err != nil {
			t.Fatalf("append %d once the check can run: %v", i, err)
		}
	}
	if runs != 2 {
		t.Fatalf("the check ran %d times, want 2 (once failing, once to its verdict)", runs)
	}
}

// A commit the syncer has not made durable yet is in the file but not
// shown: a subscriber reading from the file stops at the durable head.
func TestSubscriberStopsAtDurableHead(t *testing.T) {
	s := openTempStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "s", domain.Any, domain.NewEvent(domain.SystemClock{}, "E", nil)); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before Close, which waits for the syncer, even when the test fails
	s.wal.syncFile = func(f *os.File) error { <-release; return fdatasync(f) }
	appended := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, "s", domain.Any, domain.NewEvent(domain.SystemClock{}, "E", nil))
		appended <- err
	}()
	for s.lastCommitted.Load() < 2 { // committed, the syncer waiting
		runtime.Gosched()
	}
	it := s.Subscribe(ctx, 1).(*iterator)
	defer it.Close()
	evs, err := it.read(nil, 100)
	if err != nil || len(evs) != 1 || evs[0].Position != 1 {
		t.Fatalf("read past the durable head: %d events, %v", len(evs), err)
	}
	unblock()
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	it.next = 2
	if evs, err := it.read(nil, 100); err != nil || len(evs) != 1 || evs[0].Position != 2 {
		t.Fatalf("after the sync: %d events, %v", len(evs), err)
	}
}
