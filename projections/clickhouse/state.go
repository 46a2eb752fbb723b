package clickhouse

import (
	"github.com/tradeledger/tradeledger/domain"
)

// state is what the sink must remember of the log to turn the next event
// into rows: the orders (through the domain's order fold), each pair's lots
// (through the domain's lot matching, the same code as the in-memory PNL
// projections) and the running daily aggregates. It is rebuilt at every
// start by replaying the log, so the rows it produces are a function of the
// log alone: writing them again gives the same rows.
type state struct {
	method domain.PnlMethod
	orders map[int64]*order
	lots   map[string]*domain.Lots // by pair key
	daily  map[dailyKey]*dailyRow
}

// order is an order's fold and what the orders table shows beside it.
type order struct {
	domain.Order
	created int64  // time of OrderRequested, ms
	actor   string // who requested it
}

func newState(method domain.PnlMethod) *state {
	return &state{
		method: method,
		orders: make(map[int64]*order),
		lots:   make(map[string]*domain.Lots),
		daily:  make(map[dailyKey]*dailyRow),
	}
}

// apply folds e into the state and, when b is not nil, adds the rows it
// produces to b. Events of other types are ignored; a payload that does not
// decode is EINVALID (the state is unchanged).
func (st *state) apply(e *domain.Event, b *batch) error {
	switch e.Type {
	case domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderRejected,
		domain.TypeOrderFilled, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled,
		domain.TypeOrderExpired, domain.TypeStopTriggered, domain.TypeTrailingStopMoved:
		return st.applyOrder(e, b)
	case domain.TypeBalancesObserved:
		if b == nil {
			return nil
		}
		var p domain.BalancesObserved
		if err := e.Decode(&p); err != nil {
			return err
		}
		for _, a := range p.Balances {
			b.balances = append(b.balances, balanceRow{
				Exchange: p.Exchange, Asset: a.Asset, TimeMs: e.Time,
				Available: decUnits(a.Available), OnOrder: decUnits(a.OnOrder), Position: e.Position,
			})
		}
	}
	return nil
}

func (st *state) applyOrder(e *domain.Event, b *batch) error {
	id, ok := orderIDOf(e.Stream)
	if !ok {
		return nil
	}
	o := st.orders[id]
	if o == nil {
		if e.Type != domain.TypeOrderRequested {
			return domain.Errorf(domain.EINVALID, "event %s/%d (%s): order was never requested", e.Stream, e.Version, e.Type)
		}
		o = &order{Order: domain.NewOrder(), created: e.Time, actor: e.Actor}
	}
	var fill domain.OrderFilled
	if e.Type == domain.TypeOrderFilled {
		if err := e.Decode(&fill); err != nil {
			return err
		}
		if o.FillIDs[fill.FillID] {
			return nil // the same fill recorded twice counts once
		}
	}
	if err := o.Apply(e); err != nil {
		return err
	}
	st.orders[id] = o
	if e.Type == domain.TypeOrderFilled {
		st.applyFill(&o.Order, e, &fill, b)
	}
	if b != nil {
		b.orders[id] = orderRow{
			OrderID: id, Exchange: o.Exchange, Pair: o.Pair, Side: string(o.Side), Kind: string(o.Kind),
			Status: string(o.State), Amount: decUnits(o.Amount), Price: decUnits(o.Price),
			StopPrice: decUnits(o.StopPrice), Filled: decUnits(o.Filled), Value: decUnits(o.Cost),
			Fees: decUnits(o.Fees), Fills: uint32(len(o.FillIDs)), CreatedMs: o.created, UpdatedMs: e.Time,
			Actor: o.actor, Reason: o.Reason, Position: e.Position,
		}
	}
	return nil
}

// applyFill runs the fill through the pair's lots and the day's aggregate.
func (st *state) applyFill(o *domain.Order, e *domain.Event, f *domain.OrderFilled, b *batch) {
	key := domain.PairKey(o.Exchange, o.Pair)
	lots := st.lots[key]
	if lots == nil {
		lots = &domain.Lots{Method: st.method}
		st.lots[key] = lots
	}
	quote, base, _ := domain.SplitPair(o.Pair)
	fee, _ := domain.FeeInQuote(f.Fee, f.FeeAsset, quote, base, f.Price)
	r := lots.ApplyFill(o.Side, f.Price, f.Quantity, fee)

	dk := dailyKey{Exchange: o.Exchange, Pair: o.Pair, Day: dayOf(e.Time)}
	d := st.daily[dk]
	if d == nil {
		d = &dailyRow{dailyKey: dk}
		st.daily[dk] = d
	}
	d.Trades++
	if o.Side == domain.Buy {
		d.Buys++
	} else {
		d.Sells++
		if r.Matched > 0 {
			switch r.Pnl.Sign() {
			case 1:
				d.Wins++
			case -1:
				d.Losses++
			}
		}
	}
	d.Volume += decUnits(r.Value)
	d.Pnl += decUnits(r.Pnl)
	d.Fees += decUnits(r.Fee)
	d.UnmVal += decUnits(r.UnmatchedValue)
	d.Position = e.Position
	if b == nil {
		return
	}
	b.daily[dk] = *d
	b.fills = append(b.fills, fillRow{
		Exchange: o.Exchange, Pair: o.Pair, TimeMs: e.Time, OrderID: o.OrderID, FillID: f.FillID,
		Side: string(o.Side), Price: decUnits(f.Price), Quantity: decUnits(f.Quantity),
		Value: decUnits(r.Value), Fee: decUnits(r.Fee), FeeAsset: f.FeeAsset,
		Pnl: decUnits(r.Pnl), Cost: decUnits(r.LotCost), Unmatched: decUnits(r.Unmatched),
		UnmVal: decUnits(r.UnmatchedValue), Position: e.Position,
	})
}
