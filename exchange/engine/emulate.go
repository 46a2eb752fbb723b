package engine

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

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
	entry := t.entry(id)
	if entry == nil {
		return nil // finished meanwhile
	}
	entry.op.Lock()
	evs, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) {
		return o.DecideTick(t.Clock, tk.Last, tk.Bid, tk.Ask), nil
	})
	entry.op.Unlock()
	if err != nil || len(evs) == 0 || evs[0].Type != domain.TypeStopTriggered {
		return err
	}
	o := t.snapshot(entry)
	if o.OcoID != 0 {
		if err := t.legExecuted(ctx, a, x, o.OcoID, id); err != nil {
			return err
		}
	}
	return t.placeTriggered(ctx, a, x, entry)
}

// placeTriggered places the limit order of a fired stop.
func (t *Trader) placeTriggered(ctx context.Context, a *appender, x domain.Exchange, entry *orderEntry) error {
	entry.op.Lock()
	o := t.snapshot(entry)
	if o.State != domain.OrderStateTriggered {
		entry.op.Unlock()
		return nil
	}
	exchangeOrder, err := t.place(ctx, a, x, entry, &o, o.LimitPrice)
	entry.op.Unlock()
	if err == nil && exchangeOrder.ID != "" && (exchangeOrder.Filled.Sign() > 0 || exchangeOrder.Status != domain.StatusOpen) {
		err = t.settlePlacedLocked(ctx, a, x, o.OrderID, exchangeOrder)
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
	if entry := t.orders[other]; entry != nil {
		otherDone = entry.o.State.Done()
	}
	t.mu.Unlock()
	evs, err := a.oco(ctx, ocoID, func(c domain.Oco) ([]domain.Event, error) {
		return c.DecideLegExecuted(t.Clock, legID, otherDone), nil
	})
	if err != nil || len(evs) == 0 {
		return err
	}
	err = t.cancelLocked(ctx, a, x, other, "OCO: the other leg executed")
	if domain.ErrorCode(err) == domain.ECONFLICT {
		return nil // it finished meanwhile
	}
	return err
}
