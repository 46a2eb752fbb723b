package http

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/eventstore"
)

const (
	clearKey    = "AKIA-clear-api-key-123"
	clearSecret = "very-secret-api-secret-456"
	clearKey2   = "second-exchange-key-789"
	clearSec2   = "second-exchange-secret-000"
)

// withKeys returns the initial config with clear keys on binance.
func withKeys() map[string]any {
	c := cfgInitial()
	ex := c["exchanges"].(map[string]any)["binance"].(map[string]any)
	ex["key"], ex["secret"], ex["isEncrypted"] = clearKey, clearSecret, false
	return c
}

func TestConfigFull(t *testing.T) {
	e := newCfgEnv(t)
	c := e.fullConfig()
	if got := cfgPath(c, "bot", "service_wallet"); got != secrets.Mask {
		t.Fatalf("wallet shown as %v, want the mask", got)
	}
	if got := cfgPath(c, "bot", "SIMULATOR"); got != true {
		t.Fatalf("SIMULATOR=%v", got)
	}
	for _, s := range []string{"gain", "stepgrid", "manual"} {
		if cfgPath(c, "strategies", s) == nil {
			t.Fatalf("strategy %s missing: %v", s, c["strategies"])
		}
	}
	// Without a token: 401.
	e.token = ""
	e.refuse(401, "", "GET", "/config/full", nil)
}

func TestConfigUpdate(t *testing.T) {
	e := newCfgEnv(t)
	b := e.must(200, "POST", "/config/update", map[string]any{"data": withKeys()})
	var resp struct {
		Status string         `json:"status"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Status != "success" {
		t.Fatalf("response %s: %v", b, err)
	}
	if got := cfgPath(resp.Config, "exchanges", "binance", "key"); got != secrets.Mask {
		t.Fatalf("key shown as %v", got)
	}
	if !e.srv.Config.HasCredentials("binance") {
		t.Fatal("no credentials stored")
	}
	// The stored ciphertext decrypts to the secret.
	ct := e.srv.Config.Ciphertexts("binance")
	if got, err := e.box.Open(ct["secret"]); err != nil || got != clearSecret {
		t.Fatalf("stored secret decrypts to %q, %v", got, err)
	}
	if sec, err := e.srv.Config.Secrets("binance", e.box); err != nil || sec["key"] != clearKey {
		t.Fatalf("Secrets=%v, %v", sec, err)
	}

	// Sending the masked document back keeps the stored secret and adds no
	// ExchangeKeysSet.
	masked := e.fullConfig()
	masked["GUI"] = map[string]any{"theme": "light"}
	before := cfgCount(e.events(), domain.TypeExchangeKeysSet)
	e.must(200, "POST", "/config/update", map[string]any{"data": masked})
	if after := cfgCount(e.events(), domain.TypeExchangeKeysSet); after != before {
		t.Fatalf("mask round trip wrote %d ExchangeKeysSet events", after-before)
	}
	if got := e.srv.Config.Ciphertexts("binance")["secret"]; got != ct["secret"] {
		t.Fatal("mask round trip changed the stored secret")
	}
	if got := e.srv.Config.Wallet(); got != cfgWallet {
		t.Fatalf("masked wallet sent back changed the wallet to %q", got)
	}
	if got := cfgPath(e.fullConfig(), "GUI", "theme"); got != "light" {
		t.Fatalf("GUI.theme=%v", got)
	}

	// Refusals change nothing.
	bad := e.fullConfig()
	delete(bad, "strategies")
	e.refuse(400, "config.strategies is missing", "POST", "/config/update", map[string]any{"data": bad})
	e.refuse(400, "data is required", "POST", "/config/update", map[string]any{})
	e.refuse(400, "data must be a JSON object", "POST", "/config/update", map[string]any{"data": []int{1}})
	e.refuse(400, "malformed JSON", "POST", "/config/update", `{"data":`)
	e.refuse(400, "request body is empty", "POST", "/config/update", "")
	badPair := e.fullConfig()
	badPair["pairs"] = map[string]any{"binance": map[string]any{"USDT-BTC": map[string]any{"strategy": "nope"}}}
	e.refuse(400, `strategy \"nope\" is not in config.strategies`, "POST", "/config/update", map[string]any{"data": badPair})
	noSecret := e.fullConfig()
	noSecret["exchanges"].(map[string]any)["kraken"] = map[string]any{"key": secrets.Mask}
	e.refuse(400, "no secret is stored", "POST", "/config/update", map[string]any{"data": noSecret})
	// A credential given as a number would be stored and shown in clear.
	numeric := e.fullConfig()
	numeric["exchanges"].(map[string]any)["binance"].(map[string]any)["secret"] = 123
	e.refuse(400, "config.exchanges.binance.secret must be a string", "POST", "/config/update", map[string]any{"data": numeric})
	// Nor as an object or an array: the strings inside would sit at paths
	// no rule calls credentials, stored, served and logged in clear.
	for kind, v := range map[string]any{"an object": map[string]any{"value": "s3cr3t-in-an-object"}, "an array": []any{"s3cr3t-in-an-array"}} {
		wrapped := e.fullConfig()
		wrapped["exchanges"].(map[string]any)["binance"].(map[string]any)["secret"] = v
		e.refuse(400, "config.exchanges.binance.secret must be a string, not "+kind, "POST", "/config/update", map[string]any{"data": wrapped})
	}
	// Nor as a lone surrogate escape, which a decoder turns into U+FFFD.
	lone := e.fullConfig()
	lone["exchanges"].(map[string]any)["binance"].(map[string]any)["secret"] = "LONE-SURROGATE"
	loneBody, _ := json.Marshal(map[string]any{"data": lone})
	e.refuse(400, `field \"data.exchanges.binance.secret\" holds a lone surrogate escape`, "POST", "/config/update",
		strings.Replace(string(loneBody), "LONE-SURROGATE", `\ud800`, 1))
	for _, ev := range e.events() {
		if strings.Contains(string(ev.Data), "s3cr3t-in-an") {
			t.Fatalf("a credential inside an object or array reached the log in clear: %s %s", ev.Type, ev.Data)
		}
	}
	foreign := e.fullConfig()
	foreign["exchanges"].(map[string]any)["kraken"] = map[string]any{"key": "gunbot-encrypted-blob", "isEncrypted": true}
	e.refuse(400, "isEncrypted", "POST", "/config/update", map[string]any{"data": foreign})
	if got := e.srv.Config.Ciphertexts("binance")["secret"]; got != ct["secret"] {
		t.Fatal("a refused update changed the stored secret")
	}

	// Removing an exchange clears its stored credentials.
	gone := e.fullConfig()
	gone["exchanges"] = map[string]any{"kucoin": map[string]any{"key": "k", "secret": "s", "isEncrypted": false}}
	e.must(200, "POST", "/config/update", map[string]any{"data": gone})
	if e.srv.Config.HasCredentials("binance") || e.srv.Config.Ciphertexts("binance") != nil {
		t.Fatal("credentials of a removed exchange are still stored")
	}
	if !e.srv.Config.HasCredentials("kucoin") {
		t.Fatal("kucoin has no credentials")
	}
	assertNoSecrets(t, e, clearKey, clearSecret)
}

func cfgCount(events []domain.Event, typ string) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// assertNoSecrets checks that no response body and no event payload
// contains any of the secrets in clear.
func assertNoSecrets(t *testing.T, e *cfgEnv, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for _, b := range e.bodies {
			if strings.Contains(b, s) {
				t.Fatalf("a response body contains secret %q: %s", s, b)
			}
		}
		for _, ev := range e.events() {
			if strings.Contains(string(ev.Data), s) {
				t.Fatalf("event %s/%d (%s) contains secret %q: %s", ev.Stream, ev.Version, ev.Type, s, ev.Data)
			}
		}
	}
}

func TestConfigUpdateConflictIsRetried(t *testing.T) {
	e := newCfgEnv(t)
	cfg, _ := domain.ConfigFromMap(cfgInitial())
	calls := 0
	req := newTestRequest(t)
	err := e.srv.runConfig(req, func(st domain.ConfigState) ([]domain.Event, error) {
		cur := st.Config
		calls++
		if calls == 1 {
			// Another writer gets in between the read and the append.
			e.append(domain.StreamConfig, domain.NewEvent(e.clock, domain.TypeStrategyAdded, domain.StrategyAdded{Name: "other"}))
		}
		next, err := cur.WithStrategy("mine", nil)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(next)
		return []domain.Event{domain.NewEvent(e.clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: b})}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("decide called %d times, want 2 (one retry after the conflict)", calls)
	}
	got := e.srv.Config.Current()
	if _, ok := got.Strategy("other"); !ok {
		t.Fatal("the concurrent writer's change was overwritten")
	}
	if _, ok := got.Strategy("mine"); !ok {
		t.Fatal("our change is missing")
	}
	_ = cfg

	// A writer that always loses gets ECONFLICT (409) and changes nothing.
	before := e.head()
	err = e.srv.runConfig(req, func(domain.ConfigState) ([]domain.Event, error) {
		e.append(domain.StreamConfig, domain.NewEvent(e.clock, domain.TypeStrategyAdded, domain.StrategyAdded{Name: "x"}))
		return []domain.Event{domain.NewEvent(e.clock, domain.TypeStrategyRemoved, domain.StrategyRemoved{Name: "x"})}, nil
	}, nil)
	if domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("err=%v, want ECONFLICT", err)
	}
	if got, want := e.head()-before, uint64(eventstore.DefaultMaxAttempts); got != want {
		t.Fatalf("log moved by %d, want only the %d competing events (one per attempt)", got, want)
	}
}

// TestConcurrentConfigWritesAllLand sends config/strategy/add from 8
// clients at once: the server runs its commands on the config stream one
// at a time, so none loses a version race (before, about 44% were answered
// 409 after five lost races in a row) and every strategy is there.
func TestConcurrentConfigWritesAllLand(t *testing.T) {
	e := newCfgEnv(t)
	const clients, each = 8, 12
	before := e.head()
	statuses := make([][]int, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := fmt.Sprintf(`{"name":"s%d-%d","settings":{"GAIN":%d}}`, c, i, i+1)
				req, _ := http.NewRequest("POST", e.http.URL+"/api/v1/config/strategy/add", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+e.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				statuses[c] = append(statuses[c], resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	for c, st := range statuses {
		for i, code := range st {
			if code != http.StatusOK {
				t.Errorf("client %d, write %d: status %d, want 200", c, i, code)
			}
		}
	}
	cur := e.srv.Config.Current()
	for c := range clients {
		for i := range each {
			if _, ok := cur.Strategy(fmt.Sprintf("s%d-%d", c, i)); !ok {
				t.Errorf("strategy s%d-%d is missing", c, i)
			}
		}
	}
	if moved := e.head() - before; moved != clients*each {
		t.Fatalf("the log moved by %d events, want one per write (%d)", moved, clients*each)
	}
}

func TestConfigPairs(t *testing.T) {
	e := newCfgEnv(t)
	e.must(200, "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance",
		"settings": map[string]any{"strategy": "gain", "override": map[string]any{"GAIN": 2.5}, "BUYLVL": "1"}})
	c := e.fullConfig()
	p := cfgPath(c, "pairs", "binance", "USDT-BTC")
	want := map[string]any{"strategy": "gain", "enabled": true, "override": map[string]any{"GAIN": 2.5, "BUYLVL": "1"}}
	if b1, b2 := cfgJSON(p), cfgJSON(want); b1 != b2 {
		t.Fatalf("pair=%s, want %s", b1, b2)
	}
	// Without settings: the no-op strategy, enabled.
	e.must(200, "POST", "/config/pair/add", map[string]any{"pair": "USDT-ETH", "exchange": "binance"})
	if pc, ok := e.srv.Config.Current().Pair("binance", "USDT-ETH"); !ok || pc.Strategy != "manual" || !pc.Enabled {
		t.Fatalf("pair=%+v %v", pc, ok)
	}

	e.refuse(400, "exchange \\\"kraken\\\" is not in config.exchanges", "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "kraken"})
	e.refuse(400, "does not exist", "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": map[string]any{"strategy": "nope"}})
	e.refuse(400, "must look like QUOTE-BASE", "POST", "/config/pair/add", map[string]any{"pair": "BTC", "exchange": "binance"})
	e.refuse(400, "pair is required", "POST", "/config/pair/add", map[string]any{"exchange": "binance"})
	e.refuse(400, "exchange is required", "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC"})
	e.refuse(400, "settings.enabled must be a boolean", "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": map[string]any{"enabled": "yes"}})
	e.refuse(400, "settings.X must be a number", "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": map[string]any{"X": []int{1}}})
	e.refuse(400, `field \"settings\" must be an object`, "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": 3})

	e.must(200, "POST", "/config/pair/remove", map[string]any{"pair": "USDT-ETH", "exchange": "binance"})
	if _, ok := e.srv.Config.Current().Pair("binance", "USDT-ETH"); ok {
		t.Fatal("pair still configured")
	}
	e.refuse(404, "not configured", "POST", "/config/pair/remove", map[string]any{"pair": "USDT-ETH", "exchange": "binance"})
	e.refuse(400, "pair and exchange are required", "POST", "/config/pair/remove", map[string]any{"pair": "USDT-ETH"})
}

func cfgJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestConfigStrategies(t *testing.T) {
	e := newCfgEnv(t)
	e.must(200, "POST", "/config/strategy/add", map[string]any{"name": "mygain", "settings": map[string]any{"STRATEGY": "gain", "GAIN": 3}})
	if s, ok := e.srv.Config.Current().Strategy("mygain"); !ok || s["GAIN"] != json.Number("3") {
		t.Fatalf("strategy=%v %v", s, ok)
	}
	e.must(200, "POST", "/config/strategy/add", map[string]any{"name": "empty"})
	if s, ok := e.srv.Config.Current().Strategy("empty"); !ok || len(s) != 0 {
		t.Fatalf("strategy=%v %v", s, ok)
	}
	e.refuse(400, "name is required", "POST", "/config/strategy/add", map[string]any{})
	e.refuse(400, "without slashes", "POST", "/config/strategy/add", map[string]any{"name": "a/b"})
	e.refuse(400, `field \"settings\" must be an object`, "POST", "/config/strategy/add", map[string]any{"name": "x", "settings": "s"})

	e.must(200, "POST", "/config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": map[string]any{"strategy": "mygain"}})
	e.refuse(409, "is used by pair USDT-BTC", "POST", "/config/strategy/remove", map[string]any{"name": "mygain"})
	e.refuse(404, "not in config.strategies", "POST", "/config/strategy/remove", map[string]any{"name": "nope"})
	e.refuse(400, "name is required", "POST", "/config/strategy/remove", map[string]any{})
	e.must(200, "POST", "/config/pair/remove", map[string]any{"pair": "USDT-BTC", "exchange": "binance"})
	e.must(200, "POST", "/config/strategy/remove", map[string]any{"name": "mygain"})
	if _, ok := e.srv.Config.Current().Strategy("mygain"); ok {
		t.Fatal("strategy still there")
	}
}
