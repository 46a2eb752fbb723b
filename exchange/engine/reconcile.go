package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Reconciler brings the log up to date with an exchange (Reconcile):
// orders whose placement had no answer are looked up by client order id,
// pending cancels are retried, new fills are recorded, and balances are
// observed. After a start it looks up every order the log says is open
// on the exchange once (checkOpenOrders) before a new order goes out
// (reconciledOnce). It also records the rates the core observes
// (ObserveRate). Its look-ups back off, and what it knows of them is
// this process's, not the log's: a restart looks again. New wires it.
type Reconciler struct {
	desk *Desk

	mu sync.Mutex
	// lookups is the look-up state of orders whose existence on the
	// exchange is in question (unknown outcome, or open in the log but
	// maybe forgotten): not-founds so far and when to ask next.
	lookups map[int64]*lookup
	// checked names the exchanges whose open orders were looked up since
	// this process started (checkOpenOrders).
	checked map[string]bool
}

// lookup is the backoff state of one order's look-ups by client order id.
type lookup struct {
	notFound int
	attempts int
	next     time.Time
}

// Reconcile brings the log up to date with an exchange: orders whose
// placement had no answer are looked up by client order id (accepted,
// rejected, or placed again for a fired stop), pending cancels are retried,
// new fills become OrderFilled (an OCO limit leg's first fill cancels the
// stop leg), and the balances are appended as BalancesObserved when they
// changed.
func (r *Reconciler) Reconcile(ctx context.Context, exchange string) error {
	x, err := r.desk.exchange(exchange)
	if err != nil {
		return err
	}
	l := r.desk.exLock(exchange)
	l.Lock()
	defer l.Unlock()
	a := r.desk.newAppender(domain.ActorCore, "")
	err = r.reconcile(ctx, a, x)
	return a.finish(ctx, err)
}

func (r *Reconciler) reconcile(ctx context.Context, a *appender, x domain.Exchange) error {
	if err := r.checkOpenOrders(ctx, a, x); err != nil {
		return err
	}
	pending := r.desk.orders.openIDs(x.Name(), func(o *domain.Order) bool {
		return (o.State == domain.OrderStateRequested && !o.Emulated()) || o.State == domain.OrderStateTriggered
	})
	for _, id := range pending {
		if err := r.resolvePending(ctx, a, x, id); err != nil {
			return err
		}
	}
	cancels := r.desk.orders.openIDs(x.Name(), func(o *domain.Order) bool { return o.CancelRequested && o.OnExchange() })
	for _, id := range cancels {
		if err := r.desk.exchangeCancel(ctx, a, x, id, "cancelled by the client"); err != nil && domain.ErrorCode(err) != domain.EUNAVAILABLE && domain.ErrorCode(err) != domain.ECONFLICT {
			return err
		}
	}
	if err := r.desk.reconcileFills(ctx, a, x); err != nil {
		return err
	}
	return r.observeBalances(ctx, a, x)
}

// Look-ups of orders in question back off: the first at once, then after
// 1 s, 2 s, 4 s … up to lookupMaxBackoff. After lookupNotFounds look-ups
// that found nothing, the order is given up: OrderExpired.
const (
	lookupNotFounds  = 3
	lookupMaxBackoff = time.Minute
)

// due reports whether an order's next look-up is due, and counts it.
func (r *Reconciler) due(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lookups == nil {
		r.lookups = map[int64]*lookup{}
	}
	l := r.lookups[id]
	if l == nil {
		l = &lookup{}
		r.lookups[id] = l
	}
	now := r.desk.Clock.Now()
	if now.Before(l.next) {
		return false
	}
	l.attempts++
	wait := time.Second << min(l.attempts-1, 6)
	l.next = now.Add(min(wait, lookupMaxBackoff))
	return true
}

// notFound counts a look-up that found nothing and returns the count.
func (r *Reconciler) notFound(id int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lookups[id]
	if l == nil {
		return 0
	}
	l.notFound++
	return l.notFound
}

func (r *Reconciler) forgetLookup(id int64) {
	r.mu.Lock()
	delete(r.lookups, id)
	r.mu.Unlock()
}

// resolvePending looks up an order whose placement had no answer (or a
// fired stop whose limit order may not be placed), when its backoff
// allows: found, it is accepted (or rejected, as the exchange says); a
// definite not-found re-sends it once (OrderResent), never twice; after
// lookupNotFounds not-founds it is OrderExpired. An exchange that does not
// answer is asked again later.
func (r *Reconciler) resolvePending(ctx context.Context, a *appender, x domain.Exchange, id int64) error {
	entry := r.desk.orders.entry(id)
	if entry == nil || !r.due(id) {
		return nil
	}
	if !entry.op.TryLock() {
		return nil // a command is placing it right now
	}
	o := r.desk.orders.snapshot(entry)
	if o.State.Done() || (o.State != domain.OrderStateRequested && o.State != domain.OrderStateTriggered) {
		entry.op.Unlock()
		r.forgetLookup(id)
		return nil
	}
	xctx, cancel := r.desk.callContext(ctx)
	exchangeOrder, err := x.Order(xctx, o.Pair, o.ClientOrderID)
	cancel()
	var decide func(o domain.Order) ([]domain.Event, error)
	switch {
	case err == nil:
		decide = func(o domain.Order) ([]domain.Event, error) { return o.DecideAnswer(r.desk.Clock, exchangeOrder) }
	case domain.ErrorCode(err) == domain.ENOTFOUND:
		n := r.notFound(id)
		switch {
		case !o.Resent:
			// Definitely not there: send it again, once.
			reason := fmt.Sprintf("%s does not know client order id %s: sent again, once", o.Exchange, o.ClientOrderID)
			if _, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideResend(r.desk.Clock, reason, n) }); err != nil {
				entry.op.Unlock()
				return err
			}
			o = r.desk.orders.snapshot(entry)
			price := o.Price
			if o.Emulated() {
				price = o.LimitPrice
			}
			exchangeOrder, err := r.desk.place(ctx, a, x, entry, &o, price)
			entry.op.Unlock()
			if err == nil && settled(exchangeOrder) {
				err = r.desk.settlePlacedLocked(ctx, a, x, id, exchangeOrder)
			}
			if domain.ErrorCode(err) == domain.EUNAVAILABLE {
				return nil // still unknown: looked up again later
			}
			return err
		case n >= lookupNotFounds:
			reason := fmt.Sprintf("%s never received the order: %d look-ups by client order id found nothing, after one re-send", o.Exchange, n)
			decide = func(o domain.Order) ([]domain.Event, error) { return o.DecideExpire(r.desk.Clock, reason), nil }
		}
	}
	var evs []domain.Event
	err = nil // an exchange that did not answer is asked again later
	if decide != nil {
		evs, err = a.order(ctx, entry, id, decide)
	}
	entry.op.Unlock()
	if len(evs) > 0 {
		r.forgetLookup(id)
	}
	return err
}

// checkOpenOrders looks up, after this process started, every order the
// log says is open on the exchange, until each is found once or given up.
// One the exchange does not know after lookupNotFounds look-ups (with
// backoff) ends with OrderExpired instead of staying open in the read
// models forever. Unreachable exchanges are asked again next time. The
// caller holds the exchange lock.
func (r *Reconciler) checkOpenOrders(ctx context.Context, a *appender, x domain.Exchange) error {
	r.mu.Lock()
	done := r.checked[x.Name()]
	r.mu.Unlock()
	if done {
		return nil
	}
	open := r.desk.orders.openIDs(x.Name(), func(o *domain.Order) bool {
		return o.State == domain.OrderStateAccepted && o.OnExchange()
	})
	unresolved := 0
	for _, id := range open {
		entry := r.desk.orders.entry(id)
		if entry == nil {
			continue
		}
		if r.confirmed(id) {
			continue
		}
		unresolved++
		if !r.due(id) || !entry.op.TryLock() {
			continue
		}
		o := r.desk.orders.snapshot(entry)
		xctx, cancel := r.desk.callContext(ctx)
		_, err := x.Order(xctx, o.Pair, o.ClientOrderID)
		cancel()
		switch {
		case err == nil:
			r.confirm(id)
			unresolved--
		case domain.ErrorCode(err) == domain.ENOTFOUND:
			if n := r.notFound(id); n >= lookupNotFounds {
				reason := fmt.Sprintf("%s no longer knows the order: %d look-ups by client order id found nothing", o.Exchange, n)
				_, err = a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideExpire(r.desk.Clock, reason), nil })
				r.forgetLookup(id)
				unresolved--
				if err != nil {
					entry.op.Unlock()
					return err
				}
			}
		}
		entry.op.Unlock()
	}
	if unresolved == 0 {
		r.mu.Lock()
		if r.checked == nil {
			r.checked = map[string]bool{}
		}
		r.checked[x.Name()] = true
		for _, id := range open {
			delete(r.lookups, id)
		}
		r.mu.Unlock()
	}
	return nil
}

// confirmed reports whether an open order was found on the exchange since
// this process started (its look-up state says so: attempts < 0).
func (r *Reconciler) confirmed(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lookups[id]
	return l != nil && l.attempts < 0
}

func (r *Reconciler) confirm(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.lookups[id]; l != nil {
		l.attempts = -1
	}
}

// observeBalances appends the exchange's balances when they differ from
// the last observed ones.
func (r *Reconciler) observeBalances(ctx context.Context, a *appender, x domain.Exchange) error {
	xctx, cancel := r.desk.callContext(ctx)
	bs, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return exchangeError(err)
	}
	return a.balances(ctx, x.Name(), func(last domain.BalancesObserved, seen bool) ([]domain.Event, error) {
		return domain.DecideBalancesObserved(r.desk.Clock, x.Name(), last.Balances, seen, bs), nil
	})
}

// ObserveRate records a rate the core observed (RateObserved on the
// exchange's rate stream, by the core) through the command path, and
// waits until the read models have it: the Scheduler's Rates. A rate that
// is not one (no asset, not positive) is EINVALID and appends nothing.
func (r *Reconciler) ObserveRate(ctx context.Context, rate domain.RateObserved) error {
	a := r.desk.newAppender(domain.ActorCore, "")
	_, err := write(ctx, a, domain.RateStream(rate.Exchange), func() (domain.RateObserved, domain.ExpectedVersion) {
		return rate, domain.Any
	}, func(rate domain.RateObserved) ([]domain.Event, error) {
		return domain.DecideRateObserved(r.desk.Clock, rate)
	})
	return a.finish(ctx, err)
}

// reconciledOnce makes sure that, since this process started, the
// exchange's open orders were looked up (checkOpenOrders) and its fills
// since the cursor recorded before a new order goes out.
func (r *Reconciler) reconciledOnce(ctx context.Context, x domain.Exchange) error {
	r.mu.Lock()
	done := r.checked[x.Name()]
	r.mu.Unlock()
	if done {
		return nil
	}
	l := r.desk.exLock(x.Name())
	l.Lock()
	defer l.Unlock()
	a := r.desk.newAppender(domain.ActorCore, "")
	err := r.checkOpenOrders(ctx, a, x)
	if err == nil {
		err = r.desk.reconcileFills(ctx, a, x)
	}
	return a.finish(ctx, err)
}
