// Package trading is the order manager: every order's life as events
// (DESIGN §2, §5). A Trader places and cancels orders on domain.Exchange
// connectors, emulates stop-limit, trailing-stop and OCO orders from price
// ticks (the rules are pure functions in domain), and reconciles the
// exchanges' fills and balances into the log.
//
// The Trader is also a projection: register it with the projection runner
// before the replay, and it recovers from the log the next order id, the
// state of every unfinished order, the Idempotency-Keys already answered
// (with a fingerprint of the request each answered), the fill cursors and
// the last observed balances. Events it appends itself are applied at once
// (and ignored when the runner delivers them again), so its decisions never
// wait for the runner. Memory and the cost of a tick or a reconcile follow
// the unfinished orders: a finished order is dropped and, when asked for,
// read back from the log.
//
// Safety: an OrderRequested is durable before the exchange hears of the
// order, and the client order id sent is derived from that event's id. A
// retry, a timeout or a crash therefore never places a second order: an
// order whose answer was lost stays "requested" (pending reconcile) until
// Reconcile looks it up by its client order id.
package trading

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
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
	orders map[int64]*entry
	// checked names the exchanges whose open orders Reconcile has looked
	// up since this process started (see checkOpenOrders).
	checked  map[string]bool
	finished idSet                          // finished orders and OCOs: their events are no longer applied
	open     map[string]map[int64]struct{}  // exchange → unfinished order ids
	armed    map[pairRef]map[int64]struct{} // emulated orders waiting for their stop
	byClient map[string]int64               // client order id → unfinished order id
	pending  map[string]*keyEntry           // Idempotency-Keys being answered
	keys     map[keyID]keyRecord            // Idempotency-Keys answered (from the log)
	ocos     map[int64]*domain.Oco          // OCOs with a leg that is not finished
	cursor   map[string]uint64
	balances map[string]domain.BalancesObserved
	exLocks  map[string]*sync.Mutex
	// lookups is the look-up state of orders whose existence on the
	// exchange is in question (unknown outcome, or open in the log but
	// maybe forgotten): not-founds so far and when to ask next.
	lookups map[int64]*lookup
}

// lookup is the backoff state of one order's look-ups by client order id.
type lookup struct {
	notFound int
	attempts int
	next     time.Time
}

type entry struct {
	op sync.Mutex // serializes commands on the order; never held while waiting for projections
	o  domain.Order
}

// pairRef names an exchange's pair (the armed index's key).
type pairRef struct{ exchange, pair string }

// keyID is the Idempotency-Key as kept: 128 bits of its SHA-256, so that
// a million keys cost a fixed 16 bytes each whatever their length.
type keyID [16]byte

func keyIDOf(key string) keyID {
	sum := sha256.Sum256([]byte(key))
	var k keyID
	copy(k[:], sum[:16])
	return k
}

// keyRecord is what a used Idempotency-Key answered: the order (for an
// OCO, its limit leg, whose OrderRequested carries the key) and the OCO.
type keyRecord struct {
	orderID int64
	ocoID   int64
	fp      uint64 // fingerprintBits of the request; 0: not recorded
}

// keyEntry is a key whose first request is in progress; done closes when
// it is settled.
type keyEntry struct {
	done chan struct{}
}

// idSet is a set of ids as a sparse bitset: 64 ids per word, so the dense
// run of a log's order ids costs about two bits each and a scattered id
// (an imported order's) one map entry.
type idSet map[int64]uint64

func (s idSet) has(id int64) bool { return s[id>>6]&(1<<(uint64(id)&63)) != 0 }
func (s idSet) add(id int64)      { s[id>>6] |= 1 << (uint64(id) & 63) }

// NewTrader returns a Trader with default settings.
func NewTrader(store domain.EventStore, exchange func(string) (domain.Exchange, error), clock domain.Clock) *Trader {
	return &Trader{Store: store, Exchange: exchange, Clock: clock, Timeout: DefaultTimeout}
}

func (t *Trader) init() {
	if t.orders == nil {
		t.nextID = 1
		t.orders = make(map[int64]*entry)
		t.finished = make(idSet)
		t.open = make(map[string]map[int64]struct{})
		t.armed = make(map[pairRef]map[int64]struct{})
		t.byClient = make(map[string]int64)
		t.pending = make(map[string]*keyEntry)
		t.keys = make(map[keyID]keyRecord)
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

func (t *Trader) applyLocked(e *domain.Event) error {
	t.init()
	switch {
	case strings.HasPrefix(e.Stream, "order-"):
		id, err := strconv.ParseInt(e.Stream[len("order-"):], 10, 64)
		if err != nil {
			return nil
		}
		if id >= t.nextID {
			t.nextID = id + 1
		}
		if t.finished.has(id) {
			return nil
		}
		en := t.orders[id]
		if en == nil {
			en = &entry{o: domain.NewOrder()}
			t.orders[id] = en
		}
		if err := en.o.Apply(e); err != nil {
			return err
		}
		switch e.Type {
		case domain.TypeOrderRequested:
			t.byClient[en.o.ClientOrderID] = id
			if k := en.o.IdempotencyKey; k != "" {
				kid := keyIDOf(k)
				if _, ok := t.keys[kid]; !ok {
					t.keys[kid] = keyRecord{orderID: id, ocoID: en.o.OcoID, fp: fingerprintBits(en.o.IdempotencyFingerprint)}
				}
			}
		case domain.TypeOrderFilled:
			var p domain.OrderFilled
			if e.Decode(&p) == nil && p.Seq > t.cursor[en.o.Exchange] {
				t.cursor[en.o.Exchange] = p.Seq
			}
		}
		t.index(id, en)
	case strings.HasPrefix(e.Stream, "oco-"):
		id, err := strconv.ParseInt(e.Stream[len("oco-"):], 10, 64)
		if err != nil {
			return nil
		}
		if id >= t.nextID {
			t.nextID = id + 1
		}
		if t.finished.has(id) {
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
func (t *Trader) index(id int64, en *entry) {
	o := &en.o
	if o.State == domain.OrderStateNone {
		return
	}
	ref := pairRef{o.Exchange, o.Pair}
	if o.State.Done() {
		delete(t.orders, id)
		if t.byClient[o.ClientOrderID] == id {
			delete(t.byClient, o.ClientOrderID)
		}
		removeID(t.open, o.Exchange, id)
		removeID(t.armed, ref, id)
		t.finished.add(id)
		if o.OcoID != 0 {
			t.ocoSettled(o.OcoID)
		}
		return
	}
	addID(t.open, o.Exchange, id)
	if o.Emulated() && !o.Triggered && o.State == domain.OrderStateAccepted {
		addID(t.armed, ref, id)
	} else {
		removeID(t.armed, ref, id)
	}
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

func removeID[K comparable](m map[K]map[int64]struct{}, k K, id int64) {
	if set := m[k]; set != nil {
		delete(set, id)
		if len(set) == 0 {
			delete(m, k)
		}
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
	if en, ok := t.orders[id]; ok {
		o := en.o
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
	ctx, cancel := t.exCtx(ctx)
	defer cancel()
	ms, err := x.Markets(ctx)
	return ms, exErr(err)
}

func (t *Trader) exchange(name string) (domain.Exchange, error) {
	if t.Exchange == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "no exchange connectors are configured")
	}
	x, err := t.Exchange(name)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return nil, domain.Errorf(domain.EINVALID, "field \"exch\": unknown exchange %q", name)
	} else if err != nil {
		return nil, err
	}
	return x, nil
}

func (t *Trader) exCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	d := t.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// exErr turns connector failures that are not domain errors into
// EUNAVAILABLE (a network problem, a timeout).
func exErr(err error) error {
	if err == nil {
		return nil
	}
	var de *domain.Error
	if errors.As(err, &de) {
		return err
	}
	return domain.Errorf(domain.EUNAVAILABLE, "exchange unavailable: %v", err)
}

func (t *Trader) exLock(exchange string) *sync.Mutex {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	l, ok := t.exLocks[exchange]
	if !ok {
		l = &sync.Mutex{}
		t.exLocks[exchange] = l
	}
	return l
}

// appender appends events on behalf of one command and remembers the last
// position, for the final Wait.
type appender struct {
	t           *Trader
	actor, corr string
	last        uint64
}

func (t *Trader) newAppender(actor, corr string) *appender {
	if actor == "" {
		actor = domain.ActorCore
	}
	return &appender{t: t, actor: actor, corr: corr}
}

// append writes events to stream and applies them to the Trader's state.
func (a *appender) append(ctx context.Context, stream string, expected domain.ExpectedVersion, evs ...domain.Event) error {
	if len(evs) == 0 {
		return nil
	}
	for i := range evs {
		evs[i].Actor, evs[i].Correlation = a.actor, a.corr
	}
	res, err := a.t.Store.Append(ctx, stream, expected, evs...)
	if err != nil {
		return fmt.Errorf("append %s: %w", stream, err)
	}
	a.t.mu.Lock()
	for i := range evs {
		evs[i].Stream, evs[i].Version = stream, res.FirstVersion+int64(i)
		if err := a.t.applyLocked(&evs[i]); err != nil {
			a.t.mu.Unlock()
			return err
		}
	}
	a.t.mu.Unlock()
	if res.LastPosition > a.last {
		a.last = res.LastPosition
	}
	return nil
}

// wait returns once the appended events are visible to the read models.
func (a *appender) wait(ctx context.Context) error {
	if a.t.Wait == nil || a.last == 0 {
		return nil
	}
	return a.t.Wait(ctx, a.last)
}

// finish waits for the projections, keeping err (the command's answer)
// unless waiting failed.
func (a *appender) finish(ctx context.Context, err error) error {
	if werr := a.wait(ctx); werr != nil && err == nil {
		return werr
	}
	return err
}

// appendOrder appends to an order's stream at its current version.
func (a *appender) appendOrder(ctx context.Context, en *entry, id int64, evs ...domain.Event) error {
	a.t.mu.Lock()
	v := en.o.Version
	a.t.mu.Unlock()
	expected := domain.ExpectedVersion(v)
	if v < 0 {
		expected = domain.NoStream
	}
	return a.append(ctx, domain.OrderStream(id), expected, evs...)
}

func (t *Trader) entry(id int64) *entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	return t.orders[id]
}

// snapshot returns a copy of en's order (without the fill-id set).
func (t *Trader) snapshot(en *entry) domain.Order {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := en.o
	o.FillIDs = nil
	return o
}

// allocID returns a new order (or OCO) id, and its entry when order.
func (t *Trader) allocID(order bool) (int64, *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	id := t.nextID
	t.nextID++
	if !order {
		return id, nil
	}
	en := &entry{o: domain.NewOrder()}
	t.orders[id] = en
	return id, en
}

// dropEntry forgets a reserved id whose OrderRequested never got written.
func (t *Trader) dropEntry(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if en := t.orders[id]; en != nil && en.o.State == domain.OrderStateNone {
		delete(t.orders, id)
	}
}
