package paper

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

type point struct {
	time   int64 // ms
	price  decimal.Decimal
	volume decimal.Decimal // base
}

type market struct {
	pair, quote, base string
	rng               *rand.Rand
	pf                float64 // current price
	idx               int64   // tick index of the last step
	history           []point // last window steps, oldest first
	takenBid          []decimal.Decimal
	takenAsk          []decimal.Decimal
	takenIdx          int64
	bookSeed          uint64
}

// newMarket starts pair p's walk window steps before tick index now;
// false if the pair or its price is unusable.
func (a *Account) newMarket(p PairSpec, now int64) (*market, bool) {
	quote, base, err := domain.SplitPair(p.Pair)
	if err != nil || p.Price.Sign() <= 0 {
		return nil, false
	}
	seed := hashString(fmt.Sprintf("%d\x00%s\x00%s", a.sim.Seed, a.name, p.Pair))
	m := &market{
		pair: p.Pair, quote: quote, base: base,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		pf:       p.Price.Float64(),
		idx:      now - a.window,
		bookSeed: seed,
	}
	m.history = append(m.history, point{time: m.idx * a.tickMs, price: p.Price})
	for m.idx < now {
		a.step(m)
	}
	return m, true
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// step moves m one tick along its path.
func (a *Account) step(m *market) {
	m.idx++
	m.pf *= math.Exp(a.sim.Volatility * m.rng.NormFloat64())
	vol := a.sim.TickVolume / m.pf * (0.5 + m.rng.Float64())
	m.history = append(m.history, point{time: m.idx * a.tickMs, price: toDecimal(m.pf), volume: toDecimal(vol)})
	if over := int64(len(m.history)) - a.window - 1; over > 0 {
		m.history = append(m.history[:0], m.history[over:]...)
	}
}

func toDecimal(f float64) decimal.Decimal {
	v := math.Round(f * 1e8)
	if v < 1 {
		v = 1
	}
	return decimal.NewDecimal(int64(v), -8)
}

// catchUp steps every market to the clock, matching resting orders at each
// step. Caller holds a.mu.
func (a *Account) catchUp() {
	now := a.sim.Clock.Now().UnixMilli() / a.tickMs
	for _, p := range a.pairs {
		m := a.markets[p]
		if now-m.idx > 2*a.window { // long idle: the book would be stale anyway
			m.idx = now - a.window
		}
		for m.idx < now {
			a.step(m)
			a.matchResting(m)
		}
	}
}

func (m *market) last() decimal.Decimal { return m.history[len(m.history)-1].price }

// Markets lists the pairs with their 24-hour statistics, sorted by pair.
func (a *Account) Markets(ctx context.Context) ([]domain.Market, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	out := make([]domain.Market, 0, len(a.pairs))
	for _, p := range a.pairs {
		m := a.markets[p]
		first, last := m.history[0].price, m.last()
		mk := domain.Market{Pair: p, Base: m.base, Quote: m.quote, Last: last, Low24h: last, High24h: last}
		for _, pt := range m.history {
			mk.Volume24h = mk.Volume24h.Add(pt.volume)
			mk.Low24h = mk.Low24h.Min(pt.price)
			mk.High24h = mk.High24h.Max(pt.price)
		}
		// Percent with 2 decimals.
		mk.ChangePct24h = changePct(last.Sub(first), first)
		out = append(out, mk)
	}
	return out, nil
}

// changePct returns change ÷ base × 100 rounded half to even to 2 decimals.
func changePct(change, base decimal.Decimal) decimal.Decimal {
	return decimal.MulDiv(change, decimal.DecimalFromInt(100), base).Round(2)
}

// Ticker returns the best bid, best ask and last price.
func (a *Account) Ticker(ctx context.Context, pair string) (domain.Ticker, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	m, err := a.market(pair)
	if err != nil {
		return domain.Ticker{}, err
	}
	return domain.Ticker{Pair: pair, Bid: a.level(m, false, 0).Price, Ask: a.level(m, true, 0).Price, Last: m.last(), Time: a.sim.Clock.Now().UnixMilli()}, nil
}

// Candles aggregates the price path into bars of interval (a multiple of
// the tick, at least one tick), oldest first, at most limit of them (and at
// most the last 24 hours).
func (a *Account) Candles(ctx context.Context, pair string, interval time.Duration, limit int) ([]domain.Candle, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	m, err := a.market(pair)
	if err != nil {
		return nil, err
	}
	ms := interval.Milliseconds()
	if ms < a.tickMs {
		return nil, domain.Errorf(domain.EINVALID, "candle interval %s is shorter than the simulator tick %s", interval, time.Duration(a.tickMs)*time.Millisecond)
	}
	var out []domain.Candle
	for _, pt := range m.history {
		t := pt.time - pt.time%ms
		if n := len(out); n > 0 && out[n-1].Time == t {
			c := &out[n-1]
			c.High, c.Low, c.Close = c.High.Max(pt.price), c.Low.Min(pt.price), pt.price
			c.Volume = c.Volume.Add(pt.volume)
			continue
		}
		out = append(out, domain.Candle{Time: t, Open: pt.price, High: pt.price, Low: pt.price, Close: pt.price, Volume: pt.volume})
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// SetPrice moves pair's price to price now and fills the resting orders it
// crosses.
func (a *Account) SetPrice(pair string, price decimal.Decimal) error {
	if price.Sign() <= 0 {
		return domain.Errorf(domain.EINVALID, "price must be positive")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	m, err := a.market(pair)
	if err != nil {
		return err
	}
	m.pf = price.Float64()
	m.history[len(m.history)-1].price = price
	m.takenIdx, m.takenBid, m.takenAsk = m.idx, nil, nil // a new book around the new price
	a.matchResting(m)
	return nil
}
