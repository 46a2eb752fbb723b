package projections

import (
	"context"
	"fmt"
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
// appends to at once (Runner.Ahead) are held until the runner has applied
// everything they have, so that every state frozen is the state at the
// same position.

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
	// Held how long the projections the engine applies to at once were
	// held (Runner.Ahead), Pause included.
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
	start := time.Now()
	if r.Ahead != nil {
		// The engine's own appends are applied to some projections at
		// once: hold those applies, and let the runner catch up with
		// what they applied, so that they are at the runner's position.
		ahead, release := r.Ahead()
		defer release()
		if err := r.WaitFor(ctx, ahead); err != nil {
			return nil, err
		}
	}
	r.applyMu.Lock()
	paused := time.Now()
	f := &Frozen{Position: r.Position(), MaxTime: r.times.max, MaxOwnTime: r.times.own}
	for _, p := range snaps {
		f.sections = append(f.sections, frozenSection{name: p.Name(), version: p.SnapshotVersion(), encode: p.Freeze()})
	}
	r.applyMu.Unlock()
	f.Pause, f.Held = time.Since(paused), time.Since(start)
	return f, nil
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
