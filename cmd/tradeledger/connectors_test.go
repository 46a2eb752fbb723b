package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/binance/fixture"
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
		ch, err := ChooseConnector(cfg(c.sim, entries), c.exchange)
		if err != nil || ch.Connector != c.connector || !strings.Contains(ch.Reason, c.reason) {
			t.Errorf("SIMULATOR=%v %s: %+v %v, want connector %s, reason with %q", c.sim, c.exchange, ch, err, c.connector, c.reason)
		}
		if got, want := HasRealConnector(cfg(c.sim, entries), c.exchange), c.exchange != "kraken" && c.exchange != "sandbox"; got != want {
			t.Errorf("HasRealConnector(%s) = %v, want %v", c.exchange, got, want)
		}
	}
	if _, err := ChooseConnector(cfg(false, entries), "nope"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("unconfigured exchange: err=%v, want ENOTFOUND", err)
	}
}

// binanceE2E is tradingE2E with bot.SIMULATOR false and binance's keys
// set, its connector pointed at a local fixture.
type binanceE2E struct {
	*tradingE2E
	fx *fixture.Server
}

func startBinanceE2E(t *testing.T, fx *fixture.Server, data string) *binanceE2E {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	e := &tradingE2E{t: t, clock: domain.NewManualClock(time.Now())}
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = data, "127.0.0.1:0", "127.0.0.1:0"
	m.Logger, m.Clock, m.ManualCycles, m.BinanceURL = zap.NewNop(), e.clock, true, fx.URL
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e.m = m
	status, token := serveLogin(t, m, e2eWallet, "e2e trading password")
	if status != 200 || token == "" {
		t.Fatalf("login = %d", status)
	}
	e.token = token
	return &binanceE2E{tradingE2E: e, fx: fx}
}

// goLive sets bot.SIMULATOR false and binance's keys through config/update.
func (e *binanceE2E) goLive() {
	e.t.Helper()
	status, cur := e.get("config/full")
	if status != 200 {
		e.t.Fatalf("config = %d %v", status, cur)
	}
	cfg := cur["config"].(map[string]any)
	cfg["bot"].(map[string]any)["SIMULATOR"] = false
	cfg["exchanges"].(map[string]any)["binance"] = map[string]any{"key": e.fx.Key, "secret": e.fx.Secret, "isEncrypted": false}
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
	if status, out := e.post("config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": map[string]any{"strategy": "manual", "DELAY": 1}}, ""); status != 200 {
		t.Fatalf("config/pair/add = %d %v", status, out)
	}
	if status, out := e.post("system/start", nil, ""); status != 200 {
		t.Fatalf("system/start = %d %v", status, out)
	}
	e.clock.Advance(time.Second)
	if n := e.m.Core.Cycle(context.Background()); n != 1 {
		t.Fatalf("cycled %d pairs, want 1", n)
	}
	id := e.order("trade/buy", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01, "price": 50000})
	orders := fx.Orders()
	if len(orders) != 1 || orders[0].Status != "NEW" || orders[0].Price != domain.MustDecimal("50000") {
		t.Fatalf("fixture orders %+v, want one resting buy at 50000", orders)
	}
	o, ok := e.m.Trader.Order(id)
	if !ok || o.ClientOrderID != orders[0].ClientOrderID || o.ExchangeOrderID != fmt.Sprint(orders[0].ID) {
		t.Fatalf("order %d: %+v, want the fixture's client id %s and id %d", id, o, orders[0].ClientOrderID, orders[0].ID)
	}
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
