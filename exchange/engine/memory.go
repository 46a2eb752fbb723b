package engine

import (
	"sort"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Core memory keys. Prices and amounts are decimal.Number (JSON numbers,
// exact); counts and times (ms) are int64 or int; the rest are strings.
//
//	Exchange, Pair, Quote, Base      identity of the pair
//	Strategy, StrategyAlgorithm      configured strategy and the algorithm it runs
//	Bid, Ask, LastPrice, TickerTime  last ticker
//	ABP                              average buy price of held lots (0 unknown)
//	QuoteBalance, BaseBalance        available balances of the pair's assets
//	QuoteOnOrder, BaseOnOrder        amounts held by open orders
//	OpenOrders                       number of the pair's orders open on the exchange
//	openOrders                       the pair's open and armed orders, by id (domain.OpenOrder:
//	                                 id, type, side, state, rate, amount, filled, stop fields,
//	                                 time), read live from Orders
//	CandleCount, Period              candles held, candle interval (minutes)
//	Delay                            seconds between the pair's cycles
//	Cycles, LastCycle                cycles done and the time of the last one
//	StrategyNote                     what the strategy decided and why
//	EMA, buyPrice, sellPrice         the strategy's levels, when it has them
//	LastError                        the last failure, until a clean cycle
//
// The snapshot (coremem, coremem/single) adds, for front ends:
//
//	BaseValue      BaseBalance × Bid, in quote
//	UnrealizedPnl  (Bid − ABP) × BaseBalance, when the ABP is known
//	Running        whether the system is started

// lookup returns the state of an active pair: the system is started, the
// pair is enabled in the configuration and data has been collected.
// Otherwise ENOTFOUND says which of these is missing. Call with c.mu held
// for reading.
func (c *Scheduler) lookup(cfg domain.Config, exchange, pair string) (*pairState, error) {
	key := domain.PairKey(exchange, pair)
	pc, ok := cfg.Pair(exchange, pair)
	switch {
	case !ok:
		return nil, domain.Errorf(domain.ENOTFOUND, "pair %s is not in the configuration", key)
	case !pc.Enabled:
		return nil, domain.Errorf(domain.ENOTFOUND, "pair %s is not enabled", key)
	case !c.System.Running():
		return nil, domain.Errorf(domain.ENOTFOUND, "pair %s is not active: the system is stopped", key)
	}
	st := c.pairs[key]
	if st == nil || !st.collected {
		return nil, domain.Errorf(domain.ENOTFOUND, "pair %s is not active yet: no market data collected", key)
	}
	return st, nil
}

// readPair returns what read makes of the state of an active pair, read
// under c.mu (lookup's ENOTFOUND for a pair that is not active).
func readPair[T any](c *Scheduler, exchange, pair string, read func(*pairState) T) (T, error) {
	cfg := c.config()
	c.mu.RLock()
	defer c.mu.RUnlock()
	st, err := c.lookup(cfg, exchange, pair)
	if err != nil {
		var zero T
		return zero, err
	}
	return read(st), nil
}

func (c *Scheduler) config() domain.Config {
	if c.System == nil || c.System.Config == nil {
		return domain.Config{}
	}
	return c.System.Config.Current()
}

// Candles returns the pair's candle series, oldest first (at most
// CandleLimit candles of the pair's PERIOD). ENOTFOUND for an unknown or
// inactive pair.
func (c *Scheduler) Candles(exchange, pair string) ([]domain.Candle, error) {
	return readPair(c, exchange, pair, func(st *pairState) []domain.Candle {
		return append([]domain.Candle(nil), st.candles...)
	})
}

// OrderBook returns the pair's last order book (bids descending, asks
// ascending, at most BookDepth levels each). ENOTFOUND for an unknown or
// inactive pair.
func (c *Scheduler) OrderBook(exchange, pair string) (domain.OrderBook, error) {
	return readPair(c, exchange, pair, func(st *pairState) domain.OrderBook {
		b := st.book
		b.Bids = append([]domain.BookLevel(nil), b.Bids...)
		b.Asks = append([]domain.BookLevel(nil), b.Asks...)
		return b
	})
}

// Memory returns a copy of the pair's core memory, untransformed. With
// elements, only those keys (that exist) are returned. ENOTFOUND for an
// unknown or inactive pair.
func (c *Scheduler) Memory(exchange, pair string, elements ...string) (map[string]any, error) {
	m, err := readPair(c, exchange, pair, c.raw)
	if err != nil || len(elements) == 0 {
		return m, err
	}
	out := make(map[string]any, len(elements))
	for _, e := range elements {
		if v, ok := m[e]; ok {
			out[e] = v
		}
	}
	return out, nil
}

// Snapshot returns the pair's core memory for a front end (see the key
// list above). ENOTFOUND for an unknown or inactive pair.
func (c *Scheduler) Snapshot(exchange, pair string) (map[string]any, error) {
	return readPair(c, exchange, pair, c.snapshot)
}

// Snapshots returns the snapshot of every active pair, keyed by pair key
// ("<exchange>/<pair>"); empty while the system is stopped.
func (c *Scheduler) Snapshots() map[string]map[string]any {
	cfg := c.config()
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[string]map[string]any{}
	keys := make([]string, 0, len(c.pairs))
	for k := range c.pairs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		st := c.pairs[k]
		if _, err := c.lookup(cfg, st.exchange, st.pair); err == nil {
			out[k] = c.snapshot(st)
		}
	}
	return out
}

// OpenOrderLister is implemented by an OrderManager that lists its
// unfinished orders (the engine's order side, from Orders): core memory's
// openOrders comes from it, live, at every read. With another
// OrderManager openOrders is empty.
type OpenOrderLister interface {
	OpenOrderList(exchange, pair string) []domain.OpenOrder
}

// raw is the pair's core memory as held, plus its identity and its open
// orders. Call with c.mu held for reading.
func (c *Scheduler) raw(st *pairState) map[string]any {
	m := make(map[string]any, len(st.memory)+6)
	for k, v := range st.memory {
		m[k] = v
	}
	open := []domain.OpenOrder{}
	if l, ok := c.Orders.(OpenOrderLister); ok {
		open = l.OpenOrderList(st.exchange, st.pair)
	}
	m["openOrders"] = open
	m["Exchange"], m["Pair"], m["Quote"], m["Base"] = st.exchange, st.pair, st.quote, st.base
	if _, ok := m["Strategy"]; !ok {
		m["Strategy"] = st.strategy
	}
	return m
}

func (c *Scheduler) snapshot(st *pairState) map[string]any {
	m := c.raw(st)
	num := func(k string) decimal.Decimal { n, _ := m[k].(decimal.Number); return decimal.Decimal(n) }
	bid, base, abp := num("Bid"), num("BaseBalance"), num("ABP")
	m["BaseValue"] = decimal.Number(base.Mul(bid))
	if abp.IsPos() {
		m["UnrealizedPnl"] = decimal.Number(bid.Sub(abp).Mul(base))
	}
	m["Running"] = c.System.Running()
	return m
}
