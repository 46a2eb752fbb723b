package engine

import (
	"context"
	"fmt"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Activity tells whether the core is cycling a pair of an exchange; orders
// are accepted only then (the spec's precondition for trading).
type Activity interface {
	IsCycling(exchange string) bool
}

// Trader handles the trade commands: placing (Submit, SubmitOCO,
// ClosePosition), cancelling (Cancel), clearing an order's attention
// (ClearAttention), and the reads the trade routes serve beside them
// (Markets, Balances). Every command validates its request, decides on the
// state in Orders and appends through the desk's command path; it answers
// once its events are durable and, with Desk.Wait, visible to the read
// models. Refusals before anything is written are EINVALID naming the
// field, and append nothing. New wires it.
//
// The path of an order request, top to bottom:
//
//  1. Submit, SubmitOCO, ClosePosition validate the request's fields
//     (domain.OrderRequest.Validate) and fingerprint it for its
//     Idempotency-Key.
//  2. underIdempotencyKey answers a key already used (waiting for a first
//     request still placing); otherwise it checks the request against the
//     exchange's state (check), claims the key, places, and settles the
//     key with the outcome.
//  3. placeOne and placeOCO write OrderRequested (durable before the
//     exchange hears of the order), place it on the connector with the
//     client order id derived from that event (Desk.place), record the
//     outcome (OrderAccepted, OrderRejected or OrderOutcomeUnknown) and
//     what happened at once (Desk.settlePlaced: fills, a market order's
//     cancelled rest).
//  4. The appender's finish waits for the projections (read-your-writes)
//     and the command answers.
type Trader struct {
	// Activity gates orders; nil refuses every order.
	Activity Activity

	desk       *Desk
	reconciler *Reconciler
	keys       keyClaims
}

// Submit places an order and returns its id once its events are durable
// (and, with Wait, visible). Refusals before anything is written are
// EINVALID naming the field: unknown exchange or pair, a non-positive
// amount or price, and the precondition (no pair of the exchange cycling).
// An order the exchange refuses (insufficient funds) is recorded as
// OrderRejected and answered EINVALID with the reason. An exchange that
// does not answer leaves the order pending reconciliation (EUNAVAILABLE).
// A request with an IdempotencyKey already used returns the first request's
// answer and places nothing, even after a restart; the same key with a
// different request (another operation, side, kind, exchange, pair, amount
// or price) is ECONFLICT and places nothing either.
func (t *Trader) Submit(ctx context.Context, req domain.OrderRequest) (int64, error) {
	if err := req.Validate(); err != nil {
		return 0, err
	}
	return t.underIdempotencyKey(ctx, req, requestFingerprint("order", req), t.placeOne)
}

// SubmitOCO places an OCO: a limit order at req.Price and a stop-limit
// (stop req.StopPrice, limit req.LimitPrice) for the same amount and side;
// when one executes the other is cancelled. It returns the OCO id. Errors
// and idempotency as Submit; if the limit leg is refused, the stop leg is
// cancelled and the refusal returned.
func (t *Trader) SubmitOCO(ctx context.Context, req domain.OrderRequest) (int64, error) {
	if err := req.ValidateOCO(); err != nil {
		return 0, err
	}
	return t.underIdempotencyKey(ctx, req, requestFingerprint("oco", req), t.placeOCO)
}

// ClosePosition sells the base of req.Pair held on req.Exchange (all that
// is available unless req.Amount is set): at req.Price (limit) or at
// market (req.Kind market). An account holding none is EINVALID.
func (t *Trader) ClosePosition(ctx context.Context, req domain.OrderRequest) (int64, error) {
	req.Side = domain.Sell
	if err := req.ValidateClose(); err != nil {
		return 0, err
	}
	fp := requestFingerprint("close", req)
	if req.IdempotencyKey != "" {
		// Before the balance is read: a retry of a close that sold
		// everything still gets its first answer.
		if id, done, err := t.keys.reuse(ctx, req.IdempotencyKey, fp); done {
			return id, err
		}
	}
	if req.Amount.IsZero() {
		held, err := t.held(ctx, req)
		if err != nil {
			return 0, err
		}
		req.Amount = held
	}
	return t.underIdempotencyKey(ctx, req, fp, t.placeOne)
}

// held returns the base of req.Pair available on req.Exchange; none is
// EINVALID naming the pair.
func (t *Trader) held(ctx context.Context, req domain.OrderRequest) (decimal.Decimal, error) {
	x, err := t.desk.exchange(req.Exchange)
	if err != nil {
		return decimal.Zero, err
	}
	_, base, _ := domain.SplitPair(req.Pair) // validated
	xctx, cancel := t.desk.callContext(ctx)
	bs, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return decimal.Zero, exchangeError(err)
	}
	amount := decimal.Zero
	for _, b := range bs {
		if b.Asset == base {
			amount = b.Available
		}
	}
	if amount.Sign() <= 0 {
		return decimal.Zero, domain.Errorf(domain.EINVALID, "field \"pair\": no %s held on %s to close", base, req.Exchange)
	}
	return amount, nil
}

// placed is what a placement answers: id (the order's, or the OCO's), and
// for the Idempotency-Key the order carrying the key and its OCO.
type placed struct {
	id, orderID, ocoID int64
}

// placeFunc places a checked request; fp is the fingerprint to record with
// its Idempotency-Key ("" without one).
type placeFunc func(ctx context.Context, x domain.Exchange, tk domain.Ticker, req domain.OrderRequest, fp string) (placed, error)

// underIdempotencyKey runs a placement under the request's Idempotency-Key. The key is
// looked at first, so that a retry gets its first answer even when the
// precondition no longer holds; a fresh key is claimed after the checks
// and settled with the outcome (an attempt that wrote nothing frees it).
func (t *Trader) underIdempotencyKey(ctx context.Context, req domain.OrderRequest, fp string, place placeFunc) (int64, error) {
	key := req.IdempotencyKey
	if key != "" {
		if id, done, err := t.keys.reuse(ctx, key, fp); done {
			return id, err
		}
	}
	x, tk, err := t.check(ctx, &req)
	if err != nil {
		return 0, err
	}
	if key == "" {
		p, err := place(ctx, x, tk, req, "")
		return p.id, err
	}
	rec, fresh, err := t.keys.claim(ctx, key)
	if err != nil {
		return 0, err
	}
	if !fresh {
		return t.keys.answer(ctx, rec, fp)
	}
	var p placed
	defer func() { t.keys.settle(key, p.orderID, p.ocoID, fp) }()
	p, err = place(ctx, x, tk, req, fp)
	return p.id, err
}

// check checks a validated request against the exchange's state and the
// precondition: the exchange is known, lists the pair and has a pair
// cycling, and its open orders and fills were reconciled since this
// process started. It returns the connector and the pair's ticker.
func (t *Trader) check(ctx context.Context, req *domain.OrderRequest) (domain.Exchange, domain.Ticker, error) {
	x, err := t.desk.exchange(req.Exchange)
	if err != nil {
		return nil, domain.Ticker{}, err
	}
	ctx, cancel := t.desk.callContext(ctx)
	defer cancel()
	tk, err := x.Ticker(ctx, req.Pair)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return nil, domain.Ticker{}, domain.Errorf(domain.EINVALID, "field \"pair\": %s is not listed on %s", req.Pair, req.Exchange)
	} else if err != nil {
		return nil, domain.Ticker{}, exchangeError(err)
	}
	if t.Activity == nil || !t.Activity.IsCycling(req.Exchange) {
		return nil, domain.Ticker{}, notCycling(req.Exchange)
	}
	if why := t.desk.attention.paused(req.Exchange, req.Pair); why != "" {
		return nil, domain.Ticker{}, pausedErr(req.Exchange, req.Pair, why)
	}
	if err := t.reconciler.reconciledOnce(ctx, x); err != nil {
		return nil, domain.Ticker{}, err
	}
	return x, tk, nil
}

// notCycling is the precondition's refusal.
func notCycling(exchange string) error {
	return domain.Errorf(domain.EINVALID, "no pair on %s is cycling; start the core (system/start) with an enabled pair", exchange)
}

// placeOne writes a new order and places it: an exchange order (limit,
// market) goes to the exchange at once; an emulated one (stop-limit,
// trailing stop) is held here until its stop fires (emulate.go), once the
// account was found able to pay for it. It answers the order id once
// OrderRequested is durable (zero before).
func (t *Trader) placeOne(ctx context.Context, x domain.Exchange, tk domain.Ticker, req domain.OrderRequest, fp string) (placed, error) {
	if req.Kind == domain.KindMarket && req.Price.IsZero() {
		req.Price = tk.Last // the reference price of a market order
	}
	a := t.desk.newAppender(req.Actor, req.Correlation)
	id, entry := t.desk.orders.allocID(true)
	var err error
	if req.Kind == domain.KindStopLimit || req.Kind == domain.KindTrailingStop {
		id, err = t.hold(ctx, a, x, req, id, entry, fp)
	} else if id, err = t.submitEntry(ctx, a, x, req, 0, id, entry, fp); id != 0 && err == nil {
		err = answerOrder(t.desk.orders.snapshot(entry))
	}
	if id == 0 {
		return placed{}, err
	}
	return placed{id: id, orderID: id}, a.finish(ctx, err)
}

// hold writes an emulated order (stop-limit, trailing stop) under a
// reserved id: OrderRequested with OrderAccepted, held by the order
// manager until the stop fires, or with OrderRejected (EINVALID) when the
// account could not pay for it then. It returns 0 if nothing was written.
func (t *Trader) hold(ctx context.Context, a *appender, x domain.Exchange, req domain.OrderRequest, id int64, entry *orderEntry, fp string) (int64, error) {
	refusal := t.fundsRefusal(ctx, x, req)
	entry.op.Lock()
	_, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) {
		return o.DecideHold(t.desk.Clock, req.Requested(id, 0, fp), refusal)
	})
	entry.op.Unlock()
	if err != nil {
		t.desk.orders.dropEntry(id)
		return 0, err
	}
	if refusal != "" {
		return id, domain.Errorf(domain.EINVALID, "order %d rejected: %s", id, refusal)
	}
	return id, nil
}

// fundsRefusal returns why the account cannot pay for an emulated order
// ("" when it can), from the exchange's balances, in the order's terms:
// the whole order, what it needs, what is available — amounts in the
// market's precision at the order's price (domain.PrecisionOf), the quote
// in its currency's, what is needed rounded up and what is available
// down.
func (t *Trader) fundsRefusal(ctx context.Context, x domain.Exchange, req domain.OrderRequest) string {
	quote, base, _ := domain.SplitPair(req.Pair)
	price := req.LimitPrice
	if req.Kind == domain.KindTrailingStop {
		// A trailing buy fires at most at activation + distance, the
		// larger of its two prices (domain.Trail).
		price = req.StopPrice.Max(req.Price)
	}
	p := domain.PrecisionOf(quote, domain.MarketFilters{}, price.Max(req.StopPrice))
	places := p.Amount
	asset, need := base, req.Amount
	what := "selling " + decimal.AmountText(req.Amount, p.Amount, decimal.TextExact, base)
	if req.Side == domain.Buy {
		asset, need, places = quote, req.Amount.Mul(price), decimal.CurrencyDecimals(quote)
		what = fmt.Sprintf("buying %s at up to %s", decimal.AmountText(req.Amount, p.Amount, decimal.TextExact, base),
			decimal.AmountText(price, p.Price, decimal.TextExact, quote))
	}
	ctx, cancel := t.desk.callContext(ctx)
	defer cancel()
	bs, err := x.Balances(ctx)
	if err != nil {
		return "" // the exchange decides when the stop fires
	}
	available := decimal.Zero
	for _, b := range bs {
		if b.Asset == asset {
			available = b.Available
		}
	}
	if available.Cmp(need) >= 0 {
		return ""
	}
	return fmt.Sprintf("insufficient funds: %s needs %s; %s available", what,
		decimal.AmountText(need, places, decimal.TextUp, asset), decimal.AmountText(available, places, decimal.TextDown, asset))
}

// submitEntry writes the OrderRequested of an exchange order (limit or
// market) under a reserved id, places it and records the outcome. It
// returns 0 if nothing was written.
func (t *Trader) submitEntry(ctx context.Context, a *appender, x domain.Exchange, req domain.OrderRequest, ocoID, id int64, entry *orderEntry, fp string) (int64, error) {
	entry.op.Lock()
	if _, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) {
		return o.DecideRequest(t.desk.Clock, req.Requested(id, ocoID, fp))
	}); err != nil {
		entry.op.Unlock()
		t.desk.orders.dropEntry(id)
		return 0, err
	}
	o := t.desk.orders.snapshot(entry)
	exchangeOrder, err := t.desk.place(ctx, a, x, entry, &o, o.Price)
	entry.op.Unlock()
	if err == nil && settled(exchangeOrder) {
		err = t.desk.settlePlaced(ctx, a, x, id, exchangeOrder)
	}
	return id, err
}

// placeOCO writes and places an OCO: its stop leg (held here), OcoPlaced,
// then its limit leg on the exchange. It answers the OCO id once the limit
// leg's OrderRequested is durable (zero before).
func (t *Trader) placeOCO(ctx context.Context, x domain.Exchange, _ domain.Ticker, req domain.OrderRequest, fp string) (placed, error) {
	a := t.desk.newAppender(req.Actor, req.Correlation)
	ocoID, _ := t.desk.orders.allocID(false)
	stopID, stopEn := t.desk.orders.allocID(true)
	limitID, limitEn := t.desk.orders.allocID(true)
	stopReq := req
	stopReq.Kind, stopReq.Price, stopReq.IdempotencyKey = domain.KindStopLimit, decimal.Zero, ""
	stopEn.op.Lock()
	_, err := a.order(ctx, stopEn, stopID, func(o domain.Order) ([]domain.Event, error) {
		return o.DecideHold(t.desk.Clock, stopReq.Requested(stopID, ocoID, ""), "")
	})
	stopEn.op.Unlock()
	if err != nil {
		t.desk.orders.dropEntry(stopID)
		t.desk.orders.dropEntry(limitID)
		return placed{}, err
	}
	// OcoPlaced comes before the limit leg is placed, so that a fill of
	// the limit leg always finds its OCO.
	if _, err := a.oco(ctx, ocoID, func(c domain.Oco) ([]domain.Event, error) {
		return c.DecideOcoPlaced(t.desk.Clock, domain.OcoPlaced{
			OcoID: ocoID, Exchange: req.Exchange, Pair: req.Pair, Side: req.Side, LimitOrderID: limitID, StopOrderID: stopID,
		})
	}); err != nil {
		t.desk.orders.dropEntry(limitID)
		return placed{}, err
	}
	limitReq := req
	limitReq.Kind, limitReq.StopPrice, limitReq.LimitPrice = domain.KindLimit, decimal.Zero, decimal.Zero
	id, err := t.submitEntry(ctx, a, x, limitReq, ocoID, limitID, limitEn, fp)
	if id == 0 {
		return placed{}, err
	}
	if o := t.desk.orders.snapshot(limitEn); o.State == domain.OrderStateRejected {
		if cerr := t.desk.cancelLeg(ctx, a, x, stopID, "OCO limit leg rejected"); cerr != nil && err == nil {
			err = cerr
		}
	}
	p := placed{id: ocoID, orderID: id, ocoID: ocoID}
	if err != nil {
		return p, a.finish(ctx, err)
	}
	return p, a.finish(ctx, answerOrder(t.desk.orders.snapshot(limitEn)))
}

// Markets returns an exchange's pairs with their 24-hour statistics;
// an unknown exchange is EINVALID naming the field exch.
func (t *Trader) Markets(ctx context.Context, exchange string) ([]domain.Market, error) {
	x, err := t.desk.exchange(exchange)
	if err != nil {
		return nil, err
	}
	ctx, cancel := t.desk.callContext(ctx)
	defer cancel()
	ms, err := x.Markets(ctx)
	return ms, exchangeError(err)
}

// Balances returns the last observed balances of every exchange, sorted
// by exchange (the BalanceBook).
func (t *Trader) Balances() []domain.BalancesObserved { return t.desk.balances.Balances() }

// OpenOrderList returns the unfinished orders of an exchange's pair, or of
// every pair of it when pair is "" (Orders.OpenOrderList): what
// orders/open answers.
func (t *Trader) OpenOrderList(exchange, pair string) []domain.OpenOrder {
	return t.desk.orders.OpenOrderList(exchange, pair)
}

// ClearAttention appends OrderAttentionCleared for order id with the
// operator's note: its pair trades again once no other order of it needs
// attention (Attention). An order that needs none is ECONFLICT; one that
// is not open in this process ENOTFOUND.
func (t *Trader) ClearAttention(ctx context.Context, id int64, note string) error {
	entry := t.desk.orders.entry(id)
	if entry == nil {
		return domain.Errorf(domain.ENOTFOUND, "order %d is not open in this process", id)
	}
	a := t.desk.newAppender(domain.ActorCLI, "")
	entry.op.Lock()
	_, err := a.order(ctx, entry, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideClearAttention(t.desk.Clock, note) })
	entry.op.Unlock()
	return a.finish(ctx, err)
}
