package http

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/domain/strategy"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// coreTestConfig is a configuration with one simulated exchange, the
// built-in strategies and no pairs.
const coreTestConfig = `{"bot":{"service_wallet":"` + testWallet + `","SIMULATOR":true},
"exchanges":{"binance":{"isEncrypted":false,"key":"","secret":""}},"pairs":{},"GUI":{},
"strategies":{"gain":{"STRATEGY":"gain"},"stepgrid":{"STRATEGY":"stepgrid"},"manual":{"STRATEGY":"manual"}}}`

// coreServer is a test server wired like serve: the config projection,
// the paper simulator on the test clock and the core following the log.
type coreServer struct {
	*testServer
	Core   *engine.Scheduler
	Sim    *paper.Simulator
	Trader *engine.Trader
	Orders *engine.Orders
}

func newCoreServer(t *testing.T) *coreServer {
	cs := &coreServer{}
	cs.testServer = newTestServer(t, func(ts *testServer) {
		cfg := projections.NewConfig()
		ts.Runner.Register(cfg)
		ts.appendEvent(domain.StreamConfig, domain.NewEvent(ts.Clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: json.RawMessage(coreTestConfig)}))
		cs.Sim = paper.NewSimulator(ts.Clock)
		eng := engine.New(ts.Store, cs.Sim.Exchange, cfg, projections.NewBalances(), ts.Clock)
		cs.Core, cs.Trader, cs.Orders = eng.Scheduler, eng.Trader, eng.Orders
		eng.Desk.Wait = ts.Runner.WaitFor
		for _, p := range eng.Projections() {
			ts.Runner.Register(p)
		}
		box, err := secrets.NewSecretBox(bytes.Repeat([]byte{9}, 32))
		if err != nil {
			t.Fatal(err)
		}
		ts.Server.Config, ts.Server.Secrets, ts.Server.Core = cfg, box, cs.Core
	})
	return cs
}

// post sends a JSON body with the token and returns status and body.
func (cs *coreServer) post(path string, body any) (int, []byte) {
	cs.t.Helper()
	return cs.do("POST", path, body, cs.Token)
}

func (cs *coreServer) get(path string) (int, []byte) {
	cs.t.Helper()
	return cs.do("GET", path, nil, cs.Token)
}

// wantError checks an error answer: status, and a message containing msg.
func wantCoreError(t *testing.T, what string, status int, body []byte, wantStatus int, msg string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("%s: status %d, want %d: %s", what, status, wantStatus, body)
	}
	e := decodeBody[errorResponse](t, body)
	if e.Status != "error" || e.Code != wantStatus || !strings.Contains(e.Message, msg) {
		t.Fatalf("%s: body %s, want an error containing %q", what, body, msg)
	}
}

type candlesBody struct {
	Data struct {
		Open, High, Low, Close, Volume []float64
		Time                           []int64
	}
}

type bookBody struct {
	Data struct {
		Ask, Bid [][2]float64
	}
}

func (cs *coreServer) systemEvents() []string {
	var out []string
	for _, e := range cs.events() {
		if e.Stream == domain.StreamSystem {
			out = append(out, e.Type+" by "+e.Actor)
		}
	}
	return out
}

// TestCoreLifecycleThroughHTTP is the "must show": after
// system/start with a pair added, candles, order book, core memory and
// chart data answer with simulated data within a few driven cycles; after
// system/stop the core stops cycling.
func TestCoreLifecycleThroughHTTP(t *testing.T) {
	cs := newCoreServer(t)
	ctx := context.Background()
	const key = "/api/v1/market/candles?key=binance%2FUSDT-BTC"

	status, body := cs.get(key)
	wantCoreError(t, "candles of an unknown pair", status, body, 404, "binance/USDT-BTC is not in the configuration")

	status, body = cs.post("/api/v1/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "settings": map[string]any{"strategy": "manual", "DELAY": 10}})
	if status != 200 {
		t.Fatalf("pair/add: %d %s", status, body)
	}
	status, body = cs.get(key)
	wantCoreError(t, "candles while stopped", status, body, 404, "the system is stopped")
	if cs.Core.System.IsCycling("binance") {
		t.Fatal("cycling before system/start")
	}
	running := func() bool {
		t.Helper()
		status, body := cs.get("/api/v1/system/status")
		if status != 200 {
			t.Fatalf("system/status: %d %s", status, body)
		}
		return decodeBody[systemStatusResponse](t, body).Running
	}
	if running() {
		t.Fatal("system/status says running before system/start")
	}

	status, body = cs.post("/api/v1/system/start", nil)
	if status != 200 {
		t.Fatalf("system/start: %d %s", status, body)
	}
	doc := decodeBody[map[string]any](t, body)
	bot, _ := doc["bot"].(map[string]any)
	if _, ok := doc["pairs"].(map[string]any)["binance"]; !ok || bot["service_wallet"] != "********" {
		t.Fatalf("system/start answered %s, want the public configuration with the pair", body)
	}
	if strings.Contains(string(body), testWallet) {
		t.Fatal("system/start shows the wallet")
	}
	if got := strings.Join(cs.systemEvents(), ","); got != "SystemStarted by "+LoginSubject {
		t.Fatalf("system events %q", got)
	}
	if !running() {
		t.Fatal("system/status says stopped after system/start")
	}
	if !cs.Core.System.IsCycling("binance") || cs.Core.System.IsCycling("kraken") {
		t.Fatal("IsCycling after start: want binance only")
	}
	status, body = cs.get(key)
	wantCoreError(t, "candles before a cycle", status, body, 404, "no market data collected")

	// A second start changes nothing.
	if status, body = cs.post("/api/v1/system/start", ""); status != 200 || len(cs.systemEvents()) != 1 {
		t.Fatalf("second start: %d %s, events %v", status, body, cs.systemEvents())
	}

	if n := cs.Core.Cycle(ctx); n != 1 {
		t.Fatalf("first cycle cycled %d pairs", n)
	}

	status, body = cs.get(key)
	if status != 200 {
		t.Fatalf("candles: %d %s", status, body)
	}
	c := decodeBody[candlesBody](t, body).Data
	n := len(c.Close)
	if n == 0 || len(c.Open) != n || len(c.High) != n || len(c.Low) != n || len(c.Volume) != n || len(c.Time) != n || n > engine.DefaultCandleLimit {
		t.Fatalf("candle arrays of lengths o%d h%d l%d c%d v%d t%d", len(c.Open), len(c.High), len(c.Low), n, len(c.Volume), len(c.Time))
	}
	for i := range c.Close {
		if c.Low[i] > c.Open[i] || c.Low[i] > c.Close[i] || c.High[i] < c.Open[i] || c.High[i] < c.Close[i] || c.Close[i] <= 0 {
			t.Fatalf("candle %d is not OHLC: %v %v %v %v", i, c.Open[i], c.High[i], c.Low[i], c.Close[i])
		}
		if i > 0 && c.Time[i]-c.Time[i-1] != int64(engine.DefaultPeriod/time.Millisecond) {
			t.Fatalf("candles %d and %d are not %v apart, oldest first", i-1, i, engine.DefaultPeriod)
		}
	}

	status, body = cs.get("/api/v1/market/orderbook?key=binance%2FUSDT-BTC")
	if status != 200 {
		t.Fatalf("orderbook: %d %s", status, body)
	}
	b := decodeBody[bookBody](t, body).Data
	if len(b.Ask) == 0 || len(b.Bid) == 0 || b.Ask[0][0] <= b.Bid[0][0] {
		t.Fatalf("book %s: want both sides, best ask above best bid", body)
	}
	for i := 1; i < len(b.Ask); i++ {
		if b.Ask[i][0] <= b.Ask[i-1][0] {
			t.Fatalf("asks not ascending at %d", i)
		}
	}
	for i := 1; i < len(b.Bid); i++ {
		if b.Bid[i][0] >= b.Bid[i-1][0] {
			t.Fatalf("bids not descending at %d", i)
		}
	}
	for _, l := range append(b.Ask, b.Bid...) {
		if l[1] <= 0 {
			t.Fatalf("level %v has no quantity", l)
		}
	}

	status, body = cs.post("/api/v1/coremem", nil)
	if status != 200 {
		t.Fatalf("coremem: %d %s", status, body)
	}
	all := decodeBody[map[string]map[string]any](t, body)
	snap, ok := all["binance/USDT-BTC"]
	if len(all) != 1 || !ok {
		t.Fatalf("coremem %s: want the one active pair", body)
	}
	bid, _ := snap["Bid"].(float64)
	ask, _ := snap["Ask"].(float64)
	if bid <= 0 || ask <= bid || snap["ABP"] != 0.0 || snap["QuoteBalance"] != 10000.0 || snap["BaseBalance"] != 0.5 || snap["OpenOrders"] != 0.0 || snap["Running"] != true {
		t.Fatalf("coremem snapshot %v", snap)
	}
	if math.Abs(bid-b.Bid[0][0]) > bid*0.01 {
		t.Fatalf("coremem Bid %v far from the book's best bid %v", bid, b.Bid[0][0])
	}

	status, body = cs.post("/api/v1/coremem/single", map[string]string{"exchange": "binance", "pair": "USDT-BTC"})
	if status != 200 {
		t.Fatalf("coremem/single: %d %s", status, body)
	}
	single := decodeBody[map[string]any](t, body)
	if single["Bid"] != snap["Bid"] || single["Pair"] != "USDT-BTC" || single["Strategy"] != "manual" || single["BaseValue"] == nil {
		t.Fatalf("coremem/single %v", single)
	}

	// A price move shows up after the next cycle (DELAY 10 s).
	if err := cs.Sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("61234.5")); err != nil {
		t.Fatal(err)
	}
	cs.Clock.Advance(10 * time.Second)
	if n := cs.Core.Cycle(ctx); n != 1 {
		t.Fatalf("second cycle cycled %d pairs", n)
	}
	status, body = cs.post("/api/v1/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "elements": []string{"LastPrice", "Cycles", "Nope"}})
	if status != 200 {
		t.Fatalf("coremem/raw: %d %s", status, body)
	}
	raw := decodeBody[map[string]any](t, body)
	if len(raw) != 2 || raw["LastPrice"] != 61234.5 || raw["Cycles"] != 2.0 {
		t.Fatalf("coremem/raw with elements: %s", body)
	}
	status, body = cs.post("/api/v1/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-BTC"})
	raw = decodeBody[map[string]any](t, body)
	if status != 200 || raw["Bid"] == nil || raw["ABP"] == nil || raw["BaseBalance"] == nil || raw["OpenOrders"] == nil || raw["BaseValue"] != nil {
		t.Fatalf("coremem/raw: %d %s (want every raw element, no snapshot extras)", status, body)
	}

	status, body = cs.post("/api/v1/chart/data", map[string]string{"exchange": "binance", "pair": "USDT-BTC"})
	if status != 200 {
		t.Fatalf("chart/data: %d %s", status, body)
	}
	var chart struct {
		Data struct {
			Close      []float64
			Time       []int64
			Indicators struct {
				EMA struct {
					Period int
					Values []*float64
				}
				Bollinger struct {
					Period               int
					K                    float64
					Upper, Middle, Lower []*float64
				}
				RSI struct {
					Period int
					Values []*float64
				}
			}
		}
	}
	if err := json.Unmarshal(body, &chart); err != nil {
		t.Fatal(err)
	}
	d := chart.Data
	ind := d.Indicators
	m := len(d.Close)
	if m == 0 || len(d.Time) != m || len(ind.EMA.Values) != m || len(ind.Bollinger.Upper) != m || len(ind.Bollinger.Middle) != m || len(ind.Bollinger.Lower) != m || len(ind.RSI.Values) != m {
		t.Fatalf("chart/data arrays differ in length: %s", body)
	}
	if ind.EMA.Period != strategy.DefaultEMAPeriod || ind.Bollinger.Period != 20 || ind.Bollinger.K != 2 || ind.RSI.Period != 14 {
		t.Fatalf("indicator settings %+v", ind)
	}
	if ind.EMA.Values[0] != nil || ind.EMA.Values[m-1] == nil || ind.Bollinger.Middle[18] != nil || ind.Bollinger.Middle[19] == nil {
		t.Fatalf("warm-up positions must be null and the rest numbers: %s", body)
	}
	// The series are the domain indicators over the closes.
	closes := d.Close
	want := strategy.EMA(closes, strategy.DefaultEMAPeriod)[m-1]
	if math.Abs(*ind.EMA.Values[m-1]-want) > 1e-9*want {
		t.Fatalf("EMA %v, want %v", *ind.EMA.Values[m-1], want)
	}
	up, mid, lo := *ind.Bollinger.Upper[m-1], *ind.Bollinger.Middle[m-1], *ind.Bollinger.Lower[m-1]
	if !(lo <= mid && mid <= up) || math.Abs((up-mid)-(mid-lo)) > 1e-6*mid {
		t.Fatalf("bands %v %v %v not symmetric around the middle", lo, mid, up)
	}

	// While cycling, the trader takes orders on the exchange.
	buy := domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit,
		Amount: decimal.MustDecimal("0.001"), Price: decimal.MustDecimal("50000"), Actor: "test"}
	if _, err := cs.Trader.Submit(ctx, buy); err != nil {
		t.Fatalf("order refused while cycling: %v", err)
	}

	// Stop: the core stops cycling and the pair is inactive.
	status, body = cs.post("/api/v1/system/stop", nil)
	if status != 200 || decodeBody[map[string]any](t, body)["bot"] == nil {
		t.Fatalf("system/stop: %d %s", status, body)
	}
	if got := strings.Join(cs.systemEvents(), ","); got != "SystemStarted by "+LoginSubject+",SystemStopped by "+LoginSubject {
		t.Fatalf("system events %q", got)
	}
	if cs.Core.System.IsCycling("binance") || cs.Core.Running() {
		t.Fatal("still cycling after system/stop")
	}
	cs.Clock.Advance(30 * time.Minute)
	if n := cs.Core.Cycle(ctx); n != 0 {
		t.Fatalf("stopped core cycled %d pairs", n)
	}
	status, body = cs.get(key)
	wantCoreError(t, "candles after stop", status, body, 404, "the system is stopped")
	status, body = cs.post("/api/v1/coremem", nil)
	if status != 200 || string(bytes.TrimSpace(body)) != "{}" {
		t.Fatalf("coremem after stop: %d %s, want {}", status, body)
	}
	if status, _ = cs.post("/api/v1/system/stop", nil); status != 200 || len(cs.systemEvents()) != 2 {
		t.Fatalf("second stop appended an event: %v", cs.systemEvents())
	}
	// ... and trading is refused.
	buy.IdempotencyKey = "after-stop"
	if _, err := cs.Trader.Submit(ctx, buy); domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), "cycling") {
		t.Fatalf("order after stop: %v, want EINVALID saying no pair is cycling", err)
	}

	// A restarted process replays the log and resumes its state.
	status, _ = cs.post("/api/v1/system/start", nil)
	if status != 200 {
		t.Fatal("restart start failed")
	}
	runner := projections.NewRunner(cs.Store)
	fresh := &engine.System{}
	runner.Register(fresh)
	if err := runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	if !fresh.Running() {
		t.Fatal("replayed core is not running although the log's last system event is SystemStarted")
	}
}

func TestMarketRefusals(t *testing.T) {
	cs := newCoreServer(t)
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		msg          string
	}{
		{"GET", "/api/v1/market/candles", nil, 400, "query parameter key is required"},
		{"GET", "/api/v1/market/candles?key=binance", nil, 400, "must look like <exchange>/<pair>"},
		{"GET", "/api/v1/market/candles?key=binance%2FBTC", nil, 400, "must look like QUOTE-BASE"},
		{"GET", "/api/v1/market/candles?key=binance%2FUSDT-XRP", nil, 404, "binance/USDT-XRP is not in the configuration"},
		{"GET", "/api/v1/market/orderbook", nil, 400, "query parameter key is required"},
		{"GET", "/api/v1/market/orderbook?key=%2FUSDT-BTC", nil, 400, "must look like <exchange>/<pair>"},
		{"GET", "/api/v1/market/orderbook?key=kraken%232%2FUSDT-BTC", nil, 404, "kraken#2/USDT-BTC is not in the configuration"},
		{"POST", "/api/v1/chart/data", nil, 400, "request body is empty"},
		{"POST", "/api/v1/chart/data", `{"exchange":`, 400, "malformed JSON"},
		{"POST", "/api/v1/chart/data", map[string]any{"exchange": 1, "pair": "USDT-BTC"}, 400, `field "exchange" must be a string`},
		{"POST", "/api/v1/chart/data", map[string]any{"pair": "USDT-BTC"}, 400, "field exchange is required"},
		{"POST", "/api/v1/chart/data", map[string]any{"exchange": "binance"}, 400, "field pair is required"},
		{"POST", "/api/v1/chart/data", map[string]any{"exchange": "binance", "pair": "USDTBTC"}, 400, "field pair: pair \"USDTBTC\" must look like QUOTE-BASE"},
		{"POST", "/api/v1/chart/data", map[string]any{"exchange": "binance", "pair": "USDT-ETH"}, 404, "not in the configuration"},
		{"POST", "/api/v1/coremem/single", nil, 400, "request body is empty"},
		{"POST", "/api/v1/coremem/single", map[string]any{"exchange": "binance"}, 400, "field pair is required"},
		{"POST", "/api/v1/coremem/single", map[string]any{"exchange": "binance", "pair": "USDT-ETH"}, 404, "not in the configuration"},
		{"POST", "/api/v1/coremem/raw", map[string]any{"pair": "USDT-BTC"}, 400, "field exchange is required"},
		{"POST", "/api/v1/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "elements": "Bid"}, 400, `field "elements" must be an array`},
		{"POST", "/api/v1/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "elements": []any{1}}, 400, `must be a string`},
		{"POST", "/api/v1/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "elements": []string{"Bid", ""}}, 400, "field elements[1] must be a non-empty string"},
		{"POST", "/api/v1/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-ETH"}, 404, "not in the configuration"},
	} {
		status, body := cs.do(c.method, c.path, c.body, cs.Token)
		wantCoreError(t, c.method+" "+c.path, status, body, c.status, c.msg)
	}

	// A disabled pair is inactive.
	if status, body := cs.post("/api/v1/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-ETH", "settings": map[string]any{"strategy": "manual", "enabled": false}}); status != 200 {
		t.Fatalf("pair/add: %d %s", status, body)
	}
	cs.post("/api/v1/system/start", nil)
	cs.Core.Cycle(context.Background())
	status, body := cs.post("/api/v1/coremem/single", map[string]any{"exchange": "binance", "pair": "USDT-ETH"})
	wantCoreError(t, "disabled pair", status, body, 404, "binance/USDT-ETH is not enabled")

	// Every route needs the token, and changes nothing without it.
	for _, p := range []string{"/api/v1/system/start", "/api/v1/system/stop", "/api/v1/coremem", "/api/v1/coremem/single", "/api/v1/coremem/raw", "/api/v1/chart/data"} {
		status, body := cs.do("POST", p, nil, "")
		wantCoreError(t, p+" without token", status, body, 401, "")
	}
	for _, p := range []string{"/api/v1/market/candles?key=binance%2FUSDT-BTC", "/api/v1/market/orderbook?key=binance%2FUSDT-BTC"} {
		status, body := cs.do("GET", p, nil, "bad.token")
		wantCoreError(t, p+" with a bad token", status, body, 401, "")
	}
	if got := len(cs.systemEvents()); got != 1 {
		t.Fatalf("%d system events after refused calls, want 1", got)
	}
}

func TestMarketWithoutCore(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/v1/market/candles?key=binance%2FUSDT-BTC", nil},
		{"GET", "/api/v1/market/orderbook?key=binance%2FUSDT-BTC", nil},
		{"POST", "/api/v1/chart/data", map[string]string{"exchange": "binance", "pair": "USDT-BTC"}},
		{"POST", "/api/v1/coremem", nil},
		{"POST", "/api/v1/coremem/single", map[string]string{"exchange": "binance", "pair": "USDT-BTC"}},
		{"POST", "/api/v1/coremem/raw", map[string]string{"exchange": "binance", "pair": "USDT-BTC"}},
		{"POST", "/api/v1/system/start", nil},
		{"POST", "/api/v1/system/stop", nil},
	} {
		status, body := ts.do(c.method, c.path, c.body, ts.Token)
		wantCoreError(t, c.path, status, body, 503, "not available")
	}
}

func TestSeriesJSON(t *testing.T) {
	b, err := json.Marshal(series{math.NaN(), 1.5, math.Inf(1), 0.00000001, 60000})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "[null,1.5,null,0.00000001,60000]"; got != want {
		t.Fatalf("series JSON %s, want %s", got, want)
	}
}

// TestCoreStrategyTradesOnPaper runs the stepgrid strategy through the
// core, the Trader and the paper exchange: the first cycle places a buy a
// step below and a sell a step above the price; when the price drops
// through the buy, the next cycle reconciles the fill into the log.
func TestCoreStrategyTradesOnPaper(t *testing.T) {
	cs := newCoreServer(t)
	ctx := context.Background()
	if status, body := cs.post("/api/v1/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC",
		"settings": map[string]any{"strategy": "stepgrid", "STEP": 1, "TRADING_LIMIT": 120}}); status != 200 {
		t.Fatalf("pair/add: %d %s", status, body)
	}
	if err := cs.Sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("60000")); err != nil {
		t.Fatal(err)
	}
	if status, body := cs.post("/api/v1/system/start", nil); status != 200 {
		t.Fatalf("system/start: %d %s", status, body)
	}
	cs.Core.Cycle(ctx)

	type placed struct {
		side   domain.Side
		amount string
		price  string
	}
	var orders []placed
	for _, e := range cs.events() {
		if e.Type != domain.TypeOrderRequested {
			continue
		}
		var r domain.OrderRequested
		if err := e.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if e.Actor != domain.ActorCore {
			t.Fatalf("strategy order by %q, want core", e.Actor)
		}
		orders = append(orders, placed{r.Side, r.Amount.String(), r.Price.String()})
	}
	// The paper ticker's last price is 60000: buy at 59400 for 120/59400,
	// sell at 60600 for 120/60600 (both rounded down to 8 decimals).
	want := []placed{{domain.Buy, "0.00202020", "59400.00000000"}, {domain.Sell, "0.00198019", "60600.00000000"}}
	if len(orders) != 2 || orders[0] != want[0] || orders[1] != want[1] {
		t.Fatalf("strategy orders %+v, want %+v", orders, want)
	}
	raw, err := cs.Core.Memory("binance", "USDT-BTC", "OpenOrders", "StrategyNote", "buyPrice")
	if err != nil {
		t.Fatal(err)
	}
	if raw["buyPrice"] != decimal.Number(decimal.MustDecimal("59400")) || !strings.Contains(raw["StrategyNote"].(string), "buy a step below") {
		t.Fatalf("core memory %v", raw)
	}

	// The price falls through the buy; the next cycle reconciles the fill.
	if err := cs.Sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("59000")); err != nil {
		t.Fatal(err)
	}
	cs.Clock.Advance(engine.DefaultDelay)
	cs.Core.Cycle(ctx)
	fills := 0
	for _, e := range cs.events() {
		if e.Type == domain.TypeOrderFilled {
			fills++
		}
	}
	if fills == 0 {
		t.Fatal("no OrderFilled after the price crossed the strategy's buy")
	}
	// The open buy filled: with the sell still resting, a new buy is placed
	// a step below the new price (59000 × 0.99 = 58410) and no second sell.
	var last domain.OrderRequested
	n := 0
	for _, e := range cs.events() {
		if e.Type == domain.TypeOrderRequested {
			n++
			_ = e.Decode(&last)
		}
	}
	if n != 3 || last.Side != domain.Buy || last.Price != decimal.MustDecimal("58410") {
		t.Fatalf("%d orders, last %+v; want a third order, a buy at 58410", n, last)
	}
}
