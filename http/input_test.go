package http

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Hostile input (issue 13 §4): every JSON write refuses a declared
// non-JSON Content-Type, repeated keys, invalid UTF-8 and trailing data,
// and appends nothing when it does.

// rawPost sends body as is with the Content-Type ct ("" sends none) and
// the bearer token, and returns the status and the body.
func rawPost(t *testing.T, url, token, ct, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A JSON write with a declared Content-Type that is not JSON is 415 and
// places nothing; no Content-Type at all is read as JSON, and so are
// application/json with parameters and application/<x>+json.
func TestJSONWritesRefuseNonJSONContentType(t *testing.T) {
	te := newTradeEnv(t)
	const order = `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001}}`
	url := te.URL + "/api/v1/trade/buy/market"
	head := te.head()
	for _, ct := range []string{
		"text/plain",
		"text/plain;charset=UTF-8",
		"application/x-www-form-urlencoded",
		"multipart/form-data; boundary=xyz",
		"application/xml",
		"text/xml",
		"application/jsonx",
		"json",
		";;;",
	} {
		status, body := rawPost(t, url, te.Token, ct, order)
		if status != 415 || !strings.Contains(body, "Content-Type must be application/json") || !strings.Contains(body, `"code":415`) {
			t.Errorf("Content-Type %q: %d %s, want 415 naming Content-Type", ct, status, body)
		}
	}
	if status, body := rawPost(t, te.URL+"/api/v1/auth/login", "", "text/plain", `{"password":"x"}`); status != 415 {
		t.Errorf("login as text/plain: %d %s, want 415", status, body)
	}
	if te.head() != head {
		t.Fatalf("refused writes appended events: head %d→%d", head, te.head())
	}
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json"} {
		if status, body := rawPost(t, url, te.Token, ct, order); status != 200 {
			t.Errorf("Content-Type %q: %d %s, want 200", ct, status, body)
		}
	}

	// The config, file and login writes share the rule.
	e := newCfgEnv(t)
	before := e.head()
	for _, path := range []string{"/config/pair/add", "/config/update", "/files/autoconfig/write"} {
		status, body := rawPost(t, e.http.URL+"/api/v1"+path, e.token, "application/x-www-form-urlencoded", `{}`)
		if status != 415 {
			t.Errorf("%s as a form: %d %s, want 415", path, status, body)
		}
	}
	if e.head() != before {
		t.Fatalf("refused config writes appended events")
	}
}

// Repeated keys anywhere in a body, invalid UTF-8 and data after the JSON
// value are 400 (naming the key), in the one-pass trade reading as in the
// encoding/json path, in config documents and in JSON documents sent as
// strings; nothing is appended.
func TestJSONWritesRefuseAmbiguousBodies(t *testing.T) {
	te := newTradeEnv(t)
	head := te.head()
	trade := []struct{ name, path, body, msg string }{
		{"repeated amt, one-pass shape", "/trade/buy/market", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"amt":5}}`, `duplicate key \"data.amt\"`},
		{"repeated amt, top level", "/trade/buy/market", `{"exch":"binance","amt":0.001,"pair":"USDT-BTC","amt":5}`, `duplicate key \"amt\"`},
		{"repeated pair, spaced", "/trade/buy/market", `{ "data": { "exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "pair": "USDT-ETH" } }`, `duplicate key \"data.pair\"`},
		{"escaped repeat", "/trade/buy/market", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"\u0061mt":5}}`, `duplicate key \"data.amt\"`},
		{"repeated data", "/trade/buy/market", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001},"data":{"exch":"binance","pair":"USDT-BTC","amt":9}}`, `duplicate key \"data\"`},
		{"invalid UTF-8 in pair", "/trade/buy/market", "{\"data\":{\"exch\":\"binance\",\"pair\":\"USDT-BTC\xff\",\"amt\":0.001}}", `field \"data.pair\" is not valid UTF-8`},
		{"invalid UTF-8 in exch, top level", "/trade/buy/market", "{\"exch\":\"bin\xc3\x28ance\",\"pair\":\"USDT-BTC\",\"amt\":0.001}", `field \"exch\" is not valid UTF-8`},
		{"trailing data", "/trade/buy/market", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001}} {}`, "after top-level value"},
		{"trailing brace", "/trade/buy/market", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001}}}`, "after top-level value"},
	}
	for _, c := range trade {
		status, body := rawPost(t, te.URL+"/api/v1"+c.path, te.Token, "application/json", c.body)
		if status != 400 || !strings.Contains(body, c.msg) {
			t.Errorf("%s: %d %s, want 400 with %s", c.name, status, body, c.msg)
		}
	}
	if status, body := rawPost(t, te.URL+"/api/v1/auth/login", "", "", `{"password":"ENC:x","password":"ENC:y"}`); status != 400 || !strings.Contains(body, `duplicate key \"password\"`) {
		t.Errorf("login with a repeated password: %d %s", status, body)
	}
	if te.head() != head {
		t.Fatalf("refused trade calls appended events: head %d→%d", head, te.head())
	}

	e := newCfgEnv(t)
	full := `{"bot":{"service_wallet":"` + cfgWallet + `","SIMULATOR":true},"exchanges":{"binance":{"delay":10}},"pairs":{},"strategies":{"manual":{}}`
	cfg := []struct{ name, path, body, msg string }{
		{"config document, nested repeat", "/config/update", `{"data":` + full + `,"GUI":{"theme":"a","theme":"b"}}}`, `duplicate key \"data.GUI.theme\"`},
		{"config document, repeated section", "/config/update", `{"data":` + full + `,"GUI":{},"pairs":{"binance":{"USDT-BTC":{"strategy":"manual"}}}}}`, `duplicate key \"data.pairs\"`},
		{"pair settings", "/config/pair/add", `{"exchange":"binance","pair":"USDT-BTC","settings":{"strategy":"manual","DELAY":5,"DELAY":0}}`, `duplicate key \"settings.DELAY\"`},
		{"strategy settings, invalid UTF-8", "/config/strategy/add", "{\"name\":\"s\",\"settings\":{\"x\":\"\xc3\x28\"}}", `field \"settings.x\" is not valid UTF-8`},
		{"document string with a repeated key", "/files/autoconfig/write", `{"document":"{\"a\":1,\"a\":2}"}`, `duplicate key \"a\"`},
		{"document string with a stray brace", "/files/autoconfig/write", `{"document":"{\"a\":1}}"}`, "trailing data"},
		{"acvar-like document with a repeated key", "/files/custom-editor/write", `{"document":{"x":{"y":1,"y":2}}}`, `duplicate key \"document.x.y\"`},
	}
	before := e.head()
	for _, c := range cfg {
		status, body := rawPost(t, e.http.URL+"/api/v1"+c.path, e.token, "application/json", c.body)
		if status != 400 || !strings.Contains(body, c.msg) {
			t.Errorf("%s: %d %s, want 400 with %s", c.name, status, body, c.msg)
		}
	}
	if e.head() != before {
		t.Fatalf("refused config writes appended events: head %d→%d", before, e.head())
	}
}

// Pair symbols are QUOTE-BASE of letters and digits, at most 32 bytes;
// exchange, strategy and file names are bounded, and a refusal does not
// echo a long name back in full.
func TestNamesAndPairSymbolsBounded(t *testing.T) {
	te := newTradeEnv(t)
	long := strings.Repeat("x", 5000)
	head := te.head()
	for _, c := range []struct{ name, body, msg string }{
		{"pair with punctuation", `{"data":{"exch":"binance","pair":"USDT-BTC;","amt":0.001}}`, `field \"pair\"`},
		{"pair with an underscore", `{"data":{"exch":"binance","pair":"USDT_BTC","amt":0.001}}`, `field \"pair\"`},
		{"pair over 32 bytes", `{"data":{"exch":"binance","pair":"USDT-` + strings.Repeat("B", 28) + `","amt":0.001}}`, "at most 32 bytes"},
		{"exchange name of 5000 bytes", `{"data":{"exch":"` + long + `","pair":"USDT-BTC","amt":0.001}}`, `field \"exch\"`},
	} {
		status, body := rawPost(t, te.URL+"/api/v1/trade/buy/market", te.Token, "", c.body)
		if status != 400 || !strings.Contains(body, c.msg) || len(body) > 400 {
			t.Errorf("%s: %d %.300s, want a short 400 with %s", c.name, status, body, c.msg)
		}
	}
	status, body := rawPost(t, te.URL+"/api/v1/trade/cancel", te.Token, "", `{"data":{"exch":"binance","pair":"USDT-BTC<script>","id":"1","price":1,"type":"limit"}}`)
	if status != 400 || !strings.Contains(body, `field \"pair\"`) {
		t.Errorf("cancel with a bad pair: %d %s", status, body)
	}
	if te.head() != head {
		t.Fatalf("refused trade calls appended events")
	}

	e := newCfgEnv(t)
	before := e.head()
	e.refuse(400, "must look like QUOTE-BASE", "POST", "/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC.X"})
	e.refuse(400, "at most 32 bytes", "POST", "/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-" + strings.Repeat("E", 28)})
	e.refuse(400, "exchange name", "POST", "/config/pair/add", map[string]any{"exchange": long, "pair": "USDT-BTC"})
	e.refuse(400, "strategy name", "POST", "/config/strategy/add", map[string]any{"name": strings.Repeat("s", 129)})
	e.refuse(400, "filename is longer than 128 bytes", "POST", "/files/strategy/write", map[string]any{"filename": strings.Repeat("f", 126) + ".js", "document": "x"})
	cfg := cfgInitial()
	cfg["pairs"] = map[string]any{"binance": map[string]any{"USDT-BTC/../x": map[string]any{"strategy": "manual"}}}
	e.refuse(400, "config.pairs.binance.USDT-BTC/../x", "POST", "/config/update", map[string]any{"data": cfg})
	if e.head() != before {
		t.Fatalf("refused config writes appended events")
	}
	for _, b := range e.bodies {
		if len(b) > 400 {
			t.Fatalf("a refusal echoes a long name: %d bytes", len(b))
		}
	}
}

// Configuration values whose meaning is known are range-checked when they
// are written, by every write route; unknown parameters are kept as given.
func TestConfigValuesRangeChecked(t *testing.T) {
	e := newCfgEnv(t)
	with := func(edit func(cfg map[string]any)) map[string]any {
		cfg := cfgInitial()
		edit(cfg)
		return map[string]any{"data": cfg}
	}
	exchange := func(cfg map[string]any) map[string]any {
		return cfg["exchanges"].(map[string]any)["binance"].(map[string]any)
	}
	before := e.head()
	e.refuse(400, "config.exchanges.binance.simulator.fee must be a finite number ≥ 0 and < 1", "POST", "/config/update", with(func(c map[string]any) {
		exchange(c)["simulator"] = map[string]any{"fee": 1}
	}))
	e.refuse(400, "config.exchanges.binance.delay must be a whole number ≥ 1 (seconds)", "POST", "/config/update", with(func(c map[string]any) { exchange(c)["delay"] = 0 }))
	e.refuse(400, "config.strategies.gain.TRADING_LIMIT must be a finite number > 0", "POST", "/config/update", with(func(c map[string]any) {
		c["strategies"].(map[string]any)["gain"].(map[string]any)["TRADING_LIMIT"] = -100
	}))
	e.refuse(400, "config.exchanges.binance.simulator.balances.USDT", "POST", "/config/update", with(func(c map[string]any) {
		exchange(c)["simulator"] = map[string]any{"balances": map[string]any{"USDT": "-5"}}
	}))
	e.refuse(400, "settings.DELAY must be a whole number ≥ 1 (seconds)", "POST", "/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "settings": map[string]any{"strategy": "manual", "DELAY": 0}})
	e.refuse(400, "settings.TRADING_LIMIT", "POST", "/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "settings": map[string]any{"override": map[string]any{"TRADING_LIMIT": "0"}}})
	e.refuse(400, "settings.STEP must be a finite number > 0 and < 100 (percent)", "POST", "/config/strategy/add", map[string]any{"name": "grid2", "settings": map[string]any{"STEP": 100}})
	if e.head() != before {
		t.Fatalf("refused writes appended events")
	}
	// In range, and an unknown parameter with any value, are accepted.
	e.must(200, "POST", "/config/update", with(func(c map[string]any) {
		exchange(c)["simulator"] = map[string]any{"fee": "0.001", "balances": map[string]any{"USDT": 1000, "BTC": 0}}
		c["strategies"].(map[string]any)["gain"].(map[string]any)["MY_KNOB"] = -42
	}))
	e.must(200, "POST", "/config/strategy/add", map[string]any{"name": "grid2", "settings": map[string]any{"STEP": 0.5, "DELAY": 1, "OTHER": "anything"}})
	if got := cfgPath(e.fullConfig(), "strategies", "gain", "MY_KNOB"); got != float64(-42) {
		t.Fatalf("unknown parameter = %v, want -42 kept", got)
	}
}
