package engine

import (
	"cmp"
	"maps"
	"slices"

	"github.com/tradeledger/tradeledger/domain/snap"
)

// Snapshots of the engine's small projections (projections.Snapshotter);
// Orders' is in orders_snap.go.

// SnapshotVersion implements projections.Snapshotter.
func (s *System) SnapshotVersion() uint32 { return 1 }

// Freeze implements projections.Snapshotter: whether the system is
// started, and how many starts the log had (the exchanges with an enabled
// pair are the configuration's, not the log's).
func (s *System) Freeze() func(*snap.Encoder) {
	running, starts := s.state()
	return func(e *snap.Encoder) {
		e.Bool(running)
		e.Uvarint(starts)
	}
}

// Load implements projections.Snapshotter.
func (s *System) Load(d *snap.Decoder) (func(), error) {
	running, starts := d.Bool(), d.Uvarint()
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		s.mu.Lock()
		s.running, s.starts = running, starts
		s.mu.Unlock()
	}, nil
}

// SnapshotVersion implements projections.Snapshotter.
func (a *Attention) SnapshotVersion() uint32 { return 1 }

// Freeze implements projections.Snapshotter.
func (a *Attention) Freeze() func(*snap.Encoder) {
	a.mu.Lock()
	isNil := a.state == nil
	state := make(map[pairRef]map[int64]string, len(a.state))
	for k, m := range a.state {
		state[k] = maps.Clone(m)
	}
	a.mu.Unlock()
	return func(e *snap.Encoder) {
		refs := slices.SortedFunc(maps.Keys(state), func(x, y pairRef) int {
			if x.exchange != y.exchange {
				return cmp.Compare(x.exchange, y.exchange)
			}
			return cmp.Compare(x.pair, y.pair)
		})
		e.Bool(isNil)
		e.Len(len(refs))
		for _, k := range refs {
			e.Text(k.exchange)
			e.Text(k.pair)
			m := state[k]
			e.Len(len(m))
			for _, id := range slices.Sorted(maps.Keys(m)) {
				e.Varint(id)
				e.Text(m[id])
			}
		}
	}
}

// Load implements projections.Snapshotter.
func (a *Attention) Load(d *snap.Decoder) (func(), error) {
	var state map[pairRef]map[int64]string
	isNil := d.Bool()
	n := d.Len(3)
	if !isNil {
		state = make(map[pairRef]map[int64]string, n)
	}
	if n > 0 && !isNil {
		for range n {
			k := pairRef{d.Text(), d.Text()}
			m := map[int64]string{}
			for range d.Len(2) {
				id := d.Varint()
				m[id] = d.Text()
			}
			state[k] = m
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		a.mu.Lock()
		a.state = state
		a.mu.Unlock()
	}, nil
}
