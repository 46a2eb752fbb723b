package esdb_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/esdb"
)

type countAppends struct{ n atomic.Int32 }

var _ esdb.AppendObserver = (*countAppends)(nil)

func (c *countAppends) ObserveAppend(time.Duration) { c.n.Add(1) }

// TestObserverSeesAppends: every Append, accepted or refused, is reported
// once to the observer (the append latency metric).
func TestObserverSeesAppends(t *testing.T) {
	s := openStore(t, newDouble(t).URL())
	var c countAppends
	s.SetObserver(&c)
	clock := domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()
	if _, err := s.Append(ctx, "order-1", domain.NoStream, domain.NewEvent(clock, "Tested", map[string]int{"n": 1})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "order-1", domain.NoStream, domain.NewEvent(clock, "Tested", map[string]int{"n": 2})); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("second NoStream append: %v", err)
	}
	if got := c.n.Load(); got != 2 {
		t.Fatalf("observed %d appends, want 2", got)
	}
}
