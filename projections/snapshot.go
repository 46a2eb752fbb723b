package projections

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// Read-model snapshots (DESIGN §16). A snapshot holds the state of every
// projection the runner feeds, all at one log position, in one file
// (domain/snap's format: a section per projection, each with the version
// of its encoding, checksummed frames, and the log's Merkle root at that
// position). A start loads the newest valid one and replays only the
// events after it (Runner.LoadSnapshot); the running service writes one
// every so many events in the background (SnapshotWriter, snapdir.go).
// A snapshot is a cache: without any the runner replays the whole log and
// ends in the same state.
//
// The cut. Freeze stops the runner between two events, asks each
// projection for a frozen copy of its state — cheap: a projection copies
// what later events change and shares what they never change — and lets
// the runner go on; the copies are encoded and written afterwards, on
// another goroutine. Projections that the engine also applies its own
// appends to at once (Runner.Ahead) are frozen with the others once the
// runner has applied everything they have, so that every state frozen is
// the state at the same position (Hold).

// Snapshotter is a projection whose state a snapshot can hold. Every
// projection serve registers is one (Runner.Freeze refuses otherwise).
type Snapshotter interface {
	Projection
	// SnapshotVersion is the version of the state's encoding; it changes
	// whenever the encoding does. A snapshot whose section has another
	// version is not loaded.
	SnapshotVersion() uint32
	// Freeze returns the state as of the last event applied, frozen, as a
	// function that encodes it. It is called between two events (no
	// Apply runs meanwhile) while the runner waits, so it must be cheap;
	// the function it returns runs later, on another goroutine, beside
	// Apply and the readers, and must write the same bytes whatever was
	// applied meanwhile. Equal states encode to equal bytes (maps in a
	// sorted order).
	Freeze() func(e *snap.Encoder)
	// Load decodes a state written by Freeze's function into a projection
	// that has applied nothing, and returns the function that installs
	// it: nothing changes before install, so that a snapshot with one bad
	// section leaves every projection as it was. A state that does not
	// decode is an error (snap.ErrCorrupt for bytes that are not what was
	// written).
	Load(d *snap.Decoder) (install func(), err error)
}

// Frozen is the state of every projection of a runner at one log position,
// ready to be encoded (Snapshots.Write).
type Frozen struct {
	// Position is the position of the last event applied; MaxTime and
	// MaxOwnTime the latest recorded and own times (OwnTime) of the
	// events up to it.
	Position            uint64
	MaxTime, MaxOwnTime int64
	// Pause is how long the runner stopped applying events for the freeze;
	// Held how long the engine's applies to the projections it applies to
	// at once were held (Runner.Ahead), Pause included (Hold).
	Pause, Held time.Duration
	sections    []frozenSection
}

type frozenSection struct {
	name    string
	version uint32
	encode  func(*snap.Encoder)
}

// eventTimes are the latest times of the events applied.
type eventTimes struct{ max, own int64 }

func (t *eventTimes) add(e *domain.Event) {
	t.max = max(t.max, e.Time)
	t.own = max(t.own, OwnTime(e))
}

// Freeze returns the state of every registered projection at the position
// the runner has applied, without stopping it for longer than the
// projections' Freeze calls take. It fails when a registered projection is
// no Snapshotter. Call it after Start.
func (r *Runner) Freeze(ctx context.Context) (*Frozen, error) {
	snaps, err := r.snapshotters()
	if err != nil {
		return nil, err
	}
	// What a projection can do ahead of its Freeze, it does now, before
	// the cut: the Ledger's settling of the pairs a late fill left dirty
	// would stop every projection and hold the engine's applies. Ahead of
	// the cut it holds the Ledger's lock one pair at a time (its readers
	// and its Apply wait that long, so the runner does, and the commands
	// waiting for it), the engine's applies not at all. What a replay left
	// dirty the runner settles after Start (settleReplayed).
	for _, p := range snaps {
		if s, ok := p.(settler); ok {
			s.Settle()
		}
	}
	var f *Frozen
	var paused time.Time
	held, err := r.hold(ctx, func(position uint64) error {
		paused = time.Now()
		f = &Frozen{Position: position, MaxTime: r.times.max, MaxOwnTime: r.times.own}
		for _, p := range snaps {
			f.sections = append(f.sections, frozenSection{name: p.Name(), version: p.SnapshotVersion(), encode: p.Freeze()})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.Pause, f.Held = time.Since(paused), held
	return f, nil
}

// settler is a projection that does ahead of its Freeze, before the cut,
// the work its Freeze would otherwise do while every projection and the
// engine's applies wait (Ledger.Settle).
type settler interface{ Settle() }

// Hold stops the runner between two events and calls fn with the position
// every projection has applied; no event is applied while fn runs. The
// engine's own appends, which it applies to some projections at once
// (Ahead), are held too, and then every projection must be at that
// position: the runner must have applied every event the engine did. So
// Hold first lets the runner catch up with the engine's applies while
// neither waits, then stops the runner and holds the engine's applies; if
// the engine applied more meanwhile (appends committed in that moment), the
// runner goes on to them while the engine waits, and stops there. The
// engine so waits for fn and at most the few events of that moment, not
// for the runner's whole lag. Call it after Start.
func (r *Runner) Hold(ctx context.Context, fn func(position uint64) error) error {
	_, err := r.hold(ctx, fn)
	return err
}

// hold is Hold, and returns how long the engine's applies were held (0
// without Ahead).
func (r *Runner) hold(ctx context.Context, fn func(position uint64) error) (time.Duration, error) {
	// One at a time: a hold takes the runner's lock, then the engine's,
	// then may give the runner's back and take it again, and two holds
	// at once would wait for each other.
	r.holdMu.Lock()
	defer r.holdMu.Unlock()
	if r.Ahead == nil {
		r.applyMu.Lock()
		defer r.applyMu.Unlock()
		return 0, fn(r.Position())
	}
	ahead, release := r.Ahead()
	release()
	if err := r.WaitFor(ctx, ahead); err != nil {
		return 0, err
	}
	r.applyMu.Lock()
	start := time.Now()
	ahead, release = r.Ahead()
	defer release()
	if ahead > r.Position() {
		r.applyMu.Unlock()
		if err := r.WaitFor(ctx, ahead); err != nil {
			return time.Since(start), err
		}
		r.applyMu.Lock()
	}
	defer r.applyMu.Unlock()
	err := fn(r.Position())
	return time.Since(start), err
}

// Replace replaces, in place, the state of each registered projection
// named in names with the state of the same projection in rebuilt — the
// registered projections' kinds in the same order, fed the log from its
// first event by rb — at the runner's position: rb is brought near it
// while the runner goes on (paced, rb.Pace), then to it while the runner
// holds (Hold), and each named state is copied across through its
// snapshot encoding (StateReplacer) and installed once every one decoded.
// What serve does when the snapshot it started from proves not to be the
// log's state in those projections. A named projection that is no
// StateReplacer is an error naming it, and nothing is replaced.
func (r *Runner) Replace(ctx context.Context, rb *Rebuild, rebuilt []Snapshotter, names []string) error {
	live, err := r.snapshotters()
	if err != nil {
		return err
	}
	if len(live) != len(rebuilt) {
		return fmt.Errorf("replace: %d projections registered, %d rebuilt", len(live), len(rebuilt))
	}
	var targets []int
	var fixed []string
	for i := range live {
		if live[i].Name() != rebuilt[i].Name() {
			return fmt.Errorf("replace: projection %d is %s, rebuilt %s", i, live[i].Name(), rebuilt[i].Name())
		}
		if !slices.Contains(names, live[i].Name()) {
			continue
		}
		if _, ok := live[i].(StateReplacer); !ok {
			fixed = append(fixed, live[i].Name())
		}
		targets = append(targets, i)
	}
	if len(fixed) > 0 {
		return fmt.Errorf("replace: the state of %s cannot be replaced while serving", strings.Join(fixed, ", "))
	}
	if err := rb.To(ctx, r.Position()); err != nil {
		return err
	}
	return r.Hold(ctx, func(position uint64) error {
		pace := rb.Pace
		rb.Pace = nil
		defer func() { rb.Pace = pace }()
		if err := rb.To(ctx, position); err != nil {
			return err
		}
		installs := make([]func(), 0, len(targets))
		for _, i := range targets {
			var buf bytes.Buffer
			e := snap.NewEncoder(&buf)
			rebuilt[i].Freeze()(e)
			if err := e.Close(); err != nil {
				return fmt.Errorf("replace %s: %w", live[i].Name(), err)
			}
			d := snap.NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			install, err := live[i].(StateReplacer).ReplaceState(d)
			if err == nil {
				err = d.Done()
			}
			if err != nil {
				return fmt.Errorf("replace %s: %w", live[i].Name(), err)
			}
			installs = append(installs, install)
		}
		for _, install := range installs {
			install()
		}
		t := rb.Times()
		r.times = eventTimes{max: t.Max, own: t.Own}
		return nil
	})
}

// snapshotters returns the registered projections as Snapshotters.
func (r *Runner) snapshotters() ([]Snapshotter, error) {
	out := make([]Snapshotter, 0, len(r.projections))
	for _, p := range r.projections {
		s, ok := p.(Snapshotter)
		if !ok {
			return nil, fmt.Errorf("projection %s cannot be snapshotted", p.Name())
		}
		out = append(out, s)
	}
	return out, nil
}

// SnapshotInfo is what a start knows of the snapshot it loaded.
type SnapshotInfo struct {
	Path     string        // the file
	Position uint64        // the log position it holds the state at
	Created  time.Time     // when it was written
	Load     time.Duration // reading and installing it
}

// LoadSnapshot loads the newest valid snapshot of snaps into the registered
// projections, so that Start replays only the events after it, and returns
// what it loaded; false when none is valid (then nothing changed and Start
// replays the whole log). Each snapshot passed over is told to skip with
// why (a checksum, a version, a position beyond head, another log's
// root). Call it before Start, with projections that applied nothing.
func (r *Runner) LoadSnapshot(ctx context.Context, snaps *Snapshots, skip func(path string, why error)) (SnapshotInfo, bool, error) {
	list, err := r.snapshotters()
	if err != nil {
		return SnapshotInfo{}, false, err
	}
	head, err := r.Store.Head(ctx)
	if err != nil {
		return SnapshotInfo{}, false, fmt.Errorf("projections: read head: %w", err)
	}
	// A runner stopping at Until takes no snapshot beyond it.
	within := func(h *snap.Header) bool { return r.Until == 0 || h.Position <= r.Until }
	l, ok := snaps.Load(ctx, head, list, within, skip)
	if !ok {
		return SnapshotInfo{}, false, nil
	}
	r.from = l.Header.Position
	r.times = eventTimes{max: l.Header.MaxTime, own: l.Header.MaxOwnTime}
	r.snapshot = &l.Info
	return l.Info, true, nil
}

// Snapshot returns the snapshot the runner started from, and how many
// events it replayed after it (or from the start, without one) before it
// was ready.
func (r *Runner) Snapshot() (info SnapshotInfo, loaded bool, replayed int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.snapshot == nil {
		return SnapshotInfo{}, false, r.replayed
	}
	return *r.snapshot, true, r.replayed
}
