package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/binance/fixture"
	"github.com/tradeledger/tradeledger/exchange/engine"
)

func TestChooseConnector(t *testing.T) {
	cfg := func(sim bool, exchanges map[string]any) domain.Config {
		c, err := domain.ConfigFromMap(map[string]any{"bot": map[string]any{"SIMULATOR": sim}, "exchanges": exchanges, "pairs": map[string]any{}, "strategies": map[string]any{}, "GUI": map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	entries := map[string]any{
		"binance":   map[string]any{},
		"binance#2": map[string]any{},
		"main":      map[string]any{"connector": "binance", "testnet": true},
		"kraken":    map[string]any{},
		"sandbox":   map[string]any{"connector": "binance", "simulator": true},
	}
	for _, c := range []struct {
		sim                 bool
		exchange, connector string
		reason              string
	}{
		{true, "binance", "paper", "bot.SIMULATOR is true"},
		{true, "kraken", "paper", "bot.SIMULATOR is true"},
		{false, "binance", "binance", "bot.SIMULATOR is false"},
		{false, "binance#2", "binance", "bot.SIMULATOR is false"},
		{false, "main", "binance", "testnet"},
		{false, "sandbox", "paper", "exchanges.sandbox.simulator is true"},
		{false, "kraken", "paper", "no real connector"},
	} {
		ch, err := testConnectors().Choose(cfg(c.sim, entries), c.exchange)
		if err != nil || ch.Connector != c.connector || !strings.Contains(ch.Reason, c.reason) {
			t.Errorf("SIMULATOR=%v %s: %+v %v, want connector %s, reason with %q", c.sim, c.exchange, ch, err, c.connector, c.reason)
		}
		if got, want := testConnectors().HasReal(cfg(c.sim, entries), c.exchange), c.exchange != "kraken" && c.exchange != "sandbox"; got != want {
			t.Errorf("HasReal(%s) = %v, want %v", c.exchange, got, want)
		}
	}
	if _, err := testConnectors().Choose(cfg(false, entries), "nope"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("unconfigured exchange: err=%v, want ENOTFOUND", err)
	}
}

// testConnectors chooses among this binary's connectors (connectorList)
// with no configuration or keys of its own.
func testConnectors() *engine.Connectors {
	return &engine.Connectors{List: connectorList(nil)}
}

// binanceE2E is tradingE2E with bot.SIMULATOR false and binance's keys
// set, its connector pointed at a local fixture.
type binanceE2E struct {
	*tradingE2E
	fx *fixture.Server
}

func startBinanceE2E(t *testing.T, fx *fixture.Server, data string) *binanceE2E {
	t.Helper()
	return &binanceE2E{tradingE2E: startConnectorE2E(t, map[string]string{"binance": fx.URL}, data), fx: fx}
}

// startConnectorE2E runs serve on data with a manual clock and manual
// cycles, its connectors pointed at urls (connector name → fixture URL),
// and logs in.
func startConnectorE2E(t *testing.T, urls map[string]string, data string) *tradingE2E {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	e := &tradingE2E{t: t, clock: domain.NewManualClock(time.Now())}
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = data, "127.0.0.1:0", "127.0.0.1:0"
	m.Logger, m.Clock, m.ManualCycles = zap.NewNop(), e.clock, true
	m.ConnectorURLs = urls
	e.m, e.token = m, runAndLogin(t, m, "e2e trading password")
	return e
}

// goLive sets bot.SIMULATOR false and binance's keys through config/update.
func (e *binanceE2E) goLive() {
	e.t.Helper()
	e.goLiveOn("binance", map[string]any{"key": e.fx.Key, "secret": e.fx.Secret, "isEncrypted": false})
}

// goLiveOn sets bot.SIMULATOR false and exchange's entry through
// config/update.
func (e *tradingE2E) goLiveOn(exchange string, entry map[string]any) {
	e.t.Helper()
	status, cur := e.get("config/full")
	if status != 200 {
		e.t.Fatalf("config = %d %v", status, cur)
	}
	cfg := cur["config"].(map[string]any)
	cfg["bot"].(map[string]any)["SIMULATOR"] = false
	cfg["exchanges"].(map[string]any)[exchange] = entry
	if status, out := e.post("config/update", map[string]any{"data": cfg}, ""); status != 200 {
		e.t.Fatalf("config/update = %d %v", status, out)
	}
}

func (e *binanceE2E) health() map[string]any {
	e.t.Helper()
	resp, err := http.Get(e.m.Server.URL() + "/healthz")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func connectorOf(h map[string]any, exchange string) string {
	list, _ := h["exchanges"].([]any)
	for _, x := range list {
		m := x.(map[string]any)
		if m["exchange"] == exchange {
			return fmt.Sprint(m["connector"])
		}
	}
	return ""
}

// TestServeChoosesBinance: with bot.SIMULATOR false, the configured
// binance exchange trades on the Binance connector (here against the
// fixture): /healthz says so, and an order placed over HTTP reaches the
// fixture with its client order id.
func TestServeChoosesBinance(t *testing.T) {
	fx := fixture.New("e2e-key", "e2e-secret")
	defer fx.Close()
	e := startBinanceE2E(t, fx, filepath.Join(t.TempDir(), "data"))
	if got := connectorOf(e.health(), "binance"); got != "paper" {
		t.Fatalf("healthz connector with SIMULATOR true = %q, want paper", got)
	}
	e.goLive()
	if got := connectorOf(e.health(), "binance"); got != "binance" {
		t.Fatalf("healthz connector with SIMULATOR false = %q, want binance (%v)", got, e.health())
	}
	// pairs/detailed tells the market's rules, which the dashboard
	// formats prices and amounts by.
	status, detailed := e.get("pairs/detailed?exchange=binance")
	if status != 200 {
		t.Fatalf("pairs/detailed = %d %v", status, detailed)
	}
	var btc map[string]any
	for _, p := range detailed["pairList"].(map[string]any)["USDT"].([]any) {
		if p.(map[string]any)["pairName"] == "USDT-BTC" {
			btc = p.(map[string]any)
		}
	}
	if btc == nil || btc["tickSize"] != 0.01 || btc["stepSize"] != 0.00001 || btc["minNotional"] != 5.0 {
		t.Fatalf("USDT-BTC in pairs/detailed: %v, want tickSize 0.01, stepSize 0.00001, minNotional 5", btc)
	}
	e.startManualPair("binance", "USDT-BTC")
	e.clock.Advance(time.Second)
	if n := e.m.Engine.Scheduler.Cycle(context.Background()); n != 1 {
		t.Fatalf("cycled %d pairs, want 1", n)
	}
	id := e.order("trade/buy", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01, "price": 50000})
	orders := fx.Orders()
	if len(orders) != 1 || orders[0].Status != "NEW" || orders[0].Price != decimal.MustDecimal("50000") {
		t.Fatalf("fixture orders %+v, want one resting buy at 50000", orders)
	}
	o, ok := e.m.Engine.Orders.Order(id)
	if !ok || o.ClientOrderID != orders[0].ClientOrderID || o.ExchangeOrderID != fmt.Sprint(orders[0].ID) {
		t.Fatalf("order %d: %+v, want the fixture's client id %s and id %d", id, o, orders[0].ClientOrderID, orders[0].ID)
	}

	// An exchange that stops answering shows in /healthz until it answers.
	fx.RateLimit(30 * time.Second)
	e.clock.Advance(time.Second)
	e.m.Engine.Scheduler.Cycle(context.Background())
	if got := errorOf(e.health(), "binance"); !strings.Contains(got, "rate limit") {
		t.Fatalf("healthz error while rate limited = %q, want the rate limit", got)
	}
	e.clock.Advance(31 * time.Second)
	e.m.Engine.Scheduler.Cycle(context.Background())
	if got := errorOf(e.health(), "binance"); got != "" {
		t.Fatalf("healthz error after Retry-After = %q, want none", got)
	}
}

func errorOf(h map[string]any, exchange string) string {
	list, _ := h["exchanges"].([]any)
	for _, x := range list {
		m := x.(map[string]any)
		if m["exchange"] == exchange {
			s, _ := m["error"].(string)
			return s
		}
	}
	return ""
}

// license/keys/edit checks verifyExchange's keys against the exchange:
// refused keys are 401 and nothing is written; keys that may withdraw are
// accepted with a warning in the log.
func TestLicenseKeysVerifiedAgainstBinance(t *testing.T) {
	fx := fixture.New("e2e-key", "e2e-secret")
	defer fx.Close()
	e := startBinanceE2E(t, fx, filepath.Join(t.TempDir(), "data"))
	e.goLive()
	core, logs := observer.New(zap.InfoLevel)
	e.m.Logger = zap.New(core)
	edit := func(secret string) (int, map[string]any) {
		return e.post("license/keys/edit", map[string]any{"wallet": e2eWallet, "verifyExchange": "binance",
			"newLicenses": map[string]any{"binance": map[string]any{"key": "e2e-key", "secret": secret, "isEncrypted": false}}}, "")
	}
	head := e.head()
	if status, out := edit("wrong-secret"); status != 401 || !strings.Contains(fmt.Sprint(out["message"]), "refused") {
		t.Fatalf("wrong secret = %d %v, want 401 saying the exchange refused the keys", status, out)
	}
	if e.head() != head {
		t.Fatalf("a refused key edit appended events: head %d→%d", head, e.head())
	}
	fx.CanWithdraw = true
	if status, out := edit("e2e-secret"); status != 200 {
		t.Fatalf("good keys = %d %v", status, out)
	}
	if n := logs.FilterMessageSnippet("may withdraw").Len(); n != 1 {
		t.Fatalf("%d withdrawal warnings, want 1", n)
	}
	for _, entry := range logs.All() {
		for _, f := range entry.Context {
			if strings.Contains(f.String, "e2e-secret") {
				t.Fatalf("a log line carries the secret: %v", entry)
			}
		}
	}
}

func (e *binanceE2E) cycle() { e.t.Helper(); e.cycleOnce() }

// TestBinanceEndToEndKilledMidPlacement: serve on a fixture-backed Binance,
// place, cancel and fill through HTTP; the process dies while a placement
// is in flight (its OrderRequested durable, nothing else); after a restart
// the reconcile finds the order unknown to Binance, sends it once more, and
// the ledger and balances match the fixture's truth with no duplicate
// order.
func TestBinanceEndToEndKilledMidPlacement(t *testing.T) {
	fx := fixture.New("e2e-key", "e2e-secret")
	defer fx.Close()
	data := filepath.Join(t.TempDir(), "data")
	e := startBinanceE2E(t, fx, data)
	e.goLive()
	e.startManualPair("binance", "USDT-BTC")
	e.cycle()
	base := map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01}
	with := func(kv ...any) map[string]any { return withKV(base, kv...) }
	resting := e.order("trade/buy", with("price", 50000))
	e.order("trade/buy/market", base)
	if status, out := e.post("trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "id": fmt.Sprint(resting), "price": 50000, "type": "limit"}}, ""); status != 200 {
		t.Fatalf("trade/cancel = %d %v", status, out)
	}
	sell := e.order("trade/sell", with("price", 70000))
	sellOrder, _ := e.m.Engine.Orders.Order(sell)
	if err := fx.Fill(sellOrder.ClientOrderID, decimal.MustDecimal("0.004")); err != nil {
		t.Fatal(err)
	}
	e.cycle() // the partial fill is recorded

	// The kill: while a placement is held by the exchange (its
	// OrderRequested durable, nothing else), the data dir is copied as a
	// killed process leaves it; the restart runs on that copy. The
	// exchange then drops the connection without placing.
	held := fx.HoldPlacements()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, _ := json.Marshal(map[string]any{"data": with("price", 55000)})
		req, _ := http.NewRequest("POST", e.m.Server.URL()+"/api/v1/trade/buy", strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer "+e.token)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-held:
	case <-done:
		t.Fatal("the placement never reached the exchange")
	}
	killed := filepath.Join(t.TempDir(), "killed")
	copyDir(t, data, killed)
	fx.Release()
	<-done
	e.m.Close()
	data = killed
	placements := fx.Requests("POST /api/v3/order")

	// The restart: the order in flight is requested, nothing else.
	e2 := startBinanceE2E(t, fx, data)
	var lost int64
	var lostClient string
	for _, ev := range e2.orderEvents() {
		stream, typ, _ := strings.Cut(ev, " ")
		var id int64
		fmt.Sscanf(stream, "order-%d", &id)
		if o, ok := e2.m.Engine.Orders.Order(id); ok && o.State == domain.OrderStateRequested {
			lost, lostClient = id, o.ClientOrderID
		}
		_ = typ
	}
	if lost == 0 {
		t.Fatalf("no requested order after the restart: %v", e2.orderEvents())
	}
	e2.cycle() // reconcile: not found on the exchange → sent once more
	e2.clock.Advance(time.Minute)
	e2.cycle()
	if got := fx.Requests("POST /api/v3/order"); got != placements+1 {
		t.Fatalf("%d placements after the restart, want exactly 1 re-send", got-placements)
	}
	if err := fx.Fill(sellOrder.ClientOrderID, decimal.MustDecimal("0.006")); err != nil {
		t.Fatal(err)
	}
	e2.clock.Advance(time.Minute)
	e2.cycle()

	// Truth: every fixture order appears once, under its client id, with
	// the state the log gives it.
	seen := map[string]int{}
	for _, fo := range fx.Orders() {
		seen[fo.ClientOrderID]++
	}
	for c, n := range seen {
		if n != 1 {
			t.Fatalf("client id %s placed %d times", c, n)
		}
	}
	if seen[lostClient] != 1 || len(seen) != 4 {
		t.Fatalf("fixture orders %v: want 4, the lost one (%s) once", seen, lostClient)
	}
	for _, fo := range fx.Orders() {
		var o domain.Order
		for id := int64(1); id <= lost+2; id++ {
			if x, ok := e2.m.Engine.Orders.Order(id); ok && x.ClientOrderID == fo.ClientOrderID {
				o = x
			}
		}
		want := map[string]domain.OrderState{"NEW": domain.OrderStateAccepted, "FILLED": domain.OrderStateFilled, "CANCELED": domain.OrderStateCancelled}[fo.Status]
		if o.State != want || o.Filled != fo.Executed || o.ExchangeOrderID != fmt.Sprint(fo.ID) {
			t.Fatalf("fixture order %+v: log has %s filled %v id %s", fo, o.State, o.Filled, o.ExchangeOrderID)
		}
	}
	status, bal := e2.post("balances", nil, "")
	if status != 200 {
		t.Fatalf("balances = %d %v", status, bal)
	}
	got := map[string]string{}
	for _, b := range bal["list"].([]any) {
		m := b.(map[string]any)
		got[fmt.Sprint(m["Asset"])] = fmt.Sprint(m["Available Qty"], "/", m["On Order"])
	}
	for _, asset := range []string{"USDT", "BTC"} {
		free, locked := fx.Balance(asset)
		if want := free.String() + "/" + locked.String(); got[asset] != want {
			t.Fatalf("balance %s = %s, want the fixture's %s", asset, got[asset], want)
		}
	}
	status, page := e2.get("orders/page?key=binance%2FUSDT-BTC&page=0&pageSize=50")
	if status != 200 || fmt.Sprint(page["total"]) != "3" {
		t.Fatalf("orders/page = %d total %v, want 3 fills (market buy, two parts of the sell)", status, page["total"])
	}
}

// copyDir copies a data dir's files (what a killed process leaves on disk).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.IsDir() {
			copyDir(t, filepath.Join(from, en.Name()), filepath.Join(to, en.Name()))
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, en.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
