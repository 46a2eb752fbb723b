package projections_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestReplayCutFromSnapshot: a replay up to a cut of any kind (a position,
// a prefix recorded by a time, a trade time) started from the newest
// snapshot within the cut ends in the state a replay from the first event
// reaches, says the same of where it stopped, and uses exactly that
// snapshot: none whose events reach past the cut.
func TestReplayCutFromSnapshot(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 1200})
		store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
		if err := store.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		newProjs := func() []projections.Projection {
			return []projections.Projection{projections.NewPassword(), projections.NewTokens(), projections.NewConfig(),
				projections.NewFiles(nil), projections.NewBalances()}
		}
		snaps := projections.NewSnapshots(filepath.Join(t.TempDir(), "snapshots"),
			func(ctx context.Context, pos uint64) (int64, domain.Hash, error) {
				return transparency.Identity(ctx, store, pos)
			},
			testSnapshotKey(t), domain.NewManualClock(time.Unix(0, 0)))
		snaps.Keep = 100

		// Snapshots at random positions, written by a runner following
		// the log as it is appended.
		var at []int
		for range 6 {
			at = append(at, 1+rng.IntN(len(events)))
		}
		slices.Sort(at)
		snaptest.Store(t, store, events[:at[0]])
		runner := projections.NewRunner(store)
		for _, p := range newProjs() {
			runner.Register(p)
		}
		if err := runner.Start(ctx); err != nil {
			t.Fatal(err)
		}
		done := at[0]
		for _, p := range at {
			snaptest.Store(t, store, events[done:p])
			done = max(done, p)
			if err := runner.WaitFor(ctx, uint64(p)); err != nil {
				t.Fatal(err)
			}
			f, err := runner.Freeze(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if f.Position != uint64(p) {
				t.Fatalf("frozen at %d, want %d", f.Position, p)
			}
			if _, err := snaps.Write(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		snaptest.Store(t, store, events[done:])
		runner.Close()

		// The cuts: positions, recorded times, trade times.
		var cuts []projections.Cut
		for range 8 {
			e := &events[rng.IntN(len(events))]
			cuts = append(cuts, projections.Cut{Position: e.Position},
				projections.Cut{ByTime: true, Until: e.Time},
				projections.AsOf(projections.OwnTime(e)))
		}
		// and cuts at each snapshot's edges: its position and the one
		// before, the latest times its events were recorded at and speak
		// of, and a millisecond before those.
		for _, p := range at {
			var maxTime, maxOwn int64
			for i := range events[:p] {
				maxTime, maxOwn = max(maxTime, events[i].Time), max(maxOwn, projections.OwnTime(&events[i]))
			}
			cuts = append(cuts, projections.Cut{Position: uint64(p)}, projections.Cut{Position: uint64(p - 1)},
				projections.Cut{ByTime: true, Until: maxTime}, projections.Cut{ByTime: true, Until: maxTime - 1},
				projections.AsOf(maxOwn), projections.AsOf(maxOwn-1))
		}
		cuts = append(cuts, projections.Cut{})
		used := 0
		for _, cut := range cuts {
			full := newProjs()
			want, err := projections.ReplayCut(ctx, store, cut, full, projections.ReplayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			part := newProjs()
			got, err := projections.ReplayCut(ctx, store, cut, part, projections.ReplayOptions{Snapshots: snaps,
				Skip: func(path string, why error) { t.Errorf("%s skipped: %v", path, why) }})
			if err != nil {
				t.Fatal(err)
			}
			// The newest snapshot whose events are all within the cut.
			wantSnap := uint64(0)
			for _, p := range at {
				if within(events[:p], cut) {
					wantSnap = max(wantSnap, uint64(p))
				}
			}
			if got.Snapshot != wantSnap {
				t.Fatalf("cut %+v: started from the snapshot at %d, want %d", cut, got.Snapshot, wantSnap)
			}
			if wantSnap != 0 {
				used++
			}
			got.Snapshot, got.Failures, want.Failures = 0, 0, 0
			if got != want {
				t.Fatalf("cut %+v: from a snapshot the replay says %+v, from the first event %+v", cut, got, want)
			}
			for i := range full {
				a, b := snaptest.Encode(t, full[i].(projections.Snapshotter)), snaptest.Encode(t, part[i].(projections.Snapshotter))
				if !bytes.Equal(a, b) || !reflect.DeepEqual(full[i], part[i]) {
					t.Fatalf("cut %+v: %s from the snapshot at %d + the rest ≠ from the first event", cut, full[i].Name(), wantSnap)
				}
			}
		}
		if used == 0 {
			t.Fatalf("seed %d: no cut started from a snapshot", seed)
		}
	}
}

// within reports whether every one of events is within cut: the
// definition Cut.Within must hold to, event by event.
func within(events []domain.Event, cut projections.Cut) bool {
	for i := range events {
		e := &events[i]
		switch {
		case cut.Position != 0 && e.Position > cut.Position,
			cut.ByTime && !cut.TradeTime && e.Time > cut.Until,
			cut.ByTime && cut.TradeTime && projections.OwnTime(e) > cut.Until:
			return false
		}
	}
	return true
}
