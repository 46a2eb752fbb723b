package projections

import (
	"encoding/json"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// Config is the configuration read model: the document built from the
// config stream (ConfigReplaced, PairAdded, PairRemoved, StrategyAdded,
// StrategyRemoved) joined with the encrypted exchange credentials
// (ExchangeKeysSet, written on the config stream in the same append as the
// change they belong to; also accepted on the credentials stream). It never
// holds a secret in clear.
type Config struct {
	mu      sync.RWMutex
	base    domain.Config                // secrets removed
	version int64                        // last applied version of the config stream, -1: none
	creds   map[string]map[string]string // exchange → field → ciphertext
}

// NewConfig returns an empty Config projection.
func NewConfig() *Config {
	return &Config{version: -1, creds: map[string]map[string]string{}}
}

// Name implements Projection.
func (p *Config) Name() string { return "config" }

// Apply implements Projection.
func (p *Config) Apply(e *domain.Event) error {
	if e.Stream == domain.StreamConfig && e.Type != domain.TypeExchangeKeysSet {
		return p.applyConfig(e)
	}
	if e.Type == domain.TypeExchangeKeysSet {
		// Kept on the config stream (in the same append as the config
		// change, so a change is atomic) or on the credentials stream.
		var d domain.ExchangeKeysSet
		if err := e.Decode(&d); err != nil {
			return err
		}
		fields := make(map[string]string, len(d.Fields))
		for k, v := range d.Fields {
			fields[k] = v
		}
		p.mu.Lock()
		if e.Stream == domain.StreamConfig {
			p.version = e.Version
		}
		if len(fields) == 0 {
			delete(p.creds, d.Exchange)
		} else {
			p.creds[d.Exchange] = fields
		}
		p.mu.Unlock()
	}
	return nil
}

func (p *Config) applyConfig(e *domain.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.version = e.Version
	var (
		next domain.Config
		err  error
	)
	switch e.Type {
	case domain.TypeConfigReplaced:
		var d domain.ConfigReplaced
		if err := e.Decode(&d); err != nil {
			return err
		}
		next, err = domain.ParseConfig(d.Config)
	case domain.TypePairAdded:
		var d domain.PairAdded
		if err := e.Decode(&d); err != nil {
			return err
		}
		pc := domain.PairConfig{Exchange: d.Exchange, Pair: d.Pair, Strategy: d.Strategy, Enabled: d.Enabled}
		if len(d.Override) > 0 {
			if pc.Override, err = domain.DecodeJSONObject(d.Override); err != nil {
				return err
			}
		}
		next, err = p.base.WithPair(pc)
	case domain.TypePairRemoved:
		var d domain.PairRemoved
		if err := e.Decode(&d); err != nil {
			return err
		}
		next, err = p.base.WithoutPair(d.Exchange, d.Pair)
	case domain.TypeStrategyAdded:
		var d domain.StrategyAdded
		if err := e.Decode(&d); err != nil {
			return err
		}
		var settings map[string]any
		if len(d.Settings) > 0 {
			if settings, err = domain.DecodeJSONObject(d.Settings); err != nil {
				return err
			}
		}
		next, err = p.base.WithStrategy(d.Name, settings)
	case domain.TypeStrategyRemoved:
		var d domain.StrategyRemoved
		if err := e.Decode(&d); err != nil {
			return err
		}
		next, err = p.base.WithoutStrategy(d.Name)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	p.base = next.WithoutSecrets()
	return nil
}

// Current returns the configuration with each exchange's stored secrets as
// ciphertext (and isEncrypted true where there are any); never a secret in
// clear. Before the first ConfigReplaced it is the zero Config.
func (p *Config) Current() domain.Config {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.currentLocked()
}

func (p *Config) currentLocked() domain.Config {
	if p.base.IsZero() || len(p.creds) == 0 {
		return p.base
	}
	exchanges, _ := p.base.Section("exchanges")
	for name, fields := range p.creds {
		entry, ok := exchanges[name].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range fields {
			secrets.PutSecret(entry, k, v) // k is a path (secrets.SecretFieldName)
		}
		entry["isEncrypted"] = true
	}
	c, err := p.base.WithExchanges(exchanges)
	if err != nil {
		return p.base
	}
	return c
}

// Version returns the version of the config stream applied so far (-1
// before the first event). It changes with every change of the document
// (pairs, strategies, exchanges, ConfigReplaced), so a reader may cache
// what it derives from Current until Version moves. Read Version before
// Current: then a change between the two calls only makes the cache look
// stale, never fresh. Credentials kept on the credentials stream do not
// move it.
func (p *Config) Version() int64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.version
}

// State returns, in one consistent read, what configuration commands decide
// against (Current and a copy of every exchange's stored secret fields) and
// the version of the config stream it reflects (domain.NoStream before the
// first event).
func (p *Config) State() (domain.ConfigState, domain.ExpectedVersion) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	creds := make(map[string]map[string]string, len(p.creds))
	for name, f := range p.creds {
		c := make(map[string]string, len(f))
		for k, v := range f {
			c[k] = v
		}
		creds[name] = c
	}
	v := domain.ExpectedVersion(p.version)
	if p.version < 0 {
		v = domain.NoStream
	}
	return domain.ConfigState{Config: p.currentLocked(), Credentials: creds}, v
}

// Public returns the configuration document as responses show it: every
// non-empty secret field, and bot.service_wallet, replaced by "********".
func (p *Config) Public() json.RawMessage {
	b, err := json.Marshal(p.Current().Masked())
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// Wallet returns bot.service_wallet ("" before the configuration exists).
func (p *Config) Wallet() string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.base.Wallet()
}

// HasCredentials reports whether exchange is configured and has at least
// one non-empty stored secret.
func (p *Config) HasCredentials(exchange string) bool {
	st, _ := p.State()
	return st.HasCredentials(exchange)
}

// Ciphertexts returns a copy of exchange's stored secret fields
// (ciphertext), or nil.
func (p *Config) Ciphertexts(exchange string) map[string]string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	f := p.creds[exchange]
	if f == nil {
		return nil
	}
	out := make(map[string]string, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}

// Secrets returns exchange's stored secrets decrypted with box (for
// connectors that need them), or EINVALID if one does not decrypt.
func (p *Config) Secrets(exchange string, box *secrets.SecretBox) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range p.Ciphertexts(exchange) {
		if v == "" {
			out[k] = ""
			continue
		}
		plain, err := box.Open(v)
		if err != nil {
			return nil, err
		}
		out[k] = plain
	}
	return out, nil
}
