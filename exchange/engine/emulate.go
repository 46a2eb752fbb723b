package engine

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

// Emulator emulates stop-limit, trailing-stop and OCO orders on every
// exchange from price ticks (OnTicker), by the pure rules of domain
// (Order.DecideTick, Oco.DecideLegExecuted): an emulated order is held
// armed in Orders until its stop fires, then its limit order is placed
// through the desk. New wires it; the Scheduler feeds it each ticker.
type Emulator struct {
	desk *Desk
}

// OnTicker applies a price tick to the emulated orders of its pair: a
// stop-limit whose stop is reached fires (StopTriggered) and its limit
// order is placed; a trailing stop moves (TrailingStopMoved) or fires; an
// OCO stop leg that fires cancels the limit leg first (OcoLegCancelled).
func (m *Emulator) OnTicker(ctx context.Context, exchange string, tk domain.Ticker) error {
	x, err := m.desk.exchange(exchange)
	if err != nil {
		return err
	}
	l := m.desk.exLock(exchange)
	l.Lock()
	defer l.Unlock()
	a := m.desk.newAppender(domain.ActorCore, "")
	ids := m.desk.orders.armedIDs(exchange, tk.Pair)
	var firstErr error
	for _, id := range ids {
		if err := m.tick(ctx, a, x, id, tk); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return a.finish(ctx, firstErr)
}

func (m *Emulator) tick(ctx context.Context, a *appender, x domain.Exchange, id int64, tk domain.Ticker) error {
	entry := m.desk.orders.entry(id)
	if entry == nil {
		return nil // finished meanwhile
	}
	entry.op.Lock()
	evs, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) {
		return o.DecideTick(m.desk.Clock, tk.Last, tk.Bid, tk.Ask), nil
	})
	entry.op.Unlock()
	if err != nil || len(evs) == 0 || evs[0].Type != domain.TypeStopTriggered {
		return err
	}
	o := m.desk.orders.snapshot(entry)
	if o.OcoID != 0 {
		if err := m.desk.legExecuted(ctx, a, x, o.OcoID, id); err != nil {
			return err
		}
	}
	return m.placeTriggered(ctx, a, x, entry)
}

// placeTriggered places the limit order of a fired stop.
func (m *Emulator) placeTriggered(ctx context.Context, a *appender, x domain.Exchange, entry *orderEntry) error {
	entry.op.Lock()
	o := m.desk.orders.snapshot(entry)
	if o.State != domain.OrderStateTriggered {
		entry.op.Unlock()
		return nil
	}
	exchangeOrder, err := m.desk.place(ctx, a, x, entry, &o, o.LimitPrice)
	entry.op.Unlock()
	if err == nil && settled(exchangeOrder) {
		err = m.desk.settlePlacedLocked(ctx, a, x, o.OrderID, exchangeOrder)
	}
	return err
}
