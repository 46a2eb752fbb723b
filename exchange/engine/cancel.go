package engine

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

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
	o, ok, err := t.desk.orders.lookup(ctx, orderID)
	if err != nil {
		return err
	}
	if !ok {
		c, isOco, err := t.desk.orders.lookupOco(ctx, orderID)
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
	x, err := t.desk.exchange(exchange)
	if err != nil {
		return err
	}
	l := t.desk.exLock(exchange)
	l.Lock()
	a := t.desk.newAppender(actor, correlation)
	err = t.desk.cancelLocked(ctx, a, x, orderID, "cancelled by the client")
	l.Unlock()
	return a.finish(ctx, err)
}

// cancelOco cancels the legs of an OCO that are not finished. Both
// finished is ECONFLICT.
func (t *Trader) cancelOco(ctx context.Context, c domain.Oco, actor, correlation string) error {
	x, err := t.desk.exchange(c.Exchange)
	if err != nil {
		return err
	}
	l := t.desk.exLock(c.Exchange)
	l.Lock()
	a := t.desk.newAppender(actor, correlation)
	var firstErr error
	cancelled := 0
	for _, leg := range []int64{c.LimitOrderID, c.StopOrderID} {
		switch err := t.desk.cancelLocked(ctx, a, x, leg, "OCO cancelled by the client"); {
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
func (d *Desk) cancelLeg(ctx context.Context, a *appender, x domain.Exchange, id int64, reason string) error {
	l := d.exLock(x.Name())
	l.Lock()
	defer l.Unlock()
	return d.cancelLocked(ctx, a, x, id, reason)
}

// cancelLocked decides and records a cancel; the caller holds the
// exchange lock.
func (d *Desk) cancelLocked(ctx context.Context, a *appender, x domain.Exchange, id int64, reason string) error {
	entry := d.orders.entry(id)
	if entry == nil {
		// Finished (or never an order): the log says which.
		o, ok, err := d.orders.lookup(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return domain.Errorf(domain.ENOTFOUND, "order %d not found", id)
		}
		if _, err := o.DecideCancel(d.Clock, reason); err != nil {
			return err
		}
		return domain.Errorf(domain.ECONFLICT, "order %d is already %s", id, o.State)
	}
	entry.op.Lock()
	_, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideCancel(d.Clock, reason) })
	entry.op.Unlock()
	if err != nil {
		return err
	}
	if o := d.orders.snapshot(entry); o.State.Done() {
		return nil
	}
	return d.exchangeCancel(ctx, a, x, id, reason)
}

// exchangeCancel asks the exchange to cancel an order whose cancel was
// requested, and records the outcome.
func (d *Desk) exchangeCancel(ctx context.Context, a *appender, x domain.Exchange, id int64, reason string) error {
	entry := d.orders.entry(id)
	if entry == nil {
		return nil // finished meanwhile: nothing left to cancel
	}
	o := d.orders.snapshot(entry)
	exID := o.ExchangeOrderID
	if exID == "" {
		xctx, cancel := d.callContext(ctx)
		exchangeOrder, err := x.Order(xctx, o.Pair, o.ClientOrderID)
		cancel()
		switch {
		case domain.ErrorCode(err) == domain.ENOTFOUND:
			// Never reached the exchange: nothing to cancel there.
			entry.op.Lock()
			_, err = a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideCancelled(d.Clock, reason), nil })
			entry.op.Unlock()
			return err
		case err != nil:
			return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer; the cancel of order %d is pending", o.Exchange, id)
		}
		exID = exchangeOrder.ID
	}
	xctx, cancel := d.callContext(ctx)
	exchangeOrder, err := x.CancelOrder(xctx, o.Pair, exID)
	cancel()
	switch code := domain.ErrorCode(err); {
	case err == nil, code == domain.ECONFLICT:
		// Fills that happened before the cancel are recorded first, so the
		// cancelled remainder is exact.
		if ferr := d.reconcileFills(ctx, a, x); ferr != nil {
			return ferr
		}
		if err != nil && exchangeOrder.Status != domain.StatusCancelled {
			if o := d.orders.snapshot(entry); o.State == domain.OrderStateFilled {
				return domain.Errorf(domain.ECONFLICT, "order %d is already filled", id)
			}
			return domain.Errorf(domain.ECONFLICT, "order %d cannot be cancelled: %s", id, domain.ErrorMessage(err))
		}
		entry.op.Lock()
		_, err = a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideCancelled(d.Clock, reason), nil })
		entry.op.Unlock()
		return err
	case code == domain.ENOTFOUND:
		return domain.Errorf(domain.ENOTFOUND, "order %d is unknown to %s", id, o.Exchange)
	}
	return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer; the cancel of order %d is pending", o.Exchange, id)
}
