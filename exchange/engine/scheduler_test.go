package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// fakeExchange is a small in-test domain.Exchange with a settable price.
type fakeExchange struct {
	mu       sync.Mutex
	name     string
	price    decimal.Decimal
	balances []domain.AssetBalance
	open     []domain.ExchangeOrder
	fail     error
	periods  []time.Duration
	others   map[string]decimal.Decimal // last prices of other listed pairs
}

func (f *fakeExchange) Name() string { return f.name }
func (f *fakeExchange) Markets(context.Context) ([]domain.Market, error) {
	return nil, nil
}
func (f *fakeExchange) Ticker(_ context.Context, pair string) (domain.Ticker, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return domain.Ticker{}, f.fail
	}
	if p, ok := f.others[pair]; ok {
		return domain.Ticker{Pair: pair, Bid: p, Ask: p, Last: p, Time: 1}, nil
	}
	if pair != "USDT-BTC" {
		return domain.Ticker{}, domain.Errorf(domain.ENOTFOUND, "no pair %s", pair)
	}
	return domain.Ticker{Pair: pair, Bid: f.price.Sub(decimal.DecimalFromInt(1)), Ask: f.price.Add(decimal.DecimalFromInt(1)), Last: f.price, Time: 1}, nil
}
func (f *fakeExchange) OrderBook(_ context.Context, pair string, depth int) (domain.OrderBook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := domain.OrderBook{Pair: pair}
	for i := int64(1); i <= 30; i++ { // worst first, to check the core sorts
		b.Bids = append(b.Bids, domain.BookLevel{Price: f.price.Sub(decimal.DecimalFromInt(31 - i)), Quantity: decimal.DecimalFromInt(i)})
		b.Asks = append(b.Asks, domain.BookLevel{Price: f.price.Add(decimal.DecimalFromInt(31 - i)), Quantity: decimal.DecimalFromInt(i)})
	}
	return b, nil
}
func (f *fakeExchange) Candles(_ context.Context, pair string, interval time.Duration, limit int) ([]domain.Candle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.periods = append(f.periods, interval)
	out := make([]domain.Candle, limit+10) // more than asked: the core bounds its series
	for i := range out {
		out[i] = domain.Candle{Time: int64(i) * interval.Milliseconds(), Open: f.price, High: f.price, Low: f.price, Close: f.price, Volume: decimal.DecimalFromInt(1)}
	}
	return out, nil
}
func (f *fakeExchange) Balances(context.Context) ([]domain.AssetBalance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]domain.AssetBalance(nil), f.balances...), nil
}
func (f *fakeExchange) PlaceOrder(context.Context, domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	return domain.ExchangeOrder{}, errors.New("not used")
}
func (f *fakeExchange) CancelOrder(context.Context, string, string) (domain.ExchangeOrder, error) {
	return domain.ExchangeOrder{}, errors.New("not used")
}
func (f *fakeExchange) Order(context.Context, string, string) (domain.ExchangeOrder, error) {
	return domain.ExchangeOrder{}, errors.New("not used")
}
func (f *fakeExchange) OpenOrders(context.Context, string) ([]domain.ExchangeOrder, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]domain.ExchangeOrder(nil), f.open...), nil
}
func (f *fakeExchange) FillsSince(context.Context, uint64, int) ([]domain.Fill, error) {
	return nil, nil
}

// recordingTrader records what the core asks of the trader.
type recordingTrader struct {
	mu           sync.Mutex
	submitted    []domain.OrderRequest
	tickers      []string
	reconciled   []string
	reconcileErr error
}

func (t *recordingTrader) Submit(_ context.Context, r domain.OrderRequest) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.submitted = append(t.submitted, r)
	return int64(len(t.submitted)), nil
}
func (t *recordingTrader) OnTicker(_ context.Context, ex string, tk domain.Ticker) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tickers = append(t.tickers, ex+"/"+tk.Pair)
	return nil
}
func (t *recordingTrader) Reconcile(_ context.Context, ex string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reconciled = append(t.reconciled, ex)
	return t.reconcileErr
}

type staticConfig struct {
	mu sync.Mutex
	c  domain.Config
}

func (s *staticConfig) Current() domain.Config { s.mu.Lock(); defer s.mu.Unlock(); return s.c }
func (s *staticConfig) set(t *testing.T, doc string) {
	t.Helper()
	c, err := domain.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

const testConfig = `{"bot":{"service_wallet":"w","SIMULATOR":true},"exchanges":{"sim":{},"other":{}},"GUI":{},
"strategies":{"gain":{"TRADING_LIMIT":100,"BUYLVL":1},"stepgrid":{},"manual":{},"custom":{"STRATEGY":"nope"}},
"pairs":{"sim":{"USDT-BTC":{"strategy":"gain","enabled":true,"override":{"DELAY":5}},"USDT-ETH":{"strategy":"manual","enabled":false}}}}`

type fixture struct {
	core   *Scheduler
	clock  *domain.ManualClock
	ex     *fakeExchange
	trader *recordingTrader
	cfg    *staticConfig
	errs   []string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{
		clock:  domain.NewManualClock(time.UnixMilli(1_700_000_000_000)),
		ex:     &fakeExchange{name: "sim", price: decimal.DecimalFromInt(100)},
		trader: &recordingTrader{},
		cfg:    &staticConfig{},
	}
	f.cfg.set(t, testConfig)
	f.ex.balances = []domain.AssetBalance{{Asset: "USDT", Available: decimal.DecimalFromInt(1000)}, {Asset: "BTC", Available: decimal.MustDecimal("0.5"), OnOrder: decimal.MustDecimal("0.1")}}
	c := NewScheduler()
	c.System = &System{Config: f.cfg}
	c.Clock, c.Orders = f.clock, f.trader
	c.System.Exchange = func(name string) (domain.Exchange, error) {
		if name == "sim" {
			return f.ex, nil
		}
		return nil, domain.Errorf(domain.ENOTFOUND, "no exchange %s", name)
	}
	c.ABP = func(ex, pair string) decimal.Decimal { return decimal.MustDecimal("90") }
	c.OnError = func(ex, pair string, err error) { f.errs = append(f.errs, ex+"/"+pair+": "+err.Error()) }
	f.core = c
	return f
}

func (f *fixture) apply(t *testing.T, typ string) {
	t.Helper()
	e := domain.NewEvent(f.clock, typ, struct{}{})
	e.Stream = domain.StreamSystem
	if err := f.core.System.Apply(&e); err != nil {
		t.Fatal(err)
	}
}

func TestCoreFollowsSystemStream(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if f.core.System.IsCycling("sim") || f.core.Running() {
		t.Fatal("cycling before SystemStarted")
	}
	if n := f.core.Cycle(ctx); n != 0 {
		t.Fatalf("stopped core cycled %d pairs", n)
	}
	_, err := f.core.Candles("sim", "USDT-BTC")
	if domain.ErrorCode(err) != domain.ENOTFOUND || !strings.Contains(domain.ErrorMessage(err), "system is stopped") {
		t.Fatalf("candles while stopped: %v", err)
	}

	f.apply(t, domain.TypeSystemStarted)
	if !f.core.System.IsCycling("sim") {
		t.Fatal("sim not cycling after SystemStarted")
	}
	if f.core.System.IsCycling("other") { // configured, no enabled pair
		t.Fatal("exchange without enabled pairs is cycling")
	}
	if f.core.System.IsCycling("nope") {
		t.Fatal("unknown exchange is cycling")
	}
	if n := f.core.Cycle(ctx); n != 1 {
		t.Fatalf("cycled %d pairs, want 1 (USDT-ETH is disabled)", n)
	}

	f.apply(t, domain.TypeSystemStopped)
	if f.core.System.IsCycling("sim") {
		t.Fatal("cycling after SystemStopped")
	}
	f.clock.Advance(time.Hour)
	if n := f.core.Cycle(ctx); n != 0 {
		t.Fatalf("stopped core cycled %d pairs", n)
	}

	// A restarted process replays the log: the last event decides.
	g := newFixture(t)
	g.apply(t, domain.TypeSystemStarted)
	g.apply(t, domain.TypeSystemStopped)
	g.apply(t, domain.TypeSystemStarted)
	if !g.core.System.IsCycling("sim") {
		t.Fatal("replayed start/stop/start is not cycling")
	}
}

func TestCycleCollectsAndDecides(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.apply(t, domain.TypeSystemStarted)
	f.core.Cycle(ctx)

	candles, err := f.core.Candles("sim", "USDT-BTC")
	if err != nil {
		t.Fatal(err)
	}
	if len(candles) != DefaultCandleLimit {
		t.Fatalf("%d candles, want the series bounded at %d", len(candles), DefaultCandleLimit)
	}
	for i := 1; i < len(candles); i++ {
		if candles[i].Time <= candles[i-1].Time {
			t.Fatalf("candles not oldest first at %d", i)
		}
	}
	if got := f.ex.periods[0]; got != DefaultPeriod {
		t.Fatalf("candle interval %v, want default %v", got, DefaultPeriod)
	}

	book, err := f.core.OrderBook("sim", "USDT-BTC")
	if err != nil {
		t.Fatal(err)
	}
	if len(book.Bids) != DefaultBookDepth || len(book.Asks) != DefaultBookDepth {
		t.Fatalf("book depth %d/%d, want %d", len(book.Bids), len(book.Asks), DefaultBookDepth)
	}
	if book.Bids[0].Price != decimal.DecimalFromInt(99) || book.Asks[0].Price != decimal.DecimalFromInt(101) {
		t.Fatalf("best bid/ask %s/%s, want 99/101", book.Bids[0].Price, book.Asks[0].Price)
	}
	for i := 1; i < len(book.Bids); i++ {
		if book.Bids[i].Price.Cmp(book.Bids[i-1].Price) >= 0 || book.Asks[i].Price.Cmp(book.Asks[i-1].Price) <= 0 {
			t.Fatalf("book not sorted at %d", i)
		}
	}

	mem, err := f.core.Memory("sim", "USDT-BTC")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"Bid": decimal.Number(decimal.DecimalFromInt(99)), "Ask": decimal.Number(decimal.DecimalFromInt(101)),
		"LastPrice": decimal.Number(decimal.DecimalFromInt(100)), "ABP": decimal.Number(decimal.MustDecimal("90")),
		"QuoteBalance": decimal.Number(decimal.DecimalFromInt(1000)), "BaseBalance": decimal.Number(decimal.MustDecimal("0.5")),
		"BaseOnOrder": decimal.Number(decimal.MustDecimal("0.1")), "OpenOrders": 0, "Strategy": "gain",
		"StrategyAlgorithm": "gain", "Delay": int64(5), "Cycles": int64(1), "Exchange": "sim", "Pair": "USDT-BTC",
		"Quote": "USDT", "Base": "BTC", "LastCycle": f.clock.Now().UnixMilli(),
	} {
		if mem[k] != want {
			t.Errorf("memory %s = %#v, want %#v", k, mem[k], want)
		}
	}
	if _, ok := mem["LastError"]; ok {
		t.Fatalf("LastError after a clean cycle: %v", mem["LastError"])
	}

	// The gain strategy holds 0.5 BTC (value 49.5 ≥ 10) with ABP 90: it sells
	// at 90 × 1.01 = 90.9 through the trader, as the core, idempotently.
	if len(f.trader.submitted) != 1 {
		t.Fatalf("submitted %d orders, want 1", len(f.trader.submitted))
	}
	o := f.trader.submitted[0]
	if o.Exchange != "sim" || o.Pair != "USDT-BTC" || o.Side != domain.Sell || o.Kind != domain.KindLimit ||
		o.Price != decimal.MustDecimal("90.9") || o.Amount != decimal.MustDecimal("0.5") || o.Actor != domain.ActorCore || o.IdempotencyKey == "" {
		t.Fatalf("submitted %+v", o)
	}
	if strings.Join(f.trader.tickers, ",") != "sim/USDT-BTC" || strings.Join(f.trader.reconciled, ",") != "sim" {
		t.Fatalf("trader saw tickers %v, reconciles %v", f.trader.tickers, f.trader.reconciled)
	}

	// Core memory projection: only requested elements.
	sub, err := f.core.Memory("sim", "USDT-BTC", "Bid", "ABP", "NoSuchKey")
	if err != nil || len(sub) != 2 || sub["Bid"] == nil || sub["ABP"] == nil {
		t.Fatalf("elements: %v, %v", sub, err)
	}
	snap, err := f.core.Snapshot("sim", "USDT-BTC")
	if err != nil {
		t.Fatal(err)
	}
	// 0.5 × 99 = 49.5; (99 − 90) × 0.5 = 4.5
	if snap["BaseValue"] != decimal.Number(decimal.MustDecimal("49.5")) || snap["UnrealizedPnl"] != decimal.Number(decimal.MustDecimal("4.5")) || snap["Running"] != true {
		t.Fatalf("snapshot %v", snap)
	}
	all := f.core.Snapshots()
	if len(all) != 1 || all["sim/USDT-BTC"] == nil {
		t.Fatalf("snapshots %v", all)
	}
}

func TestCycleDelay(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.apply(t, domain.TypeSystemStarted)
	if n := f.core.Cycle(ctx); n != 1 {
		t.Fatalf("first cycle: %d pairs", n)
	}
	f.clock.Advance(4 * time.Second)
	if n := f.core.Cycle(ctx); n != 0 {
		t.Fatalf("cycled %d pairs before DELAY (5 s) passed", n)
	}
	f.clock.Advance(time.Second)
	if n := f.core.Cycle(ctx); n != 1 {
		t.Fatalf("cycled %d pairs after DELAY, want 1", n)
	}
	// A SystemStarted makes every pair due at once.
	f.apply(t, domain.TypeSystemStarted)
	if n := f.core.Cycle(ctx); n != 1 {
		t.Fatalf("cycled %d pairs right after a start, want 1", n)
	}
	// Without DELAY, the default applies.
	f.cfg.set(t, strings.Replace(testConfig, `"override":{"DELAY":5}`, `"override":{"PERIOD":15}`, 1))
	f.clock.Advance(time.Hour)
	f.core.Cycle(ctx)
	f.clock.Advance(DefaultDelay - time.Second)
	if n := f.core.Cycle(ctx); n != 0 {
		t.Fatalf("cycled before the default delay")
	}
	f.clock.Advance(time.Second)
	if n := f.core.Cycle(ctx); n != 1 {
		t.Fatalf("not cycled after the default delay")
	}
	if got := f.ex.periods[len(f.ex.periods)-1]; got != 15*time.Minute {
		t.Fatalf("PERIOD 15 asked candles of %v", got)
	}
	// The exchange entry's delay (seconds) comes before the default.
	doc := strings.Replace(testConfig, `"override":{"DELAY":5}`, `"override":{}`, 1)
	f.cfg.set(t, strings.Replace(doc, `"sim":{}`, `"sim":{"delay":7}`, 1))
	f.clock.Advance(time.Hour)
	f.core.Cycle(ctx)
	f.clock.Advance(6 * time.Second)
	if n := f.core.Cycle(ctx); n != 0 {
		t.Fatalf("cycled before the exchange delay")
	}
	f.clock.Advance(time.Second)
	if n := f.core.Cycle(ctx); n != 1 {
		t.Fatalf("not cycled after the exchange delay")
	}
}

func TestInactivePairs(t *testing.T) {
	f := newFixture(t)
	f.apply(t, domain.TypeSystemStarted)
	for _, c := range []struct{ ex, pair, msg string }{
		{"sim", "USDT-BTC", "no market data collected"}, // before the first cycle
		{"sim", "USDT-ETH", "is not enabled"},
		{"sim", "USDT-XRP", "is not in the configuration"},
		{"nope", "USDT-BTC", "is not in the configuration"},
	} {
		_, err := f.core.OrderBook(c.ex, c.pair)
		if domain.ErrorCode(err) != domain.ENOTFOUND || !strings.Contains(domain.ErrorMessage(err), c.msg) {
			t.Errorf("%s/%s: %v, want ENOTFOUND %q", c.ex, c.pair, err, c.msg)
		}
	}
	if len(f.core.Snapshots()) != 0 {
		t.Fatal("snapshots before any cycle")
	}
	f.core.Cycle(context.Background())
	// Disabling the pair makes it inactive at once and drops it next cycle.
	f.cfg.set(t, strings.Replace(testConfig, `"strategy":"gain","enabled":true`, `"strategy":"gain","enabled":false`, 1))
	if _, err := f.core.Memory("sim", "USDT-BTC"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("disabled pair answered: %v", err)
	}
	if f.core.System.IsCycling("sim") {
		t.Fatal("exchange cycling without an enabled pair")
	}
	f.clock.Advance(time.Hour)
	if n := f.core.Cycle(context.Background()); n != 0 {
		t.Fatalf("cycled %d disabled pairs", n)
	}
	if len(f.core.pairs) != 0 {
		t.Fatalf("disabled pair still held in memory")
	}
}

func TestCycleFailures(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.apply(t, domain.TypeSystemStarted)
	f.core.Cycle(ctx)
	f.ex.fail = domain.Errorf(domain.EUNAVAILABLE, "exchange timeout")
	f.clock.Advance(time.Minute)
	if n := f.core.Cycle(ctx); n != 0 {
		t.Fatalf("cycled %d pairs without a ticker", n)
	}
	mem, _ := f.core.Memory("sim", "USDT-BTC")
	if mem["LastError"] != "ticker: exchange timeout" || len(f.errs) != 1 {
		t.Fatalf("LastError %v, errors %v", mem["LastError"], f.errs)
	}
	f.ex.fail = nil
	f.clock.Advance(time.Minute)
	f.core.Cycle(ctx)
	mem, _ = f.core.Memory("sim", "USDT-BTC")
	if _, ok := mem["LastError"]; ok {
		t.Fatal("LastError kept after a clean cycle")
	}

	// An account that could not be reconciled is not traded on.
	f.trader.reconcileErr = domain.Errorf(domain.EUNAVAILABLE, "exchange timeout")
	f.trader.submitted = nil
	f.clock.Advance(time.Minute)
	f.core.Cycle(ctx)
	mem, _ = f.core.Memory("sim", "USDT-BTC")
	if s, _ := mem["LastError"].(string); s != "reconcile: exchange timeout" || len(f.trader.submitted) != 0 {
		t.Fatalf("after a failed reconcile: LastError %q, submitted %v; want the reconcile error and no order", s, f.trader.submitted)
	}
	f.trader.reconcileErr = nil

	// A strategy without a built-in algorithm or with a bad parameter
	// records the problem and places nothing.
	for _, c := range []struct{ from, to, want string }{
		{`"strategy":"gain","enabled":true`, `"strategy":"custom","enabled":true`, "has no built-in algorithm"},
		{`"override":{"DELAY":5}`, `"override":{"DELAY":5,"GAIN":"much"}`, "GAIN must be a number"},
	} {
		f.cfg.set(t, strings.Replace(testConfig, c.from, c.to, 1))
		f.trader.submitted = nil
		f.clock.Advance(time.Minute)
		f.core.Cycle(ctx)
		mem, _ = f.core.Memory("sim", "USDT-BTC")
		if s, _ := mem["LastError"].(string); !strings.Contains(s, c.want) || len(f.trader.submitted) != 0 {
			t.Fatalf("LastError %q (want %q), submitted %v", s, c.want, f.trader.submitted)
		}
	}
}

func TestMergeCandles(t *testing.T) {
	c := func(tm int64, close int64) domain.Candle {
		return domain.Candle{Time: tm, Close: decimal.DecimalFromInt(close)}
	}
	str := func(cs []domain.Candle) string {
		var b strings.Builder
		for _, x := range cs {
			b.WriteString(strconv.FormatInt(x.Time, 10))
			b.WriteString(":")
			n, _ := x.Close.Int64()
			b.WriteString(strconv.FormatInt(n, 10))
			b.WriteString(" ")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name          string
		series, fresh []domain.Candle
		limit         int
		want          string
	}{
		{"first fill", nil, []domain.Candle{c(1, 10), c(2, 20)}, 5, "1:10 2:20 "},
		{"open candle updates", []domain.Candle{c(1, 10), c(2, 20)}, []domain.Candle{c(2, 25), c(3, 30)}, 5, "1:10 2:25 3:30 "},
		{"bounded to newest", []domain.Candle{c(1, 10), c(2, 20)}, []domain.Candle{c(3, 30), c(4, 40)}, 3, "2:20 3:30 4:40 "},
		{"gap filled in order", []domain.Candle{c(1, 10), c(3, 30)}, []domain.Candle{c(2, 20)}, 5, "1:10 2:20 3:30 "},
	} {
		if got := str(mergeCandles(tc.series, tc.fresh, tc.limit)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestStartStopLoop(t *testing.T) {
	f := newFixture(t)
	f.core.Interval = time.Millisecond
	f.core.Start()
	f.core.Start() // idempotent
	if err := f.core.Close(); err != nil {
		t.Fatal(err)
	}
	f.core.Stop() // after Close: no-op
}

// versionedConfig is a staticConfig with a version, counting how often
// the configuration is rebuilt (Current).
type versionedConfig struct {
	staticConfig
	version  int64
	currents int
}

func (v *versionedConfig) Current() domain.Config {
	v.mu.Lock()
	v.currents++
	v.mu.Unlock()
	return v.staticConfig.Current()
}

func (v *versionedConfig) Version() int64 { v.mu.Lock(); defer v.mu.Unlock(); return v.version }

func (v *versionedConfig) change(t *testing.T, doc string) {
	v.set(t, doc)
	v.mu.Lock()
	v.version++
	v.mu.Unlock()
}

func (v *versionedConfig) rebuilds() int { v.mu.Lock(); defer v.mu.Unlock(); return v.currents }

// TestIsCyclingCachesByConfigVersion: the placement path's check does not
// rebuild the configuration per order, and follows every change.
func TestIsCyclingCachesByConfigVersion(t *testing.T) {
	f := newFixture(t)
	cfg := &versionedConfig{}
	cfg.set(t, testConfig)
	f.core.System.Config = cfg
	f.apply(t, domain.TypeSystemStarted)
	for i := 0; i < 1000; i++ {
		if !f.core.System.IsCycling("sim") || f.core.System.IsCycling("other") {
			t.Fatal("IsCycling: want sim, not other")
		}
	}
	if n := cfg.rebuilds(); n != 1 {
		t.Fatalf("2000 checks rebuilt the configuration %d times, want 1", n)
	}
	// Disable sim's pair: the next check sees it.
	cfg.change(t, strings.Replace(testConfig, `"strategy":"gain","enabled":true`, `"strategy":"gain","enabled":false`, 1))
	if f.core.System.IsCycling("sim") {
		t.Fatal("sim still cycling after its only enabled pair was disabled")
	}
	// Enable a pair on other.
	cfg.change(t, strings.Replace(testConfig, `"pairs":{`, `"pairs":{"other":{"USDT-BTC":{"strategy":"manual","enabled":true}},`, 1))
	f.core.System.Exchange = func(name string) (domain.Exchange, error) { return f.ex, nil }
	if !f.core.System.IsCycling("other") || !f.core.System.IsCycling("sim") {
		t.Fatal("the re-enabled configuration is not seen")
	}
	if n := cfg.rebuilds(); n != 3 {
		t.Fatalf("%d rebuilds after two changes, want 3", n)
	}
}

// TestCycleRecordsRates: a cycled pair's last price is handed to Rates as
// RateObserved at the first cycle, then at most once per RateInterval; a
// failed record is retried at the next cycle.
func TestCycleRecordsRates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var got []domain.RateObserved
	var fail error
	f.core.Rates = func(_ context.Context, r domain.RateObserved) error {
		if fail != nil {
			return fail
		}
		got = append(got, r)
		return nil
	}
	f.core.RateInterval = time.Minute
	f.apply(t, domain.TypeSystemStarted)
	f.core.Cycle(ctx) // t0: recorded
	want := domain.RateObserved{Exchange: "sim", Base: "BTC", Quote: "USDT", Rate: decimal.DecimalFromInt(100)}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("first cycle recorded %+v, want [%+v]", got, want)
	}
	for i := 0; i < 11; i++ { // t0+5 s … t0+55 s: cycled (DELAY 5), not recorded
		f.clock.Advance(5 * time.Second)
		f.core.Cycle(ctx)
	}
	if len(got) != 1 {
		t.Fatalf("recorded %d rates within RateInterval, want 1", len(got))
	}
	f.ex.mu.Lock()
	f.ex.price = decimal.DecimalFromInt(101)
	f.ex.mu.Unlock()
	fail = errors.New("store down")
	f.clock.Advance(5 * time.Second) // t0+60 s: due, but the record fails
	f.core.Cycle(ctx)
	if len(got) != 1 || len(f.errs) == 0 || !strings.Contains(f.errs[len(f.errs)-1], "rate: store down") {
		t.Fatalf("failed record: rates %+v, errors %q", got, f.errs)
	}
	fail = nil
	f.clock.Advance(5 * time.Second) // retried at the next cycle
	f.core.Cycle(ctx)
	if len(got) != 2 || got[1].Rate != decimal.DecimalFromInt(101) {
		t.Fatalf("after the retry: %+v", got)
	}
}

// TestCycleRecordsFeeAssetRates: the assets fees may be charged in
// (FeeAssets) get their rate against each cycled pair's quote recorded
// with the first cycle, before any order, then at most once per
// RateInterval; a market the exchange does not list records nothing.
func TestCycleRecordsFeeAssetRates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.ex.others = map[string]decimal.Decimal{"USDT-BNB": decimal.DecimalFromInt(500)}
	var got []domain.RateObserved
	f.core.Rates = func(_ context.Context, r domain.RateObserved) error {
		got = append(got, r)
		return nil
	}
	f.core.FeeAssets = func(exchange string) []string { return []string{"BNB", "KCS", "USDT"} }
	f.core.RateInterval = time.Minute
	f.apply(t, domain.TypeSystemStarted)
	f.core.Cycle(ctx)
	want := domain.RateObserved{Exchange: "sim", Base: "BNB", Quote: "USDT", Rate: decimal.DecimalFromInt(500)}
	if len(got) != 2 || got[0].Base != "BTC" || got[1] != want {
		t.Fatalf("first cycle recorded %+v, want the pair's rate then BNB's", got)
	}
	for i := 0; i < 11; i++ {
		f.clock.Advance(5 * time.Second)
		f.core.Cycle(ctx)
	}
	if len(got) != 2 {
		t.Fatalf("recorded %d rates within RateInterval, want 2", len(got))
	}
	f.clock.Advance(5 * time.Second)
	f.core.Cycle(ctx)
	if len(got) != 4 || got[3] != want {
		t.Fatalf("after RateInterval: %+v", got)
	}
}
