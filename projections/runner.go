package projections

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/readahead"
)

// Projection is a read model fed by the Runner. Apply is called for every
// event of the log, in commit order, from one goroutine; a projection
// ignores types it does not know. Projections guard their own state so that
// readers may call them while Apply runs. A projection that keeps one of
// an event's strings or its Data past Apply (a map key) keeps a copy: with
// ReplayNoHashes the events of a replay batch share one allocation, which
// the string would otherwise keep in memory (types and actors excepted).
type Projection interface {
	Name() string
	Apply(e *domain.Event) error
}

// BatchApplier is a Projection that can apply a run of events at once,
// as the start-up replay reads them: the same as Apply on each in order
// (onError told of each event Apply would have returned an error for),
// with its lock taken once for the run instead of once per event.
type BatchApplier interface {
	ApplyBatch(events []domain.Event, onError func(e *domain.Event, err error))
}

// applyEach calls apply on each event in order and tells onError of each
// error: a BatchApplier's loop, its lock held.
func applyEach(events []domain.Event, apply func(*domain.Event) error, onError func(*domain.Event, error)) {
	for i := range events {
		if err := apply(&events[i]); err != nil {
			onError(&events[i], err)
		}
	}
}

// Runner feeds registered projections from one subscription, in order, and
// tracks the applied position so that writers can wait for their events to
// become visible (read-your-writes).
type Runner struct {
	// Store is the log to follow.
	Store domain.EventStore
	// OnError, if set, is told of an event a projection could not apply
	// (during the start-up replay, possibly from several goroutines at
	// once). The runner goes on: one bad event must not stop every read
	// model.
	OnError func(p Projection, e *domain.Event, err error)
	// ReplayNoHashes, set when no registered projection reads an event's
	// PrevHash or Hash, lets the start-up replay read the log without
	// them, from a store that can (eventstore/sqlite: less to copy out of
	// the file); the events then carry zero hashes. Live events always
	// carry theirs. The replayed events of a batch then share one
	// allocation for their strings and Data (see Projection).
	ReplayNoHashes bool
	// Ahead, when set, holds the applies of those projections that are
	// also applied to from elsewhere at once (the engine applies its own
	// appends before the runner reads them) and returns the highest
	// position they applied, until release is called: Hold freezes once
	// the runner has reached it (snapshot.go). It may be called with the
	// runner stopped between two events, so it must not wait for the
	// runner.
	Ahead func() (position uint64, release func())
	// Until, when not 0, stops Start's replay after the event at that
	// position and follows nothing after it: the read models as of a past
	// position, to take a snapshot there (tradeledger snapshot
	// --position).
	Until uint64

	projections []Projection

	applyMu  sync.Mutex    // held while a live event is applied: Freeze's cut
	holdMu   sync.Mutex    // one Hold at a time
	from     uint64        // the position Start replays after (a snapshot's)
	times    eventTimes    // the latest times of the events applied, when tracked
	track    bool          // every projection is a Snapshotter: times are tracked
	snapshot *SnapshotInfo // the snapshot loaded, if any
	replayed int64         // events Start replayed

	mu      sync.Mutex
	applied uint64        // position of the last applied event
	changed chan struct{} // closed and replaced when applied moves
	err     error         // why the subscription ended, if it did

	cancel context.CancelFunc
	done   chan struct{}
	// settled is closed once settleReplayed is done.
	settled chan struct{}
}

// NewRunner returns a Runner following store.
func NewRunner(store domain.EventStore) *Runner {
	return &Runner{Store: store, changed: make(chan struct{})}
}

// Register adds a projection. Call before Start.
func (r *Runner) Register(p Projection) { r.projections = append(r.projections, p) }

// Start replays the log into every projection (returning once the replay
// reached the head as of the call) — after the snapshot LoadSnapshot
// loaded, if it did; else from the first event —, then follows new events
// in the background until Close.
func (r *Runner) Start(ctx context.Context) error {
	head, err := r.Store.Head(ctx)
	if err != nil {
		return fmt.Errorf("projections: read head: %w", err)
	}
	// Nobody waits during the replay, so positions are published once at
	// the end instead of per event; and since projections are independent,
	// each applies a batch in its own goroutine (each still sees every
	// event in order), beside the goroutine reading the next batch.
	// With several projections, the reading goroutine decodes the order
	// payloads once for all of them (domain.Event.Predecode).
	readAhead := readahead.Batches
	if len(r.projections) > 1 {
		readAhead = readahead.Predecoded
	}
	var it domain.EventIterator
	if s, ok := r.Store.(noHashesReader); ok && r.ReplayNoHashes {
		it = s.ReadAllNoHashes(ctx, r.from+1)
	} else {
		it = r.Store.ReadAll(ctx, r.from+1, 0)
	}
	last, replayed := r.from, int64(0)
	// A snapshot's header needs the latest times of the events in it
	// (OwnTime decodes fills): tracked only when one can be taken.
	_, err = r.snapshotters()
	r.track = err == nil
	batchers := make([]BatchApplier, len(r.projections))
	for i, p := range r.projections {
		batchers[i], _ = p.(BatchApplier)
	}
	err = readAhead(ctx, it, func(batch []domain.Event) bool {
		stop := false
		if r.Until != 0 {
			n := 0
			for n < len(batch) && batch[n].Position <= r.Until {
				n++
			}
			stop, batch = n < len(batch), batch[:n]
			if len(batch) == 0 {
				return false
			}
		}
		if r.track {
			for i := range batch {
				r.times.add(&batch[i])
			}
		}
		replayed += int64(len(batch))
		var wg sync.WaitGroup
		for pi, p := range r.projections {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if b := batchers[pi]; b != nil {
					b.ApplyBatch(batch, func(e *domain.Event, err error) {
						if r.OnError != nil {
							r.OnError(p, e, err)
						}
					})
					return
				}
				for i := range batch {
					if err := p.Apply(&batch[i]); err != nil && r.OnError != nil {
						r.OnError(p, &batch[i], err)
					}
				}
			}()
		}
		wg.Wait()
		last = batch[len(batch)-1].Position
		return !stop
	})
	r.mu.Lock()
	r.replayed = replayed
	r.mu.Unlock()
	r.publish(last)
	if err != nil {
		return fmt.Errorf("projections: replay: %w", err)
	}
	if r.Until != 0 {
		if r.Position() < min(r.Until, head) {
			return fmt.Errorf("projections: replay stopped at %d before %d", r.Position(), min(r.Until, head))
		}
		return nil
	}
	if r.Position() < head {
		return fmt.Errorf("projections: replay stopped at %d before head %d", r.Position(), head)
	}
	subCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	go r.follow(subCtx)
	r.settled = make(chan struct{})
	go r.settleReplayed()
	return nil
}

// settleReplayed settles what the replay left unsettled — the Ledger's
// pairs an import or a late fill made dirty (265 ms for four pairs of
// 200,000 imported orders) —, beside the live events and a pair at a time
// (Ledger.Settle), so that neither the first read nor the first snapshot
// pays for all of it at once while the placements wait for the runner.
func (r *Runner) settleReplayed() {
	defer close(r.settled)
	for _, p := range r.projections {
		if s, ok := p.(settler); ok {
			s.Settle()
		}
	}
}

// noHashesReader is a store that reads a whole log for a replay without
// the events' hashes (eventstore/sqlite's Store.ReadAllNoHashes).
type noHashesReader interface {
	ReadAllNoHashes(ctx context.Context, from uint64) domain.EventIterator
}

func (r *Runner) follow(ctx context.Context) {
	defer close(r.done)
	sub := r.Store.Subscribe(ctx, r.Position()+1)
	defer sub.Close()
	for sub.Next() {
		e := sub.Event()
		r.apply(&e)
	}
	r.mu.Lock()
	r.err = sub.Err()
	if r.err == nil {
		r.err = errors.New("subscription ended")
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// apply feeds one live event to every projection, then publishes it.
func (r *Runner) apply(e *domain.Event) {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	if r.track {
		r.times.add(e)
	}
	for _, p := range r.projections {
		if err := p.Apply(e); err != nil && r.OnError != nil {
			r.OnError(p, e, err)
		}
	}
	r.publish(e.Position)
}

// publish records pos as applied and wakes the writers waiting for it.
func (r *Runner) publish(pos uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if pos <= r.applied {
		return
	}
	r.applied = pos
	close(r.changed)
	r.changed = make(chan struct{})
}

// Position returns the position of the last event every projection applied.
func (r *Runner) Position() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applied
}

// WaitFor returns once every projection has applied the event at position
// pos, or with ctx's error, or with EUNAVAILABLE if the runner stopped.
func (r *Runner) WaitFor(ctx context.Context, pos uint64) error {
	for {
		r.mu.Lock()
		applied, ch, err := r.applied, r.changed, r.err
		r.mu.Unlock()
		if applied >= pos {
			return nil
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return domain.Errorf(domain.EUNAVAILABLE, "projections stopped: %v", err)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops following the log.
func (r *Runner) Close() error {
	if r.cancel != nil {
		r.cancel()
		<-r.done
		<-r.settled
	}
	return nil
}
