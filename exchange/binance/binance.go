// Package binance is the Binance spot connector on
// github.com/adshao/go-binance/v2: one Exchange per Binance account.
//
// What it adds to the library:
//   - its own rate limiter per account (golang.org/x/time/rate) fed with the
//     request weights Binance publishes for each endpoint, and 429/418
//     answers honoured: until Retry-After has passed, every call fails at
//     once with EUNAVAILABLE naming the rate limit, nothing is sent;
//   - clock skew: the server time offset is measured before the first
//     signed request and again whenever Binance answers -1021, and the
//     request is then sent once more;
//   - filters: a price is rounded to the tick (buys down, sells up: never a
//     worse price than asked), an amount down to the lot step; an order
//     still below LOT_SIZE's minimum quantity or (MIN_)NOTIONAL's minimum
//     notional is refused with EINVALID naming the filter, and nothing is
//     sent;
//   - unknown outcomes: a timeout, a dropped connection or a 5xx is
//     EUNAVAILABLE, never a rejection; Binance's "Duplicate order sent" is
//     ECONFLICT. Placing one client order id twice never makes two orders
//     through the engine's placement guard (engine.Guard), which looks an
//     id sent before up first (Binance itself accepts a reused id once the
//     first order is closed).
//
// Fills come from myTrades per symbol. Seq is the trade time in ms shifted
// left 20 bits plus the low 20 bits of the trade id, so it grows with time
// across symbols; FillsSince scans the symbols this connector traded and
// those Pairs names.
package binance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	gobinance "github.com/adshao/go-binance/v2"
	"github.com/adshao/go-binance/v2/common"
	"golang.org/x/time/rate"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/strategy"
)

// Base URLs of Binance spot.
const (
	MainURL    = "https://api.binance.com"
	TestnetURL = "https://testnet.binance.vision"
)

// Defaults of Exchange settings.
const (
	// DefaultWeightPerMinute is Binance spot's REQUEST_WEIGHT limit.
	DefaultWeightPerMinute = 6000
	DefaultMarketsTTL      = time.Hour
	DefaultTimeout         = 10 * time.Second
)

// Published request weights (rest-api.md).
const (
	weightExchangeInfo = 20
	weightTicker24hOne = 2
	weightTicker24hAll = 80
	weightKlines       = 2
	weightAccount      = 20
	weightNewOrder     = 1
	weightCancel       = 1
	weightQueryOrder   = 4
	weightOpenOne      = 6
	weightOpenAll      = 80
	weightMyTrades     = 20
	weightTime         = 1
)

func depthWeight(limit int) int {
	switch {
	case limit <= 100:
		return 5
	case limit <= 500:
		return 25
	case limit <= 1000:
		return 50
	}
	return 250
}

// Exchange is one Binance spot account. Fill its settings before the
// first call; it is safe for concurrent use after that.
type Exchange struct {
	// ExchangeName is the exchange's name in the configuration
	// ("binance", "binance#2").
	ExchangeName string
	Key, Secret  string
	// BaseURL is MainURL, TestnetURL or a fixture server's URL.
	BaseURL string
	// Now is the clock Retry-After is measured on.
	Now func() time.Time
	// WeightPerMinute is the request weight the limiter allows a minute.
	WeightPerMinute int
	// SAPIScale multiplies the SAPI endpoints' published limits (≤ 0: 1,
	// the published ones; a fixture's tests: more).
	SAPIScale float64
	// HTTPClient's transport is wrapped (5xx, 429 and 418 are read there);
	// nil: a client with DefaultTimeout.
	HTTPClient *http.Client
	// Pairs lists pairs whose fills FillsSince scans besides those this
	// connector placed orders on (the configured pairs).
	Pairs func() []string

	once    sync.Once
	client  *gobinance.Client
	limiter *rate.Limiter

	skew     sync.RWMutex // held for writing while the time offset changes
	measured bool         // guarded by skew

	mu           sync.Mutex
	symbols      map[string]*symbol // by pair
	bySymbol     map[string]*symbol // by Binance symbol
	marketsAt    time.Time
	blockedUntil time.Time
	blockReason  string
	placed       map[string]string        // client order id → pair, sent by this connector
	clients      map[int64]string         // order id → client order id
	traded       map[string]bool          // symbols with orders from this connector
	sapi         map[string]*rate.Limiter // SAPI endpoint → its own limiter (history.go)
}

type symbol struct {
	name, pair, base, quote string
	filters                 domain.MarketFilters
}

var _ domain.Exchange = (*Exchange)(nil)

// New returns a connector for one account; testnet selects Binance's spot
// testnet.
func New(name, key, secret string, testnet bool) *Exchange {
	url := MainURL
	if testnet {
		url = TestnetURL
	}
	return &Exchange{ExchangeName: name, Key: key, Secret: secret, BaseURL: url}
}

func (x *Exchange) init() {
	x.once.Do(func() {
		if x.Now == nil {
			x.Now = time.Now
		}
		if x.WeightPerMinute <= 0 {
			x.WeightPerMinute = DefaultWeightPerMinute
		}
		hc := x.HTTPClient
		if hc == nil {
			hc = &http.Client{Timeout: DefaultTimeout}
		}
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		wrapped := *hc
		wrapped.Transport = statusTransport{base}
		x.client = gobinance.NewClient(x.Key, x.Secret)
		x.client.BaseURL = strings.TrimRight(x.BaseURL, "/")
		x.client.HTTPClient = &wrapped
		// A tenth of the minute's weight as a burst, refilled evenly.
		x.limiter = rate.NewLimiter(rate.Limit(float64(x.WeightPerMinute)/60), max(x.WeightPerMinute/10, 250))
		x.placed = map[string]string{}
		x.clients = map[int64]string{}
		x.traded = map[string]bool{}
	})
}

// Name is the exchange's name in the configuration.
func (x *Exchange) Name() string { return x.ExchangeName }

// statusError is an HTTP answer the transport turned into an error: a 5xx
// (outcome unknown) or a 429/418 (rate limit, with Retry-After).
type statusError struct {
	status     int
	retryAfter time.Duration
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d", e.status) }

type statusTransport struct{ base http.RoundTripper }

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusTeapot || res.StatusCode >= 500 {
		e := &statusError{status: res.StatusCode}
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
			e.retryAfter = time.Duration(s) * time.Second
		}
		res.Body.Close()
		return nil, e
	}
	return res, nil
}

// call runs fn after the limiter allowed weight, and maps its error.
// Signed calls measure the clock offset first, and once more (then retry)
// when Binance says the timestamp is outside the receive window.
func (x *Exchange) call(ctx context.Context, weight int, signed bool, fn func(context.Context) error) error {
	x.init()
	if err := x.gate(ctx, weight); err != nil {
		return err
	}
	if !signed {
		return x.mapErr(fn(ctx))
	}
	if err := x.measure(ctx, false); err != nil {
		return err
	}
	x.skew.RLock()
	err := fn(ctx)
	x.skew.RUnlock()
	if apiCode(err) == -1021 {
		if err := x.measure(ctx, true); err != nil {
			return err
		}
		if err := x.gate(ctx, weight); err != nil {
			return err
		}
		x.skew.RLock()
		err = fn(ctx)
		x.skew.RUnlock()
	}
	return x.mapErr(err)
}

// measure sets the client's time offset from the server time, once, or
// again with force.
func (x *Exchange) measure(ctx context.Context, force bool) error {
	x.skew.RLock()
	done := x.measured
	x.skew.RUnlock()
	if done && !force {
		return nil
	}
	if err := x.gate(ctx, weightTime); err != nil {
		return err
	}
	x.skew.Lock()
	defer x.skew.Unlock()
	if _, err := x.client.NewSetServerTimeService().Do(ctx); err != nil {
		return x.mapErr(err)
	}
	x.measured = true
	return nil
}

// gate refuses while a Retry-After runs, then waits for the limiter.
func (x *Exchange) gate(ctx context.Context, weight int) error {
	x.mu.Lock()
	until, reason := x.blockedUntil, x.blockReason
	x.mu.Unlock()
	if now := x.Now(); now.Before(until) {
		return domain.Errorf(domain.EUNAVAILABLE, "%s: %s; retry after %s", x.ExchangeName, reason, until.Sub(now).Round(time.Second))
	}
	if err := x.limiter.WaitN(ctx, weight); err != nil {
		return domain.Errorf(domain.EUNAVAILABLE, "%s: our rate limit of %d weight a minute is used up for now; retry later", x.ExchangeName, x.WeightPerMinute)
	}
	return nil
}

func apiCode(err error) int64 {
	var ae *common.APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

// mapErr turns library, HTTP and API errors into domain errors.
func (x *Exchange) mapErr(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := domain.AsError(err); ok {
		return err
	}
	var se *statusError
	if errors.As(err, &se) {
		if se.status == http.StatusTooManyRequests || se.status == http.StatusTeapot {
			wait := se.retryAfter
			if wait <= 0 {
				wait = time.Minute
			}
			reason := "rate limit reached (HTTP 429)"
			if se.status == http.StatusTeapot {
				reason = "rate limit: the IP is banned (HTTP 418)"
			}
			x.mu.Lock()
			x.blockedUntil, x.blockReason = x.Now().Add(wait), reason
			x.mu.Unlock()
			return domain.Errorf(domain.EUNAVAILABLE, "%s: %s; retry after %s", x.ExchangeName, reason, wait)
		}
		return domain.Errorf(domain.EUNAVAILABLE, "%s answered HTTP %d: the outcome is unknown", x.ExchangeName, se.status)
	}
	var ae *common.APIError
	if errors.As(err, &ae) {
		msg := fmt.Sprintf("%s: %s (code %d)", x.ExchangeName, ae.Message, ae.Code)
		switch ae.Code {
		case -2013, -2011, -1121:
			return domain.Errorf(domain.ENOTFOUND, "%s", msg)
		case -2014, -2015, -1022, -2008:
			return domain.Errorf(domain.EUNAUTHORIZED, "%s refused the API key: %s (code %d)", x.ExchangeName, ae.Message, ae.Code)
		case -1003, -1015:
			return domain.Errorf(domain.EUNAVAILABLE, "%s: rate limit: %s; retry later", x.ExchangeName, ae.Message)
		case -1000, -1001, -1006, -1007, -1008, -1021:
			return domain.Errorf(domain.EUNAVAILABLE, "%s", msg)
		case 0:
			return domain.Errorf(domain.EUNAVAILABLE, "%s answered an error without a code: the outcome is unknown", x.ExchangeName)
		}
		return domain.Errorf(domain.EINVALID, "%s", msg)
	}
	// Timeouts, refused or dropped connections: no answer.
	return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer: the outcome is unknown", x.ExchangeName)
}

// loadMarkets fetches exchangeInfo when the cache is older than
// DefaultMarketsTTL.
func (x *Exchange) loadMarkets(ctx context.Context) error {
	x.init()
	x.mu.Lock()
	fresh := x.symbols != nil && x.Now().Sub(x.marketsAt) < DefaultMarketsTTL
	x.mu.Unlock()
	if fresh {
		return nil
	}
	var info *gobinance.ExchangeInfo
	if err := x.call(ctx, weightExchangeInfo, false, func(ctx context.Context) (err error) {
		info, err = x.client.NewExchangeInfoService().Do(ctx)
		return err
	}); err != nil {
		return err
	}
	syms, by := map[string]*symbol{}, map[string]*symbol{}
	for _, s := range info.Symbols {
		if s.Status != "TRADING" || s.BaseAsset == "" || s.QuoteAsset == "" {
			continue
		}
		sy := &symbol{name: s.Symbol, base: s.BaseAsset, quote: s.QuoteAsset, pair: s.QuoteAsset + "-" + s.BaseAsset}
		var n nums
		for _, f := range s.Filters {
			str := func(k string) decimal.Decimal {
				v, _ := f[k].(string)
				return n.dec(k, v)
			}
			switch f["filterType"] {
			case "PRICE_FILTER":
				sy.filters.TickSize = str("tickSize")
			case "LOT_SIZE":
				sy.filters.StepSize, sy.filters.MinQty = str("stepSize"), str("minQty")
			case "NOTIONAL", "MIN_NOTIONAL":
				sy.filters.MinNotional = str("minNotional")
			}
		}
		if n.problem != nil {
			continue // filters it cannot hold exactly: not tradable here
		}
		syms[sy.pair], by[sy.name] = sy, sy
	}
	x.mu.Lock()
	x.symbols, x.bySymbol, x.marketsAt = syms, by, x.Now()
	x.mu.Unlock()
	return nil
}

func (x *Exchange) symbol(ctx context.Context, pair string) (*symbol, error) {
	if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	s, ok := x.symbols[pair]
	if !ok {
		return nil, domain.Errorf(domain.ENOTFOUND, "pair %s is not listed on %s", pair, x.ExchangeName)
	}
	return s, nil
}

// nums parses Binance's decimal strings, keeping the first one the ledger
// cannot hold (more than 12 decimals, beyond its range): never a rounded or
// zeroed number in its place.
type nums struct{ problem *domain.NumberProblem }

func (n *nums) dec(field, s string) decimal.Decimal {
	d, p := domain.ExchangeDecimal(field, s)
	if p != nil && n.problem == nil {
		n.problem = p
	}
	return d
}

// err is the error of an answer with such a number (market data and
// balances: the answer is unusable, not partly zero).
func (n *nums) err(exchange, what string) error {
	if n.problem == nil {
		return nil
	}
	p := n.problem
	return domain.Errorf(domain.EUNAVAILABLE, "%s: %s sent %s %q, which the ledger cannot hold: %s", what, exchange, p.Field, p.Raw, p.Reason)
}

// Markets lists the trading pairs with their 24-hour statistics and
// filters.
func (x *Exchange) Markets(ctx context.Context) ([]domain.Market, error) {
	if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	var stats []*gobinance.PriceChangeStats
	if err := x.call(ctx, weightTicker24hAll, false, func(ctx context.Context) (err error) {
		stats, err = x.client.NewListPriceChangeStatsService().Do(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []domain.Market
	for _, st := range stats {
		s, ok := x.bySymbol[st.Symbol]
		if !ok {
			continue
		}
		var n nums
		m := domain.Market{
			Pair: s.pair, Base: s.base, Quote: s.quote,
			Last: n.dec("lastPrice", st.LastPrice), Volume24h: n.dec("volume", st.Volume), Low24h: n.dec("lowPrice", st.LowPrice),
			High24h: n.dec("highPrice", st.HighPrice), Filters: s.filters,
		}
		// A percentage is not an amount: more than 12 decimals round.
		if pct, err := decimal.ParseDecimal(st.PriceChangePercent); err == nil {
			m.ChangePct24h = pct
		} else if f, err := strconv.ParseFloat(st.PriceChangePercent, 64); err == nil {
			m.ChangePct24h, _ = strategy.RoundDecimal(f)
		}
		if n.problem != nil {
			continue // left out of the list rather than shown as 0
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pair < out[j].Pair })
	return out, nil
}

// Ticker returns a pair's best bid, ask and last price.
func (x *Exchange) Ticker(ctx context.Context, pair string) (domain.Ticker, error) {
	s, err := x.symbol(ctx, pair)
	if err != nil {
		return domain.Ticker{}, err
	}
	var stats []*gobinance.PriceChangeStats
	if err := x.call(ctx, weightTicker24hOne, false, func(ctx context.Context) (err error) {
		stats, err = x.client.NewListPriceChangeStatsService().Symbol(s.name).Do(ctx)
		return err
	}); err != nil {
		return domain.Ticker{}, err
	}
	if len(stats) == 0 {
		return domain.Ticker{}, domain.Errorf(domain.ENOTFOUND, "no ticker for %s on %s", pair, x.ExchangeName)
	}
	st := stats[0]
	var n nums
	tk := domain.Ticker{Pair: pair, Bid: n.dec("bidPrice", st.BidPrice), Ask: n.dec("askPrice", st.AskPrice), Last: n.dec("lastPrice", st.LastPrice), Time: st.CloseTime}
	return tk, n.err(x.ExchangeName, "the ticker of "+pair)
}

// OrderBook returns up to depth levels a side.
func (x *Exchange) OrderBook(ctx context.Context, pair string, depth int) (domain.OrderBook, error) {
	s, err := x.symbol(ctx, pair)
	if err != nil {
		return domain.OrderBook{}, err
	}
	if depth <= 0 {
		depth = 100
	}
	var res *gobinance.DepthResponse
	if err := x.call(ctx, depthWeight(depth), false, func(ctx context.Context) (err error) {
		res, err = x.client.NewDepthService().Symbol(s.name).Limit(depth).Do(ctx)
		return err
	}); err != nil {
		return domain.OrderBook{}, err
	}
	b := domain.OrderBook{Pair: pair, Time: x.Now().UnixMilli()}
	var n nums
	for i, l := range res.Bids {
		if i < depth {
			b.Bids = append(b.Bids, domain.BookLevel{Price: n.dec("bid price", l.Price), Quantity: n.dec("bid quantity", l.Quantity)})
		}
	}
	for i, l := range res.Asks {
		if i < depth {
			b.Asks = append(b.Asks, domain.BookLevel{Price: n.dec("ask price", l.Price), Quantity: n.dec("ask quantity", l.Quantity)})
		}
	}
	return b, n.err(x.ExchangeName, "the order book of "+pair)
}

var intervals = map[time.Duration]string{
	time.Minute: "1m", 3 * time.Minute: "3m", 5 * time.Minute: "5m", 15 * time.Minute: "15m", 30 * time.Minute: "30m",
	time.Hour: "1h", 2 * time.Hour: "2h", 4 * time.Hour: "4h", 6 * time.Hour: "6h", 8 * time.Hour: "8h", 12 * time.Hour: "12h",
	24 * time.Hour: "1d", 72 * time.Hour: "3d", 7 * 24 * time.Hour: "1w",
}

// Candles returns up to limit bars, oldest first; an interval Binance has
// no klines for is EINVALID.
func (x *Exchange) Candles(ctx context.Context, pair string, interval time.Duration, limit int) ([]domain.Candle, error) {
	iv, ok := intervals[interval]
	if !ok {
		return nil, domain.Errorf(domain.EINVALID, "%s has no %s candles", x.ExchangeName, interval)
	}
	s, err := x.symbol(ctx, pair)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 1000 {
		limit = 500
	}
	var ks []*gobinance.Kline
	if err := x.call(ctx, weightKlines, false, func(ctx context.Context) (err error) {
		ks, err = x.client.NewKlinesService().Symbol(s.name).Interval(iv).Limit(limit).Do(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	out := make([]domain.Candle, 0, len(ks))
	var n nums
	for _, k := range ks {
		out = append(out, domain.Candle{Time: k.OpenTime, Open: n.dec("open", k.Open), High: n.dec("high", k.High), Low: n.dec("low", k.Low),
			Close: n.dec("close", k.Close), Volume: n.dec("volume", k.Volume)})
	}
	if err := n.err(x.ExchangeName, "the candles of "+pair); err != nil {
		return nil, err
	}
	return out, nil
}

// Balances returns the account's non-zero balances.
func (x *Exchange) Balances(ctx context.Context) ([]domain.AssetBalance, error) {
	acc, err := x.Account(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]domain.AssetBalance, 0, len(acc.Balances))
	var n nums
	for _, b := range acc.Balances {
		free, locked := n.dec(b.Asset+" free", b.Free), n.dec(b.Asset+" locked", b.Locked)
		if err := n.err(x.ExchangeName, "the balances"); err != nil {
			return nil, err // no snapshot rather than one with a 0
		}
		if free.IsZero() && locked.IsZero() {
			continue
		}
		out = append(out, domain.AssetBalance{Asset: b.Asset, Available: free, OnOrder: locked})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asset < out[j].Asset })
	return out, nil
}

// Account returns the account information (balances, permissions); a key
// Binance refuses is EUNAUTHORIZED.
func (x *Exchange) Account(ctx context.Context) (*gobinance.Account, error) {
	var acc *gobinance.Account
	err := x.call(ctx, weightAccount, true, func(ctx context.Context) (err error) {
		acc, err = x.client.NewGetAccountService().OmitZeroBalances(true).Do(ctx)
		return err
	})
	return acc, err
}

// Filter applies a symbol's filters to an order request; see
// domain.MarketFilters.Apply.
func Filter(pair string, f domain.MarketFilters, req domain.PlaceOrderRequest) (domain.PlaceOrderRequest, error) {
	return f.Apply(pair, req)
}

// PlaceOrder places a limit (GTC) or market order with the client order
// id as newClientOrderId, after the filters (see Filter). Binance's
// duplicate refusal (an open order has the client order id) is ECONFLICT;
// the engine's placement guard (engine.Guard) then looks the order up. A
// timeout, a dropped connection or a 5xx is EUNAVAILABLE: the outcome is
// unknown.
func (x *Exchange) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	if err := req.CheckSpot(x.ExchangeName); err != nil {
		return domain.ExchangeOrder{}, err
	}
	s, err := x.symbol(ctx, req.Pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	if req.Amount.Sign() <= 0 {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "amount must be positive")
	}
	if req, err = Filter(req.Pair, s.filters, req); err != nil {
		return domain.ExchangeOrder{}, err
	}
	svc := x.client.NewCreateOrderService().Symbol(s.name).Quantity(req.Amount.String()).
		NewClientOrderID(req.ClientOrderID).NewOrderRespType(gobinance.NewOrderRespTypeRESULT)
	if req.Side == domain.Buy {
		svc.Side(gobinance.SideTypeBuy)
	} else {
		svc.Side(gobinance.SideTypeSell)
	}
	if req.Kind == domain.KindLimit {
		svc.Type(gobinance.OrderTypeLimit).TimeInForce(gobinance.TimeInForceTypeGTC).Price(req.Price.String())
	} else {
		svc.Type(gobinance.OrderTypeMarket)
	}
	x.mu.Lock()
	x.placed[req.ClientOrderID] = req.Pair
	x.traded[s.name] = true
	x.mu.Unlock()
	var res *gobinance.CreateOrderResponse
	err = x.call(ctx, weightNewOrder, true, func(ctx context.Context) (err error) {
		res, err = svc.Do(ctx)
		return err
	})
	if err != nil {
		if strings.Contains(domain.ErrorMessage(err), "Duplicate order") {
			return domain.ExchangeOrder{}, domain.Errorf(domain.ECONFLICT, "%s already has an order with client order id %s", x.ExchangeName, req.ClientOrderID)
		}
		return domain.ExchangeOrder{}, err
	}
	x.remember(res.OrderID, res.ClientOrderID)
	return x.order(s, res.OrderID, res.ClientOrderID, res.Side, res.Type, res.Price, res.OrigQuantity, res.ExecutedQuantity, res.Status), nil
}

func (x *Exchange) remember(id int64, client string) {
	x.mu.Lock()
	x.clients[id] = client
	x.mu.Unlock()
}

func (x *Exchange) order(s *symbol, id int64, client string, side gobinance.SideType, typ gobinance.OrderType, price, qty, filled string, status gobinance.OrderStatusType) domain.ExchangeOrder {
	var n nums
	o := domain.ExchangeOrder{
		ID: strconv.FormatInt(id, 10), ClientOrderID: client, Pair: s.pair, Side: domain.Buy, Kind: domain.KindLimit,
		Price: n.dec("price", price), Amount: n.dec("origQty", qty), Filled: n.dec("executedQty", filled),
	}
	o.Problem = n.problem
	if side == gobinance.SideTypeSell {
		o.Side = domain.Sell
	}
	if typ == gobinance.OrderTypeMarket {
		o.Kind = domain.KindMarket
	}
	switch status {
	case gobinance.OrderStatusTypeNew, gobinance.OrderStatusTypePartiallyFilled, gobinance.OrderStatusTypePendingCancel:
		o.Status = domain.StatusOpen
	case gobinance.OrderStatusTypeFilled:
		o.Status = domain.StatusFilled
	case gobinance.OrderStatusTypeRejected:
		o.Status, o.Reason = domain.StatusRejected, "rejected by "+x.ExchangeName
	default: // CANCELED, EXPIRED, EXPIRED_IN_MATCH
		o.Status, o.Reason = domain.StatusCancelled, strings.ToLower(string(status))
		if typ == gobinance.OrderTypeMarket && status != gobinance.OrderStatusTypeCanceled {
			o.Reason = "not enough liquidity in the book"
		}
	}
	return o
}

func (x *Exchange) fromOrder(s *symbol, o *gobinance.Order) domain.ExchangeOrder {
	x.remember(o.OrderID, o.ClientOrderID)
	return x.order(s, o.OrderID, o.ClientOrderID, o.Side, o.Type, o.Price, o.OrigQuantity, o.ExecutedQuantity, o.Status)
}

// CancelOrder cancels an open order; a finished one is ECONFLICT (with the
// order), an unknown one ENOTFOUND.
func (x *Exchange) CancelOrder(ctx context.Context, pair, orderID string) (domain.ExchangeOrder, error) {
	s, err := x.symbol(ctx, pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	id, perr := strconv.ParseInt(orderID, 10, 64)
	if perr != nil {
		return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "order %s not found on %s %s", orderID, x.ExchangeName, pair)
	}
	var res *gobinance.CancelOrderResponse
	err = x.call(ctx, weightCancel, true, func(ctx context.Context) (err error) {
		res, err = x.client.NewCancelOrderService().Symbol(s.name).OrderID(id).Do(ctx)
		return err
	})
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		// -2011 also answers a cancel of a finished order: ask which.
		var o *gobinance.Order
		qerr := x.call(ctx, weightQueryOrder, true, func(ctx context.Context) (err error) {
			o, err = x.client.NewGetOrderService().Symbol(s.name).OrderID(id).Do(ctx)
			return err
		})
		switch {
		case qerr == nil:
			exchangeOrder := x.fromOrder(s, o)
			return exchangeOrder, domain.Errorf(domain.ECONFLICT, "order %s is already %s", orderID, exchangeOrder.Status)
		case domain.ErrorCode(qerr) == domain.ENOTFOUND:
			return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "order %s not found on %s %s", orderID, x.ExchangeName, pair)
		}
		return domain.ExchangeOrder{}, qerr
	}
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	return x.order(s, res.OrderID, res.OrigClientOrderID, res.Side, res.Type, res.Price, res.OrigQuantity, res.ExecutedQuantity, res.Status), nil
}

// Order looks an order up by client order id (ENOTFOUND if Binance does
// not know it). An empty pair works only for ids this connector sent.
func (x *Exchange) Order(ctx context.Context, pair, clientOrderID string) (domain.ExchangeOrder, error) {
	if pair == "" {
		x.init()
		x.mu.Lock()
		pair = x.placed[clientOrderID]
		x.mu.Unlock()
		if pair == "" {
			return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "%s needs the pair to look up client order id %s", x.ExchangeName, clientOrderID)
		}
	}
	s, err := x.symbol(ctx, pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	var o *gobinance.Order
	err = x.call(ctx, weightQueryOrder, true, func(ctx context.Context) (err error) {
		o, err = x.client.NewGetOrderService().Symbol(s.name).OrigClientOrderID(clientOrderID).Do(ctx)
		return err
	})
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	return x.fromOrder(s, o), nil
}

// OpenOrders lists a pair's open orders ("" for every pair: weight 80).
func (x *Exchange) OpenOrders(ctx context.Context, pair string) ([]domain.ExchangeOrder, error) {
	var name string
	weight := weightOpenAll
	if pair != "" {
		s, err := x.symbol(ctx, pair)
		if err != nil {
			return nil, err
		}
		name, weight = s.name, weightOpenOne
	} else if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	var os []*gobinance.Order
	err := x.call(ctx, weight, true, func(ctx context.Context) (err error) {
		q := x.client.NewListOpenOrdersService()
		if name != "" {
			q.Symbol(name)
		}
		os, err = q.Do(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []domain.ExchangeOrder
	for _, o := range os {
		x.mu.Lock()
		s := x.bySymbol[o.Symbol]
		x.mu.Unlock()
		if s != nil {
			out = append(out, x.fromOrder(s, o))
		}
	}
	return out, nil
}

// seqOf is a fill's Seq: its time in ms, shifted, plus the low bits of the
// trade id.
func seqOf(t *gobinance.TradeV3) uint64 {
	return uint64(t.Time)<<20 | uint64(t.ID)&(1<<20-1)
}

// FillsSince returns up to limit fills with Seq > since, in Seq order, from
// myTrades of every symbol this connector traded or Pairs names.
func (x *Exchange) FillsSince(ctx context.Context, since uint64, limit int) ([]domain.Fill, error) {
	if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	names := map[string]*symbol{}
	for n := range x.traded {
		names[n] = x.bySymbol[n]
	}
	x.mu.Unlock()
	if x.Pairs != nil {
		for _, p := range x.Pairs() {
			x.mu.Lock()
			if s, ok := x.symbols[p]; ok {
				names[s.name] = s
			}
			x.mu.Unlock()
		}
	}
	order := make([]string, 0, len(names))
	for n := range names {
		order = append(order, n)
	}
	sort.Strings(order)
	var out []domain.Fill
	for _, n := range order {
		s := names[n]
		if s == nil {
			continue
		}
		var ts []*gobinance.TradeV3
		err := x.call(ctx, weightMyTrades, true, func(ctx context.Context) (err error) {
			q := x.client.NewListTradesService().Symbol(n).Limit(1000)
			if since > 0 {
				q.StartTime(int64(since >> 20))
			}
			ts, err = q.Do(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			seq := seqOf(t)
			if seq <= since {
				continue
			}
			client, err := x.clientOf(ctx, s, t.OrderID)
			if err != nil {
				return nil, err
			}
			var ns nums
			f := domain.Fill{
				ID: x.ExchangeName + "-" + n + "-" + strconv.FormatInt(t.ID, 10), Seq: seq,
				OrderID: strconv.FormatInt(t.OrderID, 10), ClientOrderID: client, Pair: s.pair, Side: domain.Sell,
				Price: ns.dec("price", t.Price), Quantity: ns.dec("qty", t.Quantity), Fee: ns.dec("commission", t.Commission),
				FeeAsset: t.CommissionAsset, Time: t.Time,
			}
			f.Problem = ns.problem // recorded as OrderNeedsAttention, never as a 0
			if t.IsBuyer {
				f.Side = domain.Buy
			}
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// clientOf returns an order's client order id, asking Binance for orders
// this process has not seen.
func (x *Exchange) clientOf(ctx context.Context, s *symbol, id int64) (string, error) {
	x.mu.Lock()
	c, ok := x.clients[id]
	x.mu.Unlock()
	if ok {
		return c, nil
	}
	var o *gobinance.Order
	if err := x.call(ctx, weightQueryOrder, true, func(ctx context.Context) (err error) {
		o, err = x.client.NewGetOrderService().Symbol(s.name).OrderID(id).Do(ctx)
		return err
	}); err != nil {
		return "", err
	}
	x.remember(o.OrderID, o.ClientOrderID)
	return o.ClientOrderID, nil
}

// VerifyKeys checks the keys against the account endpoint: EUNAUTHORIZED
// when Binance refuses them. withdraw reports whether the key may
// withdraw (canWithdraw), which the caller should warn about.
func (x *Exchange) VerifyKeys(ctx context.Context) (withdraw bool, err error) {
	acc, err := x.Account(ctx)
	if err != nil {
		return false, err
	}
	return acc.CanWithdraw, nil
}
