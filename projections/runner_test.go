package projections_test

import (
	"context"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/snap"
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

// openRunnerStore opens a new SQLite store, closed at the test's end.
func openRunnerStore(t *testing.T) *sqlite.Store {
	store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// recorder keeps every event it is given.
type recorder struct{ evs []domain.Event }

func (r *recorder) Name() string                { return "recorder" }
func (r *recorder) Apply(e *domain.Event) error { r.evs = append(r.evs, *e); return nil }

// With ReplayNoHashes, the start-up replay from SQLite gives every
// projection exactly the events it gives without, but for their zero
// hashes; live events keep theirs.
func TestRunnerReplayNoHashes(t *testing.T) {
	store := openRunnerStore(t)
	store.ReadBatchSize = 7
	ctx := context.Background()
	clock := domain.SystemClock{}
	for i := 0; i < 300; i++ {
		e := domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: int64(i), Exchange: "binance", Pair: "USDT-BTC",
			Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("1"), Price: decimal.MustDecimal("100"), ClientOrderID: "c"})
		if _, err := store.Append(ctx, domain.OrderStream(int64(i%9)), domain.Any, e); err != nil {
			t.Fatal(err)
		}
	}
	replay := func(noHashes bool) *recorder {
		rec := &recorder{}
		r := projections.NewRunner(store)
		r.ReplayNoHashes = noHashes
		r.Register(rec)
		r.Register(&counter{counts: map[string]int{}}) // two projections: the predecoding replay
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if noHashes {
			res, err := store.Append(ctx, "live", domain.Any, domain.NewEvent(clock, "Live", map[string]int{}))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.WaitFor(ctx, res.LastPosition); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if live := rec.evs[len(rec.evs)-1]; live.Type != "Live" || live.Hash == (domain.Hash{}) {
				t.Fatalf("live event %s came with hash %s", live.Type, live.Hash)
			}
			rec.evs = rec.evs[:len(rec.evs)-1]
		}
		return rec
	}
	with, without := replay(false), replay(true)
	if len(with.evs) != 300 || len(without.evs) != 300 {
		t.Fatalf("replayed %d and %d events, want 300", len(with.evs), len(without.evs))
	}
	for i := range with.evs {
		w, wo := with.evs[i], without.evs[i]
		if w.Hash == (domain.Hash{}) || wo.Hash != (domain.Hash{}) || wo.PrevHash != (domain.Hash{}) {
			t.Fatalf("event %d: hash %s with, %s / %s without", i, w.Hash, wo.PrevHash, wo.Hash)
		}
		w.Hash, w.PrevHash = domain.Hash{}, domain.Hash{}
		if !reflect.DeepEqual(w, wo) {
			t.Fatalf("event %d: %+v without hashes, want %+v", i, wo, w)
		}
	}
}

// batchRecorder is a BatchApplier: it records which path gave it each
// event, and refuses the events of type "Bad".
type batchRecorder struct {
	batched, single []uint64
}

func (b *batchRecorder) Name() string { return "batch" }
func (b *batchRecorder) Apply(e *domain.Event) error {
	b.single = append(b.single, e.Position)
	if e.Type == "Bad" {
		return domain.Errorf(domain.EINVALID, "bad")
	}
	return nil
}
func (b *batchRecorder) ApplyBatch(events []domain.Event, onError func(*domain.Event, error)) {
	for i := range events {
		b.batched = append(b.batched, events[i].Position)
		if events[i].Type == "Bad" {
			onError(&events[i], domain.Errorf(domain.EINVALID, "bad"))
		}
	}
}

// The start-up replay feeds a BatchApplier through ApplyBatch, every event
// once and in order, its refusals told to OnError; live events go through
// Apply.
func TestRunnerReplaysBatches(t *testing.T) {
	store := openRunnerStore(t)
	store.ReadBatchSize = 7
	ctx := context.Background()
	clock := domain.NewManualClock(time.Unix(1700000000, 0))
	for i := 0; i < 50; i++ {
		typ := "Old"
		if i%10 == 3 {
			typ = "Bad"
		}
		if _, err := store.Append(ctx, "a", domain.Any, domain.NewEvent(clock, typ, nil)); err != nil {
			t.Fatal(err)
		}
	}
	b := &batchRecorder{}
	var refused []uint64
	r := projections.NewRunner(store)
	r.OnError = func(p projections.Projection, e *domain.Event, err error) { refused = append(refused, e.Position) }
	r.Register(b)
	r.Register(&counter{counts: map[string]int{}})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(b.batched) != 50 || len(b.single) != 0 {
		t.Fatalf("replay: %d events through ApplyBatch, %d through Apply; want 50 and 0", len(b.batched), len(b.single))
	}
	for i, pos := range b.batched {
		if pos != uint64(i+1) {
			t.Fatalf("replay: event %d at position %d", i, pos)
		}
	}
	if want := []uint64{4, 14, 24, 34, 44}; !reflect.DeepEqual(refused, want) {
		t.Fatalf("refused %v, want %v", refused, want)
	}
	res, err := store.Append(ctx, "b", domain.Any, domain.NewEvent(clock, "New", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WaitFor(ctx, res.LastPosition); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.single, []uint64{51}) || len(b.batched) != 50 {
		t.Fatalf("live: %v through Apply, %d through ApplyBatch", b.single, len(b.batched))
	}
}

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
	settled atomic.Int32 // Settle calls with neither the desk nor the runner held
	// startSettle is closed at the first Settle: the runner's, after the
	// replay.
	startSettle chan struct{}
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

// Settle is the work a projection does ahead of its Freeze (the Ledger's):
// neither the desk's applies nor the runner are held meanwhile.
func (p *stalling) Settle() {
	if !p.desk.gate.TryRLock() {
		return
	}
	p.desk.gate.RUnlock()
	if p.settled.Add(1) == 1 {
		close(p.startSettle)
	}
}
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
// applies held and all of them applied by the runner; a projection's
// Settle runs before, with nothing held, as it did after the replay.
func TestHoldLetsTheDeskApplyWhileTheRunnerCatchesUp(t *testing.T) {
	store := openRunnerStore(t)
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
	p := &stalling{t: t, desk: desk, runner: r, resume: make(chan struct{}), stalled: make(chan struct{}), startSettle: make(chan struct{})}
	r.Register(p)
	r.Ahead = desk.hold
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The runner settles what the replay left, beside the live events.
	select {
	case <-p.startSettle:
	case <-time.After(30 * time.Second):
		t.Fatal("the runner did not settle the replayed projections")
	}

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
	if p.settled.Load() != 2 {
		t.Fatalf("settled %d times with nothing held, want twice: after the replay and before the freeze", p.settled.Load())
	}
}
