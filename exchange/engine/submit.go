package trading

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/tradeledger/tradeledger/domain"
)

// notCycling is the precondition's refusal.
func notCycling(exchange string) error {
	return domain.Errorf(domain.EINVALID, "no pair on %s is cycling; start the core (system/start) with an enabled pair", exchange)
}

// check checks a validated request against the exchange's state and the
// precondition: the exchange is known, lists the pair and has a pair
// cycling, and its open orders and fills were reconciled since this
// process started. It returns the connector and the pair's ticker.
func (t *Trader) check(ctx context.Context, req *domain.OrderRequest) (domain.Exchange, domain.Ticker, error) {
	x, err := t.exchange(req.Exchange)
	if err != nil {
		return nil, domain.Ticker{}, err
	}
	ctx, cancel := t.exCtx(ctx)
	defer cancel()
	tk, err := x.Ticker(ctx, req.Pair)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return nil, domain.Ticker{}, domain.Errorf(domain.EINVALID, "field \"pair\": %s is not listed on %s", req.Pair, req.Exchange)
	} else if err != nil {
		return nil, domain.Ticker{}, exErr(err)
	}
	if t.Activity == nil || !t.Activity.IsCycling(req.Exchange) {
		return nil, domain.Ticker{}, notCycling(req.Exchange)
	}
	if err := t.reconciledOnce(ctx, x); err != nil {
		return nil, domain.Ticker{}, err
	}
	return x, tk, nil
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

// claimKey claims an Idempotency-Key. fresh: no request used it, the
// caller places the order and must settle the claim. Otherwise rec is the
// first request's answer. A claim in progress is waited for; if it placed
// nothing, the key is free again and claimed anew.
func (t *Trader) claimKey(ctx context.Context, key string) (rec keyRecord, fresh bool, err error) {
	kid := keyIDOf(key)
	for {
		t.mu.Lock()
		t.init()
		if ke, ok := t.pending[key]; ok {
			t.mu.Unlock()
			select {
			case <-ke.done:
				continue
			case <-ctx.Done():
				return keyRecord{}, false, ctx.Err()
			}
		}
		if rec, ok := t.keys[kid]; ok {
			t.mu.Unlock()
			return rec, false, nil
		}
		t.pending[key] = &keyEntry{done: make(chan struct{})}
		t.mu.Unlock()
		return keyRecord{}, true, nil
	}
}

// settleKey ends a fresh claim with its outcome; a request that placed
// nothing (orderID 0) frees the key for a retry.
func (t *Trader) settleKey(key string, orderID, ocoID int64, fp string) {
	t.mu.Lock()
	ke := t.pending[key]
	delete(t.pending, key)
	if orderID != 0 {
		t.keys[keyIDOf(key)] = keyRecord{orderID: orderID, ocoID: ocoID, fp: fingerprintBits(fp)}
	}
	t.mu.Unlock()
	if ke != nil {
		close(ke.done)
	}
}

// requestFingerprint is the digest recorded with an Idempotency-Key: the
// operation (order, oco or close) and every field of the request as the
// client gave it (before a market price or a close amount is resolved).
// Endpoints differ in operation, side or kind, so one key used on two
// endpoints differs too.
func requestFingerprint(op string, req domain.OrderRequest) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s",
		op, req.Exchange, req.Pair, req.Side, req.Kind, req.Amount, req.Price, req.StopPrice, req.LimitPrice)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// fingerprintBits is the part of a fingerprint kept in memory (64 bits);
// 0 for none (events written before fingerprints existed).
func fingerprintBits(fp string) uint64 {
	if len(fp) < 16 {
		return 0
	}
	v, err := strconv.ParseUint(fp[:16], 16, 64)
	if err != nil {
		return 0
	}
	return v
}

// errKeyReused is the answer to an Idempotency-Key used before with a
// different request.
func errKeyReused() error {
	return domain.Errorf(domain.ECONFLICT, "Idempotency-Key reused with a different request")
}

// reuseKey answers a request whose Idempotency-Key already answered one:
// the first answer when the requests are the same, ECONFLICT when they
// differ. done is false when the key is unused (or still in progress).
func (t *Trader) reuseKey(ctx context.Context, key, fp string) (id int64, done bool, err error) {
	t.mu.Lock()
	t.init()
	rec, ok := t.keys[keyIDOf(key)]
	t.mu.Unlock()
	if !ok {
		return 0, false, nil
	}
	id, err = t.answerKey(ctx, rec, fp)
	return id, true, err
}

// answerKey is the answer to a request whose Idempotency-Key was used: the
// first request's id (its OCO's for an OCO) and the outcome of its order;
// ECONFLICT if the first request was a different one (fp).
func (t *Trader) answerKey(ctx context.Context, rec keyRecord, fp string) (int64, error) {
	if rec.fp != 0 && rec.fp != fingerprintBits(fp) {
		return 0, errKeyReused()
	}
	o, ok, err := t.lookup(ctx, rec.orderID)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, domain.Errorf(domain.EINTERNAL, "order %d vanished", rec.orderID)
	}
	id := rec.orderID
	if rec.ocoID != 0 {
		id = rec.ocoID
	}
	return id, answerOrder(o)
}

// answerOrder is the result of an order as a command answer: nil once the
// order is placed (or held), EINVALID with the reason if it was rejected,
// EUNAVAILABLE while it is pending reconciliation.
func answerOrder(o domain.Order) error {
	switch o.State {
	case domain.OrderStateRejected:
		return domain.Errorf(domain.EINVALID, "order %d rejected: %s", o.OrderID, o.Reason)
	case domain.OrderStateRequested:
		return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer; order %d is pending reconciliation", o.Exchange, o.OrderID)
	}
	return nil
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
	return t.submitKeyed(ctx, req, requestFingerprint("order", req))
}

// submitKeyed is Submit with the fingerprint recorded with the request's
// Idempotency-Key. The key is looked at first, so that a retry gets its
// first answer even when the precondition no longer holds.
func (t *Trader) submitKeyed(ctx context.Context, req domain.OrderRequest, fp string) (int64, error) {
	key := req.IdempotencyKey
	if key != "" {
		if id, done, err := t.reuseKey(ctx, key, fp); done {
			return id, err
		}
	}
	x, tk, err := t.check(ctx, &req)
	if err != nil {
		return 0, err
	}
	if key == "" {
		return t.submit(ctx, x, tk, req, 0, "")
	}
	rec, fresh, err := t.claimKey(ctx, key)
	if err != nil {
		return 0, err
	}
	if !fresh {
		return t.answerKey(ctx, rec, fp)
	}
	var id int64
	defer func() { t.settleKey(key, id, 0, fp) }()
	id, err = t.submit(ctx, x, tk, req, 0, fp)
	return id, err
}

// requestEvent returns the OrderRequested of a new order, with the client
// order id derived from the event's own id.
func (t *Trader) requestEvent(id int64, req domain.OrderRequest, ocoID int64, fp string) domain.Event {
	eventID := domain.NewEventID(t.Clock.Now())
	p := domain.OrderRequested{
		OrderID: id, Exchange: req.Exchange, Pair: req.Pair, Side: req.Side, Kind: req.Kind,
		Amount: req.Amount, Price: req.Price, StopPrice: req.StopPrice, LimitPrice: req.LimitPrice,
		ClientOrderID: domain.ClientOrderID(eventID), OcoID: ocoID, IdempotencyKey: req.IdempotencyKey,
	}
	if req.IdempotencyKey != "" {
		p.IdempotencyFingerprint = fp
	}
	e := domain.NewEvent(t.Clock, domain.TypeOrderRequested, p)
	e.ID = eventID
	return e
}

// submit writes a new order and places it; it returns the order id once
// OrderRequested is durable (0 before).
func (t *Trader) submit(ctx context.Context, x domain.Exchange, tk domain.Ticker, req domain.OrderRequest, ocoID int64, fp string) (int64, error) {
	if req.Kind == domain.KindMarket && req.Price.IsZero() {
		req.Price = tk.Last // the reference price of a market order
	}
	a := t.newAppender(req.Actor, req.Correlation)
	id, en := t.allocID(true)
	if req.Kind == domain.KindStopLimit || req.Kind == domain.KindTrailingStop {
		// Held by the order manager until the stop fires; refuse now what
		// the account could not pay then.
		refusal := t.fundsRefusal(ctx, x, req)
		outcome := domain.NewEvent(t.Clock, domain.TypeOrderAccepted, domain.OrderAccepted{})
		if refusal != "" {
			outcome = domain.NewEvent(t.Clock, domain.TypeOrderRejected, domain.OrderRejected{Reason: refusal})
		}
		en.op.Lock()
		err := a.append(ctx, domain.OrderStream(id), domain.NoStream, t.requestEvent(id, req, ocoID, fp), outcome)
		en.op.Unlock()
		if err != nil {
			t.dropEntry(id)
			return 0, err
		}
		if refusal != "" {
			return id, a.finish(ctx, domain.Errorf(domain.EINVALID, "order %d rejected: %s", id, refusal))
		}
		return id, a.finish(ctx, nil)
	}
	id, err := t.submitEntry(ctx, a, x, req, ocoID, id, en, fp)
	if id == 0 {
		return 0, err
	}
	if err != nil {
		return id, a.finish(ctx, err)
	}
	return id, a.finish(ctx, answerOrder(t.snapshot(en)))
}

// submitEntry writes the OrderRequested of an exchange order (limit or
// market) under a reserved id, places it and records the outcome. It
// returns 0 if nothing was written.
func (t *Trader) submitEntry(ctx context.Context, a *appender, x domain.Exchange, req domain.OrderRequest, ocoID, id int64, en *entry, fp string) (int64, error) {
	en.op.Lock()
	if err := a.append(ctx, domain.OrderStream(id), domain.NoStream, t.requestEvent(id, req, ocoID, fp)); err != nil {
		en.op.Unlock()
		t.dropEntry(id)
		return 0, err
	}
	o := t.snapshot(en)
	eo, err := t.place(ctx, a, x, en, &o, o.Price)
	en.op.Unlock()
	if err == nil && eo.ID != "" && (eo.Filled.Sign() > 0 || eo.Status != domain.StatusOpen) {
		err = t.settlePlaced(ctx, a, x, id, eo)
	}
	return id, err
}

// fundsRefusal returns why the account cannot pay for an emulated order
// ("" when it can), from the exchange's balances.
func (t *Trader) fundsRefusal(ctx context.Context, x domain.Exchange, req domain.OrderRequest) string {
	quote, base, _ := domain.SplitPair(req.Pair)
	asset, need := base, req.Amount
	if req.Side == domain.Buy {
		price := req.LimitPrice
		if req.Kind == domain.KindTrailingStop {
			// A trailing buy fires at most at activation + distance,
			// the larger of its two prices (domain.Trail).
			price = req.StopPrice.Max(req.Price)
		}
		asset, need = quote, req.Amount.Mul(price)
	}
	ctx, cancel := t.exCtx(ctx)
	defer cancel()
	bs, err := x.Balances(ctx)
	if err != nil {
		return "" // the exchange decides when the stop fires
	}
	for _, b := range bs {
		if b.Asset == asset {
			if b.Available.Cmp(need) >= 0 {
				return ""
			}
			return fmt.Sprintf("insufficient funds: need %s %s, available %s", need, asset, b.Available)
		}
	}
	return fmt.Sprintf("insufficient funds: need %s %s, available 0", need, asset)
}

// place sends an order (new, or a fired stop at limit price) to the
// exchange with its client order id, and records the answer: accepted,
// rejected, or nothing (pending reconciliation) when the exchange did not
// answer even to a look-up. The caller holds en.op.
func (t *Trader) place(ctx context.Context, a *appender, x domain.Exchange, en *entry, o *domain.Order, price domain.Decimal) (domain.ExchangeOrder, error) {
	kind := o.Kind
	if o.Emulated() {
		kind = domain.KindLimit
	}
	req := domain.PlaceOrderRequest{ClientOrderID: o.ClientOrderID, Pair: o.Pair, Side: o.Side, Kind: kind, Amount: o.Remaining(), Price: price}
	xctx, cancel := t.exCtx(ctx)
	eo, err := x.PlaceOrder(xctx, req)
	cancel()
	switch code := domain.ErrorCode(err); {
	case err == nil:
	case code == domain.EINVALID || code == domain.ENOTFOUND:
		reason := domain.ErrorMessage(err)
		if aerr := a.appendOrder(ctx, en, o.OrderID, domain.NewEvent(t.Clock, domain.TypeOrderRejected, domain.OrderRejected{Reason: reason})); aerr != nil {
			return eo, aerr
		}
		return eo, nil
	default:
		// No answer: the order may or may not exist. The unknown outcome
		// is recorded; a look-up by client order id that finds it settles
		// it now, anything else leaves it to Reconcile (look-ups with
		// backoff, one re-send after a definite not-found).
		reason := fmt.Sprintf("%s: %s", o.Exchange, domain.ErrorMessage(err))
		if aerr := a.appendOrder(ctx, en, o.OrderID, domain.NewEvent(t.Clock, domain.TypeOrderOutcomeUnknown, domain.OrderOutcomeUnknown{Reason: reason})); aerr != nil {
			return eo, aerr
		}
		xctx, cancel := t.exCtx(ctx)
		eo, err = x.Order(xctx, o.Pair, o.ClientOrderID)
		cancel()
		if err != nil {
			return eo, domain.Errorf(domain.EUNAVAILABLE, "%s; order %d is pending reconciliation", reason, o.OrderID)
		}
	}
	if eo.Status == domain.StatusRejected {
		return eo, a.appendOrder(ctx, en, o.OrderID, domain.NewEvent(t.Clock, domain.TypeOrderRejected, domain.OrderRejected{Reason: eo.Reason}))
	}
	return eo, a.appendOrder(ctx, en, o.OrderID, domain.NewEvent(t.Clock, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: eo.ID}))
}

// settlePlaced records what happened at once to a placed order: its fills,
// and the cancellation of a market order's unfilled rest.
func (t *Trader) settlePlaced(ctx context.Context, a *appender, x domain.Exchange, id int64, eo domain.ExchangeOrder) error {
	l := t.exLock(x.Name())
	l.Lock()
	defer l.Unlock()
	return t.settlePlacedLocked(ctx, a, x, id, eo)
}

// settlePlacedLocked is settlePlaced for a caller holding the exchange
// lock.
func (t *Trader) settlePlacedLocked(ctx context.Context, a *appender, x domain.Exchange, id int64, eo domain.ExchangeOrder) error {
	if err := t.reconcileFills(ctx, a, x); err != nil {
		return err
	}
	if eo.Status == domain.StatusCancelled {
		en := t.entry(id)
		if en == nil {
			return nil // filled in full meanwhile
		}
		en.op.Lock()
		defer en.op.Unlock()
		t.mu.Lock()
		evs := en.o.DecideCancelled(t.Clock, eo.Reason)
		t.mu.Unlock()
		return a.appendOrder(ctx, en, id, evs...)
	}
	return nil
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
	fp, key := requestFingerprint("oco", req), req.IdempotencyKey
	if key != "" {
		if id, done, err := t.reuseKey(ctx, key, fp); done {
			return id, err
		}
	}
	x, tk, err := t.check(ctx, &req)
	if err != nil {
		return 0, err
	}
	if key == "" {
		id, _, err := t.submitOCO(ctx, x, tk, req, "")
		return id, err
	}
	rec, fresh, err := t.claimKey(ctx, key)
	if err != nil {
		return 0, err
	}
	if !fresh {
		return t.answerKey(ctx, rec, fp)
	}
	var id, limitID int64
	defer func() { t.settleKey(key, limitID, id, fp) }()
	id, limitID, err = t.submitOCO(ctx, x, tk, req, fp)
	return id, err
}

// submitOCO writes and places an OCO; it returns the OCO id and the limit
// leg's id once the limit leg's OrderRequested is durable (zeros before).
func (t *Trader) submitOCO(ctx context.Context, x domain.Exchange, tk domain.Ticker, req domain.OrderRequest, fp string) (int64, int64, error) {
	a := t.newAppender(req.Actor, req.Correlation)
	ocoID, _ := t.allocID(false)
	stopID, stopEn := t.allocID(true)
	limitID, limitEn := t.allocID(true)
	stopReq := req
	stopReq.Kind, stopReq.Price, stopReq.IdempotencyKey = domain.KindStopLimit, 0, ""
	stopEn.op.Lock()
	err := a.append(ctx, domain.OrderStream(stopID), domain.NoStream,
		t.requestEvent(stopID, stopReq, ocoID, ""),
		domain.NewEvent(t.Clock, domain.TypeOrderAccepted, domain.OrderAccepted{}))
	stopEn.op.Unlock()
	if err != nil {
		t.dropEntry(stopID)
		t.dropEntry(limitID)
		return 0, 0, err
	}
	// OcoPlaced comes before the limit leg is placed, so that a fill of
	// the limit leg always finds its OCO.
	placed := domain.NewEvent(t.Clock, domain.TypeOcoPlaced, domain.OcoPlaced{
		OcoID: ocoID, Exchange: req.Exchange, Pair: req.Pair, Side: req.Side, LimitOrderID: limitID, StopOrderID: stopID,
	})
	if err := a.append(ctx, domain.OcoStream(ocoID), domain.NoStream, placed); err != nil {
		t.dropEntry(limitID)
		return 0, 0, err
	}
	limitReq := req
	limitReq.Kind, limitReq.StopPrice, limitReq.LimitPrice = domain.KindLimit, 0, 0
	id, err := t.submitEntry(ctx, a, x, limitReq, ocoID, limitID, limitEn, fp)
	if id == 0 {
		return 0, 0, err
	}
	if o := t.snapshot(limitEn); o.State == domain.OrderStateRejected {
		if cerr := t.cancelLeg(ctx, a, x, stopID, "OCO limit leg rejected"); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		return ocoID, id, a.finish(ctx, err)
	}
	return ocoID, id, a.finish(ctx, answerOrder(t.snapshot(limitEn)))
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
		if id, done, err := t.reuseKey(ctx, req.IdempotencyKey, fp); done {
			return id, err
		}
	}
	x, err := t.exchange(req.Exchange)
	if err != nil {
		return 0, err
	}
	_, base, _ := domain.SplitPair(req.Pair) // validated
	if req.Amount.Sign() > 0 {
		return t.submitKeyed(ctx, req, fp)
	}
	xctx, cancel := t.exCtx(ctx)
	bs, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return 0, exErr(err)
	}
	for _, b := range bs {
		if b.Asset == base {
			req.Amount = b.Available
		}
	}
	if req.Amount.Sign() <= 0 {
		return 0, domain.Errorf(domain.EINVALID, "field \"pair\": no %s held on %s to close", base, req.Exchange)
	}
	return t.submitKeyed(ctx, req, fp)
}
