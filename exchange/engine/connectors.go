package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange"
)

// Connectors serves every configured exchange its connector, chosen per
// call from the current configuration by Choose among the descriptors of
// List, and is the one place that wraps them: each connector it hands out
// goes through the placement guard (Guard) and reports its failures to
// answer to Statuses (/healthz). Fill its fields, then use it; the engine
// takes Exchange as its connector function.
type Connectors struct {
	// List is every connector this binary has (cmd/tradeledger's list),
	// the simulated one among them.
	List []exchange.Connector
	// Config returns the current configuration.
	Config func() domain.Config
	// Keys returns an exchange's credentials in clear, by lower-case field.
	Keys func(exchange string) (map[string]string, error)
	// Now is the clock connectors measure Retry-After on (nil: time.Now).
	Now func() time.Time
	// HTTPClient carries the real connectors' requests (nil: their
	// default).
	HTTPClient *http.Client
	// URLs replaces a connector's API host, by connector name (tests: a
	// fixture server).
	URLs map[string]string

	mu       sync.Mutex
	accounts map[string]*account // exchange → its opened real connector
	sent     map[string]*sentIDs // exchange → client order ids sent (Guard)
	down     map[string]string   // exchange → its last failure to answer
}

// account is an opened connector and the fingerprint of what it was opened
// with (credentials and the descriptor's Settings).
type account struct {
	fingerprint [32]byte
	x           domain.Exchange
}

// Choice is the connector an exchange uses, and why.
type Choice struct {
	Exchange  string
	Connector string
	Reason    string
	// Fallback is true when bot.SIMULATOR is false but the exchange has no
	// real connector in this binary, so it trades on paper.
	Fallback bool
}

// find returns the descriptor named name.
func (c *Connectors) find(name string) (exchange.Connector, bool) {
	for _, d := range c.List {
		if d.Name == name {
			return d, true
		}
	}
	return exchange.Connector{}, false
}

// simulated returns the simulated connector's descriptor.
func (c *Connectors) simulated() exchange.Connector {
	for _, d := range c.List {
		if d.Simulated {
			return d
		}
	}
	return exchange.Connector{Name: "paper", Simulated: true}
}

// named is the connector an exchange entry names: its `connector:`
// setting, else the exchange's name without an instance suffix
// ("binance#2" is another account of "binance").
func named(exchangeName string, entry map[string]any) string {
	if c, ok := entry["connector"].(string); ok && c != "" {
		return strings.ToLower(c)
	}
	base, _, _ := strings.Cut(exchangeName, "#")
	return strings.ToLower(base)
}

// Choose is the one rule that picks an exchange's connector
// (docs/operations.md, "Trading for real"): the simulated one while
// bot.SIMULATOR is true or the entry says simulator: true; otherwise the
// real connector the entry names (see named). An exchange whose connector
// this binary does not have trades on paper, and the reason says so (and
// what would give it one). An unconfigured exchange is ENOTFOUND.
func (c *Connectors) Choose(cfg domain.Config, exchangeName string) (Choice, error) {
	entry, ok := cfg.Exchange(exchangeName)
	if !ok {
		return Choice{}, domain.Errorf(domain.ENOTFOUND, "exchange %q is not configured", exchangeName)
	}
	ch := Choice{Exchange: exchangeName, Connector: c.simulated().Name}
	name := named(exchangeName, entry)
	d, found := c.find(name)
	switch sim, _ := entry["simulator"].(bool); {
	case cfg.Simulator():
		ch.Reason = "bot.SIMULATOR is true"
	case sim:
		ch.Reason = "exchanges." + exchangeName + ".simulator is true"
	case found && !d.Simulated && d.Missing == "":
		ch.Connector, ch.Reason = name, "bot.SIMULATOR is false"
		if d.Describe != nil {
			if s := d.Describe(exchangeName, entry); s != "" {
				ch.Reason += "; " + s
			}
		}
	default:
		ch.Reason = fmt.Sprintf("no real connector %q in this binary%s: trading on paper although bot.SIMULATOR is false", name, c.hint(name))
		ch.Fallback = true
	}
	return ch, nil
}

// hint completes the reason of an exchange that trades on paper for want
// of a connector: how to build one that has it, or which connector knows
// the exchange.
func (c *Connectors) hint(name string) string {
	if d, ok := c.find(name); ok && d.Missing != "" {
		return " (" + d.Missing + ")"
	}
	for _, d := range c.List {
		if d.Missing == "" && d.Knows != nil && d.Knows(name) {
			return fmt.Sprintf(" (%s knows %s: set connector: %s to trade on it)", d.Name, name, d.Name)
		}
	}
	return ""
}

// HasReal reports whether the exchange would trade for real once
// bot.SIMULATOR is false: the connector its entry names is in this binary
// and the entry does not say simulator: true.
func (c *Connectors) HasReal(cfg domain.Config, exchangeName string) bool {
	entry, ok := cfg.Exchange(exchangeName)
	if !ok {
		return false
	}
	if sim, _ := entry["simulator"].(bool); sim {
		return false
	}
	d, ok := c.find(named(exchangeName, entry))
	return ok && !d.Simulated && d.Missing == ""
}

// Check refuses a configuration naming a connector this binary lacks
// (EINVALID, with the command that builds one that has it): serve checks
// it at start.
func (c *Connectors) Check(cfg domain.Config) error {
	var problems []string
	for _, name := range cfg.ExchangeNames() {
		entry, _ := cfg.Exchange(name)
		if d, ok := c.find(named(name, entry)); ok && d.Missing != "" {
			problems = append(problems, fmt.Sprintf("exchange %q uses connector %q, which this binary lacks: %s", name, d.Name, d.Missing))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return domain.Errorf(domain.EINVALID, "%s", strings.Join(problems, "; "))
}

// Exchange returns the connector of a configured exchange, guarded and
// watched: ENOTFOUND for an unconfigured exchange, EINVALID for a real one
// without keys or with settings its connector refuses.
func (c *Connectors) Exchange(name string) (domain.Exchange, error) {
	cfg := c.Config()
	ch, err := c.Choose(cfg, name)
	if err != nil {
		return nil, err
	}
	d, ok := c.find(ch.Connector)
	if !ok {
		d = c.simulated()
	}
	x, err := c.open(cfg, name, d)
	if err != nil {
		return nil, err
	}
	return watched{Exchange: guarded{Exchange: x, sent: c.sentIDs(name)}, c: c}, nil
}

// open returns the opened connector of an exchange's account, opening it
// again when its credentials or settings changed.
func (c *Connectors) open(cfg domain.Config, name string, d exchange.Connector) (domain.Exchange, error) {
	if d.Open == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "connector %q cannot open accounts in this binary", d.Name)
	}
	entry, _ := cfg.Exchange(name)
	a := c.accountOf(name, entry, nil)
	if d.Simulated {
		return d.Open(a)
	}
	keys, err := c.keys(name)
	if err != nil {
		return nil, err
	}
	a.Keys = keys
	fp := fingerprint(d, a)
	c.mu.Lock()
	defer c.mu.Unlock()
	if acc, ok := c.accounts[name]; ok && acc.fingerprint == fp {
		return acc.x, nil
	}
	x, err := d.Open(a)
	if err != nil {
		return nil, err
	}
	if c.accounts == nil {
		c.accounts = map[string]*account{}
	}
	c.accounts[name] = &account{fingerprint: fp, x: x}
	return x, nil
}

// keys returns an exchange's credentials: EINVALID without a key and
// secret.
func (c *Connectors) keys(name string) (map[string]string, error) {
	var keys map[string]string
	if c.Keys != nil {
		var err error
		if keys, err = c.Keys(name); err != nil {
			return nil, err
		}
	}
	if keys["key"] == "" || keys["secret"] == "" {
		return nil, domain.Errorf(domain.EINVALID, "exchange %s has no API key and secret: set them with license/keys/edit or config/update", name)
	}
	return keys, nil
}

// accountOf is the account a connector opens for an exchange.
func (c *Connectors) accountOf(name string, entry map[string]any, keys map[string]string) exchange.Account {
	a := exchange.Account{Exchange: name, Entry: entry, Keys: keys, Now: c.Now, HTTPClient: c.HTTPClient, Pairs: c.pairsOf(name)}
	// The entry's url (a regional host, a proxy; domain.CheckExchangeURL
	// checked it), unless a test points the connector at its fixture.
	a.URL, _ = entry["url"].(string)
	if d, ok := c.find(named(name, entry)); ok && c.URLs[d.Name] != "" {
		a.URL = c.URLs[d.Name]
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	return a
}

// fingerprint digests what an account was opened with.
func fingerprint(d exchange.Connector, a exchange.Account) [32]byte {
	h := sha256.New()
	fields := make([]string, 0, len(a.Keys))
	for f := range a.Keys {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		fmt.Fprintf(h, "%s\x00%s\x00", f, a.Keys[f])
	}
	for _, s := range d.Settings {
		fmt.Fprintf(h, "%s\x00%v\x00", s, a.Entry[s])
	}
	fmt.Fprintf(h, "url\x00%s\x00", a.URL)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// pairsOf lists an exchange's configured pairs.
func (c *Connectors) pairsOf(name string) func() []string {
	return func() []string {
		var out []string
		for _, p := range c.Config().Pairs() {
			if p.Exchange == name {
				out = append(out, p.Pair)
			}
		}
		return out
	}
}

// VerifyKeys checks new keys of an exchange (fields, in clear) with the
// real connector cfg gives it: keys the exchange refuses are
// EUNAUTHORIZED naming verifyExchange; without a key and secret EINVALID
// naming newLicenses. An exchange that trades on paper under cfg is not
// asked: checked is false and the choice says why.
func (c *Connectors) VerifyKeys(ctx context.Context, cfg domain.Config, exchangeName string, fields map[string]string) (kc exchange.KeyCheck, ch Choice, checked bool, err error) {
	if ch, err = c.Choose(cfg, exchangeName); err != nil {
		return kc, ch, false, err
	}
	d, _ := c.find(ch.Connector)
	if d.Simulated || ch.Fallback {
		return kc, ch, false, nil
	}
	if fields["key"] == "" || fields["secret"] == "" {
		return kc, ch, false, domain.Errorf(domain.EINVALID, "newLicenses.%s: key and secret are required to trade on %s", exchangeName, ch.Connector)
	}
	if d.VerifyKeys == nil {
		return exchange.KeyCheck{Unknown: true}, ch, true, nil
	}
	entry, _ := cfg.Exchange(exchangeName)
	kc, err = d.VerifyKeys(ctx, c.accountOf(exchangeName, entry, fields))
	if domain.ErrorCode(err) == domain.EUNAUTHORIZED {
		return kc, ch, true, domain.Errorf(domain.EUNAUTHORIZED, "verifyExchange: %s", domain.ErrorMessage(err))
	}
	return kc, ch, err == nil, err
}

// Choices returns every configured exchange's choice, sorted by name
// (start-up log, /healthz).
func (c *Connectors) Choices() []Choice {
	cfg := c.Config()
	var out []Choice
	for _, name := range cfg.ExchangeNames() {
		if ch, err := c.Choose(cfg, name); err == nil {
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Exchange < out[j].Exchange })
	return out
}

// Status is an exchange's choice and its last failure to answer ("" once
// it answers again): what /healthz lists.
type Status struct {
	Choice
	Error string
}

// Statuses returns every configured exchange's Status, sorted by name.
func (c *Connectors) Statuses() []Status {
	var out []Status
	for _, ch := range c.Choices() {
		c.mu.Lock()
		down := c.down[ch.Exchange]
		c.mu.Unlock()
		out = append(out, Status{Choice: ch, Error: down})
	}
	return out
}

// note records an exchange's failure to answer (EUNAVAILABLE), or clears
// it when the exchange answered.
func (c *Connectors) note(exchangeName string, err error) {
	failed := domain.ErrorCode(err) == domain.EUNAVAILABLE
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, was := c.down[exchangeName]; !failed && !was {
		return
	}
	if c.down == nil {
		c.down = map[string]string{}
	}
	if failed {
		c.down[exchangeName] = domain.ErrorMessage(err)
	} else {
		delete(c.down, exchangeName)
	}
}

// sentIDs returns the guard's memory of an exchange: kept per exchange
// name, so that an account opened again with new keys still knows what
// was sent.
func (c *Connectors) sentIDs(exchangeName string) *sentIDs {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sent[exchangeName]
	if s == nil {
		if c.sent == nil {
			c.sent = map[string]*sentIDs{}
		}
		s = &sentIDs{}
		c.sent[exchangeName] = s
	}
	return s
}
