package projections_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// waitFor yields until cond holds.
func waitFor(cond func() bool) {
	for !cond() {
		runtime.Gosched()
	}
}

// TestStatesBounded: at most MaxBuilds past states are built at once and
// MaxQueued more wait; a request for yet another is refused with a
// BusyError (EUNAVAILABLE, a time to retry after); a build whose every
// requester left is cancelled, queued or under way, and is not kept; two
// requests for the same state share one build.
func TestStatesBounded(t *testing.T) {
	g := newAsofLog(t)
	g.fill20()
	store := snaptest.NewGatedStore(g.store)
	ss := projections.NewStates(store)
	ss.MaxBuilds, ss.MaxQueued = 1, 1
	cut := func(min int) projections.Cut { return projections.AsOf(g.at(min).UnixMilli()) }

	type result struct {
		s   *projections.State
		err error
	}
	get := func(ctx context.Context, c projections.Cut) chan result {
		out := make(chan result, 1)
		go func() {
			s, err := ss.Get(ctx, c, domain.LOFO)
			out <- result{s, err}
		}()
		return out
	}
	ctxA, cancelA := context.WithCancel(context.Background())
	a := get(ctxA, cut(5))
	waitFor(func() bool { return store.Started.Load() == 1 }) // A builds
	a2 := get(context.Background(), cut(5))                   // shares A's build
	ctxB, cancelB := context.WithCancel(context.Background())
	b := get(ctxB, cut(7))
	waitFor(func() bool { return ss.Pending() == 2 }) // B waits for a slot

	_, err := ss.Get(context.Background(), cut(9), domain.LOFO)
	var busy *projections.BusyError
	if !errors.As(err, &busy) || domain.ErrorCode(err) != domain.EUNAVAILABLE || busy.RetryAfter() <= 0 {
		t.Fatalf("a third state while one builds and one waits: %v, want a BusyError", err)
	}

	// B's requester leaves: its queued build goes, never started.
	cancelB()
	if r := <-b; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("B: %v", r.err)
	}
	waitFor(func() bool { return ss.Pending() == 1 })
	if n := store.Started.Load(); n != 1 {
		t.Fatalf("%d reads of the log started, want only A's", n)
	}

	// One of A's two requesters leaves: the build goes on for the other.
	cancelA()
	if r := <-a; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("A: %v", r.err)
	}
	close(store.Gate)
	r := <-a2
	if r.err != nil || r.s == nil || store.Cancelled.Load() != 0 {
		t.Fatalf("A's other requester: %v (cancelled reads %d)", r.err, store.Cancelled.Load())
	}
	if ss.Builds() != 1 || ss.Pending() != 0 {
		t.Fatalf("%d built, %d pending", ss.Builds(), ss.Pending())
	}
}

// TestStatesCancelled: a build under way whose only requester leaves is
// cancelled (its read of the log ends) and not kept.
func TestStatesCancelled(t *testing.T) {
	g := newAsofLog(t)
	g.fill20()
	store := snaptest.NewGatedStore(g.store)
	ss := projections.NewStates(store)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ss.Get(ctx, projections.AsOf(g.at(5).UnixMilli()), domain.LOFO)
		done <- err
	}()
	waitFor(func() bool { return store.Started.Load() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Get: %v", err)
	}
	waitFor(func() bool { return store.Cancelled.Load() == 1 && ss.Pending() == 0 })
	if ss.Builds() != 0 {
		t.Fatalf("a cancelled build was kept (%d builds)", ss.Builds())
	}
}
