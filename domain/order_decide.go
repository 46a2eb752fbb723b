package domain

import (
	"slices"
	"sort"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The decisions on one order's stream: each checks its rule against the
// order's current state and returns the events to append (or a refusal),
// without changing the state; Apply (order.go) is where they take effect.
// The engine runs them through the command path (eventstore.Run) with the
// order's version as the expected version.

// DecideRequest returns the OrderRequested of a new order: p as given, with
// the client order id the exchange will know it by derived from the
// event's own id (ClientOrderID), so that a placement sent again after a
// lost answer carries the same id. An order that already exists is
// ECONFLICT (a new order takes a new id).
func (o *Order) DecideRequest(clock Clock, p OrderRequested) ([]Event, error) {
	if o.State != OrderStateNone {
		return nil, Errorf(ECONFLICT, "order %d already exists", o.OrderID)
	}
	id := NewEventID(clock.Now())
	p.ClientOrderID = ClientOrderID(id)
	e := NewEvent(clock, TypeOrderRequested, p)
	e.ID = id
	return []Event{e}, nil
}

// DecideHold returns the events of a new emulated order (stop-limit,
// trailing stop), which the order manager holds until its stop fires:
// OrderRequested with OrderAccepted, or with OrderRejected when refusal
// says why the account could not pay for it ("" when it can).
func (o *Order) DecideHold(clock Clock, p OrderRequested, refusal string) ([]Event, error) {
	evs, err := o.DecideRequest(clock, p)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		return append(evs, NewEvent(clock, TypeOrderRejected, OrderRejected{Reason: refusal})), nil
	}
	return append(evs, NewEvent(clock, TypeOrderAccepted, OrderAccepted{})), nil
}

// DecideAnswer records the exchange's answer to a placement or a look-up
// by client order id: OrderRejected with its reason when the exchange
// rejected the order, OrderAccepted with the exchange's order id
// otherwise. An unknown order is ENOTFOUND.
func (o *Order) DecideAnswer(clock Clock, answer ExchangeOrder) ([]Event, error) {
	if o.State == OrderStateNone {
		return nil, Errorf(ENOTFOUND, "order not found")
	}
	var evs []Event
	if answer.Status == StatusRejected {
		evs = []Event{NewEvent(clock, TypeOrderRejected, OrderRejected{Reason: answer.Reason})}
	} else {
		evs = []Event{NewEvent(clock, TypeOrderAccepted, OrderAccepted{ExchangeOrderID: answer.ID})}
	}
	if p := answer.Problem; p != nil && o.Attention == "" {
		evs = append(evs, NewEvent(clock, TypeOrderNeedsAttention, OrderNeedsAttention{Exchange: o.Exchange, Pair: o.Pair,
			Field: p.Field, Raw: p.Raw, Reason: p.Reason}))
	}
	return evs, nil
}

// DecideClearAttention records that the operator dealt with the order's
// OrderNeedsAttention: OrderAttentionCleared with note. An order that needs
// no attention is ECONFLICT; an unknown one ENOTFOUND.
func (o *Order) DecideClearAttention(clock Clock, note string) ([]Event, error) {
	switch {
	case o.State == OrderStateNone:
		return nil, Errorf(ENOTFOUND, "order not found")
	case o.Attention == "":
		return nil, Errorf(ECONFLICT, "order %s/%s needs no attention", o.Exchange, o.Pair)
	}
	return []Event{NewEvent(clock, TypeOrderAttentionCleared, OrderAttentionCleared{Exchange: o.Exchange, Pair: o.Pair, Note: note})}, nil
}

// DecideRejected records an exchange's refusal of a placement (EINVALID
// or ENOTFOUND from the connector) as OrderRejected with reason. An
// unknown order is ENOTFOUND.
func (o *Order) DecideRejected(clock Clock, reason string) ([]Event, error) {
	return o.decideAnswerEvent(clock, TypeOrderRejected, OrderRejected{Reason: reason})
}

// DecideOutcomeUnknown records a placement the exchange did not answer:
// the order may or may not exist there, and stays pending reconciliation
// (look-ups by client order id). An unknown order is ENOTFOUND.
func (o *Order) DecideOutcomeUnknown(clock Clock, reason string) ([]Event, error) {
	return o.decideAnswerEvent(clock, TypeOrderOutcomeUnknown, OrderOutcomeUnknown{Reason: reason})
}

// DecideResend records that an order pending reconciliation, which the
// exchange definitely does not know (notFound look-ups), is sent again
// under the same client order id: OrderResent. An order is sent again at
// most once: a second resend is ECONFLICT, as is a finished order.
func (o *Order) DecideResend(clock Clock, reason string, notFound int) ([]Event, error) {
	switch {
	case o.State == OrderStateNone:
		return nil, Errorf(ENOTFOUND, "order not found")
	case o.Resent:
		return nil, Errorf(ECONFLICT, "order %d was already sent again once", o.OrderID)
	case o.State.Done():
		return nil, Errorf(ECONFLICT, "order %d is already %s", o.OrderID, o.State)
	}
	return []Event{NewEvent(clock, TypeOrderResent, OrderResent{Reason: reason, NotFound: notFound})}, nil
}

// DecideExpire gives up an order the exchange never received or no longer
// knows: OrderExpired with reason. A finished order yields nothing.
func (o *Order) DecideExpire(clock Clock, reason string) []Event {
	if o.State == OrderStateNone || o.State.Done() {
		return nil
	}
	return []Event{NewEvent(clock, TypeOrderExpired, OrderExpired{Reason: reason})}
}

// decideAnswerEvent is one event of an existing order's exchange answer.
func (o *Order) decideAnswerEvent(clock Clock, typ string, payload any) ([]Event, error) {
	if o.State == OrderStateNone {
		return nil, Errorf(ENOTFOUND, "order not found")
	}
	return []Event{NewEvent(clock, typ, payload)}, nil
}

// DecideCancel returns the events of a cancel request: OrderCancelRequested,
// and, for an emulated order whose stop has not fired (nothing is on the
// exchange), OrderCancelled at once. An unknown order is ENOTFOUND; a
// finished one is ECONFLICT naming its state.
func (o *Order) DecideCancel(clock Clock, reason string) ([]Event, error) {
	switch {
	case o.State == OrderStateNone:
		return nil, Errorf(ENOTFOUND, "order not found")
	case o.State == OrderStateFilled:
		return nil, Errorf(ECONFLICT, "order %d is already filled", o.OrderID)
	case o.State.Done():
		return nil, Errorf(ECONFLICT, "order %d is already %s", o.OrderID, o.State)
	}
	evs := []Event{NewEvent(clock, TypeOrderCancelRequested, OrderCancelRequested{Reason: reason})}
	if !o.OnExchange() {
		evs = append(evs, NewEvent(clock, TypeOrderCancelled, OrderCancelled{Remaining: o.Remaining(), Reason: reason}))
	}
	return evs, nil
}

// DecideCancelled returns the OrderCancelled that ends an open order once
// the exchange confirmed the cancel (nil if the order is already finished).
func (o *Order) DecideCancelled(clock Clock, reason string) []Event {
	if o.State.Done() || o.State == OrderStateNone {
		return nil
	}
	return []Event{NewEvent(clock, TypeOrderCancelled, OrderCancelled{Remaining: o.Remaining(), Reason: reason})}
}

// DecideFill returns the OrderFilled of an exchange fill, with an event id
// derived from the exchange and fill id so that recording the same fill
// twice appends nothing. The event is stamped by clock, like every event
// (when the service recorded it); the exchange's time of the fill goes in
// the payload as ExchangeTime. A fill already applied, or an order that is
// not open, yields no event. A fill with a number the ledger cannot hold
// (f.Problem, or a value price × quantity beyond the range) yields
// OrderNeedsAttention instead, never an OrderFilled with a rounded or
// zeroed number.
func (o *Order) DecideFill(clock Clock, f Fill) []Event {
	if o.State == OrderStateNone || o.HasFill(f.ID) {
		return nil
	}
	if p := f.Problem; p == nil {
		if _, ok := f.Price.CheckedMul(f.Quantity); !ok {
			p = &NumberProblem{Field: "price × quantity", Raw: f.Price.String() + " × " + f.Quantity.String(),
				Reason: "the fill's value is beyond the ledger's range (about 1.7e26)"}
			f.Problem = p
		}
	}
	if f.Problem != nil {
		e := NewEvent(clock, TypeOrderNeedsAttention, OrderNeedsAttention{Exchange: o.Exchange, Pair: o.Pair, FillID: f.ID, Seq: f.Seq,
			Field: f.Problem.Field, Raw: f.Problem.Raw, Reason: f.Problem.Reason})
		e.ID = DerivedEventID(o.Exchange, "attention", f.ID)
		return []Event{e}
	}
	if f.Quantity.Sign() <= 0 {
		return nil
	}
	e := NewEvent(clock, TypeOrderFilled, OrderFilled{
		FillID: f.ID, Price: f.Price, Quantity: f.Quantity, Fee: f.Fee, FeeAsset: f.FeeAsset, Seq: f.Seq,
		ExchangeTime: max(f.Time, 0),
	})
	e.ID = DerivedEventID(o.Exchange, "fill", f.ID)
	return []Event{e}
}

// DecideTick applies the stop rules of an emulated order that has not fired
// to a market price: a stop-limit that reaches its stop returns
// StopTriggered; a trailing stop returns TrailingStopMoved when the market
// moved in its favour, or StopTriggered when it reversed through the stop.
// bid and ask price the limit of a fired trailing stop (it must execute:
// buys at the ask, sells at the bid); zero means last. Anything else yields
// nothing.
func (o *Order) DecideTick(clock Clock, last, bid, ask decimal.Decimal) []Event {
	if o.State != OrderStateAccepted || o.Triggered || o.CancelRequested || last.Sign() <= 0 {
		return nil
	}
	switch o.Kind {
	case KindStopLimit:
		if StopReached(o.Side, o.StopPrice, last) {
			return []Event{NewEvent(clock, TypeStopTriggered, StopTriggered{MarketPrice: last, LimitPrice: o.LimitPrice})}
		}
	case KindTrailingStop:
		move := Trail(o.Side, o.Price, o.StopPrice, o.Extreme, last)
		if move.Fire {
			limit := last
			if o.Side == Buy && ask.Sign() > 0 {
				limit = ask.Max(last)
			} else if o.Side == Sell && bid.Sign() > 0 {
				limit = bid.Min(last)
			}
			return []Event{NewEvent(clock, TypeStopTriggered, StopTriggered{MarketPrice: last, LimitPrice: limit})}
		}
		if move.Moved {
			return []Event{NewEvent(clock, TypeTrailingStopMoved, TrailingStopMoved{StopPrice: move.Stop, Extreme: move.Extreme})}
		}
	}
	return nil
}

// DecideOcoPlaced returns the OcoPlaced that opens a new OCO's stream;
// an OCO that already exists is ECONFLICT.
func (c *Oco) DecideOcoPlaced(clock Clock, p OcoPlaced) ([]Event, error) {
	if c.Version >= 0 {
		return nil, Errorf(ECONFLICT, "OCO %d already exists", c.OcoID)
	}
	return []Event{NewEvent(clock, TypeOcoPlaced, p)}, nil
}

// DecideBalancesObserved returns BalancesObserved for an exchange's
// balances seen now (recorded sorted by asset), unless they equal the last
// observed ones (seen says whether any were).
func DecideBalancesObserved(clock Clock, exchange string, last []AssetBalance, seen bool, now []AssetBalance) []Event {
	now = slices.Clone(now)
	sort.Slice(now, func(i, j int) bool { return now[i].Asset < now[j].Asset })
	if seen && slices.Equal(last, now) {
		return nil
	}
	return []Event{NewEvent(clock, TypeBalancesObserved, BalancesObserved{Exchange: exchange, Balances: now})}
}
