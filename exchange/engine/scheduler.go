package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/strategy"
)

// Defaults for Scheduler settings.
const (
	// DefaultInterval is how often the background loop calls Cycle. A pair
	// is cycled when its delay has passed, so this is the schedule's
	// resolution, not the per-pair delay.
	DefaultInterval = time.Second
	// DefaultDelay is the time between two cycles of one pair when neither
	// the pair's override nor its strategy sets DELAY (seconds) and the
	// exchange's entry has no delay (seconds).
	DefaultDelay = 10 * time.Second
	// DefaultPeriod is the candle interval when neither the pair's
	// override nor its strategy sets PERIOD (minutes).
	DefaultPeriod = 5 * time.Minute
	// DefaultCandleLimit is how many candles a pair's series holds (the
	// newest; market/candles answers them, oldest first).
	DefaultCandleLimit = 100
	// DefaultBookDepth is how many levels per side the order book keeps.
	DefaultBookDepth = 20
	// DefaultRateInterval is the least time between two rates recorded
	// for one pair (Scheduler.Rates): the width of a PNL bucket.
	DefaultRateInterval = 15 * time.Minute
)

// OrderManager is what the scheduler needs from the order side (New
// wires the Trader, the Emulator and the Reconciler; tests record the
// calls instead).
type OrderManager interface {
	// Submit places an order request (here: a strategy's order).
	Submit(ctx context.Context, req domain.OrderRequest) (int64, error)
	// OnTicker drives stop-limit, trailing-stop and OCO emulation.
	OnTicker(ctx context.Context, exchange string, t domain.Ticker) error
	// Reconcile turns the exchange's fills and balances into events.
	Reconcile(ctx context.Context, exchange string) error
}

// ConfigSource gives the current configuration (projections.Config).
type ConfigSource interface {
	Current() domain.Config
}

// VersionedConfig is a ConfigSource that tells cheaply whether its
// configuration changed (projections.Config): Version moves with every
// change, and is read before Current. IsCycling, which the trader asks on
// every order, then rebuilds what it needs only after a change; a source
// without Version is asked for Current on every check.
type VersionedConfig interface {
	ConfigSource
	Version() int64
}

// Scheduler is the pair scheduler (the bot core of Gunbot's vocabulary):
// while the System is started it cycles every enabled pair of the
// configuration on a schedule, collecting market data into bounded
// in-memory series, keeping core memory per pair, recording rates, driving
// the order side's emulation, reconciling fills and running the pair's
// strategy. Fill its fields (NewScheduler sets the defaults; New wires it
// in an Engine), then Start it; Close stops the loop. Cycle does one round
// of work and is what tests call, with a driven clock.
type Scheduler struct {
	// System is what the scheduler cycles: whether the system is started,
	// the configuration (which pairs, strategies and parameters) and the
	// connectors. Nil: nothing is cycled.
	System *System
	// Orders places strategy orders, emulates conditional orders and
	// reconciles fills. Nil: no trading (market data is still collected).
	Orders OrderManager
	// ABP returns the average buy price of a pair's held lots (from the
	// order read model), 0 when unknown. Nil: always 0.
	ABP func(exchange, pair string) decimal.Decimal
	// Clock decides when a pair is due and dates core memory.
	Clock domain.Clock
	// OnError is told of every failure inside a cycle (a cycle goes on
	// with the other pairs). Nil: ignored.
	OnError func(exchange, pair string, err error)
	// Rates records a pair's last price as a currency rate in the log
	// (cmd/tradeledger appends domain.RateObserved on domain.RateStream);
	// the PNL read model converts amounts between quote currencies with
	// them. Called from a cycle at most once per RateInterval per pair.
	// Nil: no rates are recorded.
	Rates func(ctx context.Context, r domain.RateObserved) error
	// RateInterval is the least time between two recorded rates of a pair.
	RateInterval time.Duration
	// FeeAssets returns the assets an exchange may charge fees in other
	// than a pair's own (BNB …). At each cycle the rate of each against
	// every cycled pair's quote is recorded like a pair's own (Rates, at
	// most once per RateInterval), when the exchange lists that market,
	// so that a fill's fee in such an asset finds a rate at or before its
	// time (domain.ValueFee). Nil: none.
	FeeAssets func(exchange string) []string

	// Sync, when set, is the cycle's account step for an exchange, after
	// its reconciliation (AccountSync.Sync: new activity on the account
	// read into the log, the balances checked); a failure is reported
	// like the others and the strategies still run. Nil: no sync.
	Sync func(ctx context.Context, exchange string) error

	// Interval is how often Start's loop calls Cycle.
	Interval time.Duration
	// DefaultDelay applies to pairs without a DELAY parameter.
	DefaultDelay time.Duration
	// DefaultPeriod applies to pairs without a PERIOD parameter.
	DefaultPeriod time.Duration
	// CandleLimit bounds each pair's candle series.
	CandleLimit int
	// BookDepth bounds each side of the kept order book.
	BookDepth int

	mu       sync.RWMutex
	starts   uint64 // System's start count when pairs were last made due
	pairs    map[string]*pairState
	feeRates map[string]time.Time // exchange/pair of a fee asset → when its rate was last recorded or tried

	cycleMu sync.Mutex // one Cycle at a time

	loopMu sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// pairState is everything the scheduler holds for one pair.
type pairState struct {
	exchange, pair string
	quote, base    string
	strategy       string
	period         time.Duration
	candles        []domain.Candle // oldest first, at most CandleLimit
	book           domain.OrderBook
	ticker         domain.Ticker
	collected      bool      // market data arrived at least once
	next           time.Time // when the pair is due again
	rateAt         time.Time // when a rate was last recorded (Scheduler.Rates)
	memory         map[string]any
}

// NewScheduler returns a Scheduler with default settings.
func NewScheduler() *Scheduler {
	return &Scheduler{
		Clock:         domain.SystemClock{},
		Interval:      DefaultInterval,
		DefaultDelay:  DefaultDelay,
		DefaultPeriod: DefaultPeriod,
		CandleLimit:   DefaultCandleLimit,
		BookDepth:     DefaultBookDepth,
		RateInterval:  DefaultRateInterval,
		pairs:         map[string]*pairState{},
	}
}

// Running reports whether the log says the system is started (System).
func (c *Scheduler) Running() bool { return c.System.Running() }

// Start runs Cycle every Interval in the background until Stop or Close.
// Starting a started loop does nothing. Whether cycles do work depends on
// the log (Apply), not on Start.
func (c *Scheduler) Start() {
	c.loopMu.Lock()
	defer c.loopMu.Unlock()
	if c.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	go func(done chan struct{}) {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.Cycle(ctx)
			}
		}
	}(c.done)
}

// Stop ends the background loop and waits for a cycle in progress.
func (c *Scheduler) Stop() {
	c.loopMu.Lock()
	defer c.loopMu.Unlock()
	if c.cancel == nil {
		return
	}
	c.cancel()
	<-c.done
	c.cancel, c.done = nil, nil
}

// Close stops the loop; the Scheduler holds no other resource.
func (c *Scheduler) Close() error {
	c.Stop()
	return nil
}

// due is one pair to cycle now, with its resolved parameters.
type due struct {
	state    *pairState
	cfg      domain.PairConfig
	params   domain.StrategyParams
	strategy strategy.Strategy
	stratErr error
	delay    time.Duration
}

// Cycle does one round: when the system is started, every enabled pair
// whose delay has passed is cycled (market data, core memory, trader
// ticks, reconciliation, strategy). Pairs no longer enabled are dropped
// from memory. It returns how many pairs were cycled. Failures go to
// OnError and into the pair's core memory (LastError); they never stop the
// other pairs.
func (c *Scheduler) Cycle(ctx context.Context) int {
	c.cycleMu.Lock()
	defer c.cycleMu.Unlock()
	if c.System == nil || c.System.Config == nil || c.System.Exchange == nil {
		return 0
	}
	cfg := c.System.Config.Current()
	now := c.Clock.Now()

	running, starts := c.System.state()
	c.mu.Lock()
	if !running {
		c.mu.Unlock()
		return 0
	}
	if starts != c.starts { // started (again) since the last cycle: every pair is due
		c.starts = starts
		for _, p := range c.pairs {
			p.next = time.Time{}
		}
	}
	enabled := map[string]bool{}
	byExchange := map[string][]*due{}
	var exchanges []string
	for _, pc := range cfg.Pairs() {
		if !pc.Enabled {
			continue
		}
		key := domain.PairKey(pc.Exchange, pc.Pair)
		enabled[key] = true
		settings, _ := cfg.Strategy(pc.Strategy)
		params := domain.StrategyParams{Override: pc.Override, Settings: settings}
		period := paramDuration(params, "PERIOD", time.Minute, c.DefaultPeriod)
		st := c.pairs[key]
		if st == nil || st.period != period {
			quote, base, _ := domain.SplitPair(pc.Pair)
			st = &pairState{exchange: pc.Exchange, pair: pc.Pair, quote: quote, base: base, period: period, memory: map[string]any{}}
			c.pairs[key] = st
		}
		st.strategy = pc.Strategy
		if now.Before(st.next) {
			continue
		}
		d := &due{state: st, cfg: pc, params: params, delay: paramDuration(params, "DELAY", time.Second, exchangeDelay(cfg, pc.Exchange, c.DefaultDelay))}
		d.strategy, d.stratErr = strategy.ResolveStrategy(pc.Strategy, settings)
		st.next = now.Add(d.delay)
		if byExchange[pc.Exchange] == nil {
			exchanges = append(exchanges, pc.Exchange)
		}
		byExchange[pc.Exchange] = append(byExchange[pc.Exchange], d)
	}
	for key := range c.pairs {
		if !enabled[key] {
			delete(c.pairs, key)
		}
	}
	c.mu.Unlock()

	n := 0
	for _, name := range exchanges {
		if ctx.Err() != nil {
			break
		}
		n += c.cycleExchange(ctx, name, byExchange[name], now)
	}
	return n
}

// cycleExchange cycles the due pairs of one exchange: market data and
// trader ticks per pair, then one reconciliation and one balance read, then
// each pair's strategy. A failed reconciliation skips the strategies.
func (c *Scheduler) cycleExchange(ctx context.Context, name string, pairs []*due, now time.Time) int {
	ex, err := c.System.Exchange(name)
	if err != nil {
		for _, d := range pairs {
			c.fail(d.state, "exchange", err)
		}
		return 0
	}
	var ready []*due
	for _, d := range pairs {
		if c.collect(ctx, ex, d, now) {
			ready = append(ready, d)
		}
	}
	if len(ready) == 0 {
		return 0
	}
	c.recordFeeRates(ctx, ex, ready, now)
	if c.Orders != nil {
		// The strategies trade only on a reconciled account (after a
		// restart: open orders, fills and balances recorded first).
		if err := c.Orders.Reconcile(ctx, name); err != nil {
			for _, d := range ready {
				c.fail(d.state, "reconcile", err)
			}
			return len(ready)
		}
	}
	if c.Sync != nil {
		if err := c.Sync(ctx, name); err != nil {
			for _, d := range ready {
				c.fail(d.state, "account sync", err)
			}
		}
	}
	balances, err := ex.Balances(ctx)
	if err != nil {
		for _, d := range ready {
			c.fail(d.state, "balances", err)
		}
		return len(ready)
	}
	byAsset := make(map[string]domain.AssetBalance, len(balances))
	for _, b := range balances {
		byAsset[b.Asset] = b
	}
	for _, d := range ready {
		c.decide(ctx, ex, d, byAsset, now)
	}
	return len(ready)
}

// collect reads ticker, order book and candles of one pair into its series
// and tells the trader about the ticker. It reports whether the pair has
// a usable ticker.
func (c *Scheduler) collect(ctx context.Context, ex domain.Exchange, d *due, now time.Time) bool {
	st, pair := d.state, d.cfg.Pair
	t, err := ex.Ticker(ctx, pair)
	if err != nil {
		c.fail(st, "ticker", err)
		return false
	}
	book, bookErr := ex.OrderBook(ctx, pair, c.BookDepth)
	candles, candleErr := ex.Candles(ctx, pair, st.period, c.CandleLimit)

	c.mu.Lock()
	st.ticker = t
	if bookErr == nil {
		st.book = trimBook(book, c.BookDepth)
	}
	if candleErr == nil {
		st.candles = mergeCandles(st.candles, candles, c.CandleLimit)
	}
	st.collected = true
	m := st.memory
	m["Bid"], m["Ask"], m["LastPrice"] = decimal.Number(t.Bid), decimal.Number(t.Ask), decimal.Number(t.Last)
	m["TickerTime"] = t.Time
	m["CandleCount"] = len(st.candles)
	m["LastCycle"] = now.UnixMilli()
	m["Delay"] = int64(d.delay / time.Second)
	m["Period"] = int64(st.period / time.Minute)
	cycles, _ := m["Cycles"].(int64)
	m["Cycles"] = cycles + 1
	c.mu.Unlock()

	if bookErr != nil {
		c.fail(st, "order book", bookErr)
	}
	if candleErr != nil {
		c.fail(st, "candles", candleErr)
	}
	c.recordRate(ctx, ex.Name(), st, t, now)
	if c.Orders != nil {
		if err := c.Orders.OnTicker(ctx, ex.Name(), t); err != nil {
			c.fail(st, "order emulation", err)
		}
	}
	return true
}

// recordRate hands the ticker's last price to Rates when the pair's last
// recorded rate is RateInterval old (or none was recorded); a failure is
// retried at the next cycle.
func (c *Scheduler) recordRate(ctx context.Context, exchange string, st *pairState, t domain.Ticker, now time.Time) {
	if c.Rates == nil || t.Last.Sign() <= 0 {
		return
	}
	if !st.rateAt.IsZero() && now.Sub(st.rateAt) < c.RateInterval {
		return
	}
	err := c.Rates(ctx, domain.RateObserved{Exchange: exchange, Base: st.base, Quote: st.quote, Rate: t.Last})
	if err != nil {
		c.fail(st, "rate", err)
		return
	}
	st.rateAt = now
}

// recordFeeRates records the rate of each of the exchange's fee assets
// (FeeAssets) against the quote of each ready pair, when RateInterval has
// passed since the last try; a market the exchange does not list is tried
// again after RateInterval too (the PNL read model finds a path through
// other rates).
func (c *Scheduler) recordFeeRates(ctx context.Context, ex domain.Exchange, ready []*due, now time.Time) {
	if c.Rates == nil || c.FeeAssets == nil {
		return
	}
	assets := c.FeeAssets(ex.Name())
	if len(assets) == 0 {
		return
	}
	cycled := make(map[string]bool, len(ready))
	for _, d := range ready {
		cycled[d.cfg.Pair] = true // its own rate is recorded by recordRate
	}
	for _, d := range ready {
		quote := d.state.quote
		for _, x := range assets {
			pair := quote + "-" + x
			if x == quote || cycled[pair] {
				continue
			}
			cycled[pair] = true
			key := ex.Name() + "/" + pair
			c.mu.Lock()
			at, tried := c.feeRates[key]
			if tried && now.Sub(at) < c.RateInterval {
				c.mu.Unlock()
				continue
			}
			if c.feeRates == nil {
				c.feeRates = map[string]time.Time{}
			}
			c.feeRates[key] = now
			c.mu.Unlock()
			t, err := ex.Ticker(ctx, pair)
			if err != nil || t.Last.Sign() <= 0 {
				continue
			}
			if err := c.Rates(ctx, domain.RateObserved{Exchange: ex.Name(), Base: x, Quote: quote, Rate: t.Last}); err != nil {
				c.fail(d.state, "fee asset rate", err)
				c.mu.Lock()
				delete(c.feeRates, key) // retried at the next cycle
				c.mu.Unlock()
			}
		}
	}
}

// decide updates the pair's balances, open orders and ABP in core memory,
// runs its strategy and submits the strategy's orders.
func (c *Scheduler) decide(ctx context.Context, ex domain.Exchange, d *due, balances map[string]domain.AssetBalance, now time.Time) {
	st := d.state
	open, err := ex.OpenOrders(ctx, d.cfg.Pair)
	if err != nil {
		c.fail(st, "open orders", err)
		return
	}
	abp := decimal.Zero
	if c.ABP != nil {
		abp = c.ABP(d.cfg.Exchange, d.cfg.Pair)
	}
	c.mu.Lock()
	q, b := balances[st.quote], balances[st.base]
	m := st.memory
	m["ABP"] = decimal.Number(abp)
	m["QuoteBalance"], m["QuoteOnOrder"] = decimal.Number(q.Available), decimal.Number(q.OnOrder)
	m["BaseBalance"], m["BaseOnOrder"] = decimal.Number(b.Available), decimal.Number(b.OnOrder)
	m["OpenOrders"] = len(open)
	state := strategy.PairState{
		Exchange: d.cfg.Exchange, Pair: d.cfg.Pair, Quote: st.quote, Base: st.base,
		Ticker: st.ticker, Candles: append([]domain.Candle(nil), st.candles...), ABP: abp,
		QuoteBalance: q.Available, BaseBalance: b.Available, OpenOrders: open,
	}
	c.mu.Unlock()

	if d.stratErr != nil {
		c.fail(st, "strategy", d.stratErr)
		return
	}
	dec, err := d.strategy.Decide(state, d.params)
	if err != nil {
		c.fail(st, "strategy", err)
		return
	}
	c.mu.Lock()
	m["Strategy"] = d.cfg.Strategy
	m["StrategyAlgorithm"] = d.strategy.Name()
	m["StrategyNote"] = dec.Note
	for k, v := range dec.Memory {
		m[k] = decimal.Number(v)
	}
	delete(m, "LastError")
	c.mu.Unlock()

	if c.Orders == nil {
		return
	}
	cycle := strconv.FormatInt(now.UnixMilli(), 10)
	for i, o := range dec.Orders {
		o.Exchange, o.Pair = d.cfg.Exchange, d.cfg.Pair
		o.Actor = domain.ActorCore
		o.Correlation = "core-" + cycle
		o.IdempotencyKey = fmt.Sprintf("core:%s:%s:%s:%d", d.cfg.Exchange, d.cfg.Pair, cycle, i)
		if _, err := c.Orders.Submit(ctx, o); err != nil {
			c.fail(st, "submit "+string(o.Side), err)
		}
	}
}

// fail records err in the pair's core memory and reports it.
func (c *Scheduler) fail(st *pairState, what string, err error) {
	msg := what + ": " + domain.ErrorMessage(err)
	c.mu.Lock()
	st.memory["LastError"] = msg
	c.mu.Unlock()
	if c.OnError != nil {
		c.OnError(st.exchange, st.pair, fmt.Errorf("%s: %w", what, err))
	}
}

// exchangeDelay is config.exchanges.<name>.delay in seconds (Gunbot's
// per-exchange delay), else def.
func exchangeDelay(cfg domain.Config, name string, def time.Duration) time.Duration {
	entry, _ := cfg.Exchange(name)
	return paramDuration(domain.StrategyParams{Settings: entry}, "delay", time.Second, def)
}

// paramDuration reads a whole-number parameter in unit; a missing, invalid
// or non-positive value gives def.
func paramDuration(p domain.StrategyParams, name string, unit, def time.Duration) time.Duration {
	n, err := p.Int(name, 0)
	if err != nil || n <= 0 {
		return def
	}
	return time.Duration(n) * unit
}

// mergeCandles adds fresh candles (oldest first) to series: a candle with
// the time of one held replaces it (the open candle updates), newer ones
// are appended; the result keeps the newest limit candles.
func mergeCandles(series, fresh []domain.Candle, limit int) []domain.Candle {
	for _, f := range fresh {
		i := sort.Search(len(series), func(i int) bool { return series[i].Time >= f.Time })
		switch {
		case i < len(series) && series[i].Time == f.Time:
			series[i] = f
		case i == len(series):
			series = append(series, f)
		default:
			series = append(series, domain.Candle{})
			copy(series[i+1:], series[i:])
			series[i] = f
		}
	}
	if limit > 0 && len(series) > limit {
		series = append([]domain.Candle(nil), series[len(series)-limit:]...)
	}
	return series
}

// trimBook copies book with at most depth levels per side, bids descending
// and asks ascending whatever order the exchange used.
func trimBook(b domain.OrderBook, depth int) domain.OrderBook {
	bids := append([]domain.BookLevel(nil), b.Bids...)
	asks := append([]domain.BookLevel(nil), b.Asks...)
	sort.SliceStable(bids, func(i, j int) bool { return bids[j].Price.Less(bids[i].Price) })
	sort.SliceStable(asks, func(i, j int) bool { return asks[i].Price.Less(asks[j].Price) })
	if depth > 0 {
		bids, asks = bids[:min(depth, len(bids))], asks[:min(depth, len(asks))]
	}
	return domain.OrderBook{Pair: b.Pair, Bids: bids, Asks: asks, Time: b.Time}
}
