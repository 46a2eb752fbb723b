package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// Orders is the engine's order state, a projection of the log registered
// with the runner like every other (Engine.Projections): the next order
// id, every unfinished order's state (requested, accepted, held for its
// stop, triggered) and OCO, the Idempotency-Keys already answered (with a
// fingerprint of each request), and each exchange's fill cursor. The
// engine's rooms decide against it and apply their own appends at once
// (Apply again from the runner is a no-op), so a decision never waits for
// the runner. A finished order leaves memory and is read back from the
// log when asked for (Order), so memory follows the unfinished orders.
// Use NewOrders.
type Orders struct {
	// Store is the log a finished order is read back from (nil: a
	// finished order is not found).
	Store domain.EventStore

	mu    sync.Mutex
	state orderState
}

// orderState is what Orders folds from the log.
type orderState struct {
	nextID int64
	// orders holds the unfinished orders (and ids reserved for orders
	// being written); a finished order leaves it and its id joins
	// finished.
	orders   map[int64]*orderEntry
	finished idSet                          // finished orders and OCOs: their events are no longer applied
	open     map[string]map[int64]struct{}  // exchange → unfinished order ids
	armed    map[pairRef]map[int64]struct{} // emulated orders waiting for their stop
	byClient map[string]int64               // client order id → unfinished order id
	keys     keyIndex                       // Idempotency-Keys answered
	ocos     map[int64]*domain.Oco          // OCOs with a leg that is not finished
	cursor   map[string]uint64              // exchange → the Seq of its last fill recorded
	// spare is a finished order's entry that was never handed out
	// (shared false), for the next order the log requests: a replay's
	// orders open and finish one after the other.
	spare *orderEntry
}

// orderEntry is one unfinished order: its state as folded from the log,
// and the lock its commands take.
type orderEntry struct {
	op      sync.Mutex // serializes commands on the order; never held while waiting for projections
	o       domain.Order
	updated int64 // ms of the order's last event
	// filed is the exchange it is filed under in orderState.open (""
	// before its request); shared: handed out (entry, allocID), so never
	// reused for another order.
	filed  string
	shared bool
}

// pairRef names an exchange's pair.
type pairRef struct{ exchange, pair string }

// NewOrders returns an empty order state reading finished orders back
// from store.
func NewOrders(store domain.EventStore) *Orders {
	o := &Orders{Store: store}
	o.state = orderState{
		nextID:   1,
		orders:   make(map[int64]*orderEntry),
		open:     make(map[string]map[int64]struct{}),
		armed:    make(map[pairRef]map[int64]struct{}),
		byClient: make(map[string]int64),
		ocos:     make(map[int64]*domain.Oco),
		cursor:   make(map[string]uint64),
	}
	return o
}

// Name implements projections.Projection.
func (s *Orders) Name() string { return "engine-orders" }

// Apply implements projections.Projection: it folds order and OCO events
// into the state. Events already applied are ignored, and so are the
// events of finished orders and OCOs.
func (s *Orders) Apply(e *domain.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.apply(e)
}

// applyAll applies the events of one append under one lock.
func (s *Orders) applyAll(evs []domain.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range evs {
		if err := s.state.apply(&evs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (st *orderState) apply(e *domain.Event) error {
	switch {
	case strings.HasPrefix(e.Stream, "order-"):
		return st.applyOrder(e)
	case strings.HasPrefix(e.Stream, "oco-"):
		id, ok := st.streamID(e.Stream, "oco-")
		if !ok {
			return nil
		}
		c := st.ocos[id]
		if c == nil {
			oc := domain.NewOco()
			c = &oc
			st.ocos[id] = c
		}
		if err := c.Apply(e); err != nil {
			return err
		}
		st.ocoSettled(id)
	}
	return nil
}

func (st *orderState) applyOrder(e *domain.Event) error {
	id, ok := st.streamID(e.Stream, "order-")
	if e.Type == domain.TypeOrderNeedsAttention {
		// The fill it stands for was read: not asked for again, whether
		// or not the order is still in memory.
		p, err := domain.Payload[domain.OrderNeedsAttention](e)
		if err != nil {
			return err
		}
		st.advance(p.Exchange, p.Seq)
	}
	if !ok {
		return nil
	}
	entry := st.orders[id]
	if entry == nil {
		entry = st.newEntry()
		st.orders[id] = entry
	}
	if err := entry.o.Apply(e); err != nil {
		return err
	}
	entry.updated = e.Time
	switch e.Type {
	case domain.TypeOrderRequested:
		st.byClient[entry.o.ClientOrderID] = id
		if k := entry.o.IdempotencyKey; k != "" {
			st.keys.add(keyIDOf(k), keyRecord{orderID: id, ocoID: entry.o.OcoID, fp: fingerprintBits(entry.o.IdempotencyFingerprint)})
		}
	case domain.TypeOrderFilled:
		if p, err := domain.Payload[domain.OrderFilled](e); err == nil {
			st.advance(entry.o.Exchange, p.Seq)
		}
	}
	st.index(id, entry)
	return nil
}

// advance moves an exchange's fill cursor forward to seq.
func (st *orderState) advance(exchange string, seq uint64) {
	if seq > st.cursor[exchange] {
		st.cursor[exchange] = seq
	}
}

// streamID returns the id of an order or OCO stream (streams.StreamID),
// moving nextID past it unless it is an imported order's (at or past
// domain.ImportedOrderIDs: this service's own ids continue below them);
// ok is false for any other name or an id whose events no longer matter
// (finished and dropped from memory).
func (st *orderState) streamID(stream, prefix string) (id int64, ok bool) {
	if id, ok = streams.StreamID(stream, prefix); !ok {
		return 0, false
	}
	if id >= st.nextID && id < domain.ImportedOrderIDs {
		st.nextID = id + 1
	}
	return id, !st.finished.has(id)
}

// index files an order after an event: an unfinished one under its
// exchange (and, while its stop waits, under its pair as armed); a
// finished one leaves every index and memory.
func (st *orderState) index(id int64, entry *orderEntry) {
	o := &entry.o
	if o.State == domain.OrderStateNone {
		return
	}
	// Only emulated orders are ever armed (an order's kind is its
	// OrderRequested's), so the others skip the armed index.
	if o.State.Done() {
		delete(st.orders, id)
		if st.byClient[o.ClientOrderID] == id {
			delete(st.byClient, o.ClientOrderID)
		}
		removeID(st.open, o.Exchange, id)
		if o.Emulated() {
			removeID(st.armed, pairRef{o.Exchange, o.Pair}, id)
		}
		st.finished.add(id)
		if o.OcoID != 0 {
			st.ocoSettled(o.OcoID)
		}
		if !entry.shared {
			st.spare = entry
		}
		return
	}
	if entry.filed != o.Exchange {
		addID(st.open, o.Exchange, id)
		entry.filed = o.Exchange
	}
	if !o.Emulated() {
		return
	}
	ref := pairRef{o.Exchange, o.Pair}
	if !o.Triggered && o.State == domain.OrderStateAccepted {
		addID(st.armed, ref, id)
	} else {
		removeID(st.armed, ref, id)
	}
}

// newEntry returns an entry for an order the log requests: the spare one
// when there is one.
func (st *orderState) newEntry() *orderEntry {
	entry := st.spare
	if entry == nil {
		return &orderEntry{o: domain.NewOrder()}
	}
	st.spare = nil
	ids := entry.o.FillIDs[:0]
	*entry = orderEntry{o: domain.NewOrder()}
	entry.o.FillIDs = ids
	return entry
}

// ocoSettled forgets an OCO once both its legs are finished.
func (st *orderState) ocoSettled(ocoID int64) {
	c := st.ocos[ocoID]
	if c == nil || c.LimitOrderID == 0 || c.StopOrderID == 0 {
		return
	}
	if st.finished.has(c.LimitOrderID) && st.finished.has(c.StopOrderID) {
		delete(st.ocos, ocoID)
		st.finished.add(ocoID)
	}
}

// collect filters a set of order ids by keep, sorted.
func (st *orderState) collect(set map[int64]struct{}, keep func(o *domain.Order) bool) []int64 {
	var ids []int64
	for id := range set {
		entry := st.orders[id]
		if entry == nil || entry.o.State == domain.OrderStateNone || entry.o.State.Done() {
			continue
		}
		if keep(&entry.o) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// OpenOrders returns how many unfinished orders of exchange there are
// (requested, accepted, held for a stop, or triggered).
func (s *Orders) OpenOrders(exchange string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.state.open[exchange])
}

// OpenOrderList returns the unfinished orders of an exchange's pair (every
// pair of it when pair is ""), by id: requested, accepted (resting on the
// exchange or armed in the engine), or triggered. It costs O(unfinished
// orders of the exchange).
func (s *Orders) OpenOrderList(exchange, pair string) []domain.OpenOrder {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.state.collect(s.state.open[exchange], func(o *domain.Order) bool { return pair == "" || o.Pair == pair })
	out := make([]domain.OpenOrder, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.state.orders[id].o.View())
	}
	return out
}

// Unfinished is an unfinished order (without its fill-id set) and the
// time of its last event.
type Unfinished struct {
	Order   domain.Order
	Updated int64 // ms
}

// Unfinished returns every unfinished order of every exchange, by id: what
// `tradeledger replay` lists as open orders. It costs O(unfinished orders).
func (s *Orders) Unfinished() []Unfinished {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Unfinished, 0, len(s.state.orders))
	for _, entry := range s.state.orders {
		if entry.o.State == domain.OrderStateNone || entry.o.State.Done() {
			continue
		}
		o := entry.o
		o.FillIDs = nil
		out = append(out, Unfinished{Order: o, Updated: entry.updated})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Order.OrderID < out[j].Order.OrderID })
	return out
}

// Order returns a copy of an order's state, and whether it exists. An
// unfinished order comes from memory; a finished one is read back from the
// log (false if that read fails).
func (s *Orders) Order(id int64) (domain.Order, bool) {
	o, ok, err := s.lookup(context.Background(), id)
	return o, ok && err == nil
}

// lookup returns an order's state (without its fill-id set): from memory
// while it is unfinished, else folded from its stream in the log. An id
// that never was an order is (zero, false, nil).
func (s *Orders) lookup(ctx context.Context, id int64) (domain.Order, bool, error) {
	s.mu.Lock()
	if entry, ok := s.state.orders[id]; ok {
		o := entry.o
		s.mu.Unlock()
		o.FillIDs = nil
		return o, o.State != domain.OrderStateNone, nil
	}
	finished := s.state.finished.has(id)
	s.mu.Unlock()
	if !finished || s.Store == nil {
		return domain.Order{}, false, nil
	}
	o, err := fold(ctx, s.Store, domain.OrderStream(id), domain.NewOrder(), (*domain.Order).Apply)
	o.FillIDs = nil
	return o, err == nil && o.State != domain.OrderStateNone, err
}

// lookupOco returns an OCO's state: from memory while a leg is
// unfinished, else folded from its stream. An id that never was an OCO is
// (zero, false, nil).
func (s *Orders) lookupOco(ctx context.Context, id int64) (domain.Oco, bool, error) {
	s.mu.Lock()
	if c, ok := s.state.ocos[id]; ok {
		oc := *c
		s.mu.Unlock()
		return oc, oc.OcoID != 0, nil
	}
	finished := s.state.finished.has(id)
	s.mu.Unlock()
	if !finished || s.Store == nil {
		return domain.Oco{}, false, nil
	}
	c, err := fold(ctx, s.Store, domain.OcoStream(id), domain.NewOco(), (*domain.Oco).Apply)
	return c, err == nil && c.OcoID != 0, err
}

// fold applies a stream's events to state, in order.
func fold[S any](ctx context.Context, store domain.EventStore, stream string, state S, apply func(*S, *domain.Event) error) (S, error) {
	it := store.ReadStream(ctx, stream, 0, 0)
	defer it.Close()
	for it.Next() {
		e := it.Event()
		if err := apply(&state, &e); err != nil {
			var zero S
			return zero, err
		}
	}
	if err := it.Err(); err != nil {
		var zero S
		return zero, fmt.Errorf("read %s: %w", stream, err)
	}
	return state, nil
}

// entry returns an unfinished order's entry (nil once finished), handed
// out: it is never reused for another order.
func (s *Orders) entry(id int64) *orderEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	entry := s.state.orders[id]
	if entry != nil {
		entry.shared = true
	}
	return entry
}

// snapshot returns a copy of entry's order (without the fill-id set).
func (s *Orders) snapshot(entry *orderEntry) domain.Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := entry.o
	o.FillIDs = nil
	return o
}

// decidable returns a copy of entry's order to decide on (its FillIDs are
// shared: Apply only appends to them, under s.mu).
func (s *Orders) decidable(entry *orderEntry) domain.Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	return entry.o
}

// allocID returns a new order (or OCO) id, and its entry when order.
func (s *Orders) allocID(order bool) (int64, *orderEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.state.nextID
	s.state.nextID++
	if !order {
		return id, nil
	}
	entry := &orderEntry{o: domain.NewOrder(), shared: true}
	s.state.orders[id] = entry
	return id, entry
}

// dropEntry forgets a reserved id whose OrderRequested never got written.
func (s *Orders) dropEntry(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if entry := s.state.orders[id]; entry != nil && entry.o.State == domain.OrderStateNone {
		delete(s.state.orders, id)
	}
}

// openIDs returns the ids of the unfinished orders of an exchange that
// keep accepts, in id order: O(unfinished orders of the exchange), not
// O(every order ever).
func (s *Orders) openIDs(exchange string, keep func(o *domain.Order) bool) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.collect(s.state.open[exchange], keep)
}

// armedIDs returns the ids of the emulated orders of a pair that wait for
// their stop, in id order (O(armed orders of the pair)).
func (s *Orders) armedIDs(exchange, pair string) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.collect(s.state.armed[pairRef{exchange, pair}], func(o *domain.Order) bool {
		return o.Emulated() && !o.Triggered && o.State == domain.OrderStateAccepted
	})
}

// oco returns a copy of an OCO's state (a new OCO's when it has none yet).
func (s *Orders) oco(ocoID int64) domain.Oco {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.state.ocos[ocoID]; p != nil {
		return *p
	}
	return domain.NewOco()
}

// otherLeg returns the leg of an unfinished OCO that is not legID and
// whether it is finished; ok is false once the OCO is settled.
func (s *Orders) otherLeg(ocoID, legID int64) (other int64, done, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.state.ocos[ocoID]
	if c == nil {
		return 0, false, false
	}
	other, done = c.Other(legID), true
	if entry := s.state.orders[other]; entry != nil {
		done = entry.o.State.Done()
	}
	return other, done, true
}

// byClientID returns the unfinished order a client order id belongs to.
func (s *Orders) byClientID(clientOrderID string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.state.byClient[clientOrderID]
	return id, ok
}

// cursor returns the Seq of an exchange's last fill recorded.
func (s *Orders) cursor(exchange string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.cursor[exchange]
}

// advance moves an exchange's fill cursor forward to seq (a fill read that
// recorded nothing: another order's, or a finished one's).
func (s *Orders) advance(exchange string, seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state.advance(exchange, seq)
}

// key returns what a used Idempotency-Key answered.
func (s *Orders) key(key string) (keyRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.keys.get(keyIDOf(key))
}

// recordKey records what a key's first request answered (its
// OrderRequested, applied at once, most often recorded it already: the
// first record stands, as in a replay).
func (s *Orders) recordKey(key string, rec keyRecord) {
	kid := keyIDOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state.keys.add(kid, rec)
}
