package projections_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// counter counts events per type.
type counter struct {
	mu     sync.Mutex
	counts map[string]int
	order  []uint64
}

func (c *counter) Name() string { return "counter" }
func (c *counter) Apply(e *domain.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[e.Type]++
	c.order = append(c.order, e.Position)
	return nil
}
func (c *counter) get(typ string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[typ]
}

func TestRunnerReplaysThenFollows(t *testing.T) {
	store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	clock := domain.NewManualClock(time.Unix(1700000000, 0))
	for i := 0; i < 5; i++ {
		if _, err := store.Append(ctx, "a", domain.Any, domain.NewEvent(clock, "Old", nil)); err != nil {
			t.Fatal(err)
		}
	}
	c := &counter{counts: map[string]int{}}
	r := projections.NewRunner(store)
	r.Register(c)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := c.get("Old"); got != 5 {
		t.Fatalf("replayed %d events, want 5", got)
	}
	for i := 0; i < 20; i++ {
		res, err := store.Append(ctx, "b", domain.Any, domain.NewEvent(clock, "New", nil))
		if err != nil {
			t.Fatal(err)
		}
		// Read-your-writes: once WaitFor returns, the projection has it.
		if err := r.WaitFor(ctx, res.LastPosition); err != nil {
			t.Fatal(err)
		}
		if got := c.get("New"); got != i+1 {
			t.Fatalf("after WaitFor, New = %d, want %d", got, i+1)
		}
	}
	for i := 1; i < len(c.order); i++ {
		if c.order[i] <= c.order[i-1] {
			t.Fatalf("applied out of order: %v", c.order)
		}
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := r.WaitFor(short, r.Position()+100); err == nil {
		t.Fatalf("WaitFor a future position returned nil")
	}
}
