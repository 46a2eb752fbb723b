//go:build ccxt

package ccxt

import (
	"context"
	"math"
	"sort"
	"strconv"
	"time"

	ccxtlib "github.com/ccxt/ccxt/go/v4"

	"github.com/tradeledger/tradeledger/domain"
)

// dec converts one of ccxt's float numbers, rounded to 8 decimals (ccxt
// parses the exchange's decimal strings into floats).
func dec(f *float64) domain.Decimal {
	if f == nil {
		return domain.Zero
	}
	return decf(*f)
}

func decf(f float64) domain.Decimal {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return domain.Zero
	}
	d, _ := domain.ParseDecimal(strconv.FormatFloat(f, 'f', 8, 64))
	return d
}

func num(v interface{}) (float64, bool) {
	switch t := v.(type) {
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
func (x *Exchange) step(v interface{}) domain.Decimal {
	f, ok := num(v)
	if !ok || f <= 0 {
		return domain.Zero
	}
	if x.core.PrecisionMode == precisionDecimalPlaces {
		return decf(math.Pow10(-int(f)))
	}
	if x.core.PrecisionMode != precisionTickSize {
		return domain.Zero // significant digits: no fixed step
	}
	return decf(f)
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
		mk.filters.MinQty, mk.filters.MinNotional = dec(m.Limits.Amount.Min), dec(m.Limits.Cost.Min)
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
		out = append(out, domain.Market{
			Pair: m.pair, Base: m.base, Quote: m.quote,
			Last: dec(t.Last), Volume24h: dec(t.BaseVolume), Low24h: dec(t.Low), High24h: dec(t.High),
			ChangePct24h: dec(t.Percentage), Filters: m.filters,
		})
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
	tk := domain.Ticker{Pair: pair, Bid: dec(t.Bid), Ask: dec(t.Ask), Last: dec(t.Last), Time: x.Now().UnixMilli()}
	if t.Timestamp != nil {
		tk.Time = *t.Timestamp
	}
	return tk, nil
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
	for i, l := range ob.Bids {
		if i < depth && len(l) >= 2 {
			b.Bids = append(b.Bids, domain.BookLevel{Price: decf(l[0]), Quantity: decf(l[1])})
		}
	}
	for i, l := range ob.Asks {
		if i < depth && len(l) >= 2 {
			b.Asks = append(b.Asks, domain.BookLevel{Price: decf(l[0]), Quantity: decf(l[1])})
		}
	}
	return b, nil
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
	for _, k := range bars {
		out = append(out, domain.Candle{Time: k.Timestamp, Open: decf(k.Open), High: decf(k.High), Low: decf(k.Low), Close: decf(k.Close), Volume: decf(k.Volume)})
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
	for asset, b := range bs.Balances {
		free, used := dec(b.Free), dec(b.Used)
		if b.Free == nil && b.Total != nil {
			free = dec(b.Total).Sub(used)
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
