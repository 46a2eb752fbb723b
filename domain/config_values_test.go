package domain

import (
	"encoding/json"
	"strings"
	"testing"
)

// Values whose meaning is known are range-checked when a document is
// written (ConfigFromMap); unknown parameters are kept as given; reading a
// stored document back (ParseConfig) does not apply the checks.
func TestConfigFromMapChecksValues(t *testing.T) {
	doc := func(edit func(ex, sim, strat, pairs map[string]any)) map[string]any {
		ex := map[string]any{"delay": 10}
		sim := map[string]any{"fee": "0.001", "balances": map[string]any{"USDT": 1000, "BTC": 0}}
		ex["simulator"] = sim
		strat := map[string]any{"TRADING_LIMIT": 100, "STEP": 1, "DELAY": "5", "BUY_ENABLED": "true", "MY_OWN": -7, "NOTE": "x"}
		pairs := map[string]any{"USDT-BTC": map[string]any{"strategy": "s", "override": map[string]any{"GAIN": 0, "EMA_PERIOD": 16}}}
		edit(ex, sim, strat, pairs)
		return map[string]any{
			"bot": map[string]any{}, "GUI": map[string]any{},
			"exchanges":  map[string]any{"paper": ex},
			"strategies": map[string]any{"s": strat},
			"pairs":      map[string]any{"paper": pairs},
		}
	}
	ok, err := ConfigFromMap(doc(func(_, _, _, _ map[string]any) {}))
	if err != nil {
		t.Fatalf("in-range document: %v", err)
	}
	if s, _ := ok.Strategy("s"); s["MY_OWN"] == nil || s["NOTE"] != "x" {
		t.Fatalf("unknown parameters not kept: %v", s)
	}
	for _, tc := range []struct {
		name string
		edit func(ex, sim, strat, pairs map[string]any)
		want string
	}{
		{"fee 1", func(_, sim, _, _ map[string]any) { sim["fee"] = 1 }, "config.exchanges.paper.simulator.fee must be a finite number ≥ 0 and < 1"},
		{"fee negative", func(_, sim, _, _ map[string]any) { sim["fee"] = "-0.001" }, "simulator.fee"},
		{"fee not a number", func(_, sim, _, _ map[string]any) { sim["fee"] = "cheap" }, "simulator.fee"},
		{"fee NaN string", func(_, sim, _, _ map[string]any) { sim["fee"] = "NaN" }, "simulator.fee"},
		{"balance negative", func(_, sim, _, _ map[string]any) { sim["balances"] = map[string]any{"ETH": -1} }, "simulator.balances.ETH"},
		{"balance too large to be finite here", func(_, sim, _, _ map[string]any) { sim["balances"] = map[string]any{"ETH": 1e300} }, "simulator.balances.ETH"},
		{"fee asset with punctuation", func(_, sim, _, _ map[string]any) { sim["feeAsset"] = "BN-B" }, `config.exchanges.paper.simulator.feeAsset must be a currency symbol of letters and digits (e.g. BNB) or "received"`},
		{"fee asset not a string", func(_, sim, _, _ map[string]any) { sim["feeAsset"] = 7 }, "simulator.feeAsset"},
		{"fee asset price 0", func(_, sim, _, _ map[string]any) { sim["feeAssetPrice"] = 0 }, "config.exchanges.paper.simulator.feeAssetPrice must be a finite number > 0"},
		{"exchange fee asset with a space", func(ex, _, _, _ map[string]any) { ex["feeAsset"] = "BN B" }, "config.exchanges.paper.feeAsset must be a currency symbol"},
		{"exchange delay 0", func(ex, _, _, _ map[string]any) { ex["delay"] = 0 }, "config.exchanges.paper.delay must be a whole number ≥ 1 (seconds)"},
		{"exchange delay fraction", func(ex, _, _, _ map[string]any) { ex["delay"] = 0.5 }, "config.exchanges.paper.delay"},
		{"trading limit 0", func(_, _, s, _ map[string]any) { s["TRADING_LIMIT"] = 0 }, "config.strategies.s.TRADING_LIMIT must be a finite number > 0"},
		{"step 100", func(_, _, s, _ map[string]any) { s["STEP"] = 100 }, "config.strategies.s.STEP must be a finite number > 0 and < 100 (percent)"},
		{"DELAY 0", func(_, _, s, _ map[string]any) { s["DELAY"] = "0" }, "config.strategies.s.DELAY must be a whole number ≥ 1 (seconds)"},
		{"PERIOD negative", func(_, _, s, _ map[string]any) { s["PERIOD"] = -5 }, "config.strategies.s.PERIOD"},
		{"BUY_ENABLED maybe", func(_, _, s, _ map[string]any) { s["BUY_ENABLED"] = "maybe" }, "config.strategies.s.BUY_ENABLED must be true or false"},
		{"override GAIN negative", func(_, _, _, p map[string]any) {
			p["USDT-BTC"] = map[string]any{"strategy": "s", "override": map[string]any{"GAIN": -1}}
		}, "config.pairs.paper.USDT-BTC.override.GAIN must be a finite number ≥ 0"},
		{"pair symbol with punctuation", func(_, _, _, p map[string]any) { p["USDT-BTC!"] = map[string]any{"strategy": "s"} }, "config.pairs.paper.USDT-BTC!"},
		{"pair symbol too long", func(_, _, _, p map[string]any) {
			p["USDT-"+strings.Repeat("B", 30)] = map[string]any{"strategy": "s"}
		}, "at most 32 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := doc(tc.edit)
			_, err := ConfigFromMap(d)
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tc.want) {
				t.Fatalf("err = %v, want EINVALID containing %q", err, tc.want)
			}
		})
	}
	// ParseConfig (reading the log) keeps an out-of-range value.
	if _, err := ParseConfig([]byte(`{"bot":{},"GUI":{},"pairs":{},"exchanges":{"x":{"delay":0}},"strategies":{"s":{"STEP":100}}}`)); err != nil {
		t.Fatalf("ParseConfig of a stored out-of-range document: %v", err)
	}
}

func TestValidatePair(t *testing.T) {
	for _, p := range []string{"USDT-BTC", "usdt-1inch", "A-B", "USDT-" + strings.Repeat("B", 27)} {
		if err := ValidatePair(p); err != nil {
			t.Errorf("ValidatePair(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "BTC", "USDT-", "-BTC", "USDT-BTC-X", "USDT_BTC", "USDT-BTC ", "USDT-BTÇ", "USDT-B/C", "USDT-" + strings.Repeat("B", 28), "USDT-BTC\x00"} {
		if err := ValidatePair(p); ErrorCode(err) != EINVALID {
			t.Errorf("ValidatePair(%q) = %v, want EINVALID", p, err)
		}
	}
	long := "USDT-" + strings.Repeat("B", 5000)
	if msg := ErrorMessage(ValidatePair(long)); len(msg) > 200 {
		t.Errorf("message echoes the whole symbol: %d bytes", len(msg))
	}
}

// FuzzConfigDocument: any bytes either parse into a Config or are EINVALID;
// a parsed Config encodes and parses back to the same document; and the
// write-time checks (ConfigFromMap) refuse exactly what CheckValues
// refuses, naming a config path.
func FuzzConfigDocument(f *testing.F) {
	seeds := []string{
		testConfig,
		`{"bot":{},"GUI":{},"pairs":{},"exchanges":{"x":{"delay":0,"simulator":{"fee":"1","balances":{"A":-1}}}},"strategies":{"s":{"STEP":100}}}`,
		`{"bot":{},"GUI":{},"pairs":{"x":{"USDT-BTC":{"strategy":"s","override":{"DELAY":"0"}}}},"exchanges":{"x":{}},"strategies":{"s":{}}}`,
		`{"bot":{},"GUI":{},"pairs":{"x":{"USDT-BTC!":{"strategy":"s"}}},"exchanges":{"x":{}},"strategies":{"s":{"TRADING_LIMIT":1e400}}}`,
		`{"bot":{"service_wallet":1}}`, `{}}`, `[]`, `{"a":1,"a":2}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("ParseConfig(%q) = %v, want EINVALID", b, err)
			}
			return
		}
		out, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		again, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("%s does not parse back: %v", out, err)
		}
		if out2, _ := again.MarshalJSON(); string(out2) != string(out) {
			t.Fatalf("round trip changed the document:\n%s\n%s", out, out2)
		}
		checkErr := c.CheckValues()
		_, writeErr := ConfigFromMap(c.Map())
		if (checkErr == nil) != (writeErr == nil) {
			t.Fatalf("CheckValues = %v, ConfigFromMap = %v", checkErr, writeErr)
		}
		if checkErr != nil && (ErrorCode(checkErr) != EINVALID || !strings.HasPrefix(ErrorMessage(checkErr), "config.")) {
			t.Fatalf("CheckValues = %v, want EINVALID naming a config path", checkErr)
		}
	})
}

// bot.REPORTING_CURRENCY is a currency symbol or absent; ReportingCurrency
// reads it back ("" when absent).
func TestReportingCurrency(t *testing.T) {
	doc := func(v any) map[string]any {
		bot := map[string]any{}
		if v != nil {
			bot["REPORTING_CURRENCY"] = v
		}
		return map[string]any{"bot": bot, "GUI": map[string]any{}, "exchanges": map[string]any{}, "strategies": map[string]any{}, "pairs": map[string]any{}}
	}
	for _, tc := range []struct {
		v    any
		want string // "" : accepted
	}{
		{nil, ""}, {"USDT", ""}, {"BTC", ""},
		{"", "config.bot.REPORTING_CURRENCY must be a currency symbol"},
		{"US-DT", "REPORTING_CURRENCY"}, {42, "REPORTING_CURRENCY"}, {strings.Repeat("X", 33), "REPORTING_CURRENCY"},
	} {
		c, err := ConfigFromMap(doc(tc.v))
		if tc.want == "" {
			if err != nil {
				t.Fatalf("%v: %v", tc.v, err)
			}
			want, _ := tc.v.(string)
			if got := c.ReportingCurrency(); got != want {
				t.Fatalf("ReportingCurrency() = %q, want %q", got, want)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tc.want) {
			t.Fatalf("%v: err = %v, want EINVALID containing %q", tc.v, err, tc.want)
		}
	}
}

// bot.PNL_METHOD names a lot matching method or is absent; PnlMethod reads
// it back (LOFO, false when absent).
func TestPnlMethodSetting(t *testing.T) {
	doc := func(v any) map[string]any {
		bot := map[string]any{}
		if v != nil {
			bot["PNL_METHOD"] = v
		}
		return map[string]any{"bot": bot, "GUI": map[string]any{}, "exchanges": map[string]any{}, "strategies": map[string]any{}, "pairs": map[string]any{}}
	}
	for _, tc := range []struct {
		v    any
		want PnlMethod
		set  bool
		err  bool
	}{
		{nil, LOFO, false, false}, {"hifo", HIFO, true, false}, {"FIFO", FIFO, true, false}, {"average", Average, true, false},
		{"", 0, false, true}, {"fofo", 0, false, true}, {3, 0, false, true},
	} {
		c, err := ConfigFromMap(doc(tc.v))
		if tc.err {
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "config.bot.PNL_METHOD must be lofo") {
				t.Errorf("%v: err = %v, want EINVALID naming config.bot.PNL_METHOD", tc.v, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.v, err)
		}
		if m, set := c.PnlMethod(); m != tc.want || set != tc.set {
			t.Errorf("%v: PnlMethod() = %v, %v; want %v, %v", tc.v, m, set, tc.want, tc.set)
		}
	}
}

// bot.FEE_RATE_MAX_AGE is whole seconds ≥ 1; DecodePnlConfig reads it in
// ms (0 when unset).
func TestFeeRateMaxAge(t *testing.T) {
	for _, tc := range []struct {
		v    any
		ms   int64
		want string // "": accepted
	}{
		{nil, 0, ""}, {3600, 3_600_000, ""}, {"120", 120_000, ""},
		{0, 0, "config.bot.FEE_RATE_MAX_AGE must be a whole number ≥ 1 (seconds)"},
		{1.5, 0, "FEE_RATE_MAX_AGE"}, {"an hour", 0, "FEE_RATE_MAX_AGE"},
	} {
		bot := map[string]any{}
		if tc.v != nil {
			bot["FEE_RATE_MAX_AGE"] = tc.v
		}
		doc := map[string]any{"bot": bot, "GUI": map[string]any{}, "exchanges": map[string]any{}, "strategies": map[string]any{}, "pairs": map[string]any{}}
		_, err := ConfigFromMap(doc)
		if tc.want != "" {
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tc.want) {
				t.Errorf("%v: err = %v, want EINVALID containing %q", tc.v, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.v, err)
		}
		b, _ := json.Marshal(map[string]any{"config": doc})
		if c, ok := DecodePnlConfig(b); !ok || c.FeeRateMaxAge != tc.ms {
			t.Errorf("%v: FeeRateMaxAge = %d, want %d", tc.v, c.FeeRateMaxAge, tc.ms)
		}
	}
}

// bot.COST_BASIS_SCOPE is account or universal, or absent (account);
// CostBasisScope and DecodePnlConfig read it back, and any other value is
// refused naming the setting.
func TestCostBasisScopeSetting(t *testing.T) {
	doc := func(v any) map[string]any {
		bot := map[string]any{}
		if v != nil {
			bot["COST_BASIS_SCOPE"] = v
		}
		return map[string]any{"bot": bot, "GUI": map[string]any{}, "exchanges": map[string]any{}, "strategies": map[string]any{}, "pairs": map[string]any{}}
	}
	for _, tc := range []struct {
		v    any
		want CostBasisScope
		set  bool
		err  bool
	}{
		{nil, ScopeAccount, false, false}, {"universal", ScopeUniversal, true, false}, {"Account", ScopeAccount, true, false},
		{"", 0, false, true}, {"wallet", 0, false, true}, {1, 0, false, true},
	} {
		c, err := ConfigFromMap(doc(tc.v))
		if tc.err {
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "config.bot.COST_BASIS_SCOPE must be account or universal") {
				t.Errorf("%v: err = %v, want EINVALID naming config.bot.COST_BASIS_SCOPE", tc.v, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.v, err)
		}
		if s, set := c.CostBasisScope(); s != tc.want || set != tc.set {
			t.Errorf("%v: CostBasisScope() = %v, %v; want %v, %v", tc.v, s, set, tc.want, tc.set)
		}
		data, _ := json.Marshal(map[string]any{"config": doc(tc.v)})
		if pc, ok := DecodePnlConfig(data); !ok || pc.Scope != tc.want {
			t.Errorf("%v: DecodePnlConfig scope = %v, %v; want %v", tc.v, pc.Scope, ok, tc.want)
		}
	}
}

// TestParseChoiceNames: every accepted name, in any case, and the errors'
// texts.
func TestParseChoiceNames(t *testing.T) {
	for s, want := range map[string]CostBasisScope{"": ScopeAccount, "account": ScopeAccount, "Account": ScopeAccount, "UNIVERSAL": ScopeUniversal} {
		if got, err := ParseCostBasisScope(s); err != nil || got != want {
			t.Errorf("ParseCostBasisScope(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]PnlMethod{"": LOFO, "LoFo": LOFO, "fifo": FIFO, "LIFO": LIFO, "hifo": HIFO, "Avg": Average, "average": Average} {
		if got, err := ParsePnlMethod(s); err != nil || got != want {
			t.Errorf("ParsePnlMethod(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := ParseCostBasisScope("wallet"); ErrorCode(err) != EINVALID || ErrorMessage(err) != `cost basis scope "wallet" must be account or universal` {
		t.Errorf("ParseCostBasisScope(wallet) err = %v", err)
	}
	if m, err := ParsePnlMethod("fofo"); m != LOFO || ErrorCode(err) != EINVALID || ErrorMessage(err) != `pnl method "fofo" must be lofo, fifo, lifo, hifo or average` {
		t.Errorf("ParsePnlMethod(fofo) = %v, %v", m, err)
	}
}
