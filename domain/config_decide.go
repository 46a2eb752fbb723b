package domain

import (
	"crypto/subtle"
	"encoding/json"
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain/secrets"
)

// ConfigState is what configuration commands decide against: the current
// configuration (exchange secrets as stored ciphertext, as the config read
// model shows it) and every exchange's stored secret fields.
type ConfigState struct {
	Config Config
	// Credentials maps exchange → secret field → ciphertext.
	Credentials map[string]map[string]string
}

// HasCredentials reports whether exchange is configured and has at least
// one non-empty stored secret.
func (st ConfigState) HasCredentials(exchange string) bool {
	if _, ok := st.Config.Exchange(exchange); !ok {
		return false
	}
	for _, v := range st.Credentials[exchange] {
		if v != "" {
			return true
		}
	}
	return false
}

// ready is EUNAVAILABLE before the first configuration is written.
func (st ConfigState) ready() error {
	if st.Config.IsZero() {
		return Errorf(EUNAVAILABLE, "the configuration is not initialized")
	}
	return nil
}

// ConfigRules are what the commands that replace the document need besides
// the state.
type ConfigRules struct {
	Clock Clock
	// Secrets seals exchange secrets sent in clear.
	Secrets *secrets.SecretBox
	// RealConnector reports whether an exchange of cfg would trade for
	// real with bot.SIMULATOR false (nil: none would).
	RealConnector func(cfg Config, exchange string) bool
}

// MinWalletBytes is the shortest bot.service_wallet a write may set: its
// first 16 bytes are the key of encrypted login passwords.
const MinWalletBytes = 16

// DecideConfigUpdate returns the events of config/update: doc (the new
// complete document; not modified) becomes the configuration. The wallet
// rules of CheckNewWallet apply with proof; exchange secrets are resolved
// as ReplaceConfig says. Events: ConfigReplaced (without secrets), then
// ExchangeKeysSet for every exchange whose stored secrets change.
func DecideConfigUpdate(st ConfigState, doc map[string]any, proof string, rules ConfigRules) ([]Event, error) {
	if err := st.ready(); err != nil {
		return nil, err
	}
	next := copyJSONObject(doc)
	if err := CheckNewWallet(next, st.Config, proof); err != nil {
		return nil, err
	}
	exchanges, ok := next["exchanges"].(map[string]any)
	if !ok {
		return nil, Errorf(EINVALID, "config.exchanges must be an object")
	}
	return replaceConfig(st, next, exchanges, rules)
}

// LicenseKeysEdit is a license/keys/edit command: newLicenses replaces
// config.exchanges, proven by the service wallet and an exchange that has
// stored credentials now.
type LicenseKeysEdit struct {
	Wallet         string
	VerifyExchange string
	NewLicenses    map[string]any
}

// DecideLicenseKeysEdit returns the events that replace config.exchanges
// with c.NewLicenses: EUNAUTHORIZED when the wallet does not match or
// VerifyExchange has no stored credentials, EINVALID when VerifyExchange
// is not configured or an entry is not an object; secrets as
// ReplaceConfig resolves them.
func DecideLicenseKeysEdit(st ConfigState, c LicenseKeysEdit, rules ConfigRules) ([]Event, error) {
	if err := st.ready(); err != nil {
		return nil, err
	}
	wallet := st.Config.Wallet()
	if wallet == "" || subtle.ConstantTimeCompare([]byte(wallet), []byte(c.Wallet)) != 1 {
		return nil, Errorf(EUNAUTHORIZED, "wallet does not match the configured service wallet")
	}
	if _, ok := st.Config.Exchange(c.VerifyExchange); !ok {
		return nil, Errorf(EINVALID, "verifyExchange %q is not a configured exchange", c.VerifyExchange)
	}
	if !st.HasCredentials(c.VerifyExchange) {
		return nil, Errorf(EUNAUTHORIZED, "verifyExchange %q has no registered credentials", c.VerifyExchange)
	}
	for name, v := range c.NewLicenses {
		if _, ok := v.(map[string]any); !ok {
			return nil, Errorf(EINVALID, "newLicenses.%s must be an object", name)
		}
	}
	return replaceConfig(st, st.Config.Map(), copyJSONObject(c.NewLicenses), rules)
}

// DecideConfigInit returns the initial configuration's ConfigReplaced
// (doc, validated, without secrets), or no events when the configuration
// exists already: initializing twice changes nothing.
func DecideConfigInit(exists bool, doc map[string]any, clock Clock) ([]Event, error) {
	if exists {
		return nil, nil
	}
	cfg, err := ConfigFromMap(doc)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(cfg.WithoutSecrets())
	if err != nil {
		return nil, err
	}
	return []Event{NewEvent(clock, TypeConfigReplaced, ConfigReplaced{Config: body})}, nil
}

// DecidePairAdd returns PairAdded for p: EINVALID when its exchange or
// strategy is not configured or the entry is malformed.
func DecidePairAdd(st ConfigState, p PairConfig, clock Clock) ([]Event, error) {
	if err := st.ready(); err != nil {
		return nil, err
	}
	if _, ok := st.Config.Exchange(p.Exchange); !ok {
		return nil, Errorf(EINVALID, "exchange %q is not in config.exchanges", p.Exchange)
	}
	if _, ok := st.Config.Strategy(p.Strategy); !ok {
		return nil, Errorf(EINVALID, "settings.strategy: strategy %q does not exist in config.strategies", p.Strategy)
	}
	if _, err := st.Config.WithPair(p); err != nil {
		return nil, err
	}
	override, _ := json.Marshal(p.Override)
	return []Event{NewEvent(clock, TypePairAdded, PairAdded{
		Exchange: p.Exchange, Pair: p.Pair, Strategy: p.Strategy, Enabled: p.Enabled, Override: override,
	})}, nil
}

// DecidePairRemove returns PairRemoved: ENOTFOUND when the pair is not
// configured on exchange.
func DecidePairRemove(st ConfigState, exchange, pair string, clock Clock) ([]Event, error) {
	if err := st.ready(); err != nil {
		return nil, err
	}
	if _, err := st.Config.WithoutPair(exchange, pair); err != nil {
		return nil, err
	}
	return []Event{NewEvent(clock, TypePairRemoved, PairRemoved{Exchange: exchange, Pair: pair})}, nil
}

// DecideStrategyAdd returns StrategyAdded (settings nil: none): EINVALID
// for a bad name.
func DecideStrategyAdd(st ConfigState, name string, settings map[string]any, clock Clock) ([]Event, error) {
	if err := st.ready(); err != nil {
		return nil, err
	}
	if settings == nil {
		settings = map[string]any{}
	}
	if _, err := st.Config.WithStrategy(name, settings); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(settings)
	return []Event{NewEvent(clock, TypeStrategyAdded, StrategyAdded{Name: name, Settings: b})}, nil
}

// DecideStrategyRemove returns StrategyRemoved: ENOTFOUND when there is no
// such strategy, ECONFLICT while a pair uses it.
func DecideStrategyRemove(st ConfigState, name string, clock Clock) ([]Event, error) {
	if err := st.ready(); err != nil {
		return nil, err
	}
	if _, err := st.Config.WithoutStrategy(name); err != nil {
		return nil, err
	}
	return []Event{NewEvent(clock, TypeStrategyRemoved, StrategyRemoved{Name: name})}, nil
}

// CheckNewWallet applies the login key's rules to the document a
// config/update would write (doc's bot section is edited in place): the
// mask, or no wallet at all, keeps the current one; a wallet shorter than
// MinWalletBytes is EINVALID; a different wallet needs proof, the current
// one, in the request's wallet field (EINVALID when missing, EUNAUTHORIZED
// when wrong), as license/keys/edit asks, so that a stolen token cannot
// lock the owner out.
func CheckNewWallet(doc map[string]any, cur Config, proof string) error {
	bot, ok := doc["bot"].(map[string]any)
	if !ok {
		return nil // ConfigFromMap names the missing section
	}
	current := cur.Wallet()
	v, present := bot["service_wallet"]
	if !present || v == secrets.Mask {
		if current != "" {
			bot["service_wallet"] = current
		}
		return nil
	}
	next, ok := v.(string)
	if !ok {
		return Errorf(EINVALID, "config.bot.service_wallet must be a string")
	}
	if next == current {
		return nil
	}
	if len(next) < MinWalletBytes {
		return Errorf(EINVALID, "config.bot.service_wallet must be at least %d bytes: its first %d are the login encryption key", MinWalletBytes, MinWalletBytes)
	}
	if current == "" {
		return nil
	}
	if proof == "" {
		return Errorf(EINVALID, "wallet is required to change config.bot.service_wallet: send the current service wallet as proof")
	}
	if subtle.ConstantTimeCompare([]byte(proof), []byte(current)) != 1 {
		return Errorf(EUNAUTHORIZED, "wallet does not match the configured service wallet")
	}
	return nil
}

// CheckTradingModes refuses a configuration that asks an exchange to trade
// for real (bot.SIMULATOR false, and not simulator: true in its entry)
// when no real connector exists for it (realConnector nil or false): it
// would silently trade on paper. EINVALID naming the exchanges.
func CheckTradingModes(cfg Config, realConnector func(cfg Config, exchange string) bool) error {
	if cfg.Simulator() {
		return nil
	}
	var missing []string
	for _, name := range cfg.ExchangeNames() {
		entry, _ := cfg.Exchange(name)
		if sim, _ := entry["simulator"].(bool); sim {
			continue // on paper, as the entry itself says
		}
		if realConnector == nil || !realConnector(cfg, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	what := "exchange " + quoteJoin(missing) + " has"
	if len(missing) > 1 {
		what = "exchanges " + quoteJoin(missing) + " have"
	}
	return Errorf(EINVALID, "config.bot.SIMULATOR is false but %s no real connector in this build: it would trade on paper; set SIMULATOR true", what)
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ", ")
}

// replaceConfig returns the events that make doc (with exchanges as its
// exchanges section, secrets in clear, masked or as stored ciphertext) the
// configuration: ConfigReplaced without secrets, then ExchangeKeysSet for
// every exchange whose stored secrets change. EINVALID if the document is
// invalid or a secret field cannot be resolved.
func replaceConfig(st ConfigState, doc, exchanges map[string]any, rules ConfigRules) ([]Event, error) {
	stripped, creds, err := resolveSecrets(st, exchanges, rules.Secrets)
	if err != nil {
		return nil, err
	}
	doc["exchanges"] = stripped
	cfg, err := ConfigFromMap(doc)
	if err != nil {
		return nil, err
	}
	if err := CheckTradingModes(cfg, rules.RealConnector); err != nil {
		return nil, err
	}
	body, err := json.Marshal(cfg.WithoutSecrets())
	if err != nil {
		return nil, err
	}
	events := []Event{NewEvent(rules.Clock, TypeConfigReplaced, ConfigReplaced{Config: body})}
	names := map[string]any{}
	for name := range creds {
		names[name] = true
	}
	for name := range st.Credentials {
		names[name] = true
	}
	for _, name := range sortedKeys(names) {
		if !sameSecretFields(creds[name], st.Credentials[name]) {
			fields := creds[name]
			if fields == nil {
				fields = map[string]string{}
			}
			events = append(events, NewEvent(rules.Clock, TypeExchangeKeysSet, ExchangeKeysSet{Exchange: name, Fields: fields}))
		}
	}
	return events, nil
}

// resolveSecrets splits exchange entries into the entries without secrets
// and the ciphertext of their secrets. A secret field holding the mask keeps
// the stored secret (EINVALID if none is stored); the stored ciphertext
// itself keeps it too; "" clears it; any other string is a new secret in
// clear and is sealed with box, unless the entry says isEncrypted: true (we
// cannot decrypt another program's encryption: EINVALID asking for
// isEncrypted false).
func resolveSecrets(st ConfigState, exchanges map[string]any, box *secrets.SecretBox) (map[string]any, map[string]map[string]string, error) {
	stripped := map[string]any{}
	creds := map[string]map[string]string{}
	for name, v := range exchanges {
		entry, ok := v.(map[string]any)
		if !ok {
			return nil, nil, Errorf(EINVALID, "config.exchanges.%s must be an object", name)
		}
		// A credential that is no string is refused before anything
		// is made of the strings inside it.
		if err := secrets.CheckCredentialTypes("config.exchanges."+name, entry); err != nil {
			return nil, nil, err
		}
		stored := st.Credentials[name]
		encrypted, _ := entry["isEncrypted"].(bool)
		fields := map[string]string{}
		// Credentials by IsSecretPath, at any depth of the entry.
		out, inClear := secrets.ExtractSecrets(entry)
		for field, val := range inClear {
			switch {
			case val == "":
				fields[field] = ""
			case val == secrets.Mask:
				c, ok := stored[field]
				if !ok || c == "" {
					return nil, nil, Errorf(EINVALID, "config.exchanges.%s.%s is the mask %q but no secret is stored for it; send the value in clear with isEncrypted false", name, field, secrets.Mask)
				}
				fields[field] = c
			case stored[field] != "" && val == stored[field]:
				fields[field] = val
			case encrypted:
				return nil, nil, Errorf(EINVALID, "config.exchanges.%s.%s is marked isEncrypted but is not a stored secret; send new keys in clear with isEncrypted false", name, field)
			case box == nil:
				return nil, nil, Errorf(EUNAVAILABLE, "exchange secrets cannot be stored: no master key")
			default:
				fields[field] = box.Seal(val)
			}
		}
		has := false
		for _, c := range fields {
			has = has || c != ""
		}
		out["isEncrypted"] = has
		stripped[name] = out
		if len(fields) > 0 {
			creds[name] = fields
		}
	}
	return stripped, creds, nil
}

func sameSecretFields(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// copyJSONObject returns a deep copy of m with the types DecodeJSONObject
// produces (json.Number for numbers).
func copyJSONObject(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	out, _ := DecodeJSONObject(b)
	return out
}
