package paper

import (
	"context"
	"strconv"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

type order struct {
	domain.ExchangeOrder
	reserved decimal.Decimal // funds on order: quote for buys, base for sells
	quote    string
	base     string
}

// PlaceOrder places a limit or market order, idempotently per
// ClientOrderID (a second call returns the order as it is now). Refusals
// are EINVALID with the reason: insufficient funds, a zero amount or
// price, an unknown kind.
func (a *Account) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	if a.failPlace > 0 {
		a.failPlace--
		if !a.failPlaced {
			return domain.ExchangeOrder{}, domain.Errorf(domain.EUNAVAILABLE, "%s: simulated network failure", a.name)
		}
		if _, err := a.place(req); err != nil {
			return domain.ExchangeOrder{}, err
		}
		return domain.ExchangeOrder{}, domain.Errorf(domain.EUNAVAILABLE, "%s: simulated timeout after placing", a.name)
	}
	return a.place(req)
}

// place checks req, reserves its funds, opens the order and takes what
// the book offers up to its limit; the rest of a limit order rests.
func (a *Account) place(req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	if req.ClientOrderID == "" {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "client order id is required")
	}
	if o, ok := a.byClient[req.ClientOrderID]; ok {
		return o.ExchangeOrder, nil
	}
	m, err := a.market(req.Pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	if err := checkPlacement(req); err != nil {
		return domain.ExchangeOrder{}, err
	}
	asset, need, depth := a.reservation(m, req)
	if err := a.reserve(m, req, asset, need, depth); err != nil {
		return domain.ExchangeOrder{}, err
	}
	o := a.open(m, req, need)
	a.takeBook(m, o)
	return o.ExchangeOrder, nil
}

// checkPlacement refuses what the exchange does not accept (EINVALID).
func checkPlacement(req domain.PlaceOrderRequest) error {
	switch {
	case req.Side != domain.Buy && req.Side != domain.Sell:
		return domain.Errorf(domain.EINVALID, "side must be buy or sell")
	case req.Amount.Sign() <= 0:
		return domain.Errorf(domain.EINVALID, "amount must be positive")
	case req.Kind == domain.KindLimit && req.Price.Sign() <= 0:
		return domain.Errorf(domain.EINVALID, "limit price must be positive")
	case req.Kind != domain.KindLimit && req.Kind != domain.KindMarket:
		return domain.Errorf(domain.EINVALID, "order kind %q is not supported by the exchange", req.Kind)
	}
	return nil
}

// open records a new order on m holding need of reserved funds.
func (a *Account) open(m *market, req domain.PlaceOrderRequest, need decimal.Decimal) *order {
	o := &order{quote: m.quote, base: m.base, reserved: need, ExchangeOrder: domain.ExchangeOrder{
		ClientOrderID: req.ClientOrderID, Pair: req.Pair, Side: req.Side, Kind: req.Kind,
		Price: req.Price, Amount: req.Amount, Status: domain.StatusOpen,
	}}
	if req.Kind == domain.KindMarket {
		o.Price = decimal.Zero
	}
	a.nextID++
	o.ID = strconv.FormatInt(a.nextID, 10)
	a.orders[o.ID] = o
	a.byClient[o.ClientOrderID] = o
	return o
}

// takeBook is a new order's taker part: it walks the book up to the
// order's limit (any price for a market order). A limit order's rest
// rests; a market order's rest is cancelled.
func (a *Account) takeBook(m *market, o *order) {
	fills, _ := a.walk(m, o.Side, o.Amount, o.Price, true)
	for _, f := range fills {
		a.fill(o, f.Price, f.Quantity)
	}
	switch {
	case o.Status != domain.StatusOpen:
	case o.Kind == domain.KindMarket:
		o.Status, o.Reason = domain.StatusCancelled, "not enough liquidity in the book"
		a.release(o)
	default:
		a.resting[o.Pair] = append(a.resting[o.Pair], o)
	}
}

// fill executes q of o at price: moves balances (the fee in the asset
// chargeFee picks), records the fill, and finishes the order when nothing
// remains.
func (a *Account) fill(o *order, price, q decimal.Decimal) {
	notional := q.Mul(price)
	asset, fee := a.chargeFee(o, q, notional)
	quote, base := a.bal(o.quote), a.bal(o.base)
	if o.Side == domain.Buy {
		spend, got := notional, q
		switch asset {
		case o.quote:
			spend = notional.Add(fee)
		case o.base:
			got = q.Sub(fee)
		}
		a.consume(o, quote, spend)
		base.available = base.available.Add(got)
	} else {
		a.consume(o, base, q)
		proceeds := notional
		if asset == o.quote {
			proceeds = notional.Sub(fee)
		}
		quote.available = quote.available.Add(proceeds)
	}
	if asset != o.quote && asset != o.base {
		x := a.bal(asset)
		x.available = x.available.Sub(fee)
	}
	o.Filled = o.Filled.Add(q)
	a.nextFill(o, price, q, fee, asset)
	if o.Filled.Cmp(o.Amount) >= 0 {
		o.Status = domain.StatusFilled
		a.release(o)
	}
}

func (a *Account) nextFill(o *order, price, q, fee decimal.Decimal, feeAsset string) {
	seq := a.fillBase + uint64(len(a.fills)) + 1
	a.fills = append(a.fills, domain.Fill{
		ID: a.name + "-" + strconv.FormatUint(seq, 10), Seq: seq, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Pair: o.Pair, Side: o.Side, Price: price, Quantity: q, Fee: fee, FeeAsset: feeAsset,
		Time: a.sim.Clock.Now().UnixMilli(),
	})
	if a.hideNext > 0 {
		a.hideNext--
		if a.hidden == nil {
			a.hidden = map[uint64]bool{}
		}
		a.hidden[seq] = true
	}
}

// matchResting fills the resting orders of m that the last price crossed,
// at their own price, up to the liquidity of the opposite side.
func (a *Account) matchResting(m *market) {
	rs := append([]*order(nil), a.resting[m.pair]...)
	last := m.last()
	for _, o := range rs {
		crossed := (o.Side == domain.Buy && last.Cmp(o.Price) <= 0) || (o.Side == domain.Sell && last.Cmp(o.Price) >= 0)
		if !crossed || o.Status != domain.StatusOpen {
			continue
		}
		ask := o.Side == domain.Buy
		left := o.Amount.Sub(o.Filled)
		for i := 0; i < a.depth() && left.Sign() > 0; i++ {
			l := a.available(m, ask, i)
			if i > 0 && ((ask && l.Price.Cmp(o.Price) > 0) || (!ask && l.Price.Cmp(o.Price) < 0)) {
				break
			}
			q := left.Min(l.Quantity)
			if q.Sign() <= 0 {
				continue
			}
			a.take(m, ask, i, q)
			a.fill(o, o.Price, q)
			left = left.Sub(q)
		}
	}
}

// CancelOrder cancels an open order and releases its funds; a finished
// order is ECONFLICT, an unknown one ENOTFOUND.
func (a *Account) CancelOrder(ctx context.Context, pair, orderID string) (domain.ExchangeOrder, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	o, ok := a.orders[orderID]
	if !ok || o.Pair != pair {
		return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "order %s not found on %s %s", orderID, a.name, pair)
	}
	if o.Status != domain.StatusOpen {
		return o.ExchangeOrder, domain.Errorf(domain.ECONFLICT, "order %s is already %s", orderID, o.Status)
	}
	o.Status, o.Reason = domain.StatusCancelled, "cancelled by the client"
	a.release(o)
	return o.ExchangeOrder, nil
}

// Order looks an order up by its client order id.
func (a *Account) Order(ctx context.Context, pair, clientOrderID string) (domain.ExchangeOrder, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	o, ok := a.byClient[clientOrderID]
	if !ok || (pair != "" && o.Pair != pair) {
		return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "no order with client id %s on %s", clientOrderID, a.name)
	}
	return o.ExchangeOrder, nil
}

// OpenOrders lists the open orders of pair ("" for all), oldest first.
func (a *Account) OpenOrders(ctx context.Context, pair string) ([]domain.ExchangeOrder, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	if pair != "" {
		if _, err := a.market(pair); err != nil {
			return nil, err
		}
	}
	var out []domain.ExchangeOrder
	for _, p := range a.pairs {
		if pair != "" && p != pair {
			continue
		}
		for _, o := range a.resting[p] {
			out = append(out, o.ExchangeOrder)
		}
	}
	return out, nil
}

// FillsSince returns up to limit fills with Seq > since (those DelayFills
// holds back left out).
func (a *Account) FillsSince(ctx context.Context, since uint64, limit int) ([]domain.Fill, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	from := uint64(0)
	if since > a.fillBase {
		from = since - a.fillBase
	}
	if from >= uint64(len(a.fills)) {
		return nil, nil
	}
	out := a.fills[from:]
	if len(a.hidden) > 0 {
		listed := make([]domain.Fill, 0, len(out))
		for _, f := range out {
			if !a.hidden[f.Seq] {
				listed = append(listed, f)
			}
		}
		out = listed
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return append([]domain.Fill(nil), out...), nil
}

// FillOrder fills qty of the resting order with the client order id at its
// limit price, as if a counterparty took it (tests: partial fills across
// polls). An unknown order is ENOTFOUND, a finished one ECONFLICT, more
// than its remainder EINVALID.
func (a *Account) FillOrder(clientOrderID string, qty decimal.Decimal) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	o, ok := a.byClient[clientOrderID]
	switch {
	case !ok:
		return domain.Errorf(domain.ENOTFOUND, "no order with client id %s on %s", clientOrderID, a.name)
	case o.Status != domain.StatusOpen:
		return domain.Errorf(domain.ECONFLICT, "order %s is already %s", o.ID, o.Status)
	case qty.Sign() <= 0 || qty.Cmp(o.Amount.Sub(o.Filled)) > 0:
		return domain.Errorf(domain.EINVALID, "fill of %s: must be positive and at most the remainder %s", qty, o.Amount.Sub(o.Filled))
	}
	a.fill(o, o.Price, qty)
	return nil
}
