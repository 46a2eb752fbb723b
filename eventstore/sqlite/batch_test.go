package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// batchOf returns n appends of three events each to new streams, with ids
// derived from tag and the index (so that the same call gives the same ids).
func batchOf(tag string, n int, expected domain.ExpectedVersion) []domain.StreamAppend {
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_000_000))
	batch := make([]domain.StreamAppend, n)
	for i := range batch {
		evs := make([]domain.Event, 3)
		for j := range evs {
			evs[j] = domain.NewEvent(clock, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprint(i, "-", j)})
			evs[j].ID = fmt.Sprintf("%s-%d-%d", tag, i, j)
		}
		batch[i] = domain.StreamAppend{Stream: fmt.Sprintf("%s-%d", tag, i), Expected: expected, Events: evs}
	}
	return batch
}

// hideBatch hides the store's AppendBatch, so that domain.AppendBatch
// falls back to one Append per element.
type hideBatch struct{ domain.EventStore }

// batchPaths are the two ways domain.AppendBatch reaches a store: its own
// AppendBatch, and the fallback of one Append per element (hideBatch).
var batchPaths = []struct {
	name  string
	store func(*sqlite.Store) domain.EventStore
}{
	{"batch", func(s *sqlite.Store) domain.EventStore { return s }},
	{"fallback", func(s *sqlite.Store) domain.EventStore { return hideBatch{s} }},
}

func openBatchStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	s.MaxBatch, s.MaxBatchEvents = 16, 16 // several transactions per batch
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestAppendBatch: a batch is appended in slice order, each element as one
// Append would be; appending it again writes nothing and answers the same
// results; the log verifies; the fallback (one Append per element) gives
// the same log.
func TestAppendBatch(t *testing.T) {
	ctx := context.Background()
	for _, c := range batchPaths {
		t.Run(c.name, func(t *testing.T) {
			s := openBatchStore(t)
			store := c.store(s)
			const n = 100
			batch := batchOf("order", n, domain.NoStream)
			res, err := domain.AppendBatch(ctx, store, batch)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if got, want := r.LastPosition, uint64(3*i+3); got != want || r.FirstVersion != 0 || r.LastVersion != 2 {
					t.Fatalf("result %d = %+v, want last position %d, versions 0..2", i, r, want)
				}
			}
			again, err := domain.AppendBatch(ctx, store, batchOf("order", n, domain.NoStream))
			if err != nil {
				t.Fatalf("appending the batch again: %v", err)
			}
			for i := range again {
				if again[i] != res[i] {
					t.Fatalf("re-append %d answered %+v, want the original %+v", i, again[i], res[i])
				}
			}
			if head, _ := s.Head(ctx); head != 3*n {
				t.Fatalf("head %d after the re-append, want %d", head, 3*n)
			}
			v := audit.NewVerifier()
			it := s.ReadAll(ctx, 0, 0)
			defer it.Close()
			for i := 0; it.Next(); i++ {
				e := it.Event()
				if want := fmt.Sprintf("order-%d", i/3); e.Stream != want {
					t.Fatalf("event %d in stream %s, want %s (slice order)", i, e.Stream, want)
				}
				if f := v.Add(&e); f != nil {
					t.Fatalf("verify: %v", f)
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if sum := v.Summary(false); !sum.OK || sum.Events != 3*n || sum.Streams != n {
				t.Fatalf("verify: %+v, want %d events in %d streams, no fault", sum, 3*n, n)
			}
		})
	}
}

// TestAppendBatchFailure: an element whose expected version does not hold
// is named by the BatchError with its code; the elements around it are
// appended, through the store's AppendBatch as through the fallback.
func TestAppendBatchFailure(t *testing.T) {
	ctx := context.Background()
	for _, c := range batchPaths {
		t.Run(c.name, func(t *testing.T) {
			s := openBatchStore(t)
			if _, err := s.Append(ctx, "order-5", domain.NoStream, batchOf("other", 1, domain.NoStream)[0].Events...); err != nil {
				t.Fatal(err)
			}
			_, err := domain.AppendBatch(ctx, c.store(s), batchOf("order", 10, domain.NoStream))
			var be *domain.BatchError
			if !errors.As(err, &be) || be.Index != 5 || be.Stream != "order-5" || domain.ErrorCode(err) != domain.ECONFLICT {
				t.Fatalf("err = %v, want a BatchError at index 5, ECONFLICT", err)
			}
			for i, e := range be.Errs {
				if (e != nil) != (i == 5) {
					t.Fatalf("element %d: error %v", i, e)
				}
			}
			for i := 0; i < 10; i++ {
				if i == 5 {
					continue
				}
				n := 0
				it := s.ReadStream(ctx, fmt.Sprintf("order-%d", i), 0, 0)
				for it.Next() {
					n++
				}
				it.Close()
				if n != 3 {
					t.Fatalf("order-%d has %d events, want 3", i, n)
				}
			}
		})
	}
}

// TestAppendBatchInvalid: an element that fails Append's checks fails
// alone.
func TestAppendBatchInvalid(t *testing.T) {
	ctx := context.Background()
	s := openBatchStore(t)
	batch := batchOf("order", 4, domain.Any)
	batch[2].Events[1].ID = ""
	_, err := s.AppendBatch(ctx, batch)
	var be *domain.BatchError
	if !errors.As(err, &be) || be.Index != 2 || domain.ErrorCode(err) != domain.EINVALID || be.Errs[3] != nil {
		t.Fatalf("err = %v, want a BatchError at index 2 only, EINVALID", err)
	}
	if head, _ := s.Head(ctx); head != 9 {
		t.Fatalf("head %d, want 9 (the three valid elements)", head)
	}
}

// TestAppendBatchGroups: AppendBatch's elements are committed in groups of
// up to MaxBatchEvents events, one transaction each, whatever MaxBatch is.
func TestAppendBatchGroups(t *testing.T) {
	ctx := context.Background()
	s := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	s.MaxBatch, s.MaxBatchEvents = 16, 150
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var obs countingObserver
	s.SetObserver(&obs)
	if _, err := s.AppendBatch(ctx, batchOf("order", 100, domain.NoStream)); err != nil {
		t.Fatal(err)
	}
	// 100 elements of 3 events: two groups of 50 elements.
	if got, want := obs.events.Load(), int64(300); got != want {
		t.Fatalf("%d events committed, want %d", got, want)
	}
	if got, want := obs.batches.Load(), int64(2); got != want {
		t.Fatalf("%d transactions, want %d (groups of %d events)", got, want, s.MaxBatchEvents)
	}
}
