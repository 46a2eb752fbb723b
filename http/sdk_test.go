package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// sdkServer is a test server wired like serve (configuration, files, the
// ledger, the core and the order manager on the paper exchange), for
// driving the API the way the public Gunbot SDK does.
type sdkServer struct {
	*coreServer
	Ledger *projections.Ledger
}

func newSDKServer(t *testing.T) *sdkServer {
	ss := &sdkServer{coreServer: &coreServer{}}
	cs := ss.coreServer
	cs.testServer = newTestServer(t, func(ts *testServer) {
		cfg := projections.NewConfig()
		ts.Runner.Register(cfg)
		ts.appendEvent(domain.StreamConfig, domain.NewEvent(ts.Clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: json.RawMessage(coreTestConfig)}))
		ss.Ledger = projections.NewLedger(domain.LOFO)
		ts.Runner.Register(ss.Ledger)
		files := projections.NewFiles(ss.Ledger)
		ts.Runner.Register(files)
		cs.Sim = paper.NewSimulator(ts.Clock)
		eng := engine.New(ts.Store, cs.Sim.Exchange, cfg, projections.NewBalances(), ts.Clock)
		cs.Core, cs.Trader, cs.Orders = eng.Scheduler, eng.Trader, eng.Orders
		cs.Core.ABP = ss.Ledger.ABP
		eng.Desk.Wait = ts.Runner.WaitFor
		for _, p := range eng.Projections() {
			ts.Runner.Register(p)
		}
		box, err := secrets.NewSecretBox(bytes.Repeat([]byte{9}, 32))
		if err != nil {
			t.Fatal(err)
		}
		ts.Server.Config, ts.Server.Secrets, ts.Server.Core = cfg, box, cs.Core
		ts.Server.Ledger, ts.Server.Files, ts.Server.Trader = ss.Ledger, files, cs.Trader
	})
	return ss
}

// call sends a request and returns status, Content-Type and body; it fails
// the test unless the status is want.
func (ss *sdkServer) call(want int, method, path string, body any) (string, []byte) {
	ss.t.Helper()
	resp := ss.request(method, "/api/v1"+path, body, map[string]string{"Authorization": bearer(ss.Token)})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		ss.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	return resp.Header.Get("Content-Type"), b
}

// json is call for a 200 JSON answer, decoded generically (what a
// JavaScript client sees).
func (ss *sdkServer) json(method, path string, body any) any {
	ss.t.Helper()
	ct, b := ss.call(200, method, path, body)
	if !strings.HasPrefix(ct, "application/json") {
		ss.t.Fatalf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		ss.t.Fatalf("%s %s: not JSON: %v: %s", method, path, err, b)
	}
	return v
}

// step sets the paper price and runs one core cycle (ticker, order
// emulation, reconciliation), as the running bot would.
func (ss *sdkServer) step(price string) {
	ss.t.Helper()
	if err := ss.Sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal(price)); err != nil {
		ss.t.Fatal(err)
	}
	ss.Clock.Advance(10 * time.Second)
	if n := ss.Core.Cycle(context.Background()); n != 1 {
		ss.t.Fatalf("cycle at %s: %d pairs, want 1", price, n)
	}
}

// Type checks on generic JSON (the SDK's response models).
func asObject(t *testing.T, what string, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s = %T %v, want an object", what, v, v)
	}
	return m
}

func asArray(t *testing.T, what string, v any) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s = %T %v, want an array", what, v, v)
	}
	return a
}

func asString(t *testing.T, what string, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s = %T %v, want a string", what, v, v)
	}
	return s
}

func asNumber(t *testing.T, what string, v any) float64 {
	t.Helper()
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%s = %T %v, want a number", what, v, v)
	}
	return f
}

func asInteger(t *testing.T, what string, v any) int64 {
	t.Helper()
	f := asNumber(t, what, v)
	if f != math.Trunc(f) {
		t.Fatalf("%s = %v, want an integer", what, f)
	}
	return int64(f)
}

// openOrders returns the ids and armed flags of orders/open for the pair,
// asked with the key URL-encoded twice (as a client encoding an encoded
// key sends it).
func (ss *sdkServer) openOrders() map[int64]any {
	ss.t.Helper()
	t := ss.t
	out := map[int64]any{}
	for i, o := range asArray(t, "orders/open data", asObject(t, "orders/open", ss.json("GET", "/orders/open?key=binance%252FUSDT-BTC", nil))["data"]) {
		m := asObject(t, fmt.Sprintf("orders/open[%d]", i), o)
		asString(t, "orders/open type", m["type"])
		asString(t, "orders/open side", m["side"])
		asNumber(t, "orders/open rate", m["rate"])
		asNumber(t, "orders/open amount", m["amount"])
		asInteger(t, "orders/open time", m["time"])
		out[asInteger(t, "orders/open id", m["id"])] = m["armed"]
	}
	return out
}

// TestSDKRequestForms drives the API with the request forms the public
// Gunbot SDK documents (issue 14 §1 and §4) and checks its response types:
// arrays of arrays, strings, integers, text/plain.
func TestSDKRequestForms(t *testing.T) {
	ss := newSDKServer(t)
	ctx := context.Background()

	// Configuration: a pair, a strategy without settings, the whole
	// document sent back under config (the SDK's ConfigUpdateRequest).
	ss.json("POST", "/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "settings": map[string]any{"strategy": "manual", "DELAY": 10}})
	ss.json("POST", "/config/strategy/add", map[string]any{"name": "myStrategy"})
	full := asObject(t, "config/full", ss.json("GET", "/config/full", nil))
	doc := asObject(t, "config", full["config"])
	asObject(t, "config.strategies", doc["strategies"])["myStrategy"].(map[string]any)["SDK_NOTE"] = "sent as config"
	updated := asObject(t, "config/update", ss.json("POST", "/config/update", map[string]any{"config": doc}))
	if got := asObject(t, "updated config", updated["config"])["strategies"].(map[string]any)["myStrategy"].(map[string]any)["SDK_NOTE"]; got != "sent as config" {
		t.Fatalf("config/update with config: strategy myStrategy = %v", got)
	}

	// Files: acvar/get without a body; strategy and custom editor as
	// text/plain, byte for byte.
	asObject(t, "files/acvar/get", ss.json("POST", "/files/acvar/get", nil))
	src := "// strategy\nconst x = \"quoted\";\nmodule.exports = function (gb) { gb.log('é') }\n"
	ss.json("POST", "/files/strategy/write", map[string]any{"filename": "sdk.js", "document": src})
	ct, body := ss.call(200, "POST", "/files/strategy/get", map[string]any{"filename": "sdk.js"})
	if !strings.HasPrefix(ct, "text/plain") || string(body) != src {
		t.Fatalf("files/strategy/get: %q %q, want text/plain %q", ct, body, src)
	}
	ss.json("POST", "/files/custom-editor/write", map[string]any{"document": map[string]any{"blocks": []int{1, 2}}})
	ct, body = ss.call(200, "POST", "/files/custom-editor/get", nil)
	if !strings.HasPrefix(ct, "text/plain") || string(body) != `{"blocks":[1,2]}` {
		t.Fatalf("files/custom-editor/get: %q %q, want text/plain {\"blocks\":[1,2]}", ct, body)
	}

	// Start the bot at 50000.
	if err := ss.Sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("50000")); err != nil {
		t.Fatal(err)
	}
	ss.json("POST", "/system/start", nil)
	ss.Core.Cycle(ctx)

	// The SDK's trailing stops (§4): both accepted.
	order := func(path string, fields map[string]any) int64 {
		t.Helper()
		f := map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01}
		for k, v := range fields {
			f[k] = v
		}
		m := asObject(t, path, ss.json("POST", path, map[string]any{"data": f}))
		if m["status"] != "success" || m["message"] != "Order sent" {
			t.Fatalf("%s: %v", path, m)
		}
		return asInteger(t, path+" id", m["id"])
	}
	buy := order("/trade/buy/trailingstop", map[string]any{"price": 50000, "stopPrice": 49900})
	sell := order("/trade/sell/trailingstop", map[string]any{"price": 52500, "stopPrice": 52550})
	open := ss.openOrders()
	if len(open) != 2 || open[buy] != false || open[sell] != false {
		t.Fatalf("orders/open = %v, want both trailing stops, not armed", open)
	}
	// Core memory carries them too.
	mem := asObject(t, "coremem/raw", ss.json("POST", "/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "elements": []string{"openOrders"}}))
	if got := asArray(t, "coremem openOrders", mem["openOrders"]); len(got) != 2 || asInteger(t, "openOrders[0].id", asObject(t, "openOrders[0]", got[0])["id"]) != buy {
		t.Fatalf("coremem openOrders = %v, want orders %d and %d", got, buy, sell)
	}

	// The buy: drop to 49900 arms it (stop 50000), 49700 lowers the stop
	// to 49800, the recovery to 49800 buys.
	ss.step("49900")
	if open := ss.openOrders(); open[buy] != true || open[sell] != false {
		t.Fatalf("after the drop: %v, want the buy armed", open)
	}
	ss.step("49700")
	ss.step("49800")
	if _, ok := ss.openOrders()[buy]; ok {
		t.Fatal("the buy trailing stop is still open after the recovery to its stop")
	}
	// The sell: the rise to 52550 arms it (stop 52500), 52700 lifts the
	// stop to 52650, the decline to 52640 sells.
	ss.step("52550")
	if open := ss.openOrders(); open[sell] != true {
		t.Fatalf("after the rise: %v, want the sell armed", open)
	}
	ss.step("52700")
	ss.step("52640")
	if open := ss.openOrders(); len(open) != 0 {
		t.Fatalf("orders/open after both fired: %v, want none", open)
	}

	// sell/market with price 0: the market price.
	mkt := order("/trade/sell/market", map[string]any{"price": 0})
	if o, ok := ss.Orders.Order(mkt); !ok || o.State != domain.OrderStateFilled {
		t.Fatalf("sell/market price 0: %+v, want filled at the market", o)
	}

	// An OCO cancelled by the id its acknowledgement returned: both legs.
	oco := order("/trade/sell/oco", map[string]any{"price": 60000, "stopPrice": 50000, "limit": 49900})
	if open := ss.openOrders(); len(open) != 2 {
		t.Fatalf("orders/open after the OCO: %v, want its two legs", open)
	}
	m := asObject(t, "trade/cancel", ss.json("POST", "/trade/cancel", map[string]any{"data": map[string]any{
		"exch": "binance", "pair": "USDT-BTC", "id": fmt.Sprint(oco), "price": 60000, "type": "limit"}}))
	if m["status"] != "success" {
		t.Fatalf("trade/cancel of the OCO: %v", m)
	}
	if open := ss.openOrders(); len(open) != 0 {
		t.Fatalf("orders/open after cancelling the OCO: %v, want none", open)
	}

	now := ss.Clock.Now().UnixMilli()
	// pnl/daily/paginated: data is an array of arrays in the documented
	// order [date, pnl, cumulativePnl, numberOfTrades, totalVolume,
	// cumulativePnlPercent]; the key is URL-encoded twice.
	pg := asObject(t, "pnl/daily/paginated", ss.json("GET", fmt.Sprintf("/pnl/daily/paginated?key=binance%%252FUSDT-BTC&pageNum=1&pageSize=10&endTime=%d", now), nil))
	if asInteger(t, "totalSize", pg["totalSize"]) != 1 {
		t.Fatalf("pnl/daily/paginated totalSize = %v, want 1 day", pg["totalSize"])
	}
	days := asArray(t, "pnl/daily/paginated data", pg["data"])
	day := asArray(t, "data[0]", days[0])
	if len(day) != 6 || asString(t, "data[0][0] date", day[0]) != ss.Clock.Now().UTC().Format("2006-01-02") {
		t.Fatalf("data[0] = %v, want 6 fields starting with today's date", day)
	}
	pnl := asNumber(t, "data[0][1] pnl", day[1])
	if pnl <= 0 || asNumber(t, "data[0][2] cumulativePnl", day[2]) != pnl {
		t.Fatalf("data[0] = %v, want a realized profit equal to the cumulative pnl", day)
	}
	if asInteger(t, "data[0][3] numberOfTrades", day[3]) != 3 {
		t.Fatalf("data[0] = %v, want 3 trades (the trailing buy, the trailing sell, the market sell)", day)
	}
	asNumber(t, "data[0][4] totalVolume", day[4])
	asNumber(t, "data[0][5] cumulativePnlPercent", day[5])

	// pnl/sum with the pair key encoded twice is that pair's sum.
	sum := asObject(t, "pnl/sum", ss.json("GET", fmt.Sprintf("/pnl/sum?exchange=binance%%252FUSDT-BTC&startTimestamp=0&endTimestamp=%d", now), nil))
	if got := asArray(t, "pnl/sum data", sum["data"]); len(got) != 1 || asObject(t, "pnl/sum data[0]", got[0])["key"] != "binance/USDT-BTC" {
		t.Fatalf("pnl/sum with a key encoded twice = %v, want the pair's sum", sum)
	}

	// orders/day: days are ISO dates, orders and closeOrders integers.
	od := asObject(t, "orders/day", ss.json("GET", "/orders/day?timezone=UTC&keys[]=binance%2FUSDT-BTC&days=2", nil))
	dd, oc, cc := asArray(t, "days", od["days"]), asArray(t, "orders", od["orders"]), asArray(t, "closeOrders", od["closeOrders"])
	if len(dd) != 2 || len(oc) != 2 || len(cc) != 2 || asString(t, "days[1]", dd[1]) != ss.Clock.Now().UTC().Format("2006-01-02") {
		t.Fatalf("orders/day = %v", od)
	}
	if asInteger(t, "orders[0]", oc[0]) != 0 || asInteger(t, "orders[1]", oc[1]) != 3 || asInteger(t, "closeOrders[1]", cc[1]) != 1 {
		// The trailing sell closed the trailing buy's lot; the market
		// sell found no lot left (unmatched), so it closes nothing.
		t.Fatalf("orders/day = %v, want yesterday none, today 3 orders of which 1 closing", od)
	}

	// chart/marks: interval as 15m or 15, times in ms or seconds.
	inMs := asArray(t, "chart/marks", ss.json("GET", fmt.Sprintf("/chart/marks?exchange=binance&pair=USDT-BTC&interval=15m&startTime=0&endTime=%d", now), nil))
	inS := asArray(t, "chart/marks", ss.json("GET", fmt.Sprintf("/chart/marks?exchange=binance&pair=USDT-BTC&interval=15&startTime=0&endTime=%d", now/1000), nil))
	if len(inMs) != 3 || len(inS) != 3 {
		t.Fatalf("chart/marks: %d marks with ms, %d with seconds, want 3 each", len(inMs), len(inS))
	}
	asInteger(t, "mark time", asObject(t, "mark", inMs[0])["time"])
	for _, bad := range []struct{ query, field string }{
		{"interval=15x&startTime=0&endTime=1", "interval"},
		{"interval=0&startTime=0&endTime=1", "interval"},
		{"startTime=0&endTime=1", "interval"},
		{"interval=1h&startTime=5&endTime=4", "endTime"},
	} {
		_, b := ss.call(400, "GET", "/chart/marks?exchange=binance&pair=USDT-BTC&"+bad.query, nil)
		if !strings.Contains(string(b), bad.field) {
			t.Fatalf("chart/marks?%s: %s, want a message naming %s", bad.query, b, bad.field)
		}
	}
}

func TestChartIntervalForms(t *testing.T) {
	for in, want := range map[string]int64{
		"1": 1, "15": 15, "240": 240, "1m": 1, "15m": 15, "1h": 60, "4h": 240, "1d": 1440, "1D": 1440, "D": 1440, "1w": 10080, "W": 10080,
	} {
		if got, err := intervalMinutes(in); err != nil || got != want {
			t.Errorf("interval %q = %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "15x", "h", "1.5h", "999999999", "m"} {
		if _, err := intervalMinutes(in); domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), "interval") {
			t.Errorf("interval %q: %v, want EINVALID naming interval", in, err)
		}
	}
}

func TestPairKeyEncodedTwice(t *testing.T) {
	for raw, want := range map[string]string{
		"binance/USDT-BTC":       "binance/USDT-BTC",
		"binance%2FUSDT-BTC":     "binance/USDT-BTC",
		"binance%2fUSDT-BTC":     "binance/USDT-BTC",
		"binance%231/USDT-BTC":   "binance#1/USDT-BTC",
		"binance%231%2FUSDT-BTC": "binance#1/USDT-BTC",
	} {
		got, err := queryKey(map[string][]string{"key": {raw}}, "key")
		if err != nil || got != want {
			t.Errorf("key %q (after the query's own decoding) = %q %v, want %q", raw, got, err, want)
		}
	}
	if _, err := queryKey(map[string][]string{"key": {"binance%ZZUSDT-BTC"}}, "key"); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("a key with a broken escape: %v, want EINVALID", err)
	}
}

func TestMarketPriceZeroMeansMarket(t *testing.T) {
	te := newTradeEnv(t)
	for _, path := range []string{"/trade/buy/market", "/trade/sell/market"} {
		for _, price := range []any{0, 0.0, nil} {
			status, body := te.post(path, map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": price}})
			id := sent(t, path, status, body)
			if p, _ := te.requested(id); p.Price != decimal.MustDecimal("60000") {
				t.Fatalf("%s price %v: reference %v, want the market price 60000", path, price, p.Price)
			}
		}
	}
	status, body := te.post("/trade/close/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 0}})
	sent(t, "/trade/close/market", status, body)
	if status, body := te.post("/trade/sell/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": -1}}); status != 400 || !strings.Contains(body["message"].(string), "price") {
		t.Fatalf("negative market price: %d %v, want 400 naming price", status, body)
	}
	if status, body := te.post("/trade/sell", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 0}}); status != 400 || !strings.Contains(body["message"].(string), "price") {
		t.Fatalf("limit price 0: %d %v, want 400 naming price", status, body)
	}
}
