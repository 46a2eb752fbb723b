package projections_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// fakeDesk applies its own appends at once, as the engine's Desk does
// (Desk.HoldApplies is its Ahead): a gate its applies read-lock, and the
// highest position applied.
type fakeDesk struct {
	gate     sync.RWMutex
	ahead    atomic.Uint64
	released chan struct{} // told of each release of a hold
}

func (d *fakeDesk) apply(pos uint64) {
	d.gate.RLock()
	defer d.gate.RUnlock()
	if pos > d.ahead.Load() {
		d.ahead.Store(pos)
	}
}

func (d *fakeDesk) hold() (uint64, func()) {
	d.gate.Lock()
	return d.ahead.Load(), func() {
		d.gate.Unlock()
		select {
		case d.released <- struct{}{}:
		default:
		}
	}
}

// stalling is a projection whose Apply of the event at position stall
// waits for resume (the runner stopped there, behind the desk), and whose
// Freeze checks it runs at one cut: the desk's applies held and nothing
// the desk applied beyond what the runner has.
type stalling struct {
	t       *testing.T
	desk    *fakeDesk
	runner  *projections.Runner
	stall   uint64
	resume  chan struct{}
	stalled chan struct{}
	applied atomic.Uint64
}

func (p *stalling) Name() string { return "stalling" }
func (p *stalling) Apply(e *domain.Event) error {
	if e.Position == p.stall {
		close(p.stalled)
		<-p.resume
	}
	p.applied.Store(e.Position)
	return nil
}
func (p *stalling) SnapshotVersion() uint32 { return 1 }
func (p *stalling) Freeze() func(*snap.Encoder) {
	if p.desk.gate.TryRLock() {
		p.desk.gate.RUnlock()
		p.t.Error("frozen while the desk could apply")
	}
	if a, at := p.desk.ahead.Load(), p.applied.Load(); a > at {
		p.t.Errorf("frozen at %d with the desk at %d", at, a)
	}
	pos := p.applied.Load()
	return func(e *snap.Encoder) { e.Uint64(pos) }
}
func (p *stalling) Load(*snap.Decoder) (func(), error) { return func() {}, nil }

// TestHoldLetsTheDeskApplyWhileTheRunnerCatchesUp: a freeze asked for
// while the runner is behind the desk's applies does not hold the desk
// while the runner catches up — the desk applies its next append
// meanwhile — and freezes every projection at one position, the desk's
// applies held and all of them applied by the runner.
func TestHoldLetsTheDeskApplyWhileTheRunnerCatchesUp(t *testing.T) {
	store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	clock := domain.NewManualClock(time.Unix(1700000000, 0))
	appendOne := func() uint64 {
		t.Helper()
		res, err := store.Append(ctx, "s", domain.Any, domain.NewEvent(clock, "E", nil))
		if err != nil {
			t.Fatal(err)
		}
		return res.LastPosition
	}
	for range 3 {
		appendOne()
	}
	desk := &fakeDesk{released: make(chan struct{}, 1)}
	r := projections.NewRunner(store)
	p := &stalling{t: t, desk: desk, runner: r, resume: make(chan struct{}), stalled: make(chan struct{})}
	r.Register(p)
	r.Ahead = desk.hold
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// The desk appends and applies at once; the runner stalls on it.
	p.stall = r.Position() + 1
	desk.apply(appendOne())
	<-p.stalled

	type result struct {
		f   *projections.Frozen
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := r.Freeze(ctx)
		done <- result{f, err}
	}()
	// The freeze reads where the desk is and lets it go on: the desk
	// applies its next append while the runner is still behind.
	select {
	case <-desk.released:
	case res := <-done:
		close(p.resume)
		t.Fatalf("freeze returned with the runner stalled: %+v", res)
	case <-time.After(30 * time.Second):
		close(p.resume)
		<-done
		t.Fatal("the desk is held while the runner catches up")
	}
	next := appendOne()
	desk.apply(next)
	close(p.resume)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.f.Position < next {
		t.Fatalf("frozen at %d, before the desk's apply of %d", res.f.Position, next)
	}
}
