package domain

import (
	"fmt"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// Range checks of configuration values whose meaning is known, done when a
// document is written (ConfigFromMap, and the pair and strategy edits of the
// API through CheckStrategyParams), so that a value the service would
// refuse or silently replace by its default at run time is refused at the
// door with a message naming it. ParseConfig, which also reads documents
// back from the log, does not apply them: a log written before a rule
// existed still replays. Parameters without a rule are kept as given.

// valueRule is the range of one known numeric or boolean value.
type valueRule struct {
	boolean bool            // true or false (or "true"/"false")
	whole   bool            // a whole number
	min     decimal.Decimal // lowest value
	minOpen bool            // min itself is refused
	max     decimal.Decimal // highest value, when hasMax
	hasMax  bool
	maxOpen bool // max itself is refused
	unit    string
}

var (
	rulePositive    = valueRule{min: decimal.Zero, minOpen: true}
	ruleNonNegative = valueRule{min: decimal.Zero}
	ruleBool        = valueRule{boolean: true}
)

// strategyParamRules are the strategy parameters the built-in strategies
// and the core read (domain/strategy.go, exchange/engine), by the names they
// read them under, with the ranges those readers accept.
var strategyParamRules = map[string]valueRule{
	"TRADING_LIMIT":      rulePositive,
	"STEP":               {min: decimal.Zero, minOpen: true, max: decimal.DecimalFromInt(100), hasMax: true, maxOpen: true, unit: "percent"},
	"BUYLVL":             ruleNonNegative,
	"GAIN":               ruleNonNegative,
	"MIN_VOLUME_TO_SELL": ruleNonNegative,
	"EMA_PERIOD":         {whole: true, min: decimal.DecimalFromInt(1), unit: "candles"},
	"DELAY":              {whole: true, min: decimal.DecimalFromInt(1), unit: "seconds"},
	"PERIOD":             {whole: true, min: decimal.DecimalFromInt(1), unit: "minutes"},
	"BUY_ENABLED":        ruleBool,
	"SELL_ENABLED":       ruleBool,
}

// check returns EINVALID naming where unless v is in the rule's range.
func (r valueRule) check(where string, v any) error {
	p := StrategyParams{Settings: map[string]any{"v": v}}
	if r.boolean {
		if _, err := p.Bool("v", false); err != nil {
			return Errorf(EINVALID, "%s must be true or false, not %.40s", where, fmt.Sprint(v))
		}
		return nil
	}
	d, err := p.Decimal("v", decimal.Zero)
	ok := err == nil &&
		(r.min.Less(d) || (!r.minOpen && d == r.min)) &&
		(!r.hasMax || d.Less(r.max) || (!r.maxOpen && d == r.max)) &&
		(!r.whole || d.IsInt())
	if ok {
		return nil
	}
	return Errorf(EINVALID, "%s must be %s, not %.40s", where, r.describe(), fmt.Sprint(v))
}

func (r valueRule) describe() string {
	s := "a finite number"
	if r.whole {
		s = "a whole number"
	}
	lo := "≥"
	if r.minOpen {
		lo = ">"
	}
	s += " " + lo + " " + string(r.min.AppendTrimmed(nil))
	if r.hasMax {
		hi := "≤"
		if r.maxOpen {
			hi = "<"
		}
		s += " and " + hi + " " + string(r.max.AppendTrimmed(nil))
	}
	if r.unit != "" {
		s += " (" + r.unit + ")"
	}
	return s
}

// CheckStrategyParams returns EINVALID naming the first parameter of params
// (strategy settings or a pair's override; where is its path, e.g.
// "config.strategies.gain") whose meaning is known and whose value is out
// of range: TRADING_LIMIT > 0, 0 < STEP < 100, BUYLVL, GAIN and
// MIN_VOLUME_TO_SELL ≥ 0, EMA_PERIOD, DELAY (seconds) and PERIOD (minutes)
// whole numbers ≥ 1, BUY_ENABLED and SELL_ENABLED booleans; numbers may
// be written as strings, as the strategies read them. Other parameters
// are not checked.
func CheckStrategyParams(where string, params map[string]any) error {
	for _, k := range sortedKeys(params) {
		rule, ok := strategyParamRules[k]
		if !ok || params[k] == nil {
			continue
		}
		if err := rule.check(where+"."+k, params[k]); err != nil {
			return err
		}
	}
	return nil
}

// checkSymbol refuses v unless it is a currency symbol (letters and
// digits, as in a pair), or, with received, the word "received".
func checkSymbol(where string, v any, received bool) error {
	s, _ := v.(string)
	if (received && s == "received") || (s != "" && len(s) <= MaxPairLen && alnum(s)) {
		return nil
	}
	want := "a currency symbol of letters and digits (e.g. BNB)"
	if received {
		want += " or \"received\""
	}
	return Errorf(EINVALID, "%s must be %s, not %.40s", where, want, fmt.Sprint(v))
}

// CheckValues returns EINVALID naming the first value of c that is known
// and out of range: a pair symbol that ValidatePair refuses, strategy
// parameters (CheckStrategyParams) in config.strategies and in pair
// overrides, config.exchanges.<name>.delay (whole seconds ≥ 1), and the
// paper simulator's settings config.exchanges.<name>.simulator: fee, a
// rate in [0, 1), balances, amounts ≥ 0 (a zero starting balance is a
// real choice), feeAsset, a currency symbol or "received", and
// feeAssetPrice > 0; config.exchanges.<name>.feeAsset, a currency symbol;
// bot.REPORTING_CURRENCY, a currency symbol (letters and digits, as in a
// pair) or absent; bot.PNL_METHOD, a lot matching method (ParsePnlMethod)
// or absent; bot.FEE_RATE_MAX_AGE, whole seconds ≥ 1; bot.COST_BASIS_SCOPE,
// account or universal (ParseCostBasisScope), or absent; and every credential
// of an exchange entry a string (CheckCredentialTypes).
// ConfigFromMap calls it; see the note at
// the top of this file for why ParseConfig does not.
func (c Config) CheckValues() error {
	if err := checkBotValues(c.section("bot")); err != nil {
		return err
	}
	exchanges := c.section("exchanges")
	for _, name := range sortedKeys(exchanges) {
		entry, _ := exchanges[name].(map[string]any)
		if err := checkExchangeValues("config.exchanges."+name, entry); err != nil {
			return err
		}
	}
	strategies := c.section("strategies")
	for _, name := range sortedKeys(strategies) {
		settings, _ := strategies[name].(map[string]any)
		if err := CheckStrategyParams("config.strategies."+name, settings); err != nil {
			return err
		}
	}
	return checkPairValues(c.section("pairs"))
}

// checkBotValues checks config.bot's REPORTING_CURRENCY, PNL_METHOD,
// FEE_RATE_MAX_AGE and COST_BASIS_SCOPE (CheckValues).
func checkBotValues(bot map[string]any) error {
	if v, ok := bot["REPORTING_CURRENCY"]; ok && v != nil {
		s, _ := v.(string)
		if s == "" || len(s) > MaxPairLen || !alnum(s) {
			return Errorf(EINVALID, "config.bot.REPORTING_CURRENCY must be a currency symbol of letters and digits (e.g. USDT), not %.40s", fmt.Sprint(v))
		}
	}
	if v, ok := bot["PNL_METHOD"]; ok && v != nil {
		s, _ := v.(string)
		if _, err := ParsePnlMethod(s); err != nil || s == "" {
			return Errorf(EINVALID, "config.bot.PNL_METHOD must be %s, not %.40s", PnlMethodNames, fmt.Sprint(v))
		}
	}
	if v, ok := bot["FEE_RATE_MAX_AGE"]; ok && v != nil {
		if err := (valueRule{whole: true, min: decimal.DecimalFromInt(1), unit: "seconds"}).check("config.bot.FEE_RATE_MAX_AGE", v); err != nil {
			return err
		}
	}
	if v, ok := bot["COST_BASIS_SCOPE"]; ok && v != nil {
		s, _ := v.(string)
		if _, err := ParseCostBasisScope(s); err != nil || s == "" {
			return Errorf(EINVALID, "config.bot.COST_BASIS_SCOPE must be %s, not %.40s", CostBasisScopeNames, fmt.Sprint(v))
		}
	}
	return nil
}

// checkExchangeValues checks one exchange entry found at where: its
// credentials' types, delay, feeAsset and its simulator's settings
// (CheckValues).
func checkExchangeValues(where string, entry map[string]any) error {
	if err := secrets.CheckCredentialTypes(where, entry); err != nil {
		return err
	}
	if v, ok := entry["delay"]; ok && v != nil {
		if err := (valueRule{whole: true, min: decimal.DecimalFromInt(1), unit: "seconds"}).check(where+".delay", v); err != nil {
			return err
		}
	}
	if v, ok := entry["url"]; ok && v != nil {
		if err := CheckExchangeURL(where+".url", v); err != nil {
			return err
		}
	}
	sim, _ := entry["simulator"].(map[string]any)
	if v, ok := sim["fee"]; ok && v != nil {
		if err := (valueRule{min: decimal.Zero, max: decimal.DecimalFromInt(1), hasMax: true, maxOpen: true, unit: "a rate: 0.001 is 0.1%"}).check(where+".simulator.fee", v); err != nil {
			return err
		}
	}
	if v, ok := entry["feeAsset"]; ok && v != nil {
		if err := checkSymbol(where+".feeAsset", v, false); err != nil {
			return err
		}
	}
	if v, ok := sim["feeAsset"]; ok && v != nil {
		if err := checkSymbol(where+".simulator.feeAsset", v, true); err != nil {
			return err
		}
	}
	if v, ok := sim["feeAssetPrice"]; ok && v != nil {
		if err := rulePositive.check(where+".simulator.feeAssetPrice", v); err != nil {
			return err
		}
	}
	balances, _ := sim["balances"].(map[string]any)
	for _, asset := range sortedKeys(balances) {
		if err := ruleNonNegative.check(where+".simulator.balances."+asset, balances[asset]); err != nil {
			return err
		}
	}
	return nil
}

// checkPairValues checks every pair of config.pairs: its symbol
// (ValidatePair) and its override's strategy parameters (CheckValues).
func checkPairValues(pairs map[string]any) error {
	for _, ex := range sortedKeys(pairs) {
		m, _ := pairs[ex].(map[string]any)
		for _, pair := range sortedKeys(m) {
			where := "config.pairs." + ex + "." + pair
			if err := ValidatePair(pair); err != nil {
				return Errorf(EINVALID, "%s: %s", where, ErrorMessage(err))
			}
			entry, _ := m[pair].(map[string]any)
			override, _ := entry["override"].(map[string]any)
			if err := CheckStrategyParams(where+".override", override); err != nil {
				return err
			}
		}
	}
	return nil
}
