package http

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// tradeActivity is a tiny trading.Activity: the exchanges said to cycle.
type tradeActivity struct {
	mu sync.Mutex
	on map[string]bool
}

func (a *tradeActivity) IsCycling(exchange string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.on[exchange]
}

func (a *tradeActivity) set(exchange string, on bool) {
	a.mu.Lock()
	a.on[exchange] = on
	a.mu.Unlock()
}

type tradeEnv struct {
	*testServer
	sim    *paper.Simulator
	eng    *engine.Engine
	tr     *engine.Trader
	active *tradeActivity
}

// newTradeEnv is a test server with a Trader over a paper exchange that
// simulates "binance", "binance#1" and "kraken"; binance is cycling.
func newTradeEnv(t *testing.T) *tradeEnv {
	te := &tradeEnv{active: &tradeActivity{on: map[string]bool{"binance": true}}}
	te.testServer = newTestServer(t, func(ts *testServer) {
		te.sim = paper.NewSimulator(ts.Clock)
		te.sim.Settings = func(name string) (paper.ExchangeSettings, bool) {
			return paper.ExchangeSettings{}, name == "binance" || name == "binance#1" || name == "kraken"
		}
		te.eng = engine.New(ts.Store, te.sim.Exchange, nil, projections.NewBalances(), ts.Clock)
		te.tr = te.eng.Trader
		te.tr.Activity = te.active
		te.eng.Desk.Wait = ts.Runner.WaitFor
		for _, p := range te.eng.Projections() {
			ts.Runner.Register(p)
		}
		ts.Server.Trader = te.tr
	})
	if err := te.sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("60000")); err != nil {
		t.Fatal(err)
	}
	return te
}

// post sends a trade call and decodes the answer.
func (te *tradeEnv) post(path string, body any, headers ...string) (int, map[string]any) {
	te.t.Helper()
	h := map[string]string{"Authorization": bearer(te.Token)}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	resp := te.request("POST", "/api/v1"+path, body, h)
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		te.t.Fatalf("%s: undecodable answer: %v", path, err)
	}
	return resp.StatusCode, out
}

func (te *tradeEnv) head() uint64 {
	h, err := te.Store.Head(context.Background())
	if err != nil {
		te.t.Fatal(err)
	}
	return h
}

// requested returns the OrderRequested of an order, from the log.
func (te *tradeEnv) requested(id int64) (domain.OrderRequested, []string) {
	te.t.Helper()
	it := te.Store.ReadStream(context.Background(), domain.OrderStream(id), 0, 0)
	defer it.Close()
	var p domain.OrderRequested
	var types []string
	for it.Next() {
		e := it.Event()
		if e.Type == domain.TypeOrderRequested {
			if err := e.Decode(&p); err != nil {
				te.t.Fatal(err)
			}
		}
		types = append(types, e.Type)
	}
	return p, types
}

func sent(t *testing.T, path string, status int, body map[string]any) int64 {
	t.Helper()
	if status != 200 || body["status"] != "success" || body["message"] != "Order sent" {
		t.Fatalf("%s: %d %v, want 200 success/Order sent", path, status, body)
	}
	return int64(body["id"].(float64))
}

func TestTradeEndpointsPlaceOrders(t *testing.T) {
	te := newTradeEnv(t)
	nested := func(f map[string]any) any { return map[string]any{"data": f} }
	top := func(f map[string]any) any { return f }
	base := func(extra map[string]any) map[string]any {
		f := map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	cases := []struct {
		path  string
		wrap  func(map[string]any) any
		extra map[string]any
		side  domain.Side
		kind  domain.OrderKind
		price string
	}{
		{"/trade/buy", nested, map[string]any{"price": 50000}, domain.Buy, domain.KindLimit, "50000"},
		{"/trade/sell", top, map[string]any{"price": 70000}, domain.Sell, domain.KindLimit, "70000"},
		{"/trade/buy/market", nested, nil, domain.Buy, domain.KindMarket, "60000"},
		{"/trade/sell/market", top, map[string]any{"price": 59000.5}, domain.Sell, domain.KindMarket, "59000.5"},
		{"/trade/buy/stoplimit", nested, map[string]any{"stopPrice": 61000, "limitPrice": 61100}, domain.Buy, domain.KindStopLimit, "0"},
		{"/trade/sell/stoplimit", nested, map[string]any{"stopPrice": 59000, "limitPrice": 58900}, domain.Sell, domain.KindStopLimit, "0"},
		{"/trade/buy/trailingstop", nested, map[string]any{"price": 60000, "stopPrice": 60500}, domain.Buy, domain.KindTrailingStop, "60000"},
		{"/trade/sell/trailingstop", top, map[string]any{"price": 60000, "stopPrice": 59500}, domain.Sell, domain.KindTrailingStop, "60000"},
		{"/trade/close", nested, map[string]any{"price": 75000, "amt": 0.02}, domain.Sell, domain.KindLimit, "75000"},
		{"/trade/close/market", nested, map[string]any{"amt": nil}, domain.Sell, domain.KindMarket, "60000"},
	}
	for _, c := range cases {
		status, body := te.post(c.path, c.wrap(base(c.extra)))
		id := sent(t, c.path, status, body)
		p, types := te.requested(id)
		if p.Side != c.side || p.Kind != c.kind || p.Price != decimal.MustDecimal(c.price) || p.Exchange != "binance" {
			t.Fatalf("%s: requested %+v, want %s %s at %s", c.path, p, c.side, c.kind, c.price)
		}
		if len(types) < 2 || types[1] != domain.TypeOrderAccepted {
			t.Fatalf("%s: events %v, want accepted", c.path, types)
		}
	}
	// close/market without amt sold the whole BTC balance that remained.
	x, _ := te.sim.Exchange("binance")
	bs, _ := x.Balances(context.Background())
	for _, b := range bs {
		if b.Asset == "BTC" && !b.Available.IsZero() {
			t.Fatalf("BTC available after close/market: %v, want 0", b.Available)
		}
	}
	for _, path := range []string{"/trade/buy/oco", "/trade/sell/oco"} {
		f := base(map[string]any{"price": 55000, "stopPrice": 65000, "limit": 65100})
		if path == "/trade/sell/oco" {
			f = base(map[string]any{"price": 65000, "stopPrice": 55000, "limit": 54900})
			te.post("/trade/buy/market", nested(base(nil))) // something to sell
		}
		status, body := te.post(path, nested(f))
		ocoID := sent(t, path, status, body)
		stop, _ := te.requested(ocoID + 1)
		limit, ltypes := te.requested(ocoID + 2)
		if stop.Kind != domain.KindStopLimit || stop.OcoID != ocoID || limit.Kind != domain.KindLimit || limit.OcoID != ocoID || ltypes[1] != domain.TypeOrderAccepted {
			t.Fatalf("%s: legs %+v / %+v %v", path, stop, limit, ltypes)
		}
	}
}

func TestTradeValidationAppendsNothing(t *testing.T) {
	te := newTradeEnv(t)
	cases := []struct {
		name, path string
		body       any
		field      string
	}{
		{"empty body", "/trade/buy", "", "empty"},
		{"data not an object", "/trade/buy", `{"data":[1]}`, `"data"`},
		{"missing exch", "/trade/buy", `{"data":{"pair":"USDT-BTC","amt":1,"price":1}}`, `"exch"`},
		{"unknown exchange", "/trade/buy", `{"data":{"exch":"nope","pair":"USDT-BTC","amt":1,"price":1}}`, "exch"},
		{"unknown pair", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-NOPE","amt":1,"price":1}}`, "pair"},
		{"missing pair", "/trade/buy/market", `{"data":{"exch":"binance","amt":1}}`, `"pair"`},
		{"missing amt", "/trade/buy/market", `{"data":{"exch":"binance","pair":"USDT-BTC"}}`, `"amt"`},
		{"zero amt", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0,"price":1}}`, `"amt"`},
		{"negative price", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1,"price":-5}}`, `"price"`},
		{"string amt", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":"abc","price":1}}`, `"amt"`},
		{"numeric string price", "/trade/sell", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1,"price":"100"}}`, `"price"`},
		{"overflowing amt", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1e400,"price":1}}`, `"amt"`},
		{"NaN amt", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":NaN,"price":1}}`, `"amt"`},
		{"Infinity price", "/trade/sell", `{"exch":"binance","pair":"USDT-BTC","amt":1,"price":Infinity}`, `"price"`},
		{"too many decimals", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.0000000000001,"price":1}}`, `"amt"`},
		{"limit without price", "/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1}}`, `"price"`},
		{"stoplimit without limitPrice", "/trade/sell/stoplimit", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1,"stopPrice":1}}`, `"limitPrice"`},
		{"trailing without stopPrice", "/trade/buy/trailingstop", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1,"price":1}}`, `"stopPrice"`},
		{"trailing stop without distance", "/trade/buy/trailingstop", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1,"price":100,"stopPrice":100}}`, "stopPrice"},
		{"oco without limit", "/trade/buy/oco", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":1,"price":1,"stopPrice":2}}`, `"limit"`},
		{"close without price", "/trade/close", `{"data":{"exch":"binance","pair":"USDT-BTC"}}`, `"price"`},
		{"close with nothing held", "/trade/close/market", `{"data":{"exch":"binance","pair":"USDT-DOGE"}}`, "no DOGE held"},
		{"cancel without id", "/trade/cancel", `{"data":{"exch":"binance","pair":"USDT-BTC","price":1,"type":"limit"}}`, `"id"`},
		{"cancel bad id", "/trade/cancel", `{"data":{"exch":"binance","pair":"USDT-BTC","id":"x1","price":1,"type":"limit"}}`, `"id"`},
		{"cancel without type", "/trade/cancel", `{"data":{"exch":"binance","pair":"USDT-BTC","id":"1","price":1}}`, `"type"`},
		{"cancel bad type", "/trade/cancel", `{"data":{"exch":"binance","pair":"USDT-BTC","id":"1","price":1,"type":"fok"}}`, `"type"`},
		{"cancel without price", "/trade/cancel", `{"data":{"exch":"binance","pair":"USDT-BTC","id":"1","type":"limit"}}`, `"price"`},
	}
	head := te.head()
	for _, c := range cases {
		status, body := te.post(c.path, c.body)
		msg, _ := body["message"].(string)
		if status != 400 || body["status"] != "error" || !strings.Contains(msg, c.field) {
			t.Errorf("%s: %d %v, want 400 naming %s", c.name, status, body, c.field)
		}
	}
	if te.head() != head {
		t.Fatalf("refused requests appended events: head %d→%d", head, te.head())
	}
}

func TestTradeRefusedUnlessCycling(t *testing.T) {
	te := newTradeEnv(t)
	body := map[string]any{"data": map[string]any{"exch": "kraken", "pair": "USDT-BTC", "amt": 0.01}}
	head := te.head()
	status, out := te.post("/trade/buy/market", body)
	want := "no pair on kraken is cycling; start the core (system/start) with an enabled pair"
	if status != 400 || out["message"] != want || te.head() != head {
		t.Fatalf("not cycling: %d %v (head %d→%d), want 400 %q and nothing appended", status, out, head, te.head(), want)
	}
	te.active.set("kraken", true)
	status, out = te.post("/trade/buy/market", body)
	sent(t, "/trade/buy/market", status, out)
	te.active.set("kraken", false)
	if status, _ := te.post("/trade/buy/oco", map[string]any{"data": map[string]any{"exch": "kraken", "pair": "USDT-BTC", "amt": 0.01, "price": 1, "stopPrice": 2, "limit": 3}}); status != 400 {
		t.Fatalf("oco while not cycling: %d, want 400", status)
	}
}

func TestTradeInsufficientFundsRejected(t *testing.T) {
	te := newTradeEnv(t)
	for _, c := range []struct{ path, body string }{
		{"/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":10,"price":50000}}`},
		{"/trade/sell/stoplimit", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":100,"stopPrice":50000,"limitPrice":49000}}`},
	} {
		head := te.head()
		status, out := te.post(c.path, c.body)
		msg, _ := out["message"].(string)
		if status != 400 || !strings.Contains(msg, "insufficient funds") {
			t.Fatalf("%s: %d %v, want 400 insufficient funds", c.path, status, out)
		}
		// The refusal is in the log: OrderRequested then OrderRejected.
		events := te.events()
		var got []string
		for _, e := range events {
			if e.Position > head {
				got = append(got, e.Type)
			}
		}
		if strings.Join(got, ",") != "OrderRequested,OrderRejected" {
			t.Fatalf("%s: appended %v, want OrderRequested, OrderRejected", c.path, got)
		}
	}
}

func TestTradeIdempotencyKey(t *testing.T) {
	te := newTradeEnv(t)
	body := `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":50000}}`
	status, first := te.post("/trade/buy", body, "Idempotency-Key", "retry-me")
	id := sent(t, "/trade/buy", status, first)
	head := te.head()
	for i := 0; i < 3; i++ {
		status, again := te.post("/trade/buy", body, "Idempotency-Key", "retry-me")
		if got := sent(t, "/trade/buy", status, again); got != id {
			t.Fatalf("retry %d: order %d, want %d", i, got, id)
		}
	}
	if te.head() != head {
		t.Fatalf("retries appended events: head %d→%d", head, te.head())
	}
	x, _ := te.sim.Exchange("binance")
	open, _ := x.OpenOrders(context.Background(), "USDT-BTC")
	if len(open) != 1 {
		t.Fatalf("%d orders on the exchange, want 1", len(open))
	}
	// Another key is another order.
	status, other := te.post("/trade/buy", body, "Idempotency-Key", "another")
	if got := sent(t, "/trade/buy", status, other); got == id {
		t.Fatal("a different key returned the same order")
	}
	if status, out := te.post("/trade/buy", body, "Idempotency-Key", strings.Repeat("k", 201)); status != 400 {
		t.Fatalf("oversized key: %d %v, want 400", status, out)
	}
}

func TestTradeCancel(t *testing.T) {
	te := newTradeEnv(t)
	status, out := te.post("/trade/sell", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":70000}}`)
	id := sent(t, "/trade/sell", status, out)
	status, out = te.post("/trade/buy/market", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01}}`)
	filled := sent(t, "/trade/buy/market", status, out)

	cancel := func(id any, pair string) (int, map[string]any) {
		return te.post("/trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": pair, "id": id, "price": 70000, "type": "limit"}})
	}
	status, out = cancel(idString(id), "USDT-BTC")
	sent(t, "/trade/cancel", status, out)
	if _, types := te.requested(id); strings.Join(types, ",") != "OrderRequested,OrderAccepted,OrderCancelRequested,OrderCancelled" {
		t.Fatalf("cancelled order events %v", types)
	}
	if status, out = cancel(idString(id), "USDT-BTC"); status != 409 {
		t.Fatalf("cancel twice: %d %v, want 409", status, out)
	}
	if status, out = cancel(float64(filled), "USDT-BTC"); status != 409 || !strings.Contains(out["message"].(string), "already filled") {
		t.Fatalf("cancel filled: %d %v, want 409 already filled", status, out)
	}
	if status, out = cancel("9999", "USDT-BTC"); status != 404 {
		t.Fatalf("cancel unknown: %d %v, want 404", status, out)
	}
	if status, out = cancel(idString(filled), "USDT-ETH"); status != 404 {
		t.Fatalf("cancel on another pair: %d %v, want 404", status, out)
	}
}

func idString(id int64) string { return strconv.FormatInt(id, 10) }

func TestBalancesEndpoint(t *testing.T) {
	te := newTradeEnv(t)
	status, body := te.do("POST", "/api/v1/balances", nil, te.Token)
	if status != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("before any observation: %d %s, want []", status, body)
	}
	te.post("/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":50000}}`)
	if err := te.eng.Reconciler.Reconcile(context.Background(), "binance"); err != nil {
		t.Fatal(err)
	}
	status, body = te.do("POST", "/api/v1/balances", nil, te.Token)
	var entries []map[string]any
	if err := json.Unmarshal(body, &entries); err != nil || status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	found := false
	for _, e := range entries {
		if e["Exchange"] != "binance" {
			t.Fatalf("entry %v: want exchange binance", e)
		}
		if e["Asset"] == "USDT" {
			found = true
			// 10000 − 500.5 (0.01 × 50000 + 0.1% fee) on order.
			if e["Available Qty"] != "9499.50000000" || e["On Order"] != "500.50000000" {
				t.Fatalf("USDT entry %v, want 9499.50000000 available, 500.50000000 on order", e)
			}
		}
	}
	if !found {
		t.Fatalf("no USDT entry in %s", body)
	}
	// Unchanged balances are not observed again.
	n := len(eventsOfType[domain.BalancesObserved](te.testServer, domain.TypeBalancesObserved))
	if err := te.eng.Reconciler.Reconcile(context.Background(), "binance"); err != nil {
		t.Fatal(err)
	}
	if got := len(eventsOfType[domain.BalancesObserved](te.testServer, domain.TypeBalancesObserved)); got != n || n != 1 {
		t.Fatalf("BalancesObserved %d then %d, want 1 and 1", n, got)
	}
}

func TestPairsEndpoints(t *testing.T) {
	te := newTradeEnv(t)
	status, body := te.do("GET", "/api/v1/pairs?exchange=binance%231", nil, te.Token)
	var list struct {
		Status   string   `json:"status"`
		PairList []string `json:"pairList"`
	}
	if err := json.Unmarshal(body, &list); err != nil || status != 200 || list.Status != "success" || len(list.PairList) != len(paper.DefaultPairs) {
		t.Fatalf("pairs of binance#1: %d %s", status, body)
	}
	status, body = te.do("GET", "/api/v1/pairs/detailed?exchange=binance", nil, te.Token)
	var detailed struct {
		Status   string                                  `json:"status"`
		PairList map[string][]map[string]json.RawMessage `json:"pairList"`
	}
	if err := json.Unmarshal(body, &detailed); err != nil || status != 200 {
		t.Fatalf("detailed: %d %s", status, body)
	}
	usdt := detailed.PairList["USDT"]
	if len(usdt) == 0 || len(detailed.PairList["BTC"]) == 0 {
		t.Fatalf("detailed not grouped by quote: %s", body)
	}
	for _, p := range usdt {
		for _, f := range []string{"low", "high", "change", "pairName"} {
			if len(p[f]) == 0 || p[f][0] != '"' {
				t.Fatalf("%s of %s is %s, want a string", f, p["pairName"], p[f])
			}
		}
		if len(p["volume"]) == 0 || p["volume"][0] == '"' {
			t.Fatalf("volume of %s is %s, want a number", p["pairName"], p["volume"])
		}
	}
	for _, q := range []string{"", "?exchange=", "?exchange=nope"} {
		for _, path := range []string{"/api/v1/pairs", "/api/v1/pairs/detailed"} {
			if status, body := te.do("GET", path+q, nil, te.Token); status != 400 || !strings.Contains(string(body), "exchange") {
				t.Fatalf("%s%s: %d %s, want 400 naming exchange", path, q, status, body)
			}
		}
	}
}

func TestTradeWithoutTrader(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/api/v1/trade/buy", "/api/v1/balances"} {
		if status, _ := ts.do("POST", path, `{"data":{}}`, ts.Token); status != 503 {
			t.Fatalf("%s without a Trader: %d, want 503", path, status)
		}
	}
	if status, _ := ts.do("POST", "/api/v1/trade/buy", `{}`, ""); status != 401 {
		t.Fatalf("without a token: %d, want 401", status)
	}
}

// TestTradeIdempotencyKeyScope: a key reused with a different request —
// another endpoint, pair, amount or price — is 409 and places nothing;
// the same request (fields nested in data or at the top level) still gets
// the first answer.
func TestTradeIdempotencyKeyScope(t *testing.T) {
	te := newTradeEnv(t)
	const key = "scope-key"
	body := `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":50000}}`
	status, first := te.post("/trade/buy", body, "Idempotency-Key", key)
	id := sent(t, "/trade/buy", status, first)
	head := te.head()
	for _, c := range []struct{ path, body string }{
		{"/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.02,"price":50000}}`},
		{"/trade/buy", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":50001}}`},
		{"/trade/buy", `{"data":{"exch":"binance","pair":"USDT-ETH","amt":0.01,"price":50000}}`},
		{"/trade/buy", `{"data":{"exch":"kraken","pair":"USDT-BTC","amt":0.01,"price":50000}}`},
		{"/trade/sell", body},
		{"/trade/buy/market", body},
		{"/trade/close", body},
		{"/trade/buy/oco", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":50000,"stopPrice":61000,"limit":61100}}`},
	} {
		status, out := te.post(c.path, c.body, "Idempotency-Key", key)
		if status != 409 || out["message"] != "Idempotency-Key reused with a different request" {
			t.Fatalf("%s %s with a used key: %d %v, want 409 naming the reuse", c.path, c.body, status, out)
		}
	}
	for _, same := range []string{body, `{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":50000}`, `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.010,"price":5e4}}`} {
		status, again := te.post("/trade/buy", same, "Idempotency-Key", key)
		if got := sent(t, "/trade/buy", status, again); got != id {
			t.Fatalf("same request %s: order %d, want %d", same, got, id)
		}
	}
	if te.head() != head {
		t.Fatalf("reused keys appended events: head %d→%d", head, te.head())
	}
	// The fingerprint is in the event, so it survives a restart.
	p, _ := te.requested(id)
	if p.IdempotencyKey != key || len(p.IdempotencyFingerprint) != 32 {
		t.Fatalf("OrderRequested key %q fingerprint %q, want the key and a 32-hex fingerprint", p.IdempotencyKey, p.IdempotencyFingerprint)
	}
	// An OCO's key is scoped the same way.
	oco := `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.01,"price":50000,"stopPrice":61000,"limit":61100}}`
	status, o1 := te.post("/trade/buy/oco", oco, "Idempotency-Key", "oco-key")
	ocoID := sent(t, "/trade/buy/oco", status, o1)
	status, o2 := te.post("/trade/buy/oco", oco, "Idempotency-Key", "oco-key")
	if got := sent(t, "/trade/buy/oco", status, o2); got != ocoID {
		t.Fatalf("OCO retry: %d, want %d", got, ocoID)
	}
	if status, out := te.post("/trade/sell/oco", oco, "Idempotency-Key", "oco-key"); status != 409 {
		t.Fatalf("OCO key on another endpoint: %d %v, want 409", status, out)
	}
}

// The one-pass reading of compact trade bodies finds the same fields as the
// encoding/json path, which the same body after a space takes.
func TestFlatTradeFieldsMatchJSON(t *testing.T) {
	for _, body := range []string{
		`{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"price":1000}}`,
		`{"exch":"binance","pair":"USDT-BTC","amt":"0.5","price":"1","x":null,"y":true}`,
		`{"data":{}}`,
		`{}`,
	} {
		fast, ok := flatTradeFields([]byte(body))
		if !ok {
			t.Fatalf("%s: not read in one pass", body)
		}
		spaced := " " + body // leading space: never read in one pass
		slow, err := decodeTrade(httptest.NewRequest("POST", "/", strings.NewReader(spaced)))
		if err != nil {
			t.Fatalf("%s: %v", spaced, err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%s: fields %v, want %v", body, fast, slow)
		}
		for k, v := range slow {
			if string(fast[k]) != string(bytes.TrimSpace(v)) {
				t.Fatalf("%s: field %s = %s, want %s", body, k, fast[k], v)
			}
		}
	}
	for _, body := range []string{`{"data":null,"amt":1}`, `{"data":{"a":[1]}}`, `{"data":{"a":1},"b":2}`, "{\"data\":{\"a\":1}}\n", `{"amt":"\u0031"}`,
		`{"data":{"amt":1,"amt":2}}`, `{"amt":1,"pair":"x","amt":2}`} { // a repeated key: the slow path names it
		if _, ok := flatTradeFields([]byte(body)); ok {
			t.Fatalf("%q read in one pass; it is for encoding/json", body)
		}
	}
}

// A trade field's string reads as encoding/json reads it, on the fast
// path or not.
func TestTradeStringFieldsMatchJSON(t *testing.T) {
	for _, raw := range []string{`"binance"`, `"USDT-BTC"`, `""`, `" padded "`, `"a\"b"`, `"a\\b"`, `"\u0041"`, `"é"`, "\"\x7f\"", `"a/b"`, `12`, `true`, `["x"]`, `"`} {
		got, gotErr := tradeFields{"exch": json.RawMessage(raw)}.str("exch")
		var want string
		wantErr := json.Unmarshal([]byte(raw), &want)
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil && got != strings.TrimSpace(want) {
			t.Errorf("str(%s) = %q, %v; encoding/json: %q, %v", raw, got, gotErr, want, wantErr)
		}
	}
}

// A trade call's answer is orderSent as writeJSON encodes it.
func TestOrderSentBody(t *testing.T) {
	for _, id := range []int64{0, 1, 42, 1 << 53, -7} {
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		writeOrderSent(got, id)
		writeJSON(want, http.StatusOK, orderSent{Status: "success", Message: "Order sent", ID: id})
		if got.Body.String() != want.Body.String() || got.Code != want.Code ||
			got.Header().Get("Content-Length") != want.Header().Get("Content-Length") || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("id %d: %d %q %v, want %d %q %v", id, got.Code, got.Body, got.Header(), want.Code, want.Body, want.Header())
		}
	}
}
