// Package paper is the simulated exchange (DESIGN §5): the default connector
// while bot.SIMULATOR is true. A Simulator simulates every exchange name it
// is asked for (Settings decides which), each an independent account with
// its own markets, balances, fee and order book.
//
// Prices follow deterministic seeded paths: one geometric random walk per
// exchange and pair, one step per Tick of the injected Clock, seeded from
// Seed and the names, so the same seed and the same clock give the same
// prices. Nothing happens between calls: every method first catches the
// markets up to Clock.Now(), matching resting orders at each step.
//
// Tests drive the market with a domain.ManualClock (Advance moves the walk
// forward one step per Tick) and with SetPrice, which moves a pair's price
// at once and fills the resting orders it crosses. FailPlacements injects
// exchange failures (a lost request, or a placed order whose answer is
// lost) to test reconciliation.
//
// Matching: the book around the price has BookDepth levels a side, spaced
// by LevelStep, with deterministic sizes worth about LevelNotional quote
// each; liquidity taken in one step is gone until the next step. Market
// orders and marketable limit orders walk the book (large ones fill
// partially; a market order's unfilled rest is cancelled); limit orders
// rest and fill at their price when the last price crosses them, up to the
// liquidity of the opposite side. Fees are FeeRate of the notional, charged
// in the quote currency. Balances are enforced: an order needing more than
// is available is refused (EINVALID, "insufficient funds …"), and a resting
// order's funds are on order until it fills or is cancelled.
package paper

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Defaults of Simulator settings.
const (
	DefaultTick          = time.Minute
	DefaultVolatility    = 0.0008 // per-minute σ of log returns: ≈3% a day, like BTC
	DefaultBookDepth     = 20
	DefaultLevelStep     = 0.0005 // 0.05% between book levels (and half the spread)
	DefaultLevelNotional = 20000  // quote value of a book level, on average
	DefaultTickVolume    = 50000  // quote value traded per tick, on average
	DefaultWindow        = 24 * time.Hour
)

// DefaultFeeRate is 0.1%.
var DefaultFeeRate = domain.MustDecimal("0.001")

// PairSpec is a simulated market and its starting price.
type PairSpec struct {
	Pair  string
	Price domain.Decimal
}

// DefaultPairs are the markets every simulated exchange lists unless its
// settings say otherwise.
var DefaultPairs = []PairSpec{
	{"USDT-BTC", domain.MustDecimal("60000")},
	{"USDT-ETH", domain.MustDecimal("3000")},
	{"USDT-SOL", domain.MustDecimal("150")},
	{"USDT-XRP", domain.MustDecimal("0.6")},
	{"USDT-DOGE", domain.MustDecimal("0.12")},
	{"BTC-ETH", domain.MustDecimal("0.05")},
	{"BTC-SOL", domain.MustDecimal("0.0025")},
	{"USDC-BTC", domain.MustDecimal("60000")},
}

// DefaultBalances are the starting balances of a simulated account.
var DefaultBalances = map[string]domain.Decimal{
	"USDT": domain.MustDecimal("10000"),
	"USDC": domain.MustDecimal("10000"),
	"BTC":  domain.MustDecimal("0.5"),
	"ETH":  domain.MustDecimal("5"),
}

// ExchangeSettings are one simulated exchange's settings; zero fields take
// the Simulator's defaults.
type ExchangeSettings struct {
	Fee      *domain.Decimal           // fee rate (0.001 = 0.1%); nil: Simulator.FeeRate
	Balances map[string]domain.Decimal // starting balances; nil: Simulator.Balances
	Pairs    []PairSpec                // markets; nil: Simulator.Pairs
}

// Simulator holds the simulated exchanges. Set its fields before the first
// call to Exchange; it is safe for concurrent use after that.
type Simulator struct {
	Clock         domain.Clock
	Seed          int64
	Tick          time.Duration
	Volatility    float64
	FeeRate       domain.Decimal
	Pairs         []PairSpec
	Balances      map[string]domain.Decimal
	BookDepth     int
	LevelStep     float64
	LevelNotional float64
	TickVolume    float64
	// Settings returns an exchange's settings and whether the exchange is
	// simulated at all (for example: whether the configuration names it).
	// Nil simulates every name with the defaults.
	Settings func(name string) (ExchangeSettings, bool)
	// SettingsVersion, when set, is the generation of what Settings reads
	// (the configuration's version). When it moves, a simulated exchange
	// takes its fee from Settings again on its next use. Balances and
	// pairs stay as they were at the first use: the account has traded
	// since.
	SettingsVersion func() int64

	mu        sync.Mutex
	exchanges map[string]*Exchange
	restore   *restoreState // from the log, until each exchange's first use (restore.go)
}

// NewSimulator returns a Simulator with default settings on clock.
func NewSimulator(clock domain.Clock) *Simulator {
	return &Simulator{
		Clock:         clock,
		Seed:          1,
		Tick:          DefaultTick,
		Volatility:    DefaultVolatility,
		FeeRate:       DefaultFeeRate,
		Pairs:         DefaultPairs,
		Balances:      DefaultBalances,
		BookDepth:     DefaultBookDepth,
		LevelStep:     DefaultLevelStep,
		LevelNotional: DefaultLevelNotional,
		TickVolume:    DefaultTickVolume,
	}
}

// Exchange returns the simulated exchange called name, creating it on first
// use; ENOTFOUND if Settings says the name is not simulated.
func (s *Simulator) Exchange(name string) (domain.Exchange, error) {
	x, err := s.exchange(name)
	if err != nil {
		return nil, err
	}
	return x, nil
}

// Paper returns the simulated exchange called name as its concrete type
// (for tests that drive it); ENOTFOUND as Exchange.
func (s *Simulator) Paper(name string) (*Exchange, error) { return s.exchange(name) }

func (s *Simulator) exchange(name string) (*Exchange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.exchanges[name]; ok {
		s.refresh(x)
		return x, nil
	}
	set := ExchangeSettings{}
	if s.Settings != nil {
		var ok bool
		if set, ok = s.Settings(name); !ok {
			return nil, domain.Errorf(domain.ENOTFOUND, "exchange %q is not simulated (not in the configuration)", name)
		}
	}
	if name == "" {
		return nil, domain.Errorf(domain.ENOTFOUND, "exchange name is empty")
	}
	x := s.newExchange(name, set)
	s.restoreInto(x)
	if s.SettingsVersion != nil {
		x.settingsVersion = s.SettingsVersion()
	}
	if s.exchanges == nil {
		s.exchanges = make(map[string]*Exchange)
	}
	s.exchanges[name] = x
	return x, nil
}

// refresh applies a changed fee to x when SettingsVersion moved (s.mu held).
func (s *Simulator) refresh(x *Exchange) {
	if s.SettingsVersion == nil || s.Settings == nil {
		return
	}
	v := s.SettingsVersion()
	if v == x.settingsVersion {
		return
	}
	fee := s.FeeRate
	if set, ok := s.Settings(x.name); ok && set.Fee != nil {
		fee = *set.Fee
	}
	x.mu.Lock()
	x.fee, x.settingsVersion = fee, v
	x.mu.Unlock()
}

// SetPrice moves a pair's simulated price at once (after catching up with
// the clock) and fills the resting orders the move crosses.
func (s *Simulator) SetPrice(exchange, pair string, price domain.Decimal) error {
	x, err := s.exchange(exchange)
	if err != nil {
		return err
	}
	return x.SetPrice(pair, price)
}

// FailPlacements makes the next n PlaceOrder calls on exchange fail with
// EUNAVAILABLE. With placed, the order is placed before the failure (the
// answer is lost, as in a timeout); without, the request is lost.
func (s *Simulator) FailPlacements(exchange string, n int, placed bool) error {
	x, err := s.exchange(exchange)
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.failPlace, x.failPlaced = n, placed
	x.mu.Unlock()
	return nil
}

// Exchange is one simulated exchange account.
type Exchange struct {
	name    string
	sim     *Simulator
	fee     domain.Decimal // guarded by mu (Simulator.refresh changes it)
	tickMs  int64
	window  int64 // steps kept for 24h statistics and candles
	markets map[string]*market
	pairs   []string // sorted

	mu         sync.Mutex
	balances   map[string]*balance
	orders     map[string]*order
	byClient   map[string]*order
	resting    map[string][]*order // per pair, in placement order
	fills      []domain.Fill
	fillBase   uint64 // Seq of fills[i] is fillBase+i+1
	nextID     int64
	failPlace  int
	failPlaced bool

	settingsVersion int64 // Simulator.SettingsVersion when fee was set (guarded by Simulator.mu)
}

type balance struct{ available, onOrder domain.Decimal }

type order struct {
	domain.ExchangeOrder
	reserved domain.Decimal // funds on order: quote for buys, base for sells
	quote    string
	base     string
}

type point struct {
	time   int64 // ms
	price  domain.Decimal
	volume domain.Decimal // base
}

type market struct {
	pair, quote, base string
	rng               *rand.Rand
	pf                float64 // current price
	idx               int64   // tick index of the last step
	history           []point // last window steps, oldest first
	takenBid          []domain.Decimal
	takenAsk          []domain.Decimal
	takenIdx          int64
	bookSeed          uint64
}

var _ domain.Exchange = (*Exchange)(nil)

func (s *Simulator) newExchange(name string, set ExchangeSettings) *Exchange {
	tick := s.Tick
	if tick <= 0 {
		tick = DefaultTick
	}
	x := &Exchange{
		name:     name,
		sim:      s,
		fee:      s.FeeRate,
		tickMs:   tick.Milliseconds(),
		window:   int64(DefaultWindow / tick),
		markets:  make(map[string]*market),
		balances: make(map[string]*balance),
		orders:   make(map[string]*order),
		byClient: make(map[string]*order),
		resting:  make(map[string][]*order),
	}
	// Order ids and fill sequences start from the clock, so that a
	// restarted simulator (its state is in memory) never reuses an id or
	// a fill cursor recorded in the log before the restart.
	x.fillBase = uint64(s.Clock.Now().UnixMilli()) * 1000
	x.nextID = int64(x.fillBase)
	if x.tickMs <= 0 {
		x.tickMs = 1
	}
	if x.window < 1 {
		x.window = 1
	}
	if set.Fee != nil {
		x.fee = *set.Fee
	}
	bals := set.Balances
	if bals == nil {
		bals = s.Balances
	}
	for a, v := range bals {
		x.balances[a] = &balance{available: v}
	}
	pairs := set.Pairs
	if pairs == nil {
		pairs = s.Pairs
	}
	now := s.Clock.Now().UnixMilli() / x.tickMs
	for _, p := range pairs {
		quote, base, err := domain.SplitPair(p.Pair)
		if err != nil || p.Price.Sign() <= 0 {
			continue
		}
		seed := hashString(fmt.Sprintf("%d\x00%s\x00%s", s.Seed, name, p.Pair))
		m := &market{
			pair: p.Pair, quote: quote, base: base,
			rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
			pf:       p.Price.Float64(),
			idx:      now - x.window,
			bookSeed: seed,
		}
		m.history = append(m.history, point{time: m.idx * x.tickMs, price: p.Price})
		for m.idx < now {
			x.step(m)
		}
		x.markets[p.Pair] = m
		x.pairs = append(x.pairs, p.Pair)
	}
	sort.Strings(x.pairs)
	return x
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// step moves m one tick along its path.
func (x *Exchange) step(m *market) {
	m.idx++
	m.pf *= math.Exp(x.sim.Volatility * m.rng.NormFloat64())
	vol := x.sim.TickVolume / m.pf * (0.5 + m.rng.Float64())
	m.history = append(m.history, point{time: m.idx * x.tickMs, price: toDecimal(m.pf), volume: toDecimal(vol)})
	if over := int64(len(m.history)) - x.window - 1; over > 0 {
		m.history = append(m.history[:0], m.history[over:]...)
	}
}

func toDecimal(f float64) domain.Decimal {
	v := math.Round(f * 1e8)
	if v < 1 {
		v = 1
	}
	return domain.NewDecimal(int64(v))
}

// catchUp steps every market to the clock, matching resting orders at each
// step. Caller holds x.mu.
func (x *Exchange) catchUp() {
	now := x.sim.Clock.Now().UnixMilli() / x.tickMs
	for _, p := range x.pairs {
		m := x.markets[p]
		if now-m.idx > 2*x.window { // long idle: the book would be stale anyway
			m.idx = now - x.window
		}
		for m.idx < now {
			x.step(m)
			x.matchResting(m)
		}
	}
}

func (m *market) last() domain.Decimal { return m.history[len(m.history)-1].price }

// level returns book level i of a side (ask when ask), before liquidity
// taken in this step.
func (x *Exchange) level(m *market, ask bool, i int) domain.BookLevel {
	off := x.sim.LevelStep * float64(i+1)
	price := m.pf * (1 - off)
	if ask {
		price = m.pf * (1 + off)
	}
	// A deterministic size per (step, level, side).
	z := m.bookSeed ^ uint64(m.idx)*0x9e3779b97f4a7c15 ^ uint64(i)*0xbf58476d1ce4e5b9
	if ask {
		z ^= 0x94d049bb133111eb
	}
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	frac := float64(z>>11) / float64(1<<53)
	qty := x.sim.LevelNotional / m.pf * (0.5 + frac) * (1 + 0.25*float64(i))
	return domain.BookLevel{Price: toDecimal(price), Quantity: toDecimal(qty)}
}

// available returns level i's quantity left in this step.
func (x *Exchange) available(m *market, ask bool, i int) domain.BookLevel {
	if m.takenIdx != m.idx {
		m.takenIdx, m.takenBid, m.takenAsk = m.idx, nil, nil
	}
	l := x.level(m, ask, i)
	taken := m.takenBid
	if ask {
		taken = m.takenAsk
	}
	if i < len(taken) {
		l.Quantity = l.Quantity.Sub(taken[i]).Max(0)
	}
	return l
}

func (x *Exchange) take(m *market, ask bool, i int, q domain.Decimal) {
	taken := &m.takenBid
	if ask {
		taken = &m.takenAsk
	}
	for len(*taken) <= i {
		*taken = append(*taken, 0)
	}
	(*taken)[i] = (*taken)[i].Add(q)
}

func (x *Exchange) depth() int {
	if x.sim.BookDepth > 0 {
		return x.sim.BookDepth
	}
	return DefaultBookDepth
}

func (x *Exchange) market(pair string) (*market, error) {
	m, ok := x.markets[pair]
	if !ok {
		return nil, domain.Errorf(domain.ENOTFOUND, "pair %s is not listed on %s", pair, x.name)
	}
	return m, nil
}

// Name returns the exchange's name.
func (x *Exchange) Name() string { return x.name }

// FeeRate returns the exchange's fee rate (0.001 = 0.1%).
func (x *Exchange) FeeRate() domain.Decimal {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.fee
}

// Markets lists the pairs with their 24-hour statistics, sorted by pair.
func (x *Exchange) Markets(ctx context.Context) ([]domain.Market, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	out := make([]domain.Market, 0, len(x.pairs))
	for _, p := range x.pairs {
		m := x.markets[p]
		first, last := m.history[0].price, m.last()
		mk := domain.Market{Pair: p, Base: m.base, Quote: m.quote, Last: last, Low24h: last, High24h: last}
		for _, pt := range m.history {
			mk.Volume24h = mk.Volume24h.Add(pt.volume)
			mk.Low24h = mk.Low24h.Min(pt.price)
			mk.High24h = mk.High24h.Max(pt.price)
		}
		// Percent with 2 decimals.
		pct := last.Sub(first).Mul(domain.DecimalFromInt(100)).Div(first)
		mk.ChangePct24h = domain.NewDecimal((pct.Units() + sign(pct.Units())*500_000) / 1_000_000 * 1_000_000)
		out = append(out, mk)
	}
	return out, nil
}

func sign(v int64) int64 {
	if v < 0 {
		return -1
	}
	return 1
}

// Ticker returns the best bid, best ask and last price.
func (x *Exchange) Ticker(ctx context.Context, pair string) (domain.Ticker, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	m, err := x.market(pair)
	if err != nil {
		return domain.Ticker{}, err
	}
	return domain.Ticker{Pair: pair, Bid: x.level(m, false, 0).Price, Ask: x.level(m, true, 0).Price, Last: m.last(), Time: x.sim.Clock.Now().UnixMilli()}, nil
}

// OrderBook returns up to depth levels a side (BookDepth at most), with
// the liquidity left in the current step.
func (x *Exchange) OrderBook(ctx context.Context, pair string, depth int) (domain.OrderBook, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	m, err := x.market(pair)
	if err != nil {
		return domain.OrderBook{}, err
	}
	if depth <= 0 || depth > x.depth() {
		depth = x.depth()
	}
	b := domain.OrderBook{Pair: pair, Time: x.sim.Clock.Now().UnixMilli()}
	for i := 0; i < depth; i++ {
		if l := x.available(m, false, i); l.Quantity.Sign() > 0 {
			b.Bids = append(b.Bids, l)
		}
		if l := x.available(m, true, i); l.Quantity.Sign() > 0 {
			b.Asks = append(b.Asks, l)
		}
	}
	return b, nil
}

// Candles aggregates the price path into bars of interval (a multiple of
// the tick, at least one tick), oldest first, at most limit of them (and at
// most the last 24 hours).
func (x *Exchange) Candles(ctx context.Context, pair string, interval time.Duration, limit int) ([]domain.Candle, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	m, err := x.market(pair)
	if err != nil {
		return nil, err
	}
	ms := interval.Milliseconds()
	if ms < x.tickMs {
		return nil, domain.Errorf(domain.EINVALID, "candle interval %s is shorter than the simulator tick %s", interval, time.Duration(x.tickMs)*time.Millisecond)
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

// Balances returns every asset's balance, sorted by asset.
func (x *Exchange) Balances(ctx context.Context) ([]domain.AssetBalance, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	out := make([]domain.AssetBalance, 0, len(x.balances))
	for a, b := range x.balances {
		out = append(out, domain.AssetBalance{Asset: a, Available: b.available, OnOrder: b.onOrder})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asset < out[j].Asset })
	return out, nil
}

func (x *Exchange) bal(asset string) *balance {
	b, ok := x.balances[asset]
	if !ok {
		b = &balance{}
		x.balances[asset] = b
	}
	return b
}

// PlaceOrder places a limit or market order, idempotently per
// ClientOrderID (a second call returns the order as it is now). Refusals
// are EINVALID with the reason: insufficient funds, a zero amount or
// price, an unknown kind.
func (x *Exchange) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	if x.failPlace > 0 {
		x.failPlace--
		if !x.failPlaced {
			return domain.ExchangeOrder{}, domain.Errorf(domain.EUNAVAILABLE, "%s: simulated network failure", x.name)
		}
		if _, err := x.place(req); err != nil {
			return domain.ExchangeOrder{}, err
		}
		return domain.ExchangeOrder{}, domain.Errorf(domain.EUNAVAILABLE, "%s: simulated timeout after placing", x.name)
	}
	return x.place(req)
}

func (x *Exchange) place(req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	if req.ClientOrderID == "" {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "client order id is required")
	}
	if o, ok := x.byClient[req.ClientOrderID]; ok {
		return o.ExchangeOrder, nil
	}
	m, err := x.market(req.Pair)
	if err != nil {
		return domain.ExchangeOrder{}, err
	}
	if req.Side != domain.Buy && req.Side != domain.Sell {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "side must be buy or sell")
	}
	if req.Amount.Sign() <= 0 {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "amount must be positive")
	}
	if req.Kind == domain.KindLimit && req.Price.Sign() <= 0 {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "limit price must be positive")
	}
	if req.Kind != domain.KindLimit && req.Kind != domain.KindMarket {
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "order kind %q is not supported by the exchange", req.Kind)
	}
	o := &order{quote: m.quote, base: m.base, ExchangeOrder: domain.ExchangeOrder{
		ClientOrderID: req.ClientOrderID, Pair: req.Pair, Side: req.Side, Kind: req.Kind,
		Price: req.Price, Amount: req.Amount, Status: domain.StatusOpen,
	}}
	if req.Kind == domain.KindMarket {
		o.Price = 0
	}
	// Funds: a buy reserves the quote it can spend (limit: amount×price;
	// market: the cost of walking the book) plus the fee; a sell reserves
	// the base.
	var need domain.Decimal
	asset := m.base
	if req.Side == domain.Buy {
		asset = m.quote
		if req.Kind == domain.KindLimit {
			need = x.withFee(req.Amount.Mul(req.Price))
		} else {
			_, cost := x.walk(m, domain.Buy, req.Amount, 0, false)
			need = x.withFee(cost)
		}
	} else {
		need = req.Amount
	}
	b := x.bal(asset)
	if b.available.Cmp(need) < 0 {
		o.Status, o.Reason = domain.StatusRejected, fmt.Sprintf("insufficient funds: need %s %s, available %s", need, asset, b.available)
		return domain.ExchangeOrder{}, domain.Errorf(domain.EINVALID, "%s", o.Reason)
	}
	x.nextID++
	o.ID = strconv.FormatInt(x.nextID, 10)
	b.available, b.onOrder = b.available.Sub(need), b.onOrder.Add(need)
	o.reserved = need
	x.orders[o.ID] = o
	x.byClient[o.ClientOrderID] = o

	// Taker part: walk the book up to the limit.
	fills, _ := x.walk(m, req.Side, req.Amount, o.Price, true)
	for _, f := range fills {
		x.fill(o, f.Price, f.Quantity)
	}
	switch {
	case o.Status != domain.StatusOpen:
	case req.Kind == domain.KindMarket:
		o.Status, o.Reason = domain.StatusCancelled, "not enough liquidity in the book"
		x.release(o)
	default:
		x.resting[o.Pair] = append(x.resting[o.Pair], o)
	}
	return o.ExchangeOrder, nil
}

func (x *Exchange) withFee(notional domain.Decimal) domain.Decimal {
	return notional.Add(notional.Mul(x.fee))
}

// walk takes up to amount from the opposite side of the book, at prices no
// worse than limit (0: any), returning the fills and their cost. With take
// the liquidity is consumed.
func (x *Exchange) walk(m *market, side domain.Side, amount, limit domain.Decimal, take bool) ([]domain.BookLevel, domain.Decimal) {
	ask := side == domain.Buy
	var out []domain.BookLevel
	var cost domain.Decimal
	left := amount
	for i := 0; i < x.depth() && left.Sign() > 0; i++ {
		l := x.available(m, ask, i)
		if limit.Sign() > 0 && ((ask && l.Price.Cmp(limit) > 0) || (!ask && l.Price.Cmp(limit) < 0)) {
			break
		}
		q := left.Min(l.Quantity)
		if q.Sign() <= 0 {
			continue
		}
		out = append(out, domain.BookLevel{Price: l.Price, Quantity: q})
		cost = cost.Add(q.Mul(l.Price))
		left = left.Sub(q)
		if take {
			x.take(m, ask, i, q)
		}
	}
	return out, cost
}

// fill executes q of o at price: moves balances, records the fill, and
// finishes the order when nothing remains.
func (x *Exchange) fill(o *order, price, q domain.Decimal) {
	notional := q.Mul(price)
	fee := notional.Mul(x.fee)
	quote, base := x.bal(o.quote), x.bal(o.base)
	if o.Side == domain.Buy {
		x.consume(o, quote, notional.Add(fee))
		base.available = base.available.Add(q)
	} else {
		x.consume(o, base, q)
		quote.available = quote.available.Add(notional.Sub(fee))
	}
	o.Filled = o.Filled.Add(q)
	x.nextFill(o, price, q, fee)
	if o.Filled.Cmp(o.Amount) >= 0 {
		o.Status = domain.StatusFilled
		x.release(o)
	}
}

// consume spends v of o's reservation (and, for rounding dust beyond it,
// of the available balance).
func (x *Exchange) consume(o *order, b *balance, v domain.Decimal) {
	r := v.Min(o.reserved)
	o.reserved = o.reserved.Sub(r)
	b.onOrder = b.onOrder.Sub(r)
	b.available = b.available.Sub(v.Sub(r))
}

// release returns what is left of o's reservation to the available balance.
func (x *Exchange) release(o *order) {
	asset := o.base
	if o.Side == domain.Buy {
		asset = o.quote
	}
	b := x.bal(asset)
	b.onOrder = b.onOrder.Sub(o.reserved)
	b.available = b.available.Add(o.reserved)
	o.reserved = 0
	if rs := x.resting[o.Pair]; len(rs) > 0 {
		for i, r := range rs {
			if r == o {
				x.resting[o.Pair] = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
	}
}

func (x *Exchange) nextFill(o *order, price, q, fee domain.Decimal) {
	seq := x.fillBase + uint64(len(x.fills)) + 1
	x.fills = append(x.fills, domain.Fill{
		ID: x.name + "-" + strconv.FormatUint(seq, 10), Seq: seq, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Pair: o.Pair, Side: o.Side, Price: price, Quantity: q, Fee: fee, FeeAsset: o.quote,
		Time: x.sim.Clock.Now().UnixMilli(),
	})
}

// matchResting fills the resting orders of m that the last price crossed,
// at their own price, up to the liquidity of the opposite side.
func (x *Exchange) matchResting(m *market) {
	rs := append([]*order(nil), x.resting[m.pair]...)
	last := m.last()
	for _, o := range rs {
		crossed := (o.Side == domain.Buy && last.Cmp(o.Price) <= 0) || (o.Side == domain.Sell && last.Cmp(o.Price) >= 0)
		if !crossed || o.Status != domain.StatusOpen {
			continue
		}
		ask := o.Side == domain.Buy
		left := o.Amount.Sub(o.Filled)
		for i := 0; i < x.depth() && left.Sign() > 0; i++ {
			l := x.available(m, ask, i)
			if i > 0 && ((ask && l.Price.Cmp(o.Price) > 0) || (!ask && l.Price.Cmp(o.Price) < 0)) {
				break
			}
			q := left.Min(l.Quantity)
			if q.Sign() <= 0 {
				continue
			}
			x.take(m, ask, i, q)
			x.fill(o, o.Price, q)
			left = left.Sub(q)
		}
	}
}

// SetPrice moves pair's price to price now and fills the resting orders it
// crosses.
func (x *Exchange) SetPrice(pair string, price domain.Decimal) error {
	if price.Sign() <= 0 {
		return domain.Errorf(domain.EINVALID, "price must be positive")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	m, err := x.market(pair)
	if err != nil {
		return err
	}
	m.pf = price.Float64()
	m.history[len(m.history)-1].price = price
	m.takenIdx, m.takenBid, m.takenAsk = m.idx, nil, nil // a new book around the new price
	x.matchResting(m)
	return nil
}

// CancelOrder cancels an open order and releases its funds; a finished
// order is ECONFLICT, an unknown one ENOTFOUND.
func (x *Exchange) CancelOrder(ctx context.Context, pair, orderID string) (domain.ExchangeOrder, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	o, ok := x.orders[orderID]
	if !ok || o.Pair != pair {
		return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "order %s not found on %s %s", orderID, x.name, pair)
	}
	if o.Status != domain.StatusOpen {
		return o.ExchangeOrder, domain.Errorf(domain.ECONFLICT, "order %s is already %s", orderID, o.Status)
	}
	o.Status, o.Reason = domain.StatusCancelled, "cancelled by the client"
	x.release(o)
	return o.ExchangeOrder, nil
}

// Order looks an order up by its client order id.
func (x *Exchange) Order(ctx context.Context, pair, clientOrderID string) (domain.ExchangeOrder, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	o, ok := x.byClient[clientOrderID]
	if !ok || (pair != "" && o.Pair != pair) {
		return domain.ExchangeOrder{}, domain.Errorf(domain.ENOTFOUND, "no order with client id %s on %s", clientOrderID, x.name)
	}
	return o.ExchangeOrder, nil
}

// OpenOrders lists the open orders of pair ("" for all), oldest first.
func (x *Exchange) OpenOrders(ctx context.Context, pair string) ([]domain.ExchangeOrder, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	if pair != "" {
		if _, err := x.market(pair); err != nil {
			return nil, err
		}
	}
	var out []domain.ExchangeOrder
	for _, p := range x.pairs {
		if pair != "" && p != pair {
			continue
		}
		for _, o := range x.resting[p] {
			out = append(out, o.ExchangeOrder)
		}
	}
	return out, nil
}

// FillsSince returns up to limit fills with Seq > since.
func (x *Exchange) FillsSince(ctx context.Context, since uint64, limit int) ([]domain.Fill, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	from := uint64(0)
	if since > x.fillBase {
		from = since - x.fillBase
	}
	if from >= uint64(len(x.fills)) {
		return nil, nil
	}
	out := x.fills[from:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return append([]domain.Fill(nil), out...), nil
}

// FillOrder fills qty of the resting order with the client order id at its
// limit price, as if a counterparty took it (tests: partial fills across
// polls). An unknown order is ENOTFOUND, a finished one ECONFLICT, more
// than its remainder EINVALID.
func (x *Exchange) FillOrder(clientOrderID string, qty domain.Decimal) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	o, ok := x.byClient[clientOrderID]
	switch {
	case !ok:
		return domain.Errorf(domain.ENOTFOUND, "no order with client id %s on %s", clientOrderID, x.name)
	case o.Status != domain.StatusOpen:
		return domain.Errorf(domain.ECONFLICT, "order %s is already %s", o.ID, o.Status)
	case qty.Sign() <= 0 || qty.Cmp(o.Amount.Sub(o.Filled)) > 0:
		return domain.Errorf(domain.EINVALID, "fill of %s: must be positive and at most the remainder %s", qty, o.Amount.Sub(o.Filled))
	}
	x.fill(o, o.Price, qty)
	return nil
}
