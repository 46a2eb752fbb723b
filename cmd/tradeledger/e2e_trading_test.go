package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/projections"
)

// The core caches IsCycling by the config projection's version; serve
// wires a projections.Config, which must keep offering it.
var _ engine.VersionedConfig = (*projections.Config)(nil)

// tradingE2E drives the real serve wiring (Main) on a manual clock: the
// core's cycles are called by the test, prices are set on the paper
// simulator, and every request goes through HTTP with a token from the
// real login.
type tradingE2E struct {
	t     *testing.T
	m     *Main
	clock *domain.ManualClock
	token string
}

const e2eWallet = "0x5e2e5e2e5e2e5e2e5e2e5e2e5e2e5e2e"

func startTradingE2E(t *testing.T) *tradingE2E {
	t.Helper()
	return startTradingE2EWith(t, zap.NewNop())
}

// startTradingE2EWith is startTradingE2E with the service logging to
// logger.
func startTradingE2EWith(t *testing.T, logger *zap.Logger) *tradingE2E {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	e := &tradingE2E{t: t, clock: domain.NewManualClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))}
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", "127.0.0.1:0"
	m.Logger, m.Clock, m.ManualCycles, m.ManualCheckpoints = logger, e.clock, true, true
	e.m, e.token = m, runAndLogin(t, m, "e2e trading password")
	return e
}

// runAndLogin runs m, closed when the test ends, and logs in with
// e2eWallet and password (TRADELEDGER_PASSWORD at the data dir's first
// start); it returns the token, failing the test without one.
func runAndLogin(t *testing.T, m *Main, password string) string {
	t.Helper()
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	status, token := serveLogin(t, m, e2eWallet, password)
	if status != 200 || token == "" {
		t.Fatalf("login = %d", status)
	}
	return token
}

// startManualPair adds pair on exchange with the manual strategy and a
// one-second delay, and starts the bot core, so that the pair cycles.
func (e *tradingE2E) startManualPair(exchange, pair string) {
	e.t.Helper()
	if status, out := e.post("config/pair/add", map[string]any{"pair": pair, "exchange": exchange, "settings": map[string]any{"strategy": "manual", "DELAY": 1}}, ""); status != 200 {
		e.t.Fatalf("config/pair/add = %d %v", status, out)
	}
	if status, out := e.post("system/start", nil, ""); status != 200 {
		e.t.Fatalf("system/start = %d %v", status, out)
	}
}

// post sends a JSON body (nil: none) with the token and optional
// Idempotency-Key; it returns the status and the decoded body.
func (e *tradingE2E) post(path string, body any, key string) (int, map[string]any) {
	e.t.Helper()
	req := apiPost(e.m, e.token, path, body)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return e.do(req)
}

// apiPost is a POST of body as JSON (nil: no body) to m's /api/v1/path,
// with token.
func apiPost(m *Main, token, path string, body any) *http.Request {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest("POST", m.Server.URL()+"/api/v1/"+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// readOK sends req and returns the body of its answer, failing t unless
// the status is 200.
func readOK(t *testing.T, req *http.Request) []byte {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL, resp.StatusCode, b)
	}
	return b
}

func (e *tradingE2E) get(path string) (int, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.m.Server.URL()+"/api/v1/"+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	return e.do(req)
}

func (e *tradingE2E) do(req *http.Request) (int, map[string]any) {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if len(raw) > 0 && raw[0] == '[' {
		var list []any
		if err := json.Unmarshal(raw, &list); err != nil {
			e.t.Fatalf("%s: %v in %s", req.URL.Path, err, raw)
		}
		out["list"] = list
	} else if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s: %v in %s", req.URL.Path, err, raw)
	}
	return resp.StatusCode, out
}

// order places an order through an endpoint and returns its id.
func (e *tradingE2E) order(path string, body map[string]any) int64 {
	e.t.Helper()
	status, out := e.post(path, map[string]any{"data": body}, "")
	if status != 200 || out["status"] != "success" || out["message"] != "Order sent" {
		e.t.Fatalf("%s = %d %v", path, status, out)
	}
	return int64(out["id"].(float64))
}

// cycle moves the clock past the pair's delay (1 s) with the price set,
// and runs one core cycle: ticker → order emulation, reconcile, strategy.
func (e *tradingE2E) cycle(price string) {
	e.t.Helper()
	e.clock.Advance(time.Second)
	if err := e.m.Simulator.SetPrice("binance", "USDT-BTC", decimal.MustDecimal(price)); err != nil {
		e.t.Fatal(err)
	}
	if n := e.m.Engine.Scheduler.Cycle(context.Background()); n != 1 {
		e.t.Fatalf("cycle at %s cycled %d pairs, want 1", price, n)
	}
}

func (e *tradingE2E) head() uint64 {
	h, err := e.m.DataDir.Store.Head(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// orderEvents returns "stream type" of every order and OCO event of the
// log, in log order.
func (e *tradingE2E) orderEvents() []string {
	e.t.Helper()
	it := e.m.DataDir.Store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	var out []string
	for it.Next() {
		ev := it.Event()
		if strings.HasPrefix(ev.Stream, "order-") || strings.HasPrefix(ev.Stream, "oco-") {
			out = append(out, ev.Stream+" "+ev.Type)
		}
	}
	if err := it.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func lines(stream string, types ...string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = stream + " " + t
	}
	return out
}

// withKV is a copy of base with the pairs of kv (a key, then its value)
// set in it.
func withKV(base map[string]any, kv ...any) map[string]any {
	m := maps.Clone(base)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// TestTradingEndToEnd is issue 4's "Must show" through the real wiring:
// a pair added over HTTP, the core started, every order kind placed over
// HTTP and driven by core cycles on the simulated market, then the exact
// order events of the log, orders/page and balances; Idempotency-Key
// retries; and trading refused after system/stop.
func TestTradingEndToEnd(t *testing.T) {
	e := startTradingE2E(t)
	base := map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01}
	with := func(kv ...any) map[string]any { return withKV(base, kv...) }

	// Before any pair cycles, trading is refused and nothing is written.
	head := e.head()
	if status, out := e.post("trade/buy/market", map[string]any{"data": base}, ""); status != 400 || !strings.Contains(fmt.Sprint(out["message"]), "cycling") {
		t.Fatalf("market buy before start = %d %v, want 400 naming the cycling precondition", status, out)
	}
	if e.head() != head {
		t.Fatalf("a refused order appended events: head %d→%d", head, e.head())
	}
	e.startManualPair("binance", "USDT-BTC")
	if e.orderEvents() != nil {
		t.Fatalf("orders before trading: %v", e.orderEvents())
	}
	e.cycle("60000")

	mkt := e.order("trade/buy/market", base)
	lb := e.order("trade/buy", with("price", 59000))
	e.cycle("58900") // the limit buy fills when the price drops through it
	ls := e.order("trade/sell", with("price", 70000))
	if status, out := e.post("trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "id": strconv.FormatInt(ls, 10), "price": 70000, "type": "limit"}}, ""); status != 200 {
		t.Fatalf("trade/cancel = %d %v", status, out)
	}
	if status, _ := e.post("trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "id": strconv.FormatInt(lb, 10), "price": 59000, "type": "limit"}}, ""); status != 409 {
		t.Fatalf("cancel of a filled order = %d, want 409", status)
	}
	sl := e.order("trade/sell/stoplimit", with("stopPrice", 58000, "limitPrice", 57900))
	e.cycle("58900") // above the stop: nothing
	e.cycle("57950") // through the stop: triggers, its limit sell fills
	tb := e.order("trade/buy/trailingstop", with("price", 57950, "stopPrice", 58500))
	e.cycle("57000") // the stop follows the drop to 57550
	e.cycle("57600") // the recovery crosses it: fires and fills
	oco := e.order("trade/sell/oco", with("price", 60000, "stopPrice", 57000, "limit", 56900))
	e.cycle("56950") // the stop leg fires; the limit leg is cancelled
	stopLeg, limitLeg := oco+1, oco+2

	o := func(id int64) string { return domain.OrderStream(id) }
	var want []string
	for _, part := range [][]string{
		lines(o(mkt), "OrderRequested", "OrderAccepted", "OrderFilled"),
		lines(o(lb), "OrderRequested", "OrderAccepted", "OrderFilled"),
		lines(o(ls), "OrderRequested", "OrderAccepted", "OrderCancelRequested", "OrderCancelled"),
		lines(o(sl), "OrderRequested", "OrderAccepted", "StopTriggered", "OrderAccepted", "OrderFilled"),
		lines(o(tb), "OrderRequested", "OrderAccepted", "TrailingStopMoved", "StopTriggered", "OrderAccepted", "OrderFilled"),
		lines(o(stopLeg), "OrderRequested", "OrderAccepted"),
		lines(domain.OcoStream(oco), "OcoPlaced"),
		lines(o(limitLeg), "OrderRequested", "OrderAccepted"),
		lines(o(stopLeg), "StopTriggered"),
		lines(domain.OcoStream(oco), "OcoLegCancelled"),
		lines(o(limitLeg), "OrderCancelRequested", "OrderCancelled"),
		lines(o(stopLeg), "OrderAccepted", "OrderFilled"),
	} {
		want = append(want, part...)
	}
	if got := e.orderEvents(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("order events of the log:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ids := []int64{mkt, lb, ls, sl, tb, oco}; !(mkt < lb && lb < ls && ls < sl && sl < tb && tb < oco) {
		t.Fatalf("ids %v are not increasing", ids)
	}

	// orders/page: one record per fill, newest first.
	status, page := e.get("orders/page?key=" + url.QueryEscape("binance/USDT-BTC") + "&page=0&pageSize=50")
	if status != 200 {
		t.Fatalf("orders/page = %d %v", status, page)
	}
	records, _ := page["data"].([]any)
	var got []string
	for _, r := range records {
		rec := r.(map[string]any)
		got = append(got, fmt.Sprintf("%v %v %v", rec["id"], rec["type"], rec["amount"]))
	}
	wantRecs := []string{
		fmt.Sprintf("%d sell 0.01", stopLeg), fmt.Sprintf("%d buy 0.01", tb), fmt.Sprintf("%d sell 0.01", sl),
		fmt.Sprintf("%d buy 0.01", lb), fmt.Sprintf("%d buy 0.01", mkt),
	}
	if strings.Join(got, ",") != strings.Join(wantRecs, ",") || fmt.Sprint(page["total"]) != "5" {
		t.Fatalf("orders/page records %v (total %v), want %v", got, page["total"], wantRecs)
	}

	// balances: what the exchange holds after the last reconcile. BTC:
	// 0.5 + 3 buys − 2 sells of 0.01 (fees are charged in USDT).
	sim, err := e.m.Simulator.Exchange("binance")
	if err != nil {
		t.Fatal(err)
	}
	actual, err := sim.Balances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	status, bal := e.post("balances", nil, "")
	if status != 200 {
		t.Fatalf("balances = %d %v", status, bal)
	}
	entries := map[string]map[string]any{}
	for _, b := range bal["list"].([]any) {
		m := b.(map[string]any)
		entries[fmt.Sprint(m["Exchange"], "/", m["Asset"])] = m
	}
	for _, a := range actual {
		got := entries["binance/"+a.Asset]
		if got == nil || got["Available Qty"] != a.Available.Round(8).String() || got["On Order"] != a.OnOrder.Round(8).String() ||
			got["availableExact"] != a.Available.String() || got["onOrderExact"] != a.OnOrder.String() {
			t.Fatalf("balances %s = %v, want available %s on order %s", a.Asset, got, a.Available, a.OnOrder)
		}
	}
	if got := entries["binance/BTC"]; got == nil || got["Available Qty"] != "0.51000000" || got["On Order"] != "0.00000000" {
		t.Fatalf("BTC balance %v, want 0.51000000 available, none on order", got)
	}

	// A retried request with the same Idempotency-Key places one order.
	before := len(e.orderEvents())
	body := map[string]any{"data": with("price", 50000)}
	s1, r1 := e.post("trade/buy", body, "retry-1")
	s2, r2 := e.post("trade/buy", body, "retry-1")
	if s1 != 200 || s2 != 200 || r1["id"] != r2["id"] {
		t.Fatalf("retry: %d %v then %d %v, want the same answer", s1, r1, s2, r2)
	}
	idem := int64(r1["id"].(float64))
	if status, out := e.post("trade/sell", body, "retry-1"); status != 409 || out["message"] != "Idempotency-Key reused with a different request" {
		t.Fatalf("the key on another endpoint = %d %v, want 409", status, out)
	}
	if got := e.orderEvents()[before:]; strings.Join(got, ",") != strings.Join(lines(o(idem), "OrderRequested", "OrderAccepted"), ",") {
		t.Fatalf("events of the retried request: %v, want one order", got)
	}

	// After system/stop the core no longer cycles and trading is refused.
	if status, out := e.post("system/stop", nil, ""); status != 200 {
		t.Fatalf("system/stop = %d %v", status, out)
	}
	head = e.head()
	if status, out := e.post("trade/buy", map[string]any{"data": with("price", 50000)}, ""); status != 400 || !strings.Contains(fmt.Sprint(out["message"]), "cycling") {
		t.Fatalf("trade/buy after stop = %d %v, want 400 naming the cycling precondition", status, out)
	}
	e.clock.Advance(time.Minute)
	if n := e.m.Engine.Scheduler.Cycle(context.Background()); n != 0 {
		t.Fatalf("a stopped core cycled %d pairs", n)
	}
	if e.head() != head {
		t.Fatalf("a refused order appended events: head %d→%d", head, e.head())
	}
}
