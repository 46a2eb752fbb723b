package main

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
	"github.com/tradeledger/tradeledger/exchange/binance"
	"github.com/tradeledger/tradeledger/exchange/paper"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
	"go.uber.org/zap"
)

// Connector names.
const (
	ConnectorPaper   = "paper"
	ConnectorBinance = "binance"
	ConnectorCCXT    = "ccxt" // any exchange ccxt knows, with ccxtId (ccxt_on.go)
)

// realConnectors are the connectors that trade for real in this build.
var realConnectors = map[string]bool{ConnectorBinance: true, ConnectorCCXT: ccxtBuilt}

// Choice is the connector an exchange uses, and why.
type Choice struct {
	Exchange  string
	Connector string // ConnectorPaper or a real connector's name
	Reason    string
	// Fallback is true when bot.SIMULATOR is false but the exchange has no
	// real connector in this build, so it trades on paper.
	Fallback bool
}

// connectorName is the real connector an exchange entry names: its
// `connector:` setting, else the exchange name without an instance suffix
// ("binance#2" is another account of "binance").
func connectorName(exchange string, entry map[string]any) string {
	if c, ok := entry["connector"].(string); ok && c != "" {
		return strings.ToLower(c)
	}
	base, _, _ := strings.Cut(exchange, "#")
	return strings.ToLower(base)
}

// HasRealConnector reports whether the exchange would trade for real once
// bot.SIMULATOR is false: its connector (see connectorName) is in this
// build, and the entry does not say simulator: true.
func HasRealConnector(cfg domain.Config, exchange string) bool {
	entry, ok := cfg.Exchange(exchange)
	if !ok {
		return false
	}
	if sim, _ := entry["simulator"].(bool); sim {
		return false
	}
	return realConnectors[connectorName(exchange, entry)]
}

// ChooseConnector is the one rule that picks an exchange's connector
// (docs/operations.md, "Trading for real"): paper while bot.SIMULATOR is true or the exchange says
// simulator: true; otherwise the real connector the exchange names
// (its name, or `connector:`). An exchange with no real connector in this
// build trades on paper, and the reason says so. An unconfigured exchange
// is ENOTFOUND.
func ChooseConnector(cfg domain.Config, exchange string) (Choice, error) {
	entry, ok := cfg.Exchange(exchange)
	if !ok {
		return Choice{}, domain.Errorf(domain.ENOTFOUND, "exchange %q is not configured", exchange)
	}
	c := Choice{Exchange: exchange, Connector: ConnectorPaper}
	name := connectorName(exchange, entry)
	switch sim, _ := entry["simulator"].(bool); {
	case cfg.Simulator():
		c.Reason = "bot.SIMULATOR is true"
	case sim:
		c.Reason = "exchanges." + exchange + ".simulator is true"
	case realConnectors[name]:
		c.Connector, c.Reason = name, "bot.SIMULATOR is false"
		if t, _ := entry["testnet"].(bool); t {
			c.Reason += "; testnet"
		}
	default:
		c.Reason = fmt.Sprintf("no real connector %q in this build%s: trading on paper although bot.SIMULATOR is false", name, buildHint(name))
		c.Fallback = true
	}
	return c, nil
}

// Connectors serves every configured exchange's connector, chosen per call
// from the current configuration by ChooseConnector: the Core and the
// Trader take Exchange as their connector function.
type Connectors struct {
	Config func() domain.Config
	// Keys returns an exchange's credentials in clear ("key", "secret").
	Keys  func(exchange string) (map[string]string, error)
	Paper *paper.Simulator
	Now   func() time.Time
	// BinanceURL, when set, replaces Binance's base URL (tests: a fixture).
	BinanceURL string
	// HTTPClient is the real connectors' HTTP client (nil: their default).
	HTTPClient *http.Client
	// CCXTURL, when set, replaces the API host of every ccxt exchange
	// (tests: a fixture).
	CCXTURL string

	mu      sync.Mutex
	binance map[string]*binanceAccount
	ccxt    ccxtAccounts
	down    map[string]string // exchange → its last failure to answer
}

type binanceAccount struct {
	fingerprint [32]byte
	x           *binance.Exchange
}

// Exchange returns the connector of a configured exchange; ENOTFOUND for
// an unconfigured one, EINVALID for a real one without keys.
func (c *Connectors) Exchange(name string) (domain.Exchange, error) {
	cfg := c.Config()
	choice, err := ChooseConnector(cfg, name)
	if err != nil {
		return nil, err
	}
	var x domain.Exchange
	switch choice.Connector {
	case ConnectorBinance:
		x, err = c.binanceFor(cfg, name)
	case ConnectorCCXT:
		x, err = c.ccxt.exchange(c, cfg, name)
	default:
		x, err = c.Paper.Exchange(name)
	}
	if err != nil {
		return nil, err
	}
	return watched{Exchange: x, c: c}, nil
}

// note records an exchange's failure to answer (EUNAVAILABLE), or clears
// it when the exchange answered.
func (c *Connectors) note(exchange string, err error) {
	failed := domain.ErrorCode(err) == domain.EUNAVAILABLE
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, was := c.down[exchange]; !failed && !was {
		return
	}
	if c.down == nil {
		c.down = map[string]string{}
	}
	if failed {
		c.down[exchange] = domain.ErrorMessage(err)
	} else {
		delete(c.down, exchange)
	}
}

// watched is a connector whose failures to answer /healthz reports.
type watched struct {
	domain.Exchange
	c *Connectors
}

func (w watched) Markets(ctx context.Context) ([]domain.Market, error) {
	v, err := w.Exchange.Markets(ctx)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Ticker(ctx context.Context, pair string) (domain.Ticker, error) {
	v, err := w.Exchange.Ticker(ctx, pair)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) OrderBook(ctx context.Context, pair string, depth int) (domain.OrderBook, error) {
	v, err := w.Exchange.OrderBook(ctx, pair, depth)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Candles(ctx context.Context, pair string, interval time.Duration, limit int) ([]domain.Candle, error) {
	v, err := w.Exchange.Candles(ctx, pair, interval, limit)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Balances(ctx context.Context) ([]domain.AssetBalance, error) {
	v, err := w.Exchange.Balances(ctx)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	v, err := w.Exchange.PlaceOrder(ctx, req)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) CancelOrder(ctx context.Context, pair, orderID string) (domain.ExchangeOrder, error) {
	v, err := w.Exchange.CancelOrder(ctx, pair, orderID)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Order(ctx context.Context, pair, clientOrderID string) (domain.ExchangeOrder, error) {
	v, err := w.Exchange.Order(ctx, pair, clientOrderID)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) OpenOrders(ctx context.Context, pair string) ([]domain.ExchangeOrder, error) {
	v, err := w.Exchange.OpenOrders(ctx, pair)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) FillsSince(ctx context.Context, since uint64, limit int) ([]domain.Fill, error) {
	v, err := w.Exchange.FillsSince(ctx, since, limit)
	w.c.note(w.Name(), err)
	return v, err
}

// Binance returns the Binance connector of a configured exchange whatever
// bot.SIMULATOR says (key checks).
func (c *Connectors) Binance(name string) (*binance.Exchange, error) {
	return c.binanceFor(c.Config(), name)
}

func (c *Connectors) binanceFor(cfg domain.Config, name string) (*binance.Exchange, error) {
	entry, keys, err := c.account(cfg, name)
	if err != nil {
		return nil, err
	}
	key, secret := keys["key"], keys["secret"]
	testnet, _ := entry["testnet"].(bool)
	fp := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%t", key, secret, testnet)))
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.binance[name]; ok && a.fingerprint == fp {
		return a.x, nil
	}
	x := binance.New(name, key, secret, testnet)
	if c.BinanceURL != "" {
		x.BaseURL = c.BinanceURL
	}
	x.Now, x.HTTPClient = c.Now, c.HTTPClient
	x.Pairs = c.pairsOf(name)
	if c.binance == nil {
		c.binance = map[string]*binanceAccount{}
	}
	c.binance[name] = &binanceAccount{fingerprint: fp, x: x}
	return x, nil
}

// account returns a configured exchange's entry and credentials: ENOTFOUND
// for an unconfigured exchange, EINVALID without a key and secret.
func (c *Connectors) account(cfg domain.Config, name string) (map[string]any, map[string]string, error) {
	entry, ok := cfg.Exchange(name)
	if !ok {
		return nil, nil, domain.Errorf(domain.ENOTFOUND, "exchange %q is not configured", name)
	}
	var keys map[string]string
	if c.Keys != nil {
		var err error
		if keys, err = c.Keys(name); err != nil {
			return nil, nil, err
		}
	}
	if keys["key"] == "" || keys["secret"] == "" {
		return nil, nil, domain.Errorf(domain.EINVALID, "exchange %s has no API key and secret: set them with license/keys/edit or config/update", name)
	}
	return entry, keys, nil
}

// pairsOf lists an exchange's configured pairs (a connector's Pairs).
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

// Choices returns every configured exchange's choice, sorted by name
// (start-up log, /healthz).
func (c *Connectors) Choices() []Choice {
	cfg := c.Config()
	var out []Choice
	for _, name := range cfg.ExchangeNames() {
		if ch, err := ChooseConnector(cfg, name); err == nil {
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Exchange < out[j].Exchange })
	return out
}

// Statuses is Choices as /healthz shows them.
func (c *Connectors) Statuses() []tlhttp.ConnectorStatus {
	var out []tlhttp.ConnectorStatus
	for _, ch := range c.Choices() {
		c.mu.Lock()
		down := c.down[ch.Exchange]
		c.mu.Unlock()
		out = append(out, tlhttp.ConnectorStatus{Exchange: ch.Exchange, Connector: ch.Connector, Reason: ch.Reason, Error: down})
	}
	return out
}

// newConnectors wires the chooser to the configuration read model and the
// stored (encrypted) credentials.
func (m *Main) newConnectors(configView *projections.Config) (*Connectors, error) {
	box, err := domain.NewSecretBox(m.DataDir.MasterKey)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	return &Connectors{
		Config: configView.Current,
		Keys: func(exchange string) (map[string]string, error) {
			out := map[string]string{}
			for field, ct := range configView.Ciphertexts(exchange) {
				v, err := box.Open(ct)
				if err != nil {
					return nil, domain.Errorf(domain.EINVALID, "the stored %s of exchange %s cannot be decrypted with this master key", field, exchange)
				}
				out[strings.ToLower(field)] = v
			}
			return out, nil
		},
		Paper:      m.Simulator,
		Now:        m.Clock.Now,
		BinanceURL: m.BinanceURL,
		CCXTURL:    m.CCXTURL,
	}, nil
}

// logConnectors logs which connector each configured exchange uses.
func (m *Main) logConnectors() {
	for _, ch := range m.Connectors.Choices() {
		log := m.Logger.Info
		if ch.Fallback {
			log = m.Logger.Warn
		}
		log("exchange connector", zap.String("exchange", ch.Exchange), zap.String("connector", ch.Connector), zap.String("reason", ch.Reason))
	}
}

// verifyKeys checks an exchange's new keys with its real connector (the
// account call): keys the exchange refuses are EUNAUTHORIZED, keys that
// may withdraw are accepted with a warning. An exchange that trades on
// paper under cfg is not asked.
func (m *Main) verifyKeys(ctx context.Context, cfg domain.Config, exchange string, fields map[string]string) error {
	ch, err := ChooseConnector(cfg, exchange)
	if err != nil {
		return err
	}
	if ch.Connector == ConnectorCCXT {
		return m.verifyCCXTKeys(ctx, cfg, exchange, fields)
	}
	if ch.Connector != ConnectorBinance {
		m.Logger.Info("exchange keys not checked: the exchange trades on paper", zap.String("exchange", exchange), zap.String("reason", ch.Reason))
		return nil
	}
	if fields["key"] == "" || fields["secret"] == "" {
		return domain.Errorf(domain.EINVALID, "newLicenses.%s: key and secret are required to trade on %s", exchange, ch.Connector)
	}
	entry, _ := cfg.Exchange(exchange)
	testnet, _ := entry["testnet"].(bool)
	x := binance.New(exchange, fields["key"], fields["secret"], testnet)
	if m.BinanceURL != "" {
		x.BaseURL = m.BinanceURL
	}
	x.Now = m.Clock.Now
	withdraw, err := x.VerifyKeys(ctx)
	switch {
	case domain.ErrorCode(err) == domain.EUNAUTHORIZED:
		return domain.Errorf(domain.EUNAUTHORIZED, "verifyExchange: %s", domain.ErrorMessage(err))
	case err != nil:
		return err
	case withdraw:
		m.Logger.Warn("exchange keys may withdraw funds: a trading bot needs only reading and spot trading; create keys without withdrawal permission",
			zap.String("exchange", exchange))
	}
	return nil
}
