package snaptest

import (
	"context"
	"sync/atomic"

	"github.com/tradeledger/tradeledger/domain"
)

// GatedStore is a log whose full reads (ReadAll: the replays that build a
// past state) wait until Gate is closed or their context ends, so that a
// test holds such builds under way; it counts the reads that started and
// those that ended because their context did.
type GatedStore struct {
	domain.EventStore
	Gate               chan struct{}
	Started, Cancelled atomic.Int64
}

// NewGatedStore returns store behind a closed gate.
func NewGatedStore(store domain.EventStore) *GatedStore {
	return &GatedStore{EventStore: store, Gate: make(chan struct{})}
}

// ReadAll waits for the gate, then reads store.
func (g *GatedStore) ReadAll(ctx context.Context, from uint64, max int) domain.EventIterator {
	g.Started.Add(1)
	select {
	case <-g.Gate:
	case <-ctx.Done():
		g.Cancelled.Add(1)
	}
	return g.EventStore.ReadAll(ctx, from, max)
}
