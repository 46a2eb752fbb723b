package domain

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tradeledger/tradeledger/domain/jsonscan"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// Config is the configuration document (docs/api.md, "Configuration"):
// a JSON object with the sections bot, exchanges, pairs, strategies and GUI,
// and any other sections a client keeps there. A Config is an immutable
// value: accessors return copies, and the With… methods return a new Config.
// The zero Config is empty (no sections); ParseConfig never returns one.
//
// Numbers are kept exactly as written (json.Number), so a document read and
// written back is unchanged apart from key order and spacing.
type Config struct {
	doc map[string]any
}

// PairConfig is one config.pairs.<exchange>.<pair> entry.
type PairConfig struct {
	Exchange, Pair, Strategy string
	Enabled                  bool
	// Override holds strategy parameters (numbers, strings or booleans)
	// that take precedence over the strategy's settings.
	Override map[string]any
}

// Config sections every document must have.
var configSections = []string{"bot", "exchanges", "pairs", "strategies", "GUI"}

// ParseConfig parses and validates a configuration document. It returns
// EINVALID naming the first problem: not a JSON object, a missing section
// or one that is not an object, a pair on an unknown exchange, a pair whose
// strategy does not exist, a malformed pair symbol or pair entry.
func ParseConfig(b []byte) (Config, error) {
	v, err := jsonscan.DecodeJSONValue(b)
	if err != nil {
		return Config{}, Errorf(EINVALID, "configuration is not valid JSON: %v", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return Config{}, Errorf(EINVALID, "configuration must be a JSON object")
	}
	return newConfig(doc)
}

// ConfigFromMap validates doc like ParseConfig and returns it as a Config.
// doc is copied. It is how documents are written (config/update,
// license/keys/edit, init, import), so it also range-checks the values
// whose meaning is known (CheckValues).
func ConfigFromMap(doc map[string]any) (Config, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return Config{}, Errorf(EINVALID, "configuration cannot be encoded: %v", err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return Config{}, err
	}
	if err := c.CheckValues(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func newConfig(doc map[string]any) (Config, error) {
	if err := validateConfig(doc); err != nil {
		return Config{}, err
	}
	return Config{doc: doc}, nil
}

func validateConfig(doc map[string]any) error {
	for _, s := range configSections {
		v, ok := doc[s]
		if !ok {
			return Errorf(EINVALID, "config.%s is missing", s)
		}
		if _, ok := v.(map[string]any); !ok {
			return Errorf(EINVALID, "config.%s must be an object", s)
		}
	}
	bot := doc["bot"].(map[string]any)
	if w, ok := bot["service_wallet"]; ok {
		if _, ok := w.(string); !ok {
			return Errorf(EINVALID, "config.bot.service_wallet must be a string")
		}
	}
	if s, ok := bot["SIMULATOR"]; ok {
		if _, ok := s.(bool); !ok {
			return Errorf(EINVALID, "config.bot.SIMULATOR must be a boolean")
		}
	}
	exchanges, err := checkObjects(doc, "exchanges", ValidateExchangeName)
	if err != nil {
		return err
	}
	strategies, err := checkObjects(doc, "strategies", ValidateStrategyName)
	if err != nil {
		return err
	}
	for ex, v := range doc["pairs"].(map[string]any) {
		pairs, ok := v.(map[string]any)
		if !ok {
			return Errorf(EINVALID, "config.pairs.%s must be an object", ex)
		}
		if _, ok := exchanges[ex]; !ok {
			return Errorf(EINVALID, "config.pairs.%s: exchange %q is not in config.exchanges", ex, ex)
		}
		for pair, pv := range pairs {
			if _, err := pairFromValue(ex, pair, pv, strategies); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkObjects checks that every entry of config.<section> is an object
// under a name valid accepts, and returns the section.
func checkObjects(doc map[string]any, section string, valid func(string) error) (map[string]any, error) {
	m := doc[section].(map[string]any)
	for name, v := range m {
		if err := valid(name); err != nil {
			return nil, err
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, Errorf(EINVALID, "config.%s.%s must be an object", section, name)
		}
	}
	return m, nil
}

func pairFromValue(ex, pair string, v any, strategies map[string]any) (PairConfig, error) {
	where := "config.pairs." + ex + "." + pair
	if _, _, err := SplitPair(pair); err != nil {
		return PairConfig{}, Errorf(EINVALID, "%s: %s", where, ErrorMessage(err))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return PairConfig{}, Errorf(EINVALID, "%s must be an object", where)
	}
	p := PairConfig{Exchange: ex, Pair: pair, Enabled: true, Override: map[string]any{}}
	s, ok := m["strategy"].(string)
	if !ok || s == "" {
		return PairConfig{}, Errorf(EINVALID, "%s.strategy must be a non-empty string", where)
	}
	if _, ok := strategies[s]; !ok {
		return PairConfig{}, Errorf(EINVALID, "%s.strategy: strategy %q is not in config.strategies", where, s)
	}
	p.Strategy = s
	if e, ok := m["enabled"]; ok {
		b, ok := e.(bool)
		if !ok {
			return PairConfig{}, Errorf(EINVALID, "%s.enabled must be a boolean", where)
		}
		p.Enabled = b
	}
	if o, ok := m["override"]; ok && o != nil {
		om, ok := o.(map[string]any)
		if !ok {
			return PairConfig{}, Errorf(EINVALID, "%s.override must be an object", where)
		}
		for k, v := range om {
			if err := validateParam(where+".override."+k, v); err != nil {
				return PairConfig{}, err
			}
		}
		p.Override = jsonscan.Clone(om).(map[string]any)
	}
	return p, nil
}

// validateParam accepts the scalar values strategy parameters take.
func validateParam(where string, v any) error {
	switch v.(type) {
	case json.Number, string, bool, float64:
		return nil
	}
	return Errorf(EINVALID, "%s must be a number, a string or a boolean", where)
}

// ValidateExchangeName returns EINVALID unless name is a usable exchange
// name: not empty, at most 64 bytes of valid UTF-8, no slash, no control
// characters (an instance suffix such as "binance#2" is fine).
func ValidateExchangeName(name string) error { return validName("exchange", name) }

// ValidateStrategyName returns EINVALID unless name is a usable strategy
// name: 1-64 bytes of valid UTF-8, no slash, no control characters.
func ValidateStrategyName(name string) error { return validName("strategy", name) }

// validName returns EINVALID unless name is 1-64 bytes of valid UTF-8
// without slashes or control characters; what names its kind.
func validName(what, name string) error {
	if name == "" || len(name) > 64 || strings.ContainsAny(name, "/\\") || hasControl(name) || !utf8.ValidString(name) {
		return Errorf(EINVALID, "%s name %.64q must be 1-64 characters without slashes", what, name)
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// MarshalJSON encodes the document (keys sorted). The zero Config is {}.
func (c Config) MarshalJSON() ([]byte, error) {
	if c.doc == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(c.doc)
}

// UnmarshalJSON parses and validates like ParseConfig.
func (c *Config) UnmarshalJSON(b []byte) error {
	parsed, err := ParseConfig(b)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// IsZero reports whether c is the zero (empty) Config.
func (c Config) IsZero() bool { return c.doc == nil }

// Map returns a deep copy of the document.
func (c Config) Map() map[string]any {
	if c.doc == nil {
		return map[string]any{}
	}
	return jsonscan.Clone(c.doc).(map[string]any)
}

// Section returns a copy of the named top-level section, if it is an object.
func (c Config) Section(name string) (map[string]any, bool) {
	m, ok := c.doc[name].(map[string]any)
	if !ok {
		return nil, false
	}
	return jsonscan.Clone(m).(map[string]any), true
}

func (c Config) section(name string) map[string]any {
	m, _ := c.doc[name].(map[string]any)
	return m
}

// Wallet returns bot.service_wallet, or "".
func (c Config) Wallet() string {
	w, _ := c.section("bot")["service_wallet"].(string)
	return w
}

// Simulator returns bot.SIMULATOR (false when absent).
func (c Config) Simulator() bool {
	s, _ := c.section("bot")["SIMULATOR"].(bool)
	return s
}

// ReportingCurrency returns bot.REPORTING_CURRENCY, the currency PNL answers
// over several quote currencies are converted into, or "" when unset (the
// PNL read model then picks the quote currency with the most fills).
func (c Config) ReportingCurrency() string {
	s, _ := c.section("bot")["REPORTING_CURRENCY"].(string)
	return s
}

// PnlMethod returns bot.PNL_METHOD, the lot matching the reports use when
// a request names none, and whether it is set (CheckValues refuses a value
// that ParsePnlMethod does not read). The Gunbot PNL routes keep the
// service's --pnl-method whatever it says.
func (c Config) PnlMethod() (PnlMethod, bool) {
	return botChoice(c, "PNL_METHOD", ParsePnlMethod)
}

// CostBasisScope returns bot.COST_BASIS_SCOPE, the cost basis scope the
// books use when a request names none (ScopeAccount when unset), and
// whether it is set (CheckValues refuses a value ParseCostBasisScope does
// not read).
func (c Config) CostBasisScope() (CostBasisScope, bool) {
	return botChoice(c, "COST_BASIS_SCOPE", ParseCostBasisScope)
}

// botChoice reads bot.<key> with parse, and says whether it is set to a
// value parse reads; unset, it is what parse gives for "".
func botChoice[T any](c Config, key string, parse func(string) (T, error)) (T, bool) {
	s, ok := c.section("bot")[key].(string)
	v, err := parse(s)
	return v, ok && err == nil
}

// ExchangeNames returns the names of config.exchanges, sorted.
func (c Config) ExchangeNames() []string { return sortedKeys(c.section("exchanges")) }

// Exchange returns a copy of config.exchanges.<name>.
func (c Config) Exchange(name string) (map[string]any, bool) { return c.entry("exchanges", name) }

// Pairs returns every config.pairs entry, sorted by exchange then pair.
func (c Config) Pairs() []PairConfig {
	var out []PairConfig
	strategies := c.section("strategies")
	pairs := c.section("pairs")
	for _, ex := range sortedKeys(pairs) {
		m, _ := pairs[ex].(map[string]any)
		for _, pair := range sortedKeys(m) {
			if p, err := pairFromValue(ex, pair, m[pair], strategies); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// Pair returns config.pairs.<exchange>.<pair>.
func (c Config) Pair(exchange, pair string) (PairConfig, bool) {
	m, _ := c.section("pairs")[exchange].(map[string]any)
	v, ok := m[pair]
	if !ok {
		return PairConfig{}, false
	}
	p, err := pairFromValue(exchange, pair, v, c.section("strategies"))
	return p, err == nil
}

// StrategyNames returns the names of config.strategies, sorted.
func (c Config) StrategyNames() []string { return sortedKeys(c.section("strategies")) }

// Strategy returns a copy of config.strategies.<name>.
func (c Config) Strategy(name string) (map[string]any, bool) { return c.entry("strategies", name) }

// entry returns a copy of config.<section>.<name>, false when it is not
// an object.
func (c Config) entry(section, name string) (map[string]any, bool) {
	m, ok := c.section(section)[name].(map[string]any)
	if !ok {
		return nil, false
	}
	return jsonscan.Clone(m).(map[string]any), true
}

// PairsUsing returns the pairs whose strategy is name.
func (c Config) PairsUsing(strategy string) []PairConfig {
	var out []PairConfig
	for _, p := range c.Pairs() {
		if p.Strategy == strategy {
			out = append(out, p)
		}
	}
	return out
}

// WithPair returns c with config.pairs.<p.Exchange>.<p.Pair> set to
// {strategy, enabled, override}. EINVALID when the exchange or strategy
// does not exist or the entry is malformed.
func (c Config) WithPair(p PairConfig) (Config, error) {
	if _, ok := c.section("exchanges")[p.Exchange]; !ok {
		return Config{}, Errorf(EINVALID, "exchange %q is not in config.exchanges", p.Exchange)
	}
	if _, ok := c.section("strategies")[p.Strategy]; !ok {
		return Config{}, Errorf(EINVALID, "strategy %q is not in config.strategies", p.Strategy)
	}
	doc := c.Map()
	pairs := doc["pairs"].(map[string]any)
	m, _ := pairs[p.Exchange].(map[string]any)
	if m == nil {
		m = map[string]any{}
		pairs[p.Exchange] = m
	}
	override := map[string]any{}
	if p.Override != nil {
		override = jsonscan.Clone(p.Override).(map[string]any)
	}
	m[p.Pair] = map[string]any{"strategy": p.Strategy, "enabled": p.Enabled, "override": override}
	return reparse(doc)
}

// WithoutPair returns c without config.pairs.<exchange>.<pair> (ENOTFOUND
// when it is not there). An exchange left with no pairs keeps an empty
// object.
func (c Config) WithoutPair(exchange, pair string) (Config, error) {
	if _, ok := c.Pair(exchange, pair); !ok {
		return Config{}, Errorf(ENOTFOUND, "pair %s is not configured on exchange %s", pair, exchange)
	}
	doc := c.Map()
	delete(doc["pairs"].(map[string]any)[exchange].(map[string]any), pair)
	return reparse(doc)
}

// WithStrategy returns c with config.strategies.<name> set to settings (an
// empty object when nil).
func (c Config) WithStrategy(name string, settings map[string]any) (Config, error) {
	if err := ValidateStrategyName(name); err != nil {
		return Config{}, err
	}
	if settings == nil {
		settings = map[string]any{}
	}
	doc := c.Map()
	doc["strategies"].(map[string]any)[name] = jsonscan.Clone(settings)
	return reparse(doc)
}

// WithoutStrategy returns c without config.strategies.<name>: ENOTFOUND
// when it is not there, ECONFLICT while a pair uses it.
func (c Config) WithoutStrategy(name string) (Config, error) {
	if _, ok := c.section("strategies")[name]; !ok {
		return Config{}, Errorf(ENOTFOUND, "strategy %q is not in config.strategies", name)
	}
	if used := c.PairsUsing(name); len(used) > 0 {
		return Config{}, Errorf(ECONFLICT, "strategy %q is used by pair %s on %s; remove or change that pair first", name, used[0].Pair, used[0].Exchange)
	}
	doc := c.Map()
	delete(doc["strategies"].(map[string]any), name)
	return reparse(doc)
}

// WithExchanges returns c with config.exchanges replaced by exchanges.
func (c Config) WithExchanges(exchanges map[string]any) (Config, error) {
	doc := c.Map()
	doc["exchanges"] = jsonscan.Clone(exchanges)
	return reparse(doc)
}

// reparse round-trips doc through JSON so that every value has the types
// ParseConfig produces (json.Number, map[string]any, []any), then validates.
func reparse(doc map[string]any) (Config, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return Config{}, Errorf(EINVALID, "configuration cannot be encoded: %v", err)
	}
	return ParseConfig(b)
}

// DecodeJSONObject decodes b as a JSON object with numbers kept exactly
// (json.Number); EINVALID otherwise.
func DecodeJSONObject(b []byte) (map[string]any, error) {
	v, err := jsonscan.DecodeJSONValue(b)
	if err != nil {
		return nil, Errorf(EINVALID, "not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(EINVALID, "must be a JSON object")
	}
	return m, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WithoutSecrets returns c with every secret field removed from
// config.exchanges (what a ConfigReplaced event carries).
func (c Config) WithoutSecrets() Config {
	if c.doc == nil {
		return c
	}
	doc := c.Map()
	eachExchange(doc, secrets.StripSecrets)
	return Config{doc: doc}
}

// eachExchange replaces every entry of doc's exchanges that is an object
// by f of it (doc is a copy the caller owns).
func eachExchange(doc map[string]any, f func(map[string]any) map[string]any) {
	ex := doc["exchanges"].(map[string]any)
	for name, v := range ex {
		if m, ok := v.(map[string]any); ok {
			ex[name] = f(m)
		}
	}
}

// Masked returns c with every non-empty secret field of config.exchanges and
// bot.service_wallet shown as Mask (what responses show).
func (c Config) Masked() Config {
	if c.doc == nil {
		return c
	}
	doc := c.Map()
	eachExchange(doc, secrets.MaskExchange)
	if bot, ok := doc["bot"].(map[string]any); ok {
		if w, ok := bot["service_wallet"].(string); ok && w != "" {
			bot["service_wallet"] = secrets.Mask
		}
	}
	return Config{doc: doc}
}
