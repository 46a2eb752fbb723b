package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore"
)

// DefaultTimeout bounds every exchange call.
const DefaultTimeout = 10 * time.Second

// Desk is what the order side's rooms (Trader, Reconciler, Emulator) work
// through: the log and its command path, the connectors and one lock per
// exchange, the clock, and the projections they decide against (Orders,
// the BalanceBook, Attention), to which their own appends are applied at once. It
// places an order on its connector and records the answer (place), records
// the exchange's fills (reconcileFills) with the OCO rule a fill or a
// fired stop triggers (legExecuted), and cancels (cancelLocked). Its
// exported fields are the settings; New fills them.
type Desk struct {
	// Store is the event log.
	Store domain.EventStore
	// Exchange returns the connector for an exchange name (ENOTFOUND for
	// a name it cannot serve).
	Exchange func(name string) (domain.Exchange, error)
	// Clock dates events.
	Clock domain.Clock
	// Wait, if set, is called with the position of the last appended
	// event before a command returns (projections.Runner.WaitFor), so the
	// caller's next read sees the command's events.
	Wait func(ctx context.Context, pos uint64) error
	// Timeout bounds each exchange call.
	Timeout time.Duration

	orders    *Orders
	balances  BalanceBook
	attention *Attention

	mu      sync.Mutex
	exLocks map[string]*sync.Mutex

	// applyGate is held (read) while an append is applied at once to the
	// desk's projections, and taken whole by HoldApplies; ahead is the
	// highest position applied that way.
	applyGate sync.RWMutex
	ahead     atomic.Uint64

	cmdsOnce sync.Once
	cmds     *eventstore.Commands // commands()
}

// exchange returns an exchange's connector; an unknown exchange is
// EINVALID naming the field exch.
func (d *Desk) exchange(name string) (domain.Exchange, error) {
	if d.Exchange == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "no exchange connectors are configured")
	}
	x, err := d.Exchange(name)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return nil, domain.Errorf(domain.EINVALID, "field \"exch\": unknown exchange %q", name)
	} else if err != nil {
		return nil, err
	}
	return x, nil
}

// callContext bounds one call to a connector by Timeout (DefaultTimeout
// when unset): a call not answered by then is an unknown outcome, never a
// wait for ever.
func (d *Desk) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	t := d.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return context.WithTimeout(ctx, t)
}

// exchangeError turns connector failures that are not domain errors into
// EUNAVAILABLE (a network problem, a timeout).
func exchangeError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := domain.AsError(err); ok {
		return err
	}
	return domain.Errorf(domain.EUNAVAILABLE, "exchange unavailable: %v", err)
}

// exLock returns an exchange's lock: a reconcile pass, a tick and a
// cancel of one exchange run one at a time, so fills and cancels are
// recorded in the exchange's order.
func (d *Desk) exLock(exchange string) *sync.Mutex {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.exLocks == nil {
		d.exLocks = map[string]*sync.Mutex{}
	}
	l, ok := d.exLocks[exchange]
	if !ok {
		l = &sync.Mutex{}
		d.exLocks[exchange] = l
	}
	return l
}

// apply applies the events of one append, the last of them at position
// last, to the projections the desk decides against: to Orders at once, so
// that no reader sees an append half applied.
func (d *Desk) apply(evs []domain.Event, last uint64) error {
	d.applyGate.RLock()
	defer d.applyGate.RUnlock()
	for old := d.ahead.Load(); last > old && !d.ahead.CompareAndSwap(old, last); old = d.ahead.Load() {
	}
	if err := d.orders.applyAll(evs); err != nil {
		return err
	}
	for i := range evs {
		if err := d.balances.Apply(&evs[i]); err != nil {
			return err
		}
		if err := d.attention.Apply(&evs[i]); err != nil {
			return err
		}
	}
	return nil
}

// HoldApplies stops the desk from applying its appends to its projections
// (Orders, the BalanceBook, Attention) until release is called, and returns
// the highest position it applied to them: once the runner has applied
// that much, the three are at the runner's position, and a read-model
// snapshot can freeze them with the others (projections.Runner.Ahead).
// Appends go on meanwhile; their commands wait to apply them.
func (d *Desk) HoldApplies() (position uint64, release func()) {
	d.applyGate.Lock()
	return d.ahead.Load(), d.applyGate.Unlock
}

// commands is the command path on the store, made on first use (the
// settings are set by then): a conflict waits on Wait before deciding
// again; the wait after an append is the appender's (finish).
func (d *Desk) commands() *eventstore.Commands {
	d.cmdsOnce.Do(func() {
		d.cmds = eventstore.NewCommands(d.Store, nil)
		if d.Wait != nil {
			d.cmds.Waiter = waitFunc(d.Wait)
		}
		d.cmds.DeferWait = true
	})
	return d.cmds
}

// waitFunc is a Wait as an eventstore.Waiter.
type waitFunc func(ctx context.Context, pos uint64) error

func (f waitFunc) WaitFor(ctx context.Context, pos uint64) error { return f(ctx, pos) }

// place sends an order (new, or a fired stop at limit price) to the
// exchange with its client order id, and records the answer: accepted,
// rejected, or nothing (pending reconciliation) when the exchange did not
// answer even to a look-up. The caller holds entry.op.
func (d *Desk) place(ctx context.Context, a *appender, x domain.Exchange, entry *orderEntry, o *domain.Order, price decimal.Decimal) (domain.ExchangeOrder, error) {
	kind := o.Kind
	if o.Emulated() {
		kind = domain.KindLimit
	}
	req := domain.PlaceOrderRequest{ClientOrderID: o.ClientOrderID, Pair: o.Pair, Side: o.Side, Kind: kind, Amount: o.Remaining(), Price: price}
	xctx, cancel := d.callContext(ctx)
	exchangeOrder, err := x.PlaceOrder(xctx, req)
	cancel()
	switch code := domain.ErrorCode(err); {
	case err == nil:
	case code == domain.EINVALID || code == domain.ENOTFOUND:
		reason := domain.ErrorMessage(err)
		_, err := a.order(ctx, entry, o.OrderID, func(cur domain.Order) ([]domain.Event, error) { return cur.DecideRejected(d.Clock, reason) })
		return exchangeOrder, err
	default:
		// No answer: the order may or may not exist. The unknown outcome
		// is recorded; a look-up by client order id that finds it settles
		// it now, anything else leaves it to the Reconciler (look-ups
		// with backoff, one re-send after a definite not-found).
		reason := fmt.Sprintf("%s: %s", o.Exchange, domain.ErrorMessage(err))
		if _, aerr := a.order(ctx, entry, o.OrderID, func(cur domain.Order) ([]domain.Event, error) { return cur.DecideOutcomeUnknown(d.Clock, reason) }); aerr != nil {
			return exchangeOrder, aerr
		}
		xctx, cancel := d.callContext(ctx)
		exchangeOrder, err = x.Order(xctx, o.Pair, o.ClientOrderID)
		cancel()
		if err != nil {
			return exchangeOrder, domain.Errorf(domain.EUNAVAILABLE, "%s; order %d is pending reconciliation", reason, o.OrderID)
		}
	}
	_, err = a.order(ctx, entry, o.OrderID, func(cur domain.Order) ([]domain.Event, error) { return cur.DecideAnswer(d.Clock, exchangeOrder) })
	return exchangeOrder, err
}

// settled reports whether a placement's answer says something happened at
// once that the log must record (fills, or the end of the order).
func settled(exchangeOrder domain.ExchangeOrder) bool {
	return exchangeOrder.ID != "" && (exchangeOrder.Filled.Sign() > 0 || exchangeOrder.Status != domain.StatusOpen)
}

// settlePlaced records what happened at once to a placed order: its fills,
// and the cancellation of a market order's unfilled rest.
func (d *Desk) settlePlaced(ctx context.Context, a *appender, x domain.Exchange, id int64, exchangeOrder domain.ExchangeOrder) error {
	l := d.exLock(x.Name())
	l.Lock()
	defer l.Unlock()
	return d.settlePlacedLocked(ctx, a, x, id, exchangeOrder)
}

// settlePlacedLocked is settlePlaced for a caller holding the exchange
// lock.
func (d *Desk) settlePlacedLocked(ctx context.Context, a *appender, x domain.Exchange, id int64, exchangeOrder domain.ExchangeOrder) error {
	if err := d.reconcileFills(ctx, a, x); err != nil {
		return err
	}
	if exchangeOrder.Status == domain.StatusCancelled {
		entry := d.orders.entry(id)
		if entry == nil {
			return nil // filled in full meanwhile
		}
		entry.op.Lock()
		defer entry.op.Unlock()
		_, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) {
			return o.DecideCancelled(d.Clock, exchangeOrder.Reason), nil
		})
		return err
	}
	return nil
}
