package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// fillPage is how many fills Reconcile asks for at a time.
const fillPage = 500

// Reconcile brings the log up to date with an exchange: orders whose
// placement had no answer are looked up by client order id (accepted,
// rejected, or placed again for a fired stop), pending cancels are retried,
// new fills become OrderFilled (an OCO limit leg's first fill cancels the
// stop leg), and the balances are appended as BalancesObserved when they
// changed.
func (t *Trader) Reconcile(ctx context.Context, exchange string) error {
	x, err := t.exchange(exchange)
	if err != nil {
		return err
	}
	l := t.exLock(exchange)
	l.Lock()
	defer l.Unlock()
	a := t.newAppender(domain.ActorCore, "")
	err = t.reconcile(ctx, a, x)
	return a.finish(ctx, err)
}

func (t *Trader) reconcile(ctx context.Context, a *appender, x domain.Exchange) error {
	if err := t.checkOpenOrders(ctx, a, x); err != nil {
		return err
	}
	pending := t.openOrders(x.Name(), func(o *domain.Order) bool {
		return (o.State == domain.OrderStateRequested && !o.Emulated()) || o.State == domain.OrderStateTriggered
	})
	for _, id := range pending {
		if err := t.resolvePending(ctx, a, x, id); err != nil {
			return err
		}
	}
	cancels := t.openOrders(x.Name(), func(o *domain.Order) bool { return o.CancelRequested && o.OnExchange() })
	for _, id := range cancels {
		if err := t.exchangeCancel(ctx, a, x, id, "cancelled by the client"); err != nil && domain.ErrorCode(err) != domain.EUNAVAILABLE && domain.ErrorCode(err) != domain.ECONFLICT {
			return err
		}
	}
	if err := t.reconcileFills(ctx, a, x); err != nil {
		return err
	}
	return t.observeBalances(ctx, a, x)
}

// Look-ups of orders in question back off: the first at once, then after
// 1 s, 2 s, 4 s … up to lookupMaxBackoff. After lookupNotFounds look-ups
// that found nothing, the order is given up: OrderExpired.
const (
	lookupNotFounds  = 3
	lookupMaxBackoff = time.Minute
)

// due reports whether an order's next look-up is due, and counts it.
func (t *Trader) due(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lookups == nil {
		t.lookups = map[int64]*lookup{}
	}
	l := t.lookups[id]
	if l == nil {
		l = &lookup{}
		t.lookups[id] = l
	}
	now := t.Clock.Now()
	if now.Before(l.next) {
		return false
	}
	l.attempts++
	wait := time.Second << min(l.attempts-1, 6)
	l.next = now.Add(min(wait, lookupMaxBackoff))
	return true
}

// notFound counts a look-up that found nothing and returns the count.
func (t *Trader) notFound(id int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.lookups[id]
	if l == nil {
		return 0
	}
	l.notFound++
	return l.notFound
}

func (t *Trader) forgetLookup(id int64) {
	t.mu.Lock()
	delete(t.lookups, id)
	t.mu.Unlock()
}

// resolvePending looks up an order whose placement had no answer (or a
// fired stop whose limit order may not be placed), when its backoff
// allows: found, it is accepted (or rejected, as the exchange says); a
// definite not-found re-sends it once (OrderResent), never twice; after
// lookupNotFounds not-founds it is OrderExpired. An exchange that does not
// answer is asked again later.
func (t *Trader) resolvePending(ctx context.Context, a *appender, x domain.Exchange, id int64) error {
	entry := t.entry(id)
	if entry == nil || !t.due(id) {
		return nil
	}
	if !entry.op.TryLock() {
		return nil // a command is placing it right now
	}
	o := t.snapshot(entry)
	if o.State.Done() || (o.State != domain.OrderStateRequested && o.State != domain.OrderStateTriggered) {
		entry.op.Unlock()
		t.forgetLookup(id)
		return nil
	}
	xctx, cancel := t.exchangeCallContext(ctx)
	exchangeOrder, err := x.Order(xctx, o.Pair, o.ClientOrderID)
	cancel()
	var decide func(o domain.Order) ([]domain.Event, error)
	switch {
	case err == nil:
		decide = func(o domain.Order) ([]domain.Event, error) { return o.DecideAnswer(t.Clock, exchangeOrder) }
	case domain.ErrorCode(err) == domain.ENOTFOUND:
		n := t.notFound(id)
		switch {
		case !o.Resent:
			// Definitely not there: send it again, once.
			reason := fmt.Sprintf("%s does not know client order id %s: sent again, once", o.Exchange, o.ClientOrderID)
			if _, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideResend(t.Clock, reason, n) }); err != nil {
				entry.op.Unlock()
				return err
			}
			o = t.snapshot(entry)
			price := o.Price
			if o.Emulated() {
				price = o.LimitPrice
			}
			exchangeOrder, err := t.place(ctx, a, x, entry, &o, price)
			entry.op.Unlock()
			if err == nil && exchangeOrder.ID != "" && (exchangeOrder.Filled.Sign() > 0 || exchangeOrder.Status != domain.StatusOpen) {
				err = t.settlePlacedLocked(ctx, a, x, id, exchangeOrder)
			}
			if domain.ErrorCode(err) == domain.EUNAVAILABLE {
				return nil // still unknown: looked up again later
			}
			return err
		case n >= lookupNotFounds:
			reason := fmt.Sprintf("%s never received the order: %d look-ups by client order id found nothing, after one re-send", o.Exchange, n)
			decide = func(o domain.Order) ([]domain.Event, error) { return o.DecideExpire(t.Clock, reason), nil }
		}
	}
	var evs []domain.Event
	err = nil // an exchange that did not answer is asked again later
	if decide != nil {
		evs, err = a.order(ctx, entry, id, decide)
	}
	entry.op.Unlock()
	if len(evs) > 0 {
		t.forgetLookup(id)
	}
	return err
}

// checkOpenOrders looks up, after this process started, every order the
// log says is open on the exchange, until each is found once or given up.
// One the exchange does not know after lookupNotFounds look-ups (with
// backoff) ends with OrderExpired instead of staying open in the read
// models forever. Unreachable exchanges are asked again next time. The
// caller holds the exchange lock.
func (t *Trader) checkOpenOrders(ctx context.Context, a *appender, x domain.Exchange) error {
	t.mu.Lock()
	done := t.checked[x.Name()]
	t.mu.Unlock()
	if done {
		return nil
	}
	open := t.openOrders(x.Name(), func(o *domain.Order) bool {
		return o.State == domain.OrderStateAccepted && o.OnExchange()
	})
	unresolved := 0
	for _, id := range open {
		entry := t.entry(id)
		if entry == nil {
			continue
		}
		if t.confirmed(id) {
			continue
		}
		unresolved++
		if !t.due(id) || !entry.op.TryLock() {
			continue
		}
		o := t.snapshot(entry)
		xctx, cancel := t.exchangeCallContext(ctx)
		_, err := x.Order(xctx, o.Pair, o.ClientOrderID)
		cancel()
		switch {
		case err == nil:
			t.confirm(id)
			unresolved--
		case domain.ErrorCode(err) == domain.ENOTFOUND:
			if n := t.notFound(id); n >= lookupNotFounds {
				reason := fmt.Sprintf("%s no longer knows the order: %d look-ups by client order id found nothing", o.Exchange, n)
				_, err = a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideExpire(t.Clock, reason), nil })
				t.forgetLookup(id)
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
		t.mu.Lock()
		if t.checked == nil {
			t.checked = map[string]bool{}
		}
		t.checked[x.Name()] = true
		for _, id := range open {
			delete(t.lookups, id)
		}
		t.mu.Unlock()
	}
	return nil
}

// confirmed reports whether an open order was found on the exchange since
// this process started (its look-up state says so: attempts < 0).
func (t *Trader) confirmed(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.lookups[id]
	return l != nil && l.attempts < 0
}

func (t *Trader) confirm(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.lookups[id]; l != nil {
		l.attempts = -1
	}
}

// reconcileFills records the exchange's fills since the cursor. The caller
// holds the exchange lock.
func (t *Trader) reconcileFills(ctx context.Context, a *appender, x domain.Exchange) error {
	for {
		t.mu.Lock()
		t.init()
		cursor := t.cursor[x.Name()]
		t.mu.Unlock()
		xctx, cancel := t.exchangeCallContext(ctx)
		fills, err := x.FillsSince(xctx, cursor, fillPage)
		cancel()
		if err != nil {
			return exchangeError(err)
		}
		for _, f := range fills {
			t.mu.Lock()
			id, ok := t.byClient[f.ClientOrderID]
			t.mu.Unlock()
			if ok {
				if err := t.recordFill(ctx, a, x, id, f); err != nil {
					return err
				}
			}
			t.mu.Lock()
			if f.Seq > t.cursor[x.Name()] {
				t.cursor[x.Name()] = f.Seq
			}
			t.mu.Unlock()
		}
		if len(fills) < fillPage {
			return nil
		}
	}
}

func (t *Trader) recordFill(ctx context.Context, a *appender, x domain.Exchange, id int64, f domain.Fill) error {
	entry := t.entry(id)
	if entry == nil {
		return nil // finished: a fill it no longer expects
	}
	entry.op.Lock()
	before := t.orderState(entry)
	evs, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideFill(t.Clock, f), nil })
	entry.op.Unlock()
	first, ocoID, kind := before.Filled.IsZero(), before.OcoID, before.Kind
	if err != nil || len(evs) == 0 {
		return err
	}
	if ocoID != 0 && first && kind == domain.KindLimit {
		return t.legExecuted(ctx, a, x, ocoID, id)
	}
	return nil
}

// observeBalances appends the exchange's balances when they differ from
// the last observed ones.
func (t *Trader) observeBalances(ctx context.Context, a *appender, x domain.Exchange) error {
	xctx, cancel := t.exchangeCallContext(ctx)
	bs, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return exchangeError(err)
	}
	return a.balances(ctx, x.Name(), func(last domain.BalancesObserved, seen bool) ([]domain.Event, error) {
		return domain.DecideBalancesObserved(t.Clock, x.Name(), last.Balances, seen, bs), nil
	})
}

// reconciledOnce makes sure that, since this process started, the
// exchange's open orders were looked up (checkOpenOrders) and its fills
// since the cursor recorded before a new order goes out.
func (t *Trader) reconciledOnce(ctx context.Context, x domain.Exchange) error {
	t.mu.Lock()
	done := t.checked[x.Name()]
	t.mu.Unlock()
	if done {
		return nil
	}
	l := t.exLock(x.Name())
	l.Lock()
	defer l.Unlock()
	a := t.newAppender(domain.ActorCore, "")
	err := t.checkOpenOrders(ctx, a, x)
	if err == nil {
		err = t.reconcileFills(ctx, a, x)
	}
	return a.finish(ctx, err)
}
