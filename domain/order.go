package domain

import (
	"crypto/sha256"
	"strconv"
	"strings"
)

// OrderState is where an order is in its life:
//
//	requested ─▶ accepted ─▶ (filled | cancelled)
//	    │            │  ▲
//	    ▼            ▼  │ (emulated kinds: StopTriggered, then the exchange accepts)
//	 rejected    triggered
//
// An order whose OrderRequested is durable but whose exchange answer is
// unknown (timeout) stays requested ("pending reconcile") until Reconcile
// looks it up by its client order id.
type OrderState string

// Order states.
const (
	OrderStateNone      OrderState = ""          // no such order
	OrderStateRequested OrderState = "requested" // durable, exchange answer not yet known
	OrderStateAccepted  OrderState = "accepted"  // open on the exchange, or held by the order manager
	OrderStateTriggered OrderState = "triggered" // stop reached; its limit order is being placed
	OrderStateFilled    OrderState = "filled"
	OrderStateCancelled OrderState = "cancelled"
	OrderStateRejected  OrderState = "rejected"
	OrderStateExpired   OrderState = "expired"
)

// Done reports whether the state is final.
func (s OrderState) Done() bool {
	switch s {
	case OrderStateFilled, OrderStateCancelled, OrderStateRejected, OrderStateExpired:
		return true
	}
	return false
}

// Order is the order aggregate: the fold of one order stream. Apply is the
// only place its state changes; the Decide methods check rules against the
// current state and return the events to append, without changing it.
type Order struct {
	OrderRequested
	State           OrderState
	Version         int64 // stream version of the last applied event; -1 before any
	ExchangeOrderID string
	Filled          Decimal // base quantity filled so far
	Cost            Decimal // Σ price×qty of the fills, in quote
	Fees            Decimal
	CancelRequested bool
	Triggered       bool    // for emulated kinds: the stop fired
	Resent          bool    // OrderResent: sent a second time, never a third
	Attention       string  // OrderNeedsAttention not cleared yet: which number and why
	Extreme         Decimal // trailing stop: best price seen since it armed (low for buys, high for sells); 0 before
	Time            int64   // ms of the OrderRequested event
	Reason          string  // why it was rejected, cancelled or expired
	// FillIDs are the exchange ids of the fills applied (HasFill). A
	// slice: an order has a few fills, and a map per filled order made a
	// replay allocate one per order.
	FillIDs []string
}

// HasFill reports whether the fill with exchange id id was applied.
func (o *Order) HasFill(id string) bool {
	for _, f := range o.FillIDs {
		if f == id {
			return true
		}
	}
	return false
}

// NewOrder returns the empty aggregate (State none, Version -1).
func NewOrder() Order { return Order{Version: -1} }

// Emulated reports whether the order manager holds the order until a stop
// fires (stop-limit and trailing stop), rather than the exchange.
func (o *Order) Emulated() bool {
	return o.Kind == KindStopLimit || o.Kind == KindTrailingStop
}

// Remaining is the unfilled base quantity.
func (o *Order) Remaining() Decimal { return o.Amount.Sub(o.Filled).Max(Zero) }

// OnExchange reports whether the exchange holds (or may hold) the order, so
// that cancelling it needs an exchange call.
func (o *Order) OnExchange() bool { return !o.Emulated() || o.Triggered }

// OpenOrder is an unfinished order as the API shows it: in a pair's core
// memory (openOrders) and in GET orders/open. type is the order kind
// (limit, market, stoplimit, trailingstop), side buy or sell; rate is the
// price the order rests or will rest at (limit: price; market: its
// reference price; stop-limit: limitPrice; trailing stop: its current stop
// until it fires, then the limit it was placed at). id is what trade/cancel
// takes; ocoId names the OCO of a leg (cancelling the OCO's id cancels both
// legs). A trailing stop also shows its activation price and trailing
// distance (domain.Trail), whether it is armed and, once armed, the best
// price seen. time is when the order was requested (ms).
type OpenOrder struct {
	ID              int64      `json:"id"`
	OcoID           int64      `json:"ocoId,omitempty"`
	Exchange        string     `json:"exchange"`
	Pair            string     `json:"pair"`
	Type            OrderKind  `json:"type"`
	Side            Side       `json:"side"`
	State           OrderState `json:"state"`
	Rate            Number     `json:"rate"`
	Amount          Number     `json:"amount"`
	Filled          Number     `json:"filled"`
	Price           Number     `json:"price,omitzero"`
	StopPrice       Number     `json:"stopPrice,omitzero"`
	LimitPrice      Number     `json:"limitPrice,omitzero"`
	Triggered       bool       `json:"triggered"`
	CancelRequested bool       `json:"cancelRequested,omitempty"`
	Armed           *bool      `json:"armed,omitempty"`
	ActivationPrice Number     `json:"activationPrice,omitzero"`
	TrailingDelta   Number     `json:"trailingDelta,omitzero"`
	Extreme         Number     `json:"extreme,omitzero"`
	Time            int64      `json:"time"`
}

// View returns the order as an OpenOrder (meaningful while it is not
// finished).
func (o *Order) View() OpenOrder {
	v := OpenOrder{
		ID: o.OrderID, OcoID: o.OcoID, Exchange: o.Exchange, Pair: o.Pair, Type: o.Kind, Side: o.Side, State: o.State,
		Amount: Number(o.Amount), Filled: Number(o.Filled), Price: Number(o.Price),
		StopPrice: Number(o.StopPrice), LimitPrice: Number(o.LimitPrice),
		Triggered: o.Triggered, CancelRequested: o.CancelRequested, Time: o.Time,
	}
	switch {
	case o.Kind == KindStopLimit || o.Triggered:
		v.Rate = Number(o.LimitPrice)
	case o.Kind == KindTrailingStop:
		v.Rate = Number(o.StopPrice)
	default:
		v.Rate = Number(o.Price)
	}
	if o.Kind == KindTrailingStop {
		armed := !o.Extreme.IsZero()
		v.Armed = &armed
		if armed {
			v.TrailingDelta, v.Extreme = Number(o.StopPrice.Sub(o.Extreme).Abs()), Number(o.Extreme)
		} else {
			a, d := TrailActivation(o.Side, o.Price, o.StopPrice)
			v.ActivationPrice, v.TrailingDelta = Number(a), Number(d)
		}
	}
	return v
}

// Apply changes the state by one event of the order's stream. Events at or
// below the applied version are ignored, so applying the same event twice
// (once by the writer, once from the subscription) is harmless. Unknown
// types are ignored; a payload that does not decode is EINVALID, and the
// order is then left as it was.
func (o *Order) Apply(e *Event) error {
	if e.Version <= o.Version && o.Version >= 0 {
		return nil
	}
	var err error
	switch e.Type {
	case TypeOrderRequested:
		err = o.applyRequested(e)
	case TypeOrderAccepted:
		err = o.applyAccepted(e)
	case TypeOrderFilled:
		err = o.applyFilled(e)
	case TypeOrderRejected:
		err = applyEnd(o, e, OrderStateRejected, func(p *OrderRejected) string { return p.Reason })
	case TypeOrderCancelled:
		err = applyEnd(o, e, OrderStateCancelled, func(p *OrderCancelled) string { return p.Reason })
	case TypeOrderExpired:
		err = applyEnd(o, e, OrderStateExpired, func(p *OrderExpired) string { return p.Reason })
	case TypeStopTriggered:
		err = o.applyStopTriggered(e)
	case TypeTrailingStopMoved:
		err = o.applyTrailingStopMoved(e)
	case TypeOrderNeedsAttention:
		err = o.applyNeedsAttention(e)
	case TypeOrderCancelRequested:
		o.CancelRequested = true
	case TypeOrderResent:
		o.Resent = true
	case TypeOrderAttentionCleared:
		o.Attention = ""
	}
	if err != nil {
		return err
	}
	o.Version = e.Version
	return nil
}

// applyRequested starts the order: its request, state requested, its time.
func (o *Order) applyRequested(e *Event) error {
	p, err := Payload[OrderRequested](e)
	if err != nil {
		return err
	}
	o.OrderRequested = *p
	o.State = OrderStateRequested
	o.Time = e.Time
	return nil
}

// applyAccepted records the exchange's order id (when given) and moves an
// order that is not done to accepted, unless it is accepted and partly
// filled already.
func (o *Order) applyAccepted(e *Event) error {
	p, err := Payload[OrderAccepted](e)
	if err != nil {
		return err
	}
	if p.ExchangeOrderID != "" {
		o.ExchangeOrderID = p.ExchangeOrderID
	}
	if !o.State.Done() && (o.State != OrderStateAccepted || o.Filled.IsZero()) {
		o.State = OrderStateAccepted
	}
	return nil
}

// applyFilled adds a fill: its id, quantity, cost and fee; the order is
// filled once the quantity reaches its amount, else a requested or
// triggered order becomes accepted.
func (o *Order) applyFilled(e *Event) error {
	p, err := Payload[OrderFilled](e)
	if err != nil {
		return err
	}
	o.FillIDs = append(o.FillIDs, p.FillID)
	o.Filled = o.Filled.Add(p.Quantity)
	o.Cost = o.Cost.Add(p.Price.Mul(p.Quantity))
	o.Fees = o.Fees.Add(p.Fee)
	if o.Filled.Cmp(o.Amount) >= 0 {
		o.State = OrderStateFilled
	} else if o.State == OrderStateRequested || o.State == OrderStateTriggered {
		o.State = OrderStateAccepted
	}
	return nil
}

// applyEnd ends the order in state with the reason of its payload, a T
// (rejected, cancelled, expired).
func applyEnd[T any](o *Order, e *Event, state OrderState, reason func(*T) string) error {
	var p T
	if err := e.Decode(&p); err != nil {
		return err
	}
	o.State, o.Reason = state, reason(&p)
	return nil
}

// applyStopTriggered makes a stop a limit order at its limit price; an
// order that is not done becomes triggered.
func (o *Order) applyStopTriggered(e *Event) error {
	var p StopTriggered
	if err := e.Decode(&p); err != nil {
		return err
	}
	o.Triggered = true
	o.LimitPrice = p.LimitPrice
	if !o.State.Done() {
		o.State = OrderStateTriggered
	}
	return nil
}

// applyTrailingStopMoved sets a trailing stop's stop and best price.
func (o *Order) applyTrailingStopMoved(e *Event) error {
	var p TrailingStopMoved
	if err := e.Decode(&p); err != nil {
		return err
	}
	o.StopPrice, o.Extreme = p.StopPrice, p.Extreme
	return nil
}

// applyNeedsAttention records why the order needs a person; a fill read
// but not recorded is kept among the fill ids, so that it is not read again.
func (o *Order) applyNeedsAttention(e *Event) error {
	var p OrderNeedsAttention
	if err := e.Decode(&p); err != nil {
		return err
	}
	if p.FillID != "" {
		o.FillIDs = append(o.FillIDs, p.FillID) // read, not recorded: not again
	}
	o.Attention = p.Field + " " + strconv.Quote(p.Raw) + ": " + p.Reason
	return nil
}

// StopReached reports whether a stop-limit order's stop is reached at
// price: a buy stop sits above the market and fires when the price rises to
// it; a sell stop sits below and fires when the price falls to it.
func StopReached(side Side, stop, price Decimal) bool {
	if side == Buy {
		return price.Cmp(stop) >= 0
	}
	return price.Cmp(stop) <= 0
}

// TrailMove is the outcome of one price for a trailing stop.
type TrailMove struct {
	Moved   bool    // the stop moved or the order armed (Stop and Extreme are the new values)
	Fire    bool    // the price reversed through the stop
	Armed   bool    // the order is armed after this price (it has reached its activation price)
	Stop    Decimal // the stop after this price
	Extreme Decimal // the best price seen since arming (0 while not armed)
}

// TrailActivation returns a trailing stop's activation price and trailing
// distance from the two prices it was placed with: distance is
// |reference − stop| and the activation price is the lower of the two for a
// buy, the higher for a sell.
func TrailActivation(side Side, reference, stop Decimal) (activation, distance Decimal) {
	distance = reference.Sub(stop).Abs()
	if side == Buy {
		return reference.Min(stop), distance
	}
	return reference.Max(stop), distance
}

// Trail is the trailing-stop rule: Binance's trailing stop with an
// activation price. The order is placed with two prices, price (reference)
// and stopPrice, which must differ; which of them is the larger does not
// matter. distance = |price − stopPrice| is the trailing delta; the
// activation price is min(price, stopPrice) for a buy and max(…) for a sell.
//
// A buy waits until the market trades at or below its activation price
// (the drop). From then on it is armed: it tracks the lowest price L seen
// since, its stop is L + distance, and it fires when the price rises to the
// stop (the recovery). A sell waits until the market trades at or above its
// activation price (the rise), then tracks the highest price H, its stop is
// H − distance, and it fires when the price declines to the stop. The stop
// never moves against the order.
//
// Worked example (the Gunbot SDK's buy): price 50000, stopPrice 49900 →
// activation 49900, distance 100. Prices 50000, 49950: waiting. 49900:
// armed, stop 50000. 49700: stop 49800. 49750: nothing. 49800: fires. The
// SDK's sell, price 52500 and stopPrice 52550, arms at 52550 (stop 52500)
// and trails 50 below the high. The form with the stop on the far side
// (buy: price 100, stopPrice 105) reads the same way: it arms when the
// market is at or below 100 (at once when 100 is the market price) and
// then trails 5 above the low.
//
// reference and stop are the order's price and current stop (its stopPrice
// until it arms); extreme is the best price seen since arming, zero while
// the order is not armed.
func Trail(side Side, reference, stop, extreme, price Decimal) TrailMove {
	m := TrailMove{Stop: stop, Extreme: extreme, Armed: !extreme.IsZero()}
	if extreme.IsZero() {
		activation, distance := TrailActivation(side, reference, stop)
		reached := price.Cmp(activation) <= 0 // a buy waits for the drop
		if side == Sell {
			reached = price.Cmp(activation) >= 0 // a sell for the rise
		}
		if distance.IsZero() || !reached {
			return m
		}
		m.Armed, m.Moved, m.Extreme = true, true, price
		if side == Buy {
			m.Stop = price.Add(distance)
		} else {
			m.Stop = price.Sub(distance)
		}
		return m
	}
	distance := stop.Sub(extreme).Abs()
	if side == Buy {
		if price.Cmp(stop) >= 0 {
			m.Fire = true
			return m
		}
		if price.Cmp(extreme) < 0 {
			m.Extreme = price
			if ns := price.Add(distance); ns.Cmp(stop) < 0 {
				m.Stop = ns
			}
			m.Moved = true
		}
		return m
	}
	if price.Cmp(stop) <= 0 {
		m.Fire = true
		return m
	}
	if price.Cmp(extreme) > 0 {
		m.Extreme = price
		if ns := price.Sub(distance); ns.Cmp(stop) > 0 {
			m.Stop = ns
		}
		m.Moved = true
	}
	return m
}

// Oco is the OCO aggregate: the fold of an oco stream.
type Oco struct {
	OcoPlaced
	Version   int64
	Cancelled map[int64]bool // legs cancelled because the other executed
}

// NewOco returns the empty OCO aggregate.
func NewOco() Oco { return Oco{Version: -1} }

// Apply changes the OCO state by one event of its stream; events at or
// below the applied version are ignored.
func (c *Oco) Apply(e *Event) error {
	if e.Version <= c.Version && c.Version >= 0 {
		return nil
	}
	switch e.Type {
	case TypeOcoPlaced:
		if err := e.Decode(&c.OcoPlaced); err != nil {
			return err
		}
	case TypeOcoLegCancelled:
		var p OcoLegCancelled
		if err := e.Decode(&p); err != nil {
			return err
		}
		if c.Cancelled == nil {
			c.Cancelled = make(map[int64]bool)
		}
		c.Cancelled[p.OrderID] = true
	}
	c.Version = e.Version
	return nil
}

// Other returns the leg that is not legID (0 if legID is not a leg).
func (c *Oco) Other(legID int64) int64 {
	switch legID {
	case c.LimitOrderID:
		return c.StopOrderID
	case c.StopOrderID:
		return c.LimitOrderID
	}
	return 0
}

// DecideLegExecuted is the OCO rule: when one leg executes — the limit leg
// fills (fully or partially) or the stop leg's stop fires — the other leg is
// cancelled. It returns OcoLegCancelled for the other leg, or nothing when
// that leg is already finished or already cancelled by this rule.
// otherDone says whether the other leg's order is finished.
func (c *Oco) DecideLegExecuted(clock Clock, legID int64, otherDone bool) []Event {
	other := c.Other(legID)
	if other == 0 || otherDone || c.Cancelled[other] || c.Cancelled[legID] {
		return nil
	}
	return []Event{NewEvent(clock, TypeOcoLegCancelled, OcoLegCancelled{OrderID: other, FilledLegID: legID})}
}

// ClientOrderID derives the id sent to the exchange from the OrderRequested
// event id: "tl" and the 32 hex digits of the UUID (34 characters, within
// every major exchange's limit). A retried request reuses the event, hence
// the id, so the exchange never sees two orders for it.
func ClientOrderID(requestEventID string) string {
	return "tl" + strings.ReplaceAll(requestEventID, "-", "")
}

// DerivedEventID returns a UUID-shaped event id that is a function of its
// parts (SHA-256, version nibble 8), for events whose identity comes from
// outside — an exchange fill — so that recording them twice appends once.
func DerivedEventID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return FormatUUID([16]byte(h[:16]), 8)
}
