package engine

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

// fillPage is how many fills reconcileFills asks for at a time.
const fillPage = 500

// reconcileFills records the exchange's fills since its cursor in Orders:
// each fill of an unfinished order becomes OrderFilled (or
// OrderNeedsAttention, when a number of it cannot be held), and an OCO
// limit leg's first fill cancels the stop leg (legExecuted). The caller
// holds the exchange lock.
func (d *Desk) reconcileFills(ctx context.Context, a *appender, x domain.Exchange) error {
	for {
		xctx, cancel := d.callContext(ctx)
		fills, err := x.FillsSince(xctx, d.orders.cursor(x.Name()), fillPage)
		cancel()
		if err != nil {
			return exchangeError(err)
		}
		for _, f := range fills {
			if id, ok := d.orders.byClientID(f.ClientOrderID); ok {
				if err := d.recordFill(ctx, a, x, id, f); err != nil {
					return err
				}
			}
			d.orders.advance(x.Name(), f.Seq)
		}
		if len(fills) < fillPage {
			return nil
		}
	}
}

// recordFill records one fill of an unfinished order.
func (d *Desk) recordFill(ctx context.Context, a *appender, x domain.Exchange, id int64, f domain.Fill) error {
	entry := d.orders.entry(id)
	if entry == nil {
		return nil // finished: a fill it no longer expects
	}
	entry.op.Lock()
	before := d.orders.decidable(entry)
	evs, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideFill(d.Clock, f), nil })
	entry.op.Unlock()
	first, ocoID, kind := before.Filled.IsZero(), before.OcoID, before.Kind
	if err != nil || len(evs) == 0 {
		return err
	}
	if ocoID != 0 && first && kind == domain.KindLimit {
		return d.legExecuted(ctx, a, x, ocoID, id)
	}
	return nil
}

// legExecuted applies the OCO rule after leg legID executed (the limit
// leg's first fill, or the stop leg's stop firing): the other leg is
// cancelled (OcoLegCancelled, then its cancel). The caller holds the
// exchange lock.
func (d *Desk) legExecuted(ctx context.Context, a *appender, x domain.Exchange, ocoID, legID int64) error {
	other, otherDone, ok := d.orders.otherLeg(ocoID, legID)
	if !ok {
		return nil
	}
	evs, err := a.oco(ctx, ocoID, func(c domain.Oco) ([]domain.Event, error) {
		return c.DecideLegExecuted(d.Clock, legID, otherDone), nil
	})
	if err != nil || len(evs) == 0 {
		return err
	}
	err = d.cancelLocked(ctx, a, x, other, "OCO: the other leg executed")
	if domain.ErrorCode(err) == domain.ECONFLICT {
		return nil // it finished meanwhile
	}
	return err
}
