package paper

import (
	"maps"
	"slices"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// SnapshotVersion implements projections.Snapshotter.
func (s *Simulator) SnapshotVersion() uint32 { return 2 }

// Freeze implements projections.Snapshotter: the fold of the log a
// simulated exchange starts from (restore.go), not the accounts in use,
// whose truth is the simulation itself (prices, books, resting orders) and
// which a restart starts again from that fold.
func (s *Simulator) Freeze() func(*snap.Encoder) {
	s.mu.Lock()
	var (
		ids     []int64
		orders  = map[int64]domain.Order{}
		deltas  = map[string]map[string]decimal.Decimal{}
		maxSeq  map[string]uint64
		maxID   map[string]int64
		history = map[string][]simActivity{}
		made    = s.restore != nil
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
		for x, h := range r.history {
			history[x] = slices.Clone(h) // appended to, never changed in place
		}
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
		snap.TextMap(e, deltas, func(d map[string]decimal.Decimal) { snap.TextMap(e, d, e.Decimal) })
		snap.TextMap(e, maxSeq, e.Uvarint)
		e.Len(len(maxID))
		for _, x := range slices.Sorted(maps.Keys(maxID)) {
			e.Text(x)
			e.Varint(maxID[x])
		}
		snap.TextMap(e, history, func(h []simActivity) {
			e.Len(len(h))
			for _, a := range h {
				encodeActivity(e, &a)
			}
		})
	}
}

// encodeActivity writes one simulated activity field by field.
func encodeActivity(e *snap.Encoder, a *simActivity) {
	e.Text(a.id)
	e.Varint(a.time)
	p := &a.p
	e.Text(p.Exchange)
	e.Text(p.Kind)
	e.Text(p.Asset)
	e.Decimal(p.Amount)
	e.Decimal(p.Fee)
	e.Text(p.Pair)
	e.Text(string(p.Side))
	e.Decimal(p.Price)
	e.Text(p.ToAsset)
	e.Decimal(p.ToAmount)
}

// decodeActivity reads what encodeActivity wrote.
func decodeActivity(d *snap.Decoder) simActivity {
	a := simActivity{id: d.Text(), time: d.Varint()}
	p := &a.p
	p.Exchange, p.Kind, p.Asset = d.Text(), d.Text(), d.Text()
	p.Amount, p.Fee = d.Decimal(), d.Decimal()
	p.Pair, p.Side = d.Text(), domain.Side(d.Text())
	p.Price = d.Decimal()
	p.ToAsset, p.ToAmount = d.Text(), d.Decimal()
	return a
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
		m := map[string]decimal.Decimal{}
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
	for range d.Len(2) {
		x := d.Text()
		n := d.Len(12)
		h := make([]simActivity, 0, n)
		for range n {
			h = append(h, decodeActivity(d))
		}
		r.history[x] = h
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
