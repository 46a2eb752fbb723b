package trading

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// fillPage is how many fills Reconcile asks for at a time.
const fillPage = 500

// Cancel cancels an order: OrderCancelRequested, then OrderCancelled once
// the exchange confirmed (at once for an emulated order whose stop has not
// fired). The id of an OCO (what SubmitOCO returned) cancels both its legs
// that are not finished; each leg's own id cancels that leg alone. An
// exchange name or pair that is not well-formed is EINVALID naming the
// field; an unknown order, or one of another exchange or pair, is ENOTFOUND; a
// finished one (an OCO whose legs are both finished) ECONFLICT ("already
// filled"). An exchange that does not answer leaves the cancel pending
// (EUNAVAILABLE); Reconcile retries it.
func (t *Trader) Cancel(ctx context.Context, exchange, pair string, orderID int64, actor, correlation string) error {
	if err := domain.ValidateTradeTarget(exchange, pair); err != nil {
		return err
	}
	o, ok, err := t.lookup(ctx, orderID)
	if err != nil {
		return err
	}
	if !ok {
		c, isOco, err := t.lookupOco(ctx, orderID)
		if err != nil {
			return err
		}
		if isOco && c.Exchange == exchange && c.Pair == pair {
			return t.cancelOco(ctx, c, actor, correlation)
		}
	}
	if !ok || o.Exchange != exchange || o.Pair != pair {
		return domain.Errorf(domain.ENOTFOUND, "order %d not found on %s %s", orderID, exchange, pair)
	}
	x, err := t.exchange(exchange)
	if err != nil {
		return err
	}
	l := t.exLock(exchange)
	l.Lock()
	a := t.newAppender(actor, correlation)
	err = t.cancelLocked(ctx, a, x, orderID, "cancelled by the client")
	l.Unlock()
	return a.finish(ctx, err)
}

// lookupOco returns an OCO's state: from memory while a leg is
// unfinished, else folded from its stream. An id that never was an OCO is
// (zero, false, nil).
func (t *Trader) lookupOco(ctx context.Context, id int64) (domain.Oco, bool, error) {
	t.mu.Lock()
	t.init()
	if c, ok := t.ocos[id]; ok {
		oc := *c
		t.mu.Unlock()
		return oc, oc.OcoID != 0, nil
	}
	finished := t.finished.has(id)
	t.mu.Unlock()
	if !finished || t.Store == nil {
		return domain.Oco{}, false, nil
	}
	it := t.Store.ReadStream(ctx, domain.OcoStream(id), 0, 0)
	defer it.Close()
	c := domain.NewOco()
	for it.Next() {
		e := it.Event()
		if err := c.Apply(&e); err != nil {
			return domain.Oco{}, false, err
		}
	}
	if err := it.Err(); err != nil {
		return domain.Oco{}, false, fmt.Errorf("read %s: %w", domain.OcoStream(id), err)
	}
	return c, c.OcoID != 0, nil
}

// cancelOco cancels the legs of an OCO that are not finished. Both
// finished is ECONFLICT.
func (t *Trader) cancelOco(ctx context.Context, c domain.Oco, actor, correlation string) error {
	x, err := t.exchange(c.Exchange)
	if err != nil {
		return err
	}
	l := t.exLock(c.Exchange)
	l.Lock()
	a := t.newAppender(actor, correlation)
	var firstErr error
	cancelled := 0
	for _, leg := range []int64{c.LimitOrderID, c.StopOrderID} {
		switch err := t.cancelLocked(ctx, a, x, leg, "OCO cancelled by the client"); {
		case err == nil:
			cancelled++
		case domain.ErrorCode(err) == domain.ECONFLICT:
			// finished: nothing to cancel on this leg
		case firstErr == nil:
			firstErr = err
		}
	}
	l.Unlock()
	if firstErr == nil && cancelled == 0 {
		firstErr = domain.Errorf(domain.ECONFLICT, "OCO %d is already finished (both legs)", c.OcoID)
	}
	return a.finish(ctx, firstErr)
}

// cancelLeg cancels an OCO leg (taking the exchange lock).
func (t *Trader) cancelLeg(ctx context.Context, a *appender, x domain.Exchange, id int64, reason string) error {
	l := t.exLock(x.Name())
	l.Lock()
	defer l.Unlock()
	return t.cancelLocked(ctx, a, x, id, reason)
}

// cancelLocked decides and records a cancel; the caller holds the
// exchange lock.
func (t *Trader) cancelLocked(ctx context.Context, a *appender, x domain.Exchange, id int64, reason string) error {
	en := t.entry(id)
	if en == nil {
		// Finished (or never an order): the log says which.
		o, ok, err := t.lookup(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return domain.Errorf(domain.ENOTFOUND, "order %d not found", id)
		}
		if _, err := o.DecideCancel(t.Clock, reason); err != nil {
			return err
		}
		return domain.Errorf(domain.ECONFLICT, "order %d is already %s", id, o.State)
	}
	en.op.Lock()
	t.mu.Lock()
	evs, err := en.o.DecideCancel(t.Clock, reason)
	t.mu.Unlock()
	if err == nil {
		err = a.appendOrder(ctx, en, id, evs...)
	}
	en.op.Unlock()
	if err != nil {
		return err
	}
	if o := t.snapshot(en); o.State.Done() {
		return nil
	}
	return t.exchangeCancel(ctx, a, x, id, reason)
}

// exchangeCancel asks the exchange to cancel an order whose cancel was
// requested, and records the outcome.
func (t *Trader) exchangeCancel(ctx context.Context, a *appender, x domain.Exchange, id int64, reason string) error {
	en := t.entry(id)
	if en == nil {
		return nil // finished meanwhile: nothing left to cancel
	}
	o := t.snapshot(en)
	exID := o.ExchangeOrderID
	if exID == "" {
		xctx, cancel := t.exCtx(ctx)
		eo, err := x.Order(xctx, o.Pair, o.ClientOrderID)
		cancel()
		switch {
		case domain.ErrorCode(err) == domain.ENOTFOUND:
			// Never reached the exchange: nothing to cancel there.
			en.op.Lock()
			t.mu.Lock()
			evs := en.o.DecideCancelled(t.Clock, reason)
			t.mu.Unlock()
			err = a.appendOrder(ctx, en, id, evs...)
			en.op.Unlock()
			return err
		case err != nil:
			return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer; the cancel of order %d is pending", o.Exchange, id)
		}
		exID = eo.ID
	}
	xctx, cancel := t.exCtx(ctx)
	eo, err := x.CancelOrder(xctx, o.Pair, exID)
	cancel()
	switch code := domain.ErrorCode(err); {
	case err == nil, code == domain.ECONFLICT:
		// Fills that happened before the cancel are recorded first, so the
		// cancelled remainder is exact.
		if ferr := t.reconcileFills(ctx, a, x); ferr != nil {
			return ferr
		}
		if err != nil && eo.Status != domain.StatusCancelled {
			if o := t.snapshot(en); o.State == domain.OrderStateFilled {
				return domain.Errorf(domain.ECONFLICT, "order %d is already filled", id)
			}
			return domain.Errorf(domain.ECONFLICT, "order %d cannot be cancelled: %s", id, domain.ErrorMessage(err))
		}
		en.op.Lock()
		t.mu.Lock()
		evs := en.o.DecideCancelled(t.Clock, reason)
		t.mu.Unlock()
		err = a.appendOrder(ctx, en, id, evs...)
		en.op.Unlock()
		return err
	case code == domain.ENOTFOUND:
		return domain.Errorf(domain.ENOTFOUND, "order %d is unknown to %s", id, o.Exchange)
	}
	return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer; the cancel of order %d is pending", o.Exchange, id)
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
		en := t.orders[id]
		if en == nil || en.o.State == domain.OrderStateNone || en.o.State.Done() {
			continue
		}
		if keep(&en.o) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// OnTicker applies a price tick to the emulated orders of its pair: a
// stop-limit whose stop is reached fires (StopTriggered) and its limit
// order is placed; a trailing stop moves (TrailingStopMoved) or fires; an
// OCO stop leg that fires cancels the limit leg first (OcoLegCancelled).
func (t *Trader) OnTicker(ctx context.Context, exchange string, tk domain.Ticker) error {
	x, err := t.exchange(exchange)
	if err != nil {
		return err
	}
	l := t.exLock(exchange)
	l.Lock()
	defer l.Unlock()
	a := t.newAppender(domain.ActorCore, "")
	ids := t.armedOrders(exchange, tk.Pair)
	var firstErr error
	for _, id := range ids {
		if err := t.tick(ctx, a, x, id, tk); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return a.finish(ctx, firstErr)
}

func (t *Trader) tick(ctx context.Context, a *appender, x domain.Exchange, id int64, tk domain.Ticker) error {
	en := t.entry(id)
	if en == nil {
		return nil // finished meanwhile
	}
	en.op.Lock()
	t.mu.Lock()
	evs := en.o.DecideTick(t.Clock, tk.Last, tk.Bid, tk.Ask)
	t.mu.Unlock()
	err := a.appendOrder(ctx, en, id, evs...)
	en.op.Unlock()
	if err != nil || len(evs) == 0 || evs[0].Type != domain.TypeStopTriggered {
		return err
	}
	o := t.snapshot(en)
	if o.OcoID != 0 {
		if err := t.legExecuted(ctx, a, x, o.OcoID, id); err != nil {
			return err
		}
	}
	return t.placeTriggered(ctx, a, x, en)
}

// placeTriggered places the limit order of a fired stop.
func (t *Trader) placeTriggered(ctx context.Context, a *appender, x domain.Exchange, en *entry) error {
	en.op.Lock()
	o := t.snapshot(en)
	if o.State != domain.OrderStateTriggered {
		en.op.Unlock()
		return nil
	}
	eo, err := t.place(ctx, a, x, en, &o, o.LimitPrice)
	en.op.Unlock()
	if err == nil && eo.ID != "" && (eo.Filled.Sign() > 0 || eo.Status != domain.StatusOpen) {
		err = t.settlePlacedLocked(ctx, a, x, o.OrderID, eo)
	}
	return err
}

// legExecuted applies the OCO rule after leg legID executed: the other leg
// is cancelled (OcoLegCancelled, then its cancel).
func (t *Trader) legExecuted(ctx context.Context, a *appender, x domain.Exchange, ocoID, legID int64) error {
	t.mu.Lock()
	c := t.ocos[ocoID]
	if c == nil {
		t.mu.Unlock()
		return nil
	}
	other := c.Other(legID)
	otherDone := true
	if en := t.orders[other]; en != nil {
		otherDone = en.o.State.Done()
	}
	evs := c.DecideLegExecuted(t.Clock, legID, otherDone)
	version := c.Version
	t.mu.Unlock()
	if len(evs) == 0 {
		return nil
	}
	if err := a.append(ctx, domain.OcoStream(ocoID), domain.ExpectedVersion(version), evs...); err != nil {
		return err
	}
	err := t.cancelLocked(ctx, a, x, other, "OCO: the other leg executed")
	if domain.ErrorCode(err) == domain.ECONFLICT {
		return nil // it finished meanwhile
	}
	return err
}

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
	en := t.entry(id)
	if en == nil || !t.due(id) {
		return nil
	}
	if !en.op.TryLock() {
		return nil // a command is placing it right now
	}
	o := t.snapshot(en)
	if o.State.Done() || (o.State != domain.OrderStateRequested && o.State != domain.OrderStateTriggered) {
		en.op.Unlock()
		t.forgetLookup(id)
		return nil
	}
	xctx, cancel := t.exCtx(ctx)
	eo, err := x.Order(xctx, o.Pair, o.ClientOrderID)
	cancel()
	var evs []domain.Event
	switch {
	case err == nil && eo.Status == domain.StatusRejected:
		evs = append(evs, domain.NewEvent(t.Clock, domain.TypeOrderRejected, domain.OrderRejected{Reason: eo.Reason}))
	case err == nil:
		evs = append(evs, domain.NewEvent(t.Clock, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: eo.ID}))
	case domain.ErrorCode(err) == domain.ENOTFOUND:
		n := t.notFound(id)
		switch {
		case !o.Resent:
			// Definitely not there: send it again, once.
			reason := fmt.Sprintf("%s does not know client order id %s: sent again, once", o.Exchange, o.ClientOrderID)
			if err := a.appendOrder(ctx, en, id, domain.NewEvent(t.Clock, domain.TypeOrderResent, domain.OrderResent{Reason: reason, NotFound: n})); err != nil {
				en.op.Unlock()
				return err
			}
			o = t.snapshot(en)
			price := o.Price
			if o.Emulated() {
				price = o.LimitPrice
			}
			eo, err := t.place(ctx, a, x, en, &o, price)
			en.op.Unlock()
			if err == nil && eo.ID != "" && (eo.Filled.Sign() > 0 || eo.Status != domain.StatusOpen) {
				err = t.settlePlacedLocked(ctx, a, x, id, eo)
			}
			if domain.ErrorCode(err) == domain.EUNAVAILABLE {
				return nil // still unknown: looked up again later
			}
			return err
		case n >= lookupNotFounds:
			evs = append(evs, domain.NewEvent(t.Clock, domain.TypeOrderExpired, domain.OrderExpired{
				Reason: fmt.Sprintf("%s never received the order: %d look-ups by client order id found nothing, after one re-send", o.Exchange, n)}))
		}
	}
	err = a.appendOrder(ctx, en, id, evs...)
	en.op.Unlock()
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
		en := t.entry(id)
		if en == nil {
			continue
		}
		if t.confirmed(id) {
			continue
		}
		unresolved++
		if !t.due(id) || !en.op.TryLock() {
			continue
		}
		o := t.snapshot(en)
		xctx, cancel := t.exCtx(ctx)
		_, err := x.Order(xctx, o.Pair, o.ClientOrderID)
		cancel()
		switch {
		case err == nil:
			t.confirm(id)
			unresolved--
		case domain.ErrorCode(err) == domain.ENOTFOUND:
			if n := t.notFound(id); n >= lookupNotFounds {
				err = a.appendOrder(ctx, en, id, domain.NewEvent(t.Clock, domain.TypeOrderExpired,
					domain.OrderExpired{Reason: fmt.Sprintf("%s no longer knows the order: %d look-ups by client order id found nothing", o.Exchange, n)}))
				t.forgetLookup(id)
				unresolved--
				if err != nil {
					en.op.Unlock()
					return err
				}
			}
		}
		en.op.Unlock()
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
		xctx, cancel := t.exCtx(ctx)
		fills, err := x.FillsSince(xctx, cursor, fillPage)
		cancel()
		if err != nil {
			return exErr(err)
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
	en := t.entry(id)
	if en == nil {
		return nil // finished: a fill it no longer expects
	}
	en.op.Lock()
	t.mu.Lock()
	first := en.o.Filled.IsZero()
	evs := en.o.DecideFill(t.Clock, f)
	ocoID, kind := en.o.OcoID, en.o.Kind
	t.mu.Unlock()
	err := a.appendOrder(ctx, en, id, evs...)
	en.op.Unlock()
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
	xctx, cancel := t.exCtx(ctx)
	bs, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return exErr(err)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Asset < bs[j].Asset })
	t.mu.Lock()
	last, ok := t.balances[x.Name()]
	t.mu.Unlock()
	if ok && sameBalances(last.Balances, bs) {
		return nil
	}
	e := domain.NewEvent(t.Clock, domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: x.Name(), Balances: bs})
	return a.append(ctx, domain.BalanceStream(x.Name()), domain.Any, e)
}

func sameBalances(a, b []domain.AssetBalance) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
