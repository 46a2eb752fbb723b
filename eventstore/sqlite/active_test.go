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
