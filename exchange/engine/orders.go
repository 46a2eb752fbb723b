package engine

import (
	"context"
	"fmt"
	"hash/maphash"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// DefaultTimeout bounds every exchange call.
const DefaultTimeout = 10 * time.Second

// Activity tells whether the core is cycling a pair of an exchange; orders
// are accepted only then (the spec's precondition for trading).
type Activity interface {
	IsCycling(exchange string) bool
}

// Trader is the order manager. Fill its fields, register it with the
// projection runner before the replay, then use it.
type Trader struct {
	// Store is the event log.
	Store domain.EventStore
	// Exchange returns the connector for an exchange name (ENOTFOUND for
	// a name it cannot serve).
	Exchange func(name string) (domain.Exchange, error)
	// Activity gates orders; nil refuses every order.
	Activity Activity
	// Clock dates events.
	Clock domain.Clock
	// Wait, if set, is called with the position of the last appended
	// event before a command returns (projections.Runner.WaitFor), so the
	// caller's next read sees the command's events.
	Wait func(ctx context.Context, pos uint64) error
	// Timeout bounds each exchange call.
	Timeout time.Duration

	mu     sync.Mutex
	nextID int64
	// orders holds the unfinished orders (and ids reserved for orders
	// being written); a finished order leaves it, its id joins finished,
	// and its state is read back from the log when asked for (lookup).
	orders map[int64]*orderEntry
	// checked names the exchanges whose open orders Reconcile has looked
	// up since this process started (see checkOpenOrders).
	checked  map[string]bool
	finished idSet                          // finished orders and OCOs: their events are no longer applied
	open     map[string]map[int64]struct{}  // exchange → unfinished order ids
	armed    map[pairRef]map[int64]struct{} // emulated orders waiting for their stop
	byClient map[string]int64               // client order id → unfinished order id
	pending  map[string]*keyEntry           // Idempotency-Keys being answered
	keys     map[keyID]keyRecord            // Idempotency-Keys answered (from the log)
	seeds    keySeeds                       // of keyIDOf
	ocos     map[int64]*domain.Oco          // OCOs with a leg that is not finished
	cursor   map[string]uint64
	// attention holds the orders that need attention, by pair (attention.go).
	attention map[pairRef]map[int64]string
	balances  map[string]domain.BalancesObserved
	exLocks   map[string]*sync.Mutex
	// lookups is the look-up state of orders whose existence on the
	// exchange is in question (unknown outcome, or open in the log but
	// maybe forgotten): not-founds so far and when to ask next.
	lookups map[int64]*lookup
	// spare is a finished order's entry that never left t.mu's keeping
	// (shared false), for the next order the log requests: a replay's
	// orders open and finish one after the other.
	spare *orderEntry

	cmdsOnce sync.Once
	cmds     *eventstore.Commands // commands()
}

// lookup is the backoff state of one order's look-ups by client order id.
type lookup struct {
	notFound int
	attempts int
	next     time.Time
}

// orderEntry is the Trader's record of one unfinished order: its state as
// folded from the log, and the lock its commands take.
type orderEntry struct {
	op      sync.Mutex // serializes commands on the order; never held while waiting for projections
	o       domain.Order
	updated int64 // ms of the order's last event
	// filed is the exchange it is filed under in Trader.open ("" before
	// its request); shared: handed out (entry, allocID), so never reused
	// for another order.
	filed  string
	shared bool
}

// pairRef names an exchange's pair (the armed index's key).
type pairRef struct{ exchange, pair string }

// idSet is a set of ids as a bitset of 64 ids per word: the dense run of a
// log's order ids (from 0 on) in a slice, about one bit each and found
// without hashing (a replay asks for every event), and a scattered id (an
// imported order's, far past that run) in a map, one entry per word.
type idSet struct {
	dense  []uint64
	sparse map[int64]uint64 // words at or past len(dense), or negative
}

func (s *idSet) has(id int64) bool {
	w, bit := id>>6, uint64(1)<<(uint64(id)&63)
	if w >= 0 && w < int64(len(s.dense)) {
		return s.dense[w]&bit != 0
	}
	return s.sparse[w]&bit != 0
}

func (s *idSet) add(id int64) {
	w, bit := id>>6, uint64(1)<<(uint64(id)&63)
	if w >= 0 && w < int64(len(s.dense)) {
		s.dense[w] |= bit
		return
	}
	// The slice grows over words near its end (at most doubling it, so
	// that one far id does not make it large); farther ones go to the map.
	if w >= 0 && w < 2*int64(len(s.dense))+1024 {
		old := len(s.dense)
		s.dense = append(s.dense, make([]uint64, int(w)+1-old)...)
		if len(s.sparse) > 0 { // words the slice now covers move into it
			for k := int64(old); k < int64(len(s.dense)); k++ {
				if v, ok := s.sparse[k]; ok {
					s.dense[k] |= v
					delete(s.sparse, k)
				}
			}
		}
		s.dense[w] |= bit
		return
	}
	if s.sparse == nil {
		s.sparse = make(map[int64]uint64)
	}
	s.sparse[w] |= bit
}

// NewTrader returns a Trader with default settings.
func NewTrader(store domain.EventStore, exchange func(string) (domain.Exchange, error), clock domain.Clock) *Trader {
	return &Trader{Store: store, Exchange: exchange, Clock: clock, Timeout: DefaultTimeout}
}

func (t *Trader) init() {
	if t.orders == nil {
		t.nextID = 1
		t.orders = make(map[int64]*orderEntry)
		t.finished = idSet{}
		t.open = make(map[string]map[int64]struct{})
		t.armed = make(map[pairRef]map[int64]struct{})
		t.byClient = make(map[string]int64)
		t.pending = make(map[string]*keyEntry)
		t.keys = make(map[keyID]keyRecord)
		t.seeds = keySeeds{maphash.MakeSeed(), maphash.MakeSeed()}
		t.ocos = make(map[int64]*domain.Oco)
		t.cursor = make(map[string]uint64)
		t.balances = make(map[string]domain.BalancesObserved)
		t.exLocks = make(map[string]*sync.Mutex)
	}
}

// Name implements projections.Projection.
func (t *Trader) Name() string { return "trading" }

// Apply implements projections.Projection: it folds order, OCO and balance
// events into the Trader's state. Events already applied are ignored, and
// so are the events of finished orders and OCOs (the Trader keeps only
// what it still acts on: see lookup).
func (t *Trader) Apply(e *domain.Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.applyLocked(e)
}

// streamID returns the id of an order or OCO stream (domain.StreamID:
// prefix + the id as OrderStream and OcoStream write it), moving nextID
// past it; ok is false for any other name or an id whose events no longer
// matter (finished and dropped from memory).
func (t *Trader) streamID(stream, prefix string) (id int64, ok bool) {
	if id, ok = domain.StreamID(stream, prefix); !ok {
		return 0, false
	}
	if id >= t.nextID {
		t.nextID = id + 1
	}
	return id, !t.finished.has(id)
}

func (t *Trader) applyLocked(e *domain.Event) error {
	t.init()
	switch {
	case strings.HasPrefix(e.Stream, "order-"):
		id, ok := t.streamID(e.Stream, "order-")
		if e.Type == domain.TypeOrderNeedsAttention || e.Type == domain.TypeOrderAttentionCleared {
			if err := t.applyAttention(id, e); err != nil {
				return err
			}
		}
		if !ok {
			return nil
		}
		entry := t.orders[id]
		if entry == nil {
			entry = t.newEntry()
			t.orders[id] = entry
		}
		if err := entry.o.Apply(e); err != nil {
			return err
		}
		entry.updated = e.Time
		switch e.Type {
		case domain.TypeOrderRequested:
			t.byClient[entry.o.ClientOrderID] = id
			if k := entry.o.IdempotencyKey; k != "" {
				kid := t.keyIDOf(k)
				if _, ok := t.keys[kid]; !ok {
					t.keys[kid] = keyRecord{orderID: id, ocoID: entry.o.OcoID, fp: fingerprintBits(entry.o.IdempotencyFingerprint)}
				}
			}
		case domain.TypeOrderFilled:
			if p, err := domain.Payload[domain.OrderFilled](e); err == nil && p.Seq > t.cursor[entry.o.Exchange] {
				t.cursor[entry.o.Exchange] = p.Seq
			}
		}
		t.index(id, entry)
	case strings.HasPrefix(e.Stream, "oco-"):
		id, ok := t.streamID(e.Stream, "oco-")
		if !ok {
			return nil
		}
		c := t.ocos[id]
		if c == nil {
			oc := domain.NewOco()
			c = &oc
			t.ocos[id] = c
		}
		if err := c.Apply(e); err != nil {
			return err
		}
		t.ocoSettled(id)
	case strings.HasPrefix(e.Stream, "balance-") && e.Type == domain.TypeBalancesObserved:
		var p domain.BalancesObserved
		if err := e.Decode(&p); err != nil {
			return err
		}
		t.balances[p.Exchange] = p
	}
	return nil
}

// index files an order after an event: an unfinished one under its
// exchange (and, while its stop waits, under its pair as armed); a
// finished one leaves every index and memory. The caller holds t.mu.
func (t *Trader) index(id int64, entry *orderEntry) {
	o := &entry.o
	if o.State == domain.OrderStateNone {
		return
	}
	// Only emulated orders are ever armed (an order's kind is its
	// OrderRequested's), so the others skip the armed index.
	if o.State.Done() {
		delete(t.orders, id)
		if t.byClient[o.ClientOrderID] == id {
			delete(t.byClient, o.ClientOrderID)
		}
		removeID(t.open, o.Exchange, id)
		if o.Emulated() {
			removeID(t.armed, pairRef{o.Exchange, o.Pair}, id)
		}
		t.finished.add(id)
		if o.OcoID != 0 {
			t.ocoSettled(o.OcoID)
		}
		if !entry.shared {
			t.spare = entry
		}
		return
	}
	if entry.filed != o.Exchange {
		addID(t.open, o.Exchange, id)
		entry.filed = o.Exchange
	}
	if !o.Emulated() {
		return
	}
	ref := pairRef{o.Exchange, o.Pair}
	if !o.Triggered && o.State == domain.OrderStateAccepted {
		addID(t.armed, ref, id)
	} else {
		removeID(t.armed, ref, id)
	}
}

// newEntry returns an entry for an order the log requests: the spare one
// when there is one. The caller holds t.mu.
func (t *Trader) newEntry() *orderEntry {
	entry := t.spare
	if entry == nil {
		return &orderEntry{o: domain.NewOrder()}
	}
	t.spare = nil
	ids := entry.o.FillIDs[:0]
	*entry = orderEntry{o: domain.NewOrder()}
	entry.o.FillIDs = ids
	return entry
}

// ocoSettled forgets an OCO once both its legs are finished.
func (t *Trader) ocoSettled(ocoID int64) {
	c := t.ocos[ocoID]
	if c == nil || c.LimitOrderID == 0 || c.StopOrderID == 0 {
		return
	}
	if t.finished.has(c.LimitOrderID) && t.finished.has(c.StopOrderID) {
		delete(t.ocos, ocoID)
		t.finished.add(ocoID)
	}
}

func addID[K comparable](m map[K]map[int64]struct{}, k K, id int64) {
	set := m[k]
	if set == nil {
		set = make(map[int64]struct{})
		m[k] = set
	}
	set[id] = struct{}{}
}

// removeID removes id from k's set. An emptied set stays (one per
// exchange or pair): dropping it made a replay allocate a new one for
// nearly every order, as orders open and finish one after the other. A
// set keeps the memory of its peak size (maps do not shrink), which the
// Trader needed at that peak anyway.
func removeID[K comparable](m map[K]map[int64]struct{}, k K, id int64) {
	if set := m[k]; set != nil {
		delete(set, id)
	}
}

// OpenOrders returns how many unfinished orders of exchange the Trader
// holds (requested, accepted, held for a stop, or triggered).
func (t *Trader) OpenOrders(exchange string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open[exchange])
}

// OpenOrderList returns the unfinished orders of an exchange's pair (every
// pair of it when pair is ""), by id: requested, accepted (resting on the
// exchange or armed in the order manager), or triggered. It costs
// O(unfinished orders of the exchange).
func (t *Trader) OpenOrderList(exchange, pair string) []domain.OpenOrder {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	ids := t.collect(t.open[exchange], func(o *domain.Order) bool { return pair == "" || o.Pair == pair })
	out := make([]domain.OpenOrder, 0, len(ids))
	for _, id := range ids {
		out = append(out, t.orders[id].o.View())
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
func (t *Trader) Unfinished() []Unfinished {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Unfinished, 0, len(t.orders))
	for _, entry := range t.orders {
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
func (t *Trader) Order(id int64) (domain.Order, bool) {
	o, ok, err := t.lookup(context.Background(), id)
	return o, ok && err == nil
}

// lookup returns an order's state (without its fill-id set): from memory
// while it is unfinished, else folded from its stream in the log. An id
// that never was an order is (zero, false, nil).
func (t *Trader) lookup(ctx context.Context, id int64) (domain.Order, bool, error) {
	t.mu.Lock()
	t.init()
	if entry, ok := t.orders[id]; ok {
		o := entry.o
		t.mu.Unlock()
		o.FillIDs = nil
		return o, o.State != domain.OrderStateNone, nil
	}
	finished := t.finished.has(id)
	t.mu.Unlock()
	if !finished || t.Store == nil {
		return domain.Order{}, false, nil
	}
	it := t.Store.ReadStream(ctx, domain.OrderStream(id), 0, 0)
	defer it.Close()
	o := domain.NewOrder()
	for it.Next() {
		e := it.Event()
		if err := o.Apply(&e); err != nil {
			return domain.Order{}, false, err
		}
	}
	if err := it.Err(); err != nil {
		return domain.Order{}, false, fmt.Errorf("read %s: %w", domain.OrderStream(id), err)
	}
	o.FillIDs = nil
	return o, o.State != domain.OrderStateNone, nil
}

// Balances returns the last observed balances of every exchange, sorted by
// exchange (a projection of BalancesObserved).
func (t *Trader) Balances() []domain.BalancesObserved {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]domain.BalancesObserved, 0, len(t.balances))
	for _, b := range t.balances {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Exchange < out[j].Exchange })
	return out
}

// Markets returns an exchange's pairs with their 24-hour statistics;
// an unknown exchange is EINVALID naming the field exch.
func (t *Trader) Markets(ctx context.Context, exchange string) ([]domain.Market, error) {
	x, err := t.exchange(exchange)
	if err != nil {
		return nil, err
	}
	ctx, cancel := t.exchangeCallContext(ctx)
	defer cancel()
	ms, err := x.Markets(ctx)
	return ms, exchangeError(err)
}

func (t *Trader) entry(id int64) *orderEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	entry := t.orders[id]
	if entry != nil {
		entry.shared = true
	}
	return entry
}

// snapshot returns a copy of entry's order (without the fill-id set).
func (t *Trader) snapshot(entry *orderEntry) domain.Order {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := entry.o
	o.FillIDs = nil
	return o
}

// allocID returns a new order (or OCO) id, and its entry when order.
func (t *Trader) allocID(order bool) (int64, *orderEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	id := t.nextID
	t.nextID++
	if !order {
		return id, nil
	}
	entry := &orderEntry{o: domain.NewOrder(), shared: true}
	t.orders[id] = entry
	return id, entry
}

// dropEntry forgets a reserved id whose OrderRequested never got written.
func (t *Trader) dropEntry(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if entry := t.orders[id]; entry != nil && entry.o.State == domain.OrderStateNone {
		delete(t.orders, id)
	}
}

// openOrders returns the ids of the unfinished orders of an exchange that
// keep accepts, in id order. It costs O(unfinished orders of the
// exchange), not O(every order ever).
func (t *Trader) openOrders(exchange string, keep func(o *domain.Order) bool) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	return t.collect(t.open[exchange], keep)
}

// armedOrders returns the ids of the emulated orders of a pair that wait
// for their stop, in id order (O(armed orders of the pair)).
func (t *Trader) armedOrders(exchange, pair string) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	return t.collect(t.armed[pairRef{exchange, pair}], func(o *domain.Order) bool {
		return o.Emulated() && !o.Triggered && o.State == domain.OrderStateAccepted
	})
}

// collect filters a set of order ids by keep, sorted. The caller holds t.mu.
func (t *Trader) collect(set map[int64]struct{}, keep func(o *domain.Order) bool) []int64 {
	var ids []int64
	for id := range set {
		entry := t.orders[id]
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
