// Package trading is the order manager: every order's life as events
// (DESIGN §2, §5). A Trader places and cancels orders on domain.Exchange
// connectors, emulates stop-limit, trailing-stop and OCO orders from price
// ticks (the rules are pure functions in domain), and reconciles the
// exchanges' fills and balances into the log.
//
// The Trader is also a projection: register it with the projection runner
// before the replay, and it recovers from the log the next order id, the
// state of every order, the Idempotency-Keys already answered, the fill
// cursors and the last observed balances. Events it appends itself are
// applied at once (and ignored when the runner delivers them again), so its
// decisions never wait for the runner.
//
// Safety: an OrderRequested is durable before the exchange hears of the
// order, and the client order id sent is derived from that event's id. A
// retry, a timeout or a crash therefore never places a second order: an
// order whose answer was lost stays "requested" (pending reconcile) until
// Reconcile looks it up by its client order id.
package trading

import (
	"context"
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

	mu       sync.Mutex
	nextID   int64
	orders   map[int64]*entry
	byClient map[string]int64
	keys     map[string]*keyEntry
	ocos     map[int64]*domain.Oco
	cursor   map[string]uint64
	balances map[string]domain.BalancesObserved
	exLocks  map[string]*sync.Mutex
}

type entry struct {
	op sync.Mutex // serializes commands on the order; never held while waiting for projections
	o  domain.Order
}

type keyEntry struct {
	done    chan struct{}
	orderID int64
	ocoID   int64
}

// NewTrader returns a Trader with default settings.
func NewTrader(store domain.EventStore, exchange func(string) (domain.Exchange, error), clock domain.Clock) *Trader {
	return &Trader{Store: store, Exchange: exchange, Clock: clock, Timeout: DefaultTimeout}
}

func (t *Trader) init() {
	if t.orders == nil {
		t.nextID = 1
		t.orders = make(map[int64]*entry)
		t.byClient = make(map[string]int64)
		t.keys = make(map[string]*keyEntry)
		t.ocos = make(map[int64]*domain.Oco)
		t.cursor = make(map[string]uint64)
		t.balances = make(map[string]domain.BalancesObserved)
		t.exLocks = make(map[string]*sync.Mutex)
	}
}

// Name implements projections.Projection.
func (t *Trader) Name() string { return "trading" }

// Apply implements projections.Projection: it folds order, OCO and balance
// events into the Trader's state. Events already applied are ignored.
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
		en := t.orders[id]
		if en == nil {
			en = &entry{o: domain.NewOrder()}
			t.orders[id] = en
		}
		if id >= t.nextID {
			t.nextID = id + 1
		}
		if err := en.o.Apply(e); err != nil {
			return err
		}
		switch e.Type {
		case domain.TypeOrderRequested:
			t.byClient[en.o.ClientOrderID] = id
			if k := en.o.IdempotencyKey; k != "" {
				if _, ok := t.keys[k]; !ok {
					done := make(chan struct{})
					close(done)
					t.keys[k] = &keyEntry{done: done, orderID: id, ocoID: en.o.OcoID}
				}
			}
		case domain.TypeOrderFilled:
			var p domain.OrderFilled
			if e.Decode(&p) == nil && p.Seq > t.cursor[en.o.Exchange] {
				t.cursor[en.o.Exchange] = p.Seq
			}
		}
	case strings.HasPrefix(e.Stream, "oco-"):
		id, err := strconv.ParseInt(e.Stream[len("oco-"):], 10, 64)
		if err != nil {
			return nil
		}
		c := t.ocos[id]
		if c == nil {
			oc := domain.NewOco()
			c = &oc
			t.ocos[id] = c
		}
		if id >= t.nextID {
			t.nextID = id + 1
		}
		return c.Apply(e)
	case strings.HasPrefix(e.Stream, "balance-") && e.Type == domain.TypeBalancesObserved:
		var p domain.BalancesObserved
		if err := e.Decode(&p); err != nil {
			return err
		}
		t.balances[p.Exchange] = p
	}
	return nil
}

// Order returns a copy of an order's state, and whether it exists.
func (t *Trader) Order(id int64) (domain.Order, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	en, ok := t.orders[id]
	if !ok || en.o.State == domain.OrderStateNone {
		return domain.Order{}, false
	}
	o := en.o
	o.FillIDs = nil
	return o, true
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
		return nil, domain.Errorf(domain.EINVALID, "exch: unknown exchange %q", name)
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
