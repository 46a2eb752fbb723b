package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// TestActiveAppendsBalance checks the count of Appends under way, which the
// writer waits for before it commits: once every Append has returned,
// whether it was written, refused (invalid, a conflict), cancelled, failed
// by a full queue's wait or by Close, the count is back to zero, so no
// later transaction waits for an append that will never come.
func TestActiveAppendsBalance(t *testing.T) {
	s := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	s.MaxBatch = 4 // a small queue: some Appends wait for room
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	clock := domain.SystemClock{}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				e := domain.NewEvent(clock, "Tick", map[string]int{"g": g, "i": i})
				stream := fmt.Sprintf("s-%d", g)
				switch i % 5 {
				case 0, 1:
					if _, err := s.Append(context.Background(), stream, domain.Any, e); err != nil {
						t.Error(err)
					}
				case 2: // invalid: no type
					e.Type = ""
					if _, err := s.Append(context.Background(), stream, domain.Any, e); domain.ErrorCode(err) != domain.EINVALID {
						t.Errorf("append without a type: %v", err)
					}
				case 3: // a conflict
					if _, err := s.Append(context.Background(), stream, domain.NoStream, e); domain.ErrorCode(err) != domain.ECONFLICT {
						t.Errorf("append to an existing stream with NoStream: %v", err)
					}
				case 4: // cancelled before it is queued, or written
					if _, err := s.Append(cancelled, stream, domain.Any, e); err != nil && !errors.Is(err, context.Canceled) {
						t.Errorf("cancelled append: %v", err)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if n := s.ActiveAppends(); n != 0 {
		t.Fatalf("%d appends counted as under way after every Append returned", n)
	}
	s.Close()
	if _, err := s.Append(context.Background(), "after", domain.Any, domain.NewEvent(clock, "Tick", nil)); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("append after Close: %v", err)
	}
	if n := s.ActiveAppends(); n != 0 {
		t.Fatalf("%d appends counted as under way after Close", n)
	}
}

// TestAppendsAnswerTheirOwn checks that every Append gets its own answer
// while the store reuses requests and their channels: concurrent callers
// mix appends that are written, retried (the original result), refused
// (a conflict, invalid) and cancelled, and each result must be the one
// its own append earns, positions as read back from the file.
func TestAppendsAnswerTheirOwn(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "events.db"))
	clock := domain.SystemClock{}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	const writers, rounds = 16, 40
	results := make([][]domain.AppendResult, writers) // written appends, per writer
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := fmt.Sprintf("s-%d", g)
			version := int64(-1)
			for i := range rounds {
				e := domain.NewEvent(clock, "Tick", map[string]int{"g": g, "i": i})
				switch i % 6 {
				case 0, 1: // written, one or two events
					evs := []domain.Event{e}
					if i%6 == 1 {
						evs = append(evs, domain.NewEvent(clock, "Tick", map[string]int{"g": g, "i": -i}))
					}
					res, err := s.Append(ctx, stream, domain.ExpectedVersion(version), evs...)
					if version < 0 {
						res, err = s.Append(ctx, stream, domain.NoStream, evs...) // a retry of the same ids
					}
					if err != nil {
						t.Error(err)
						return
					}
					if res.FirstVersion != version+1 || res.LastVersion != version+int64(len(evs)) {
						t.Errorf("%s: append after version %d answered %+v", stream, version, res)
						return
					}
					version = res.LastVersion
					results[g] = append(results[g], res)
					// A retry of the same events: the same answer.
					if again, err := s.Append(ctx, stream, domain.ExpectedVersion(version-int64(len(evs))), evs...); err != nil || again != res {
						t.Errorf("%s: retry answered %+v, %v; want %+v", stream, again, err, res)
						return
					}
				case 2: // a conflict
					if _, err := s.Append(ctx, stream, domain.ExpectedVersion(version+1), e); domain.ErrorCode(err) != domain.ECONFLICT {
						t.Errorf("%s: append expecting %d at %d: %v", stream, version+1, version, err)
					}
				case 3: // invalid
					e.ID = ""
					if _, err := s.Append(ctx, stream, domain.Any, e); domain.ErrorCode(err) != domain.EINVALID {
						t.Errorf("%s: append without an id: %v", stream, err)
					}
				case 4: // cancelled: not written, or written and answered
					res, err := s.Append(cancelled, stream, domain.ExpectedVersion(version), e)
					switch {
					case err == nil && res.FirstVersion == version+1 && res.LastVersion == version+1:
						version = res.LastVersion
						results[g] = append(results[g], res)
					case err == nil || !errors.Is(err, context.Canceled):
						t.Errorf("%s: cancelled append: %+v, %v", stream, res, err)
					}
				case 5: // NoStream on an existing stream
					if _, err := s.Append(ctx, stream, domain.NoStream, e); domain.ErrorCode(err) != domain.ECONFLICT {
						t.Errorf("%s: NoStream append at %d: %v", stream, version, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	for g, rs := range results {
		stream := fmt.Sprintf("s-%d", g)
		it := s.ReadStream(ctx, stream, 0, 0)
		var evs []domain.Event
		for it.Next() {
			evs = append(evs, it.Event())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range rs {
			n += int(r.LastVersion - r.FirstVersion + 1)
			if r.LastVersion >= int64(len(evs)) || evs[r.LastVersion].Position != r.LastPosition {
				t.Fatalf("%s: answered %+v, the file has %d events", stream, r, len(evs))
			}
		}
		if n != len(evs) {
			t.Fatalf("%s: %d events answered as written, %d in the file", stream, n, len(evs))
		}
	}
}
