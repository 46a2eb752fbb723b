//go:build ccxt

package ccxt

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	ccxtlib "github.com/ccxt/ccxt/go/v4"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/strategy"
)

// Numbers. ccxt parses the exchange's decimal text into float64s. Where it
// keeps that text (a trade's or an order's info, for the exchanges whose
// field names the profile knows: infoKeys) the connector parses the text
// itself, exactly. Where only a float exists it is formatted with the
// market's precision (the tick for prices, the step for quantities: the
// decimals the exchange writes them with), or, without one, as the shortest
// text that reads back as the float — never a fixed number of decimals. A
// float whose value needs more than 15 significant digits at that precision
// may have lost digits on its way through ccxt, and a text the ledger cannot
// hold (more than 12 decimals, beyond its range) is not guessed at either:
// both are a NumberProblem, never a rounded or zeroed number.

// nums converts one answer's numbers, keeping the first problem.
type nums struct{ problem *domain.NumberProblem }

func (n *nums) keep(d decimal.Decimal, p *domain.NumberProblem) decimal.Decimal {
	if p != nil && n.problem == nil {
		n.problem = p
	}
	return d
}

// text parses the exchange's own text of field.
func (n *nums) text(field, raw string) decimal.Decimal {
	return n.keep(domain.ExchangeDecimal(field, raw))
}

// float converts a float ccxt parsed, with the precision step (zero: none);
// a nil one is absent and reads as 0.
func (n *nums) float(field string, f *float64, step decimal.Decimal) decimal.Decimal {
	if f == nil {
		return decimal.Zero
	}
	return n.keep(fromFloat(field, *f, step))
}

// info parses the exchange's own text at key of the answer it kept (a
// ccxt Trade's or Order's Info is the unified structure; the exchange's
// answer is under its "info"), else the float.
func (n *nums) info(unified map[string]interface{}, key, field string, f *float64, step decimal.Decimal) decimal.Decimal {
	if exchange, ok := unified["info"].(map[string]interface{}); ok && key != "" {
		if raw, ok := exchange[key].(string); ok {
			return n.text(field, raw)
		}
	}
	return n.float(field, f, step)
}

// err is the error of an answer with a number the ledger cannot hold.
func (n *nums) err(exchange, what string) error {
	if n.problem == nil {
		return nil
	}
	p := n.problem
	return domain.Errorf(domain.EUNAVAILABLE, "%s: %s sent %s %q, which the ledger cannot hold: %s", what, exchange, p.Field, p.Raw, p.Reason)
}

// fromFloat formats f with step's decimals (the shortest exact text when
// step is zero) and parses it; see Numbers.
func fromFloat(field string, f float64, step decimal.Decimal) (decimal.Decimal, *domain.NumberProblem) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return decimal.Zero, &domain.NumberProblem{Field: field, Raw: strconv.FormatFloat(f, 'g', -1, 64), Reason: "not a finite number"}
	}
	places := -1
	if step.IsPos() {
		s := string(step.AppendTrimmed(nil))
		places = 0
		if i := strings.IndexByte(s, '.'); i >= 0 {
			places = len(s) - i - 1
		}
	}
	raw := strconv.FormatFloat(f, 'f', places, 64)
	if places < 0 {
		places = 0
		if i := strings.IndexByte(raw, '.'); i >= 0 {
			places = len(raw) - i - 1
		}
	}
	if math.Abs(f)*math.Pow10(places) >= 1<<53 {
		return decimal.Zero, &domain.NumberProblem{Field: field, Raw: raw,
			Reason: "ccxt gave this number only as a float64, which cannot hold all its digits"}
	}
	return domain.ExchangeDecimal(field, raw)
}

func num(v interface{}) (float64, bool) {
	switch t := v.(type) {
	case *float64:
		if t == nil {
			return 0, false
		}
		return *t, true
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case string:
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil
	}
	return 0, false
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ccxt's precision modes (ccxt/go/v4 exchange_constants: DECIMAL_PLACES,
// SIGNIFICANT_DIGITS, TICK_SIZE).
const (
	precisionDecimalPlaces = 2
	precisionTickSize      = 4
)

// step turns a market precision into a step size.
func (x *Exchange) step(v interface{}) decimal.Decimal {
	f, ok := num(v)
	if !ok || f <= 0 {
		return decimal.Zero
	}
	if x.core.PrecisionMode == precisionDecimalPlaces {
		if f > decimal.DecimalPlaces {
			return decimal.Zero // finer than the ledger: no step it could hold
		}
		return decimal.NewDecimal(1, -int(f))
	}
	if x.core.PrecisionMode != precisionTickSize {
		return decimal.Zero // significant digits: no fixed step
	}
	d, p := fromFloat("precision", f, decimal.Zero)
	if p != nil {
		return decimal.Zero
	}
	return d
}

// loadMarkets fetches the markets when the cache is older than
// DefaultMarketsTTL.
func (x *Exchange) loadMarkets(ctx context.Context) error {
	if err := x.init(); err != nil {
		return err
	}
	x.mu.Lock()
	fresh := x.markets != nil && x.Now().Sub(x.marketsAt) < DefaultMarketsTTL
	x.mu.Unlock()
	if fresh {
		return nil
	}
	x.mu.Lock()
	reload := x.markets != nil
	x.mu.Unlock()
	var ms map[string]ccxtlib.MarketInterface
	if err := x.call(ctx, "the markets", func() (err error) {
		ms, err = x.client.LoadMarkets(reload)
		return err
	}); err != nil {
		return err
	}
	byPair, bySymbol := map[string]market{}, map[string]market{}
	for _, m := range ms {
		if m.Spot == nil || !*m.Spot || (m.Active != nil && !*m.Active) {
			continue
		}
		base, quote, symbol := str(m.BaseCurrency), str(m.QuoteCurrency), str(m.Symbol)
		if base == "" || quote == "" || symbol == "" {
			continue
		}
		mk := market{pair: quote + "-" + base, symbol: symbol, base: base, quote: quote}
		if p, ok := m.Info["precision"].(map[string]interface{}); ok {
			mk.filters.TickSize, mk.filters.StepSize = x.step(p["price"]), x.step(p["amount"])
		}
		var n nums
		mk.filters.MinQty = n.float("minimum amount", m.Limits.Amount.Min, mk.filters.StepSize)
		mk.filters.MinNotional = n.float("minimum cost", m.Limits.Cost.Min, decimal.Zero)
		if n.problem != nil {
			continue // filters it cannot hold exactly: not tradable here
		}
		if domain.ValidatePair(mk.pair) != nil {
			continue
		}
		byPair[mk.pair], bySymbol[symbol] = mk, mk
	}
	x.mu.Lock()
	x.markets, x.bySymbol, x.marketsAt = byPair, bySymbol, x.Now()
	x.mu.Unlock()
	return nil
}

func (x *Exchange) market(ctx context.Context, pair string) (market, error) {
	if err := x.loadMarkets(ctx); err != nil {
		return market{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	m, ok := x.markets[pair]
	if !ok {
		return market{}, domain.Errorf(domain.ENOTFOUND, "pair %s is not listed on %s", pair, x.ExchangeName)
	}
	return m, nil
}

func (x *Exchange) bySym(symbol string) (market, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	m, ok := x.bySymbol[symbol]
	return m, ok
}

// Markets lists the spot pairs with their 24-hour statistics and filters.
func (x *Exchange) Markets(ctx context.Context) ([]domain.Market, error) {
	if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	symbols := make([]string, 0, len(x.bySymbol))
	for s := range x.bySymbol {
		symbols = append(symbols, s)
	}
	x.mu.Unlock()
	sort.Strings(symbols)
	var ts ccxtlib.Tickers
	if err := x.call(ctx, "the tickers", func() (err error) {
		ts, err = x.client.FetchTickers(ccxtlib.WithFetchTickersSymbols(symbols))
		return err
	}); err != nil {
		return nil, err
	}
	var out []domain.Market
	for sym, t := range ts.Tickers {
		if t.Symbol != nil {
			sym = *t.Symbol
		}
		m, ok := x.bySym(sym)
		if !ok {
			continue
		}
		var n nums
		tick := m.filters.TickSize
		mk := domain.Market{
			Pair: m.pair, Base: m.base, Quote: m.quote,
			Last: n.float("last", t.Last, tick), Volume24h: n.float("baseVolume", t.BaseVolume, m.filters.StepSize),
			Low24h: n.float("low", t.Low, tick), High24h: n.float("high", t.High, tick), Filters: m.filters,
		}
		if t.Percentage != nil { // a percentage, not an amount: rounded to 12 decimals
			mk.ChangePct24h, _ = strategy.RoundDecimal(*t.Percentage)
		}
		if n.problem != nil {
			continue // left out of the list rather than shown as 0
		}
		out = append(out, mk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pair < out[j].Pair })
	return out, nil
}

// Ticker returns a pair's best bid, ask and last price.
func (x *Exchange) Ticker(ctx context.Context, pair string) (domain.Ticker, error) {
	m, err := x.market(ctx, pair)
	if err != nil {
		return domain.Ticker{}, err
	}
	var t ccxtlib.Ticker
	if err := x.call(ctx, "the ticker of "+pair, func() (err error) {
		t, err = x.client.FetchTicker(m.symbol)
		return err
	}); err != nil {
		return domain.Ticker{}, err
	}
	var n nums
	tick := m.filters.TickSize
	tk := domain.Ticker{Pair: pair, Bid: n.float("bid", t.Bid, tick), Ask: n.float("ask", t.Ask, tick), Last: n.float("last", t.Last, tick),
		Time: x.Now().UnixMilli()}
	if t.Timestamp != nil {
		tk.Time = *t.Timestamp
	}
	return tk, n.err(x.ExchangeName, "the ticker of "+pair)
}

// OrderBook returns up to depth levels a side.
func (x *Exchange) OrderBook(ctx context.Context, pair string, depth int) (domain.OrderBook, error) {
	m, err := x.market(ctx, pair)
	if err != nil {
		return domain.OrderBook{}, err
	}
	if depth <= 0 {
		depth = 100
	}
	var ob ccxtlib.OrderBook
	if err := x.call(ctx, "the book of "+pair, func() (err error) {
		ob, err = x.client.FetchOrderBook(m.symbol, ccxtlib.WithFetchOrderBookLimit(int64(depth)))
		return err
	}); err != nil {
		return domain.OrderBook{}, err
	}
	b := domain.OrderBook{Pair: pair, Time: x.Now().UnixMilli()}
	if ob.Timestamp != nil {
		b.Time = *ob.Timestamp
	}
	var n nums
	tick, step := m.filters.TickSize, m.filters.StepSize
	for i, l := range ob.Bids {
		if i < depth && len(l) >= 2 {
			b.Bids = append(b.Bids, domain.BookLevel{Price: n.float("bid price", &l[0], tick), Quantity: n.float("bid quantity", &l[1], step)})
		}
	}
	for i, l := range ob.Asks {
		if i < depth && len(l) >= 2 {
			b.Asks = append(b.Asks, domain.BookLevel{Price: n.float("ask price", &l[0], tick), Quantity: n.float("ask quantity", &l[1], step)})
		}
	}
	return b, n.err(x.ExchangeName, "the order book of "+pair)
}

var timeframes = map[time.Duration]string{
	time.Minute: "1m", 3 * time.Minute: "3m", 5 * time.Minute: "5m", 15 * time.Minute: "15m", 30 * time.Minute: "30m",
	time.Hour: "1h", 2 * time.Hour: "2h", 4 * time.Hour: "4h", 6 * time.Hour: "6h", 8 * time.Hour: "8h", 12 * time.Hour: "12h",
	24 * time.Hour: "1d", 72 * time.Hour: "3d", 7 * 24 * time.Hour: "1w",
}

// Candles returns up to limit bars, oldest first; an interval the exchange
// has no candles for is EINVALID.
func (x *Exchange) Candles(ctx context.Context, pair string, interval time.Duration, limit int) ([]domain.Candle, error) {
	m, err := x.market(ctx, pair)
	if err != nil {
		return nil, err
	}
	tf, ok := timeframes[interval]
	if _, has := x.client.GetTimeframes()[tf]; !ok || !has {
		return nil, domain.Errorf(domain.EINVALID, "%s has no %s candles", x.ExchangeName, interval)
	}
	if limit <= 0 || limit > 1000 {
		limit = 500
	}
	var bars []ccxtlib.OHLCV
	if err := x.call(ctx, "the candles of "+pair, func() (err error) {
		bars, err = x.client.FetchOHLCV(m.symbol, ccxtlib.WithFetchOHLCVTimeframe(tf), ccxtlib.WithFetchOHLCVLimit(int64(limit)))
		return err
	}); err != nil {
		return nil, err
	}
	if len(bars) > limit {
		bars = bars[len(bars)-limit:]
	}
	out := make([]domain.Candle, 0, len(bars))
	var n nums
	tick := m.filters.TickSize
	for _, k := range bars {
		out = append(out, domain.Candle{Time: k.Timestamp, Open: n.float("open", &k.Open, tick), High: n.float("high", &k.High, tick),
			Low: n.float("low", &k.Low, tick), Close: n.float("close", &k.Close, tick), Volume: n.float("volume", &k.Volume, m.filters.StepSize)})
	}
	if err := n.err(x.ExchangeName, "the candles of "+pair); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out, nil
}

// Balances returns the account's non-zero balances: free as available,
// used as on order.
func (x *Exchange) Balances(ctx context.Context) ([]domain.AssetBalance, error) {
	var bs ccxtlib.Balances
	if err := x.call(ctx, "the balances", func() (err error) {
		bs, err = x.client.FetchBalance()
		return err
	}); err != nil {
		return nil, err
	}
	out := make([]domain.AssetBalance, 0, len(bs.Balances))
	var n nums
	for asset, b := range bs.Balances {
		free, used := n.float(asset+" free", b.Free, decimal.Zero), n.float(asset+" used", b.Used, decimal.Zero)
		if b.Free == nil && b.Total != nil {
			free = n.float(asset+" total", b.Total, decimal.Zero).Sub(used)
		}
		if err := n.err(x.ExchangeName, "the balances"); err != nil {
			return nil, err // no snapshot rather than one with a 0
		}
		if free.IsZero() && used.IsZero() {
			continue
		}
		out = append(out, domain.AssetBalance{Asset: asset, Available: free, OnOrder: used})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asset < out[j].Asset })
	return out, nil
}

// VerifyKeys checks the keys with an authenticated call (the balances):
// EUNAUTHORIZED when the exchange refuses them.
func (x *Exchange) VerifyKeys(ctx context.Context) error {
	_, err := x.Balances(ctx)
	return err
}
