package domain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain/secrets"
)

const testConfig = `{
 "bot": {"service_wallet": "0xWALLET", "SIMULATOR": true},
 "exchanges": {"binance": {"isEncrypted": false, "key": "k1", "secret": "s1", "fee": 0.1}},
 "pairs": {"binance": {"USDT-BTC": {"strategy": "gain", "enabled": true, "override": {"GAIN": 1.5, "BUY_METHOD": "ema"}},
                       "USDT-ETH": {"strategy": "gain", "enabled": false}}},
 "strategies": {"gain": {"GAIN": 2}, "manual": {}},
 "GUI": {"theme": "dark"},
 "extra": [1, 2.50, "x"]
}`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Wallet(), "0xWALLET"; got != want {
		t.Fatalf("Wallet=%q, want %q", got, want)
	}
	if !c.Simulator() {
		t.Fatal("Simulator=false")
	}
	if got := c.ExchangeNames(); len(got) != 1 || got[0] != "binance" {
		t.Fatalf("ExchangeNames=%v", got)
	}
	pairs := c.Pairs()
	if len(pairs) != 2 || pairs[0].Pair != "USDT-BTC" || pairs[1].Pair != "USDT-ETH" || pairs[1].Enabled {
		t.Fatalf("Pairs=%+v", pairs)
	}
	p, ok := c.Pair("binance", "USDT-BTC")
	if !ok || p.Strategy != "gain" || !p.Enabled || p.Override["GAIN"] != json.Number("1.5") {
		t.Fatalf("Pair=%+v %v", p, ok)
	}
	// Copies: changing what an accessor returned leaves c unchanged.
	p.Override["GAIN"] = json.Number("9")
	ex, _ := c.Exchange("binance")
	ex["fee"] = "changed"
	if p2, _ := c.Pair("binance", "USDT-BTC"); p2.Override["GAIN"] != json.Number("1.5") {
		t.Fatal("Pair override is shared with the caller")
	}
	if ex2, _ := c.Exchange("binance"); ex2["fee"] != json.Number("0.1") {
		t.Fatal("Exchange entry is shared with the caller")
	}
	// Round trip keeps numbers exactly and unknown sections.
	b, _ := json.Marshal(c)
	if !strings.Contains(string(b), `"extra":[1,2.50,"x"]`) {
		t.Fatalf("round trip lost data: %s", b)
	}
	c2, err := ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(c2)
	if string(b) != string(b2) {
		t.Fatalf("not stable:\n%s\n%s", b, b2)
	}
}

func TestParseConfigInvalid(t *testing.T) {
	base := func(edit func(m map[string]any)) string {
		m, err := DecodeJSONObject([]byte(testConfig))
		if err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"not json", `{`, "not valid JSON"},
		{"array", `[]`, "must be a JSON object"},
		{"trailing", `{} {}`, "not valid JSON"},
		{"missing bot", base(func(m map[string]any) { delete(m, "bot") }), "config.bot is missing"},
		{"missing GUI", base(func(m map[string]any) { delete(m, "GUI") }), "config.GUI is missing"},
		{"pairs not object", base(func(m map[string]any) { m["pairs"] = []any{} }), "config.pairs must be an object"},
		{"exchange not object", base(func(m map[string]any) { m["exchanges"].(map[string]any)["binance"] = 1 }), "config.exchanges.binance must be an object"},
		{"strategy not object", base(func(m map[string]any) { m["strategies"].(map[string]any)["gain"] = "x" }), "config.strategies.gain must be an object"},
		{"bad exchange name", base(func(m map[string]any) { m["exchanges"].(map[string]any)["bin/ance"] = map[string]any{} }), `exchange name "bin/ance" must be`},
		{"bad strategy name", base(func(m map[string]any) { m["strategies"].(map[string]any)["a/b"] = map[string]any{} }), `strategy name "a/b" must be`},
		{"wallet number", base(func(m map[string]any) { m["bot"].(map[string]any)["service_wallet"] = 1 }), "service_wallet must be a string"},
		{"simulator string", base(func(m map[string]any) { m["bot"].(map[string]any)["SIMULATOR"] = "yes" }), "SIMULATOR must be a boolean"},
		{"unknown strategy", base(func(m map[string]any) { delete(m["strategies"].(map[string]any), "gain") }), `strategy "gain" is not in config.strategies`},
		{"unknown exchange", base(func(m map[string]any) { delete(m["exchanges"].(map[string]any), "binance") }), `exchange "binance" is not in config.exchanges`},
		{"bad pair", base(func(m map[string]any) {
			m["pairs"].(map[string]any)["binance"].(map[string]any)["BTC"] = map[string]any{"strategy": "gain"}
		}), "config.pairs.binance.BTC"},
		{"override nested", base(func(m map[string]any) {
			m["pairs"].(map[string]any)["binance"].(map[string]any)["USDT-XRP"] = map[string]any{"strategy": "gain", "override": map[string]any{"X": []any{}}}
		}), "override.X must be a number"},
		{"enabled string", base(func(m map[string]any) {
			m["pairs"].(map[string]any)["binance"].(map[string]any)["USDT-XRP"] = map[string]any{"strategy": "gain", "enabled": "yes"}
		}), "enabled must be a boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.doc))
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tc.want) {
				t.Fatalf("err=%v, want EINVALID containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigEdits(t *testing.T) {
	c, err := ParseConfig([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := c.WithPair(PairConfig{Exchange: "binance", Pair: "USDT-XRP", Strategy: "manual", Enabled: true, Override: map[string]any{"A": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Pair("binance", "USDT-XRP"); ok {
		t.Fatal("WithPair changed the original")
	}
	if p, ok := c2.Pair("binance", "USDT-XRP"); !ok || p.Strategy != "manual" {
		t.Fatalf("added pair=%+v %v", p, ok)
	}
	if _, err := c.WithPair(PairConfig{Exchange: "kraken", Pair: "USDT-XRP", Strategy: "gain"}); ErrorCode(err) != EINVALID {
		t.Fatalf("unknown exchange: err=%v", err)
	}
	if _, err := c.WithPair(PairConfig{Exchange: "binance", Pair: "USDT-XRP", Strategy: "nope"}); ErrorCode(err) != EINVALID {
		t.Fatalf("unknown strategy: err=%v", err)
	}
	if _, err := c.WithoutPair("binance", "USDT-DOGE"); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("remove unknown pair: err=%v", err)
	}
	c3, err := c2.WithoutPair("binance", "USDT-XRP")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c3.Pair("binance", "USDT-XRP"); ok {
		t.Fatal("pair still there")
	}
	if _, err := c.WithoutStrategy("gain"); ErrorCode(err) != ECONFLICT {
		t.Fatalf("remove used strategy: err=%v", err)
	}
	if _, err := c.WithoutStrategy("nope"); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("remove unknown strategy: err=%v", err)
	}
	c4, err := c.WithStrategy("grid", map[string]any{"STEP": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := c4.Strategy("grid"); !ok || s["STEP"] != json.Number("0.5") {
		t.Fatalf("strategy=%v %v", s, ok)
	}
	c5, err := c4.WithoutStrategy("manual")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c5.Strategy("manual"); ok {
		t.Fatal("strategy still there")
	}
}

func TestConfigSecrets(t *testing.T) {
	c, err := ParseConfig([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	stripped, _ := json.Marshal(c.WithoutSecrets())
	masked, _ := json.Marshal(c.Masked())
	for _, secret := range []string{`"k1"`, `"s1"`} {
		if strings.Contains(string(stripped), secret) || strings.Contains(string(masked), secret) {
			t.Fatalf("secret %s left in\n%s\n%s", secret, stripped, masked)
		}
	}
	if strings.Contains(string(masked), "0xWALLET") {
		t.Fatalf("wallet not masked: %s", masked)
	}
	ex, _ := c.Masked().Exchange("binance")
	if ex["key"] != secrets.Mask || ex["secret"] != secrets.Mask || ex["fee"] != json.Number("0.1") {
		t.Fatalf("masked exchange=%v", ex)
	}
	ex, _ = c.WithoutSecrets().Exchange("binance")
	if _, ok := ex["key"]; ok {
		t.Fatalf("stripped exchange=%v", ex)
	}
}

func TestSecretBox(t *testing.T) {
	key := make([]byte, 32)
	key[0] = 1
	box, err := secrets.NewSecretBox(key)
	if err != nil {
		t.Fatal(err)
	}
	a, b := box.Seal("hunter2"), box.Seal("hunter2")
	if a == b || strings.Contains(a, "hunter2") {
		t.Fatalf("seal not randomized or leaks: %q %q", a, b)
	}
	if got, err := box.Open(a); err != nil || got != "hunter2" {
		t.Fatalf("Open=%q,%v", got, err)
	}
	other, _ := secrets.NewSecretBox(make([]byte, 32))
	if _, err := other.Open(a); ErrorCode(err) != EINVALID {
		t.Fatalf("wrong key: err=%v", err)
	}
	if _, err := box.Open("!!"); ErrorCode(err) != EINVALID {
		t.Fatalf("not base64: err=%v", err)
	}
	if _, err := box.Open("AAAA"); ErrorCode(err) != EINVALID {
		t.Fatalf("short: err=%v", err)
	}
	if _, err := secrets.NewSecretBox(make([]byte, 16)); ErrorCode(err) != EINVALID {
		t.Fatalf("short key: err=%v", err)
	}
}
