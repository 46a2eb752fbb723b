//go:build ccxt

package ccxt

import (
	"context"
	"hash/fnv"
	"sort"
	"strings"

	ccxtlib "github.com/ccxt/ccxt/go/v4"

	"github.com/tradeledger/tradeledger/domain"
)

// PlaceOrder places a limit (GTC) or market order with the client order
// id in the exchange's own field, after the filters. A duplicate refusal
// is ECONFLICT; the engine's placement guard (engine.Guard) then looks the
// order up, as it looks up an id sent before. A timeout, a dropped
// connection or a 5xx is EUNAVAILABLE: the outcome is unknown.
func (x *Exchange) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	if err := req.CheckSpot(x.ExchangeName); err != nil {
		return domain.ExchangeOrder{}, err
	}
	m, err := x.market(ctx, req.Pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	wire, ok := x.prof.wireID(req.ClientOrderID)
	if !ok {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "client order id %q is longer than the %d characters %s takes", req.ClientOrderID, x.prof.maxLen, x.ID)
	}
	if req.Amount.Sign() <= 0 {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "amount must be positive")
	}
	if req, err = m.filters.Apply(req.Pair, req); err != nil {
		return domain.ExchangeOrder{}, err
	}
	side, typ := "buy", "limit"
	if req.Side == domain.Sell {
		side = "sell"
	}
	params := map[string]interface{}{x.prof.param: wire}
	if x.prof.amountParam != "" { // the exact text, over ccxt's float
		params[x.prof.amountParam] = string(req.Amount.AppendTrimmed(nil))
	}
	opts := []ccxtlib.CreateOrderOptions{ccxtlib.WithCreateOrderParams(params)}
	if req.Kind == domain.KindMarket {
		typ = "market"
	} else {
		opts = append(opts, ccxtlib.WithCreateOrderPrice(req.Price.Float64()))
		if x.prof.priceParam != "" {
			params[x.prof.priceParam] = string(req.Price.AppendTrimmed(nil))
		}
	}
	x.mu.Lock()
	x.placed[req.ClientOrderID] = req.Pair
	x.traded[req.Pair] = true
	x.mu.Unlock()
	var o ccxtlib.Order
	err = x.call(ctx, "the order "+req.ClientOrderID, func() (err error) {
		o, err = x.client.CreateOrder(m.symbol, typ, side, req.Amount.Float64(), opts...)
		return err
	})
	if err != nil {
		if msg := domain.ErrorMessage(err); strings.Contains(msg, "DuplicateOrderId") || strings.Contains(strings.ToLower(msg), "duplicate") {
			return domain.ExchangeOrder{}, domain.Errorf(domain.ECONFLICT, "%s already has an order with client order id %s", x.ExchangeName, req.ClientOrderID)
		}
		return domain.ExchangeOrder{}, err
	}
	id := str(o.Id)
	if id == "" {
		return x.Order(ctx, req.Pair, req.ClientOrderID)
	}
	x.remember(id, req.ClientOrderID)
	// Many exchanges answer a placement with its id only (Kraken: txid),
	// and ccxt fills in a status it guessed: ask for the order.
	full, ferr := x.orderByID(ctx, m, id)
	if ferr != nil {
		return x.toDomain(m, o), nil
	}
	return full, nil
}

func (x *Exchange) remember(id, client string) {
	if id == "" || client == "" {
		return
	}
	x.mu.Lock()
	x.clients[id] = client
	x.mu.Unlock()
}

// toDomain maps a ccxt order of market m.
func (x *Exchange) toDomain(m market, o ccxtlib.Order) domain.ExchangeOrder {
	id := str(o.Id)
	client := x.prof.fromWire(str(o.ClientOrderId))
	if client == "" {
		x.mu.Lock()
		client = x.clients[id]
		x.mu.Unlock()
	}
	x.remember(id, client)
	var n nums
	k, tick, step := x.prof.orderKeys, m.filters.TickSize, m.filters.StepSize
	e := domain.ExchangeOrder{
		ID: id, ClientOrderID: client, Pair: m.pair, Side: domain.Buy, Kind: domain.KindLimit,
		Price: n.info(o.Info, k[0], "price", o.Price, tick), Amount: n.info(o.Info, k[1], "amount", o.Amount, step),
		Filled: n.info(o.Info, k[2], "filled", o.Filled, step),
	}
	if str(o.Side) == "sell" {
		e.Side = domain.Sell
	}
	if str(o.Type) == "market" {
		e.Kind = domain.KindMarket
		if o.Average != nil {
			e.Price = n.float("average", o.Average, domain.Zero) // a quotient: no tick
		}
	}
	e.Problem = n.problem
	switch s := str(o.Status); s {
	case "open", "":
		e.Status = domain.StatusOpen
	case "closed":
		e.Status = domain.StatusFilled
	case "rejected":
		e.Status, e.Reason = domain.StatusRejected, "rejected by "+x.ExchangeName
	default: // canceled, expired
		e.Status, e.Reason = domain.StatusCancelled, s
	}
	return e
}

func (x *Exchange) orderByID(ctx context.Context, m market, id string) (domain.ExchangeOrder, error) {
	var o ccxtlib.Order
	if err := x.call(ctx, "order "+id, func() (err error) {
		o, err = x.client.FetchOrder(id, ccxtlib.WithFetchOrderSymbol(m.symbol))
		return err
	}); err != nil {
		return domain.ExchangeOrder{}, err
	}
	return x.toDomain(m, o), nil
}

// CancelOrder cancels an open order; a finished one is ECONFLICT (with the
// order), an unknown one ENOTFOUND.
func (x *Exchange) CancelOrder(ctx context.Context, pair, orderID string) (domain.ExchangeOrder, error) {
	m, err := x.market(ctx, pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	err = x.call(ctx, "the cancel of "+orderID, func() error {
		_, err := x.client.CancelOrder(orderID, ccxtlib.WithCancelOrderSymbol(m.symbol))
		return err
	})
	if c := domain.ErrorCode(err); c == domain.ENOTFOUND || c == domain.EINVALID {
		// Exchanges refuse the cancel of a finished order as of an
		// unknown one (Kraken: EOrder:Unknown order): ask which.
		o, qerr := x.orderByID(ctx, m, orderID)
		switch {
		case qerr == nil && o.Status != domain.StatusOpen:
			return o, domain.Errorf(domain.ECONFLICT, "order %s is already %s", orderID, o.Status)
		case qerr == nil:
			return domain.ExchangeOrder{}, err
		case domain.ErrorCode(qerr) == domain.ENOTFOUND:
			return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "order %s not found on %s %s", orderID, x.ExchangeName, pair)
		}
		return domain.ExchangeOrder{}, qerr
	}
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	o, err := x.orderByID(ctx, m, orderID)
	if err != nil {
		// Cancelled, though the look-up did not answer.
		return domain.ExchangeOrder{ID: orderID, Pair: pair, Status: domain.StatusCancelled, Reason: "canceled"}, nil
	}
	return o, nil
}

// Order looks an order up by client order id (ENOTFOUND if the exchange
// does not know it). An empty pair works only for ids this connector sent.
func (x *Exchange) Order(ctx context.Context, pair, clientOrderID string) (domain.ExchangeOrder, error) {
	if err := x.init(); err != nil {
		return domain.ExchangeOrder{}, err
	}
	if pair == "" {
		x.mu.Lock()
		pair = x.placed[clientOrderID]
		x.mu.Unlock()
		if pair == "" {
			return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "%s needs the pair to look up client order id %s", x.ExchangeName, clientOrderID)
		}
	}
	m, err := x.market(ctx, pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	wire, ok := x.prof.wireID(clientOrderID)
	if !ok {
		return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "no order with client order id %s on %s: it is too long to have been sent", clientOrderID, x.ExchangeName)
	}
	params := map[string]interface{}{x.prof.lookupParam: wire}
	notFound := domain.Errorf(domain.ENOTFOUND, "no order with client order id %s on %s %s", clientOrderID, x.ExchangeName, pair)
	if !x.prof.openClosed {
		var o ccxtlib.Order
		if err := x.call(ctx, "the order "+clientOrderID, func() (err error) {
			o, err = x.client.FetchOrder("", ccxtlib.WithFetchOrderSymbol(m.symbol), ccxtlib.WithFetchOrderParams(params))
			return err
		}); err != nil {
			if domain.ErrorCode(err) == domain.ENOTFOUND {
				return domain.ExchangeOrder{}, notFound
			}
			return domain.ExchangeOrder{}, err
		}
		return x.toDomain(m, o), nil
	}
	find := func(os []ccxtlib.Order) (domain.ExchangeOrder, bool) {
		for _, o := range os {
			if str(o.ClientOrderId) == wire {
				e := x.toDomain(m, o)
				e.ClientOrderID = clientOrderID
				return e, true
			}
		}
		return domain.ExchangeOrder{}, false
	}
	var open []ccxtlib.Order
	if err := x.call(ctx, "the open orders", func() (err error) {
		open, err = x.client.FetchOpenOrders(ccxtlib.WithFetchOpenOrdersSymbol(m.symbol), ccxtlib.WithFetchOpenOrdersParams(params))
		return err
	}); err != nil {
		return domain.ExchangeOrder{}, err
	}
	if o, ok := find(open); ok {
		return o, nil
	}
	var closed []ccxtlib.Order
	if err := x.call(ctx, "the closed orders", func() (err error) {
		closed, err = x.client.FetchClosedOrders(ccxtlib.WithFetchClosedOrdersSymbol(m.symbol), ccxtlib.WithFetchClosedOrdersParams(params))
		return err
	}); err != nil {
		return domain.ExchangeOrder{}, err
	}
	if o, ok := find(closed); ok {
		return o, nil
	}
	return domain.ExchangeOrder{}, notFound
}

// OpenOrders lists a pair's open orders ("" for every pair).
func (x *Exchange) OpenOrders(ctx context.Context, pair string) ([]domain.ExchangeOrder, error) {
	var opts []ccxtlib.FetchOpenOrdersOptions
	if pair != "" {
		m, err := x.market(ctx, pair)
		if err != nil {
			return nil, err
		}
		opts = append(opts, ccxtlib.WithFetchOpenOrdersSymbol(m.symbol))
	} else if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	var os []ccxtlib.Order
	if err := x.call(ctx, "the open orders", func() (err error) {
		os, err = x.client.FetchOpenOrders(opts...)
		return err
	}); err != nil {
		return nil, err
	}
	var out []domain.ExchangeOrder
	for _, o := range os {
		if m, ok := x.bySym(str(o.Symbol)); ok {
			out = append(out, x.toDomain(m, o))
		}
	}
	return out, nil
}

// seqOf is a fill's Seq: its time in ms, shifted, plus 20 bits of a hash
// of its id.
func seqOf(ms int64, id string) uint64 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return uint64(ms)<<20 | uint64(h.Sum32())&(1<<20-1)
}

// FillsSince returns up to limit fills with Seq > since, in Seq order,
// from fetchMyTrades: one call for exchanges that list every pair's
// trades (paged), else one per pair this connector traded or Pairs names.
func (x *Exchange) FillsSince(ctx context.Context, since uint64, limit int) ([]domain.Fill, error) {
	if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	var sinceMs int64
	if since > 0 {
		sinceMs = int64(since>>20) - 1000 // Kraken's start is exclusive and in seconds
	}
	var trades []ccxtlib.Trade
	var err error
	if x.prof.tradesBySymbol {
		trades, err = x.tradesByPair(ctx, sinceMs)
	} else {
		trades, err = x.tradesPaged(ctx, sinceMs)
	}
	if err != nil {
		return nil, err
	}
	out, err := x.fillsAfter(ctx, trades, since)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// tradesPaged reads the account's trades of every pair from sinceMs (0:
// from the start), page after page: Kraken's TradesHistory answers 50
// trades a page, and ofs pages.
func (x *Exchange) tradesPaged(ctx context.Context, sinceMs int64) ([]ccxtlib.Trade, error) {
	var trades []ccxtlib.Trade
	for ofs := 0; ; {
		page, err := x.fillTrades(ctx, "", sinceMs, map[string]interface{}{"ofs": ofs})
		if err != nil {
			return nil, err
		}
		trades = append(trades, page...)
		if len(page) < 50 || ofs > 100_000 {
			return trades, nil
		}
		ofs += len(page)
	}
}

// tradesByPair reads the account's trades from sinceMs (0: from the
// start) one pair at a time, for exchanges that list trades by symbol:
// the pairs this connector traded or Pairs names, in order, leaving out
// those the exchange does not list.
func (x *Exchange) tradesByPair(ctx context.Context, sinceMs int64) ([]ccxtlib.Trade, error) {
	var trades []ccxtlib.Trade
	for _, p := range x.fillPairs() {
		m, err := x.market(ctx, p)
		if domain.ErrorCode(err) == domain.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		ts, err := x.fillTrades(ctx, m.symbol, sinceMs, map[string]interface{}{})
		if err != nil {
			return nil, err
		}
		trades = append(trades, ts...)
	}
	return trades, nil
}

// fillPairs returns, sorted and each once, the pairs whose fills
// FillsSince reads one by one: those this connector traded and those
// Pairs names.
func (x *Exchange) fillPairs() []string {
	pairs := map[string]bool{}
	x.mu.Lock()
	for p := range x.traded {
		pairs[p] = true
	}
	x.mu.Unlock()
	if x.Pairs != nil {
		for _, p := range x.Pairs() {
			pairs[p] = true
		}
	}
	order := make([]string, 0, len(pairs))
	for p := range pairs {
		order = append(order, p)
	}
	sort.Strings(order)
	return order
}

// fillTrades is one fetchMyTrades call of FillsSince: with params, of
// symbol (empty: every pair), from sinceMs (0: no start given).
func (x *Exchange) fillTrades(ctx context.Context, symbol string, sinceMs int64, params map[string]interface{}) ([]ccxtlib.Trade, error) {
	opts := []ccxtlib.FetchMyTradesOptions{ccxtlib.WithFetchMyTradesParams(params)}
	if symbol != "" {
		opts = append(opts, ccxtlib.WithFetchMyTradesSymbol(symbol))
	}
	if sinceMs > 0 {
		opts = append(opts, ccxtlib.WithFetchMyTradesSince(sinceMs))
	}
	return x.myTrades(ctx, "the fills", opts...)
}

// myTrades calls fetchMyTrades with opts under call (what names the read
// in its errors).
func (x *Exchange) myTrades(ctx context.Context, what string, opts ...ccxtlib.FetchMyTradesOptions) ([]ccxtlib.Trade, error) {
	var ts []ccxtlib.Trade
	err := x.call(ctx, what, func() (err error) {
		ts, err = x.client.FetchMyTrades(opts...)
		return err
	})
	return ts, err
}

// fillsAfter returns the fills of trades (each id once; a page boundary
// can list one twice) whose Seq is after since, in the trades' order,
// leaving out trades of markets the connector does not list.
func (x *Exchange) fillsAfter(ctx context.Context, trades []ccxtlib.Trade, since uint64) ([]domain.Fill, error) {
	seen := map[string]bool{}
	var out []domain.Fill
	for _, t := range trades {
		id, ms := str(t.Id), int64(0)
		if t.Timestamp != nil {
			ms = *t.Timestamp
		}
		if seqOf(ms, id) <= since || seen[id] {
			continue
		}
		seen[id] = true
		f, ok, err := x.fill(ctx, t)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// fill is a trade as a domain.Fill (its numbers from the exchange's own
// text where the profile knows its keys), with the client order id of its
// order; ok is false for a trade of a market the connector does not list.
func (x *Exchange) fill(ctx context.Context, t ccxtlib.Trade) (f domain.Fill, ok bool, err error) {
	id, ms := str(t.Id), int64(0)
	if t.Timestamp != nil {
		ms = *t.Timestamp
	}
	m, ok := x.bySym(str(t.Symbol))
	if !ok {
		return f, false, nil
	}
	orderID := str(t.Order)
	client, err := x.clientOf(ctx, m, orderID)
	if err != nil {
		return f, false, err
	}
	var n nums
	k := x.prof.tradeKeys
	f = domain.Fill{
		ID: x.ExchangeName + "-" + id, Seq: seqOf(ms, id), OrderID: orderID, ClientOrderID: client, Pair: m.pair, Side: domain.Buy,
		Price: n.info(t.Info, k[0], "price", t.Price, m.filters.TickSize), Quantity: n.info(t.Info, k[1], "quantity", t.Amount, m.filters.StepSize),
		Fee: n.info(t.Info, k[2], "fee", t.Fee.Cost, domain.Zero), Time: ms,
	}
	f.Problem = n.problem // recorded as OrderNeedsAttention, never as a 0
	if str(t.Side) == "sell" {
		f.Side = domain.Sell
	}
	if fee, ok := t.Info["fee"].(map[string]interface{}); ok {
		f.FeeAsset, _ = fee["currency"].(string)
	}
	if f.FeeAsset == "" {
		f.FeeAsset = m.quote
	}
	return f, true, nil
}

// clientOf returns an order's client order id, asking the exchange for
// orders this process has not seen.
func (x *Exchange) clientOf(ctx context.Context, m market, orderID string) (string, error) {
	if orderID == "" {
		return "", nil
	}
	x.mu.Lock()
	c, ok := x.clients[orderID]
	x.mu.Unlock()
	if ok {
		return c, nil
	}
	o, err := x.orderByID(ctx, m, orderID)
	if err != nil {
		return "", err
	}
	x.mu.Lock()
	x.clients[orderID] = o.ClientOrderID // "" too: an order placed elsewhere
	x.mu.Unlock()
	return o.ClientOrderID, nil
}
