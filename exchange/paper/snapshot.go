package paper

import (
	"maps"
	"slices"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// SnapshotVersion implements projections.Snapshotter.
func (s *Simulator) SnapshotVersion() uint32 { return 1 }

// Freeze implements projections.Snapshotter: the fold of the log a
// simulated exchange starts from (restore.go), not the accounts in use,
// whose truth is the simulation itself (prices, books, resting orders) and
// which a restart starts again from that fold.
func (s *Simulator) Freeze() func(*snap.Encoder) {
	s.mu.Lock()
	var (
		ids    []int64
		orders = map[int64]domain.Order{}
		deltas = map[string]map[string]domain.Decimal{}
		maxSeq map[string]uint64
		maxID  map[string]int64
		made   = s.restore != nil
	)
	if r := s.restore; r != nil {
		r.orders.Each(func(id int64, _ string, o *domain.Order) {
			c := *o
			c.FillIDs = slices.Clone(o.FillIDs) // a recycled order reuses them
			orders[id] = c
			ids = append(ids, id)
		})
		for x, d := range r.deltas {
			deltas[x] = maps.Clone(d)
		}
		maxSeq, maxID = maps.Clone(r.maxSeq), maps.Clone(r.maxID)
	}
	s.mu.Unlock()
	slices.Sort(ids)
	return func(e *snap.Encoder) {
		e.Bool(made)
		e.Len(len(ids))
		for _, id := range ids {
			o := orders[id]
			e.Varint(id)
			e.Order(&o)
		}
		snap.TextMap(e, deltas, func(d map[string]domain.Decimal) { snap.TextMap(e, d, e.Decimal) })
		snap.TextMap(e, maxSeq, e.Uvarint)
		e.Len(len(maxID))
		for _, x := range slices.Sorted(maps.Keys(maxID)) {
			e.Text(x)
			e.Varint(maxID[x])
		}
	}
}

// Load implements projections.Snapshotter.
func (s *Simulator) Load(d *snap.Decoder) (func(), error) {
	made := d.Bool()
	r := newRestoreState()
	for range d.Len(2) {
		id := d.Varint()
		o := new(domain.Order)
		d.Order(o)
		r.orders.PutID(id, o)
	}
	for range d.Len(2) {
		x := d.Text()
		m := map[string]domain.Decimal{}
		for range d.Len(2) {
			asset := d.Text()
			m[asset] = d.Decimal()
		}
		r.deltas[x] = m
	}
	for range d.Len(2) {
		x := d.Text()
		r.maxSeq[x] = d.Uvarint()
	}
	for range d.Len(2) {
		x := d.Text()
		r.maxID[x] = d.Varint()
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if !made {
		r = nil
	}
	return func() {
		s.mu.Lock()
		s.restore = r
		s.mu.Unlock()
	}, nil
}
