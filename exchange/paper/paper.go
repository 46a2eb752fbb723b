// Package paper is the simulated exchange: the connector (Connector) that
// the engine's chooser (engine.Connectors.Choose) picks for an
// exchange while bot.SIMULATOR is true, when the exchange's entry says
// simulator: true, or when this build has no real connector for it. This
// package reads no configuration itself. A Simulator simulates every
// exchange name it is asked for (Settings decides which), each an
// independent Account with its own markets, balances, fee and order book.
//
// Prices follow deterministic seeded paths (walk.go): one geometric random
// walk per exchange and pair, one step per Tick of the injected Clock,
// seeded from Seed and the names, so the same seed and the same clock give
// the same prices. Nothing happens between calls: every method first
// catches the markets up to Clock.Now(), matching resting orders at each
// step.
//
// Tests drive the market with a domain.ManualClock (Advance moves the walk
// forward one step per Tick) and with SetPrice, which moves a pair's price
// at once and fills the resting orders it crosses. FailPlacements injects
// exchange failures (a lost request, or a placed order whose answer is
// lost) to test reconciliation.
//
// Matching (book.go, orders.go): the book around the price has BookDepth
// levels a side, spaced by LevelStep, with deterministic sizes worth about
// LevelNotional quote each; liquidity taken in one step is gone until the
// next step. Market orders and marketable limit orders walk the book
// (large ones fill partially; a market order's unfilled rest is
// cancelled); limit orders rest and fill at their price when the last
// price crosses them, up to the liquidity of the opposite side. Fees are
// FeeRate of the notional, charged in the quote currency, or as an
// exchange's FeeAsset setting says (fees.go: in the asset received, as
// Binance without BNB, or in a third asset such as BNB). Balances are
// enforced (balances.go): an order needing more than is available is
// refused (EINVALID, "insufficient funds …"), and a resting order's funds
// are on order until it fills or is cancelled. The state survives a
// restart by being derived from the log (restore.go).
package paper

import (
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Defaults of Simulator settings.
const (
	DefaultTick          = time.Minute
	DefaultVolatility    = 0.0008 // per-minute σ of log returns: ≈3% a day, like BTC
	DefaultBookDepth     = 20
	DefaultLevelStep     = 0.0005 // 0.05% between book levels (and half the spread)
	DefaultLevelNotional = 20000  // quote value of a book level, on average
	DefaultTickVolume    = 50000  // quote value traded per tick, on average
	DefaultWindow        = 24 * time.Hour
)

// DefaultFeeRate is 0.1%.
var DefaultFeeRate = decimal.MustDecimal("0.001")

// PairSpec is a simulated market and its starting price.
type PairSpec struct {
	Pair  string
	Price decimal.Decimal
}

// DefaultPairs are the markets every simulated exchange lists unless its
// settings say otherwise.
var DefaultPairs = []PairSpec{
	{"USDT-BTC", decimal.MustDecimal("60000")},
	{"USDT-ETH", decimal.MustDecimal("3000")},
	{"USDT-SOL", decimal.MustDecimal("150")},
	{"USDT-XRP", decimal.MustDecimal("0.6")},
	{"USDT-DOGE", decimal.MustDecimal("0.12")},
	{"BTC-ETH", decimal.MustDecimal("0.05")},
	{"BTC-SOL", decimal.MustDecimal("0.0025")},
	{"USDC-BTC", decimal.MustDecimal("60000")},
}

// DefaultBalances are the starting balances of a simulated account.
var DefaultBalances = map[string]decimal.Decimal{
	"USDT": decimal.MustDecimal("10000"),
	"USDC": decimal.MustDecimal("10000"),
	"BTC":  decimal.MustDecimal("0.5"),
	"ETH":  decimal.MustDecimal("5"),
}

// ExchangeSettings are one simulated exchange's settings; zero fields take
// the Simulator's defaults.
type ExchangeSettings struct {
	Fee      *decimal.Decimal           // fee rate (0.001 = 0.1%); nil: Simulator.FeeRate
	Balances map[string]decimal.Decimal // starting balances; nil: Simulator.Balances
	Pairs    []PairSpec                 // markets; nil: Simulator.Pairs
	// FeeAsset is what fees are charged in (fees.go): "" the quote,
	// FeeInReceived the asset an order receives, or an asset such as
	// "BNB" (then the account lists USDT-<asset> at FeeAssetPrice unless
	// it lists it already, and starts with DefaultFeeAssetBalance of it
	// unless Balances name it).
	FeeAsset string
	// FeeAssetPrice is the starting USDT price of FeeAsset's market when
	// the account adds it; nil: DefaultFeeAssetPrice.
	FeeAssetPrice *decimal.Decimal
}

// Simulator holds the simulated exchanges' accounts. Set its fields before
// the first call to Exchange or Account; it is safe for concurrent use after that.
type Simulator struct {
	Clock         domain.Clock
	Seed          int64
	Tick          time.Duration
	Volatility    float64
	FeeRate       decimal.Decimal
	Pairs         []PairSpec
	Balances      map[string]decimal.Decimal
	BookDepth     int
	LevelStep     float64
	LevelNotional float64
	TickVolume    float64
	// Settings returns an exchange's settings and whether the exchange is
	// simulated at all (for example: whether the configuration names it).
	// Nil simulates every name with the defaults.
	Settings func(name string) (ExchangeSettings, bool)
	// SettingsVersion, when set, is the generation of what Settings reads
	// (the configuration's version). When it moves, a simulated exchange
	// takes its fee from Settings again on its next use. Balances and
	// pairs stay as they were at the first use: the account has traded
	// since.
	SettingsVersion func() int64

	mu       sync.Mutex
	accounts map[string]*Account
	restore  *restoreState // from the log, until each exchange's first use (restore.go)
}

// NewSimulator returns a Simulator with default settings on clock.
func NewSimulator(clock domain.Clock) *Simulator {
	return &Simulator{
		Clock:         clock,
		Seed:          1,
		Tick:          DefaultTick,
		Volatility:    DefaultVolatility,
		FeeRate:       DefaultFeeRate,
		Pairs:         DefaultPairs,
		Balances:      DefaultBalances,
		BookDepth:     DefaultBookDepth,
		LevelStep:     DefaultLevelStep,
		LevelNotional: DefaultLevelNotional,
		TickVolume:    DefaultTickVolume,
	}
}

// Exchange returns the account of the simulated exchange called name as
// the connector the engine trades on (the signature of a connector
// function), creating it on first use; ENOTFOUND if Settings says the
// name is not simulated.
func (s *Simulator) Exchange(name string) (domain.Exchange, error) {
	a, err := s.account(name)
	if err != nil {
		return nil, err
	}
	return a, nil // not returned directly: a nil *Account must not become a non-nil interface
}

// Account returns the same account as Exchange, as its concrete type, for
// tests that drive it (FillOrder, SetPrice, FeeRate); ENOTFOUND as
// Exchange.
func (s *Simulator) Account(name string) (*Account, error) { return s.account(name) }

func (s *Simulator) account(name string) (*Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.accounts[name]; ok {
		s.refresh(a)
		return a, nil
	}
	set := ExchangeSettings{}
	if s.Settings != nil {
		var ok bool
		if set, ok = s.Settings(name); !ok {
			return nil, domain.Errorf(domain.ENOTFOUND, "exchange %q is not simulated (not in the configuration)", name)
		}
	}
	if name == "" {
		return nil, domain.Errorf(domain.ENOTFOUND, "exchange name is empty")
	}
	a := s.newAccount(name, set)
	s.restoreInto(a)
	if s.SettingsVersion != nil {
		a.settingsVersion = s.SettingsVersion()
	}
	if s.accounts == nil {
		s.accounts = make(map[string]*Account)
	}
	s.accounts[name] = a
	return a, nil
}

// refresh applies a changed fee to a when SettingsVersion moved (s.mu held).
func (s *Simulator) refresh(a *Account) {
	if s.SettingsVersion == nil || s.Settings == nil {
		return
	}
	v := s.SettingsVersion()
	if v == a.settingsVersion {
		return
	}
	fee := s.FeeRate
	if set, ok := s.Settings(a.name); ok && set.Fee != nil {
		fee = *set.Fee
	}
	a.mu.Lock()
	a.fee, a.settingsVersion = fee, v
	a.mu.Unlock()
}

// SetPrice moves a pair's simulated price at once (after catching up with
// the clock) and fills the resting orders the move crosses.
func (s *Simulator) SetPrice(exchange, pair string, price decimal.Decimal) error {
	a, err := s.account(exchange)
	if err != nil {
		return err
	}
	return a.SetPrice(pair, price)
}

// FailPlacements makes the next n PlaceOrder calls on exchange fail with
// EUNAVAILABLE. With placed, the order is placed before the failure (the
// answer is lost, as in a timeout); without, the request is lost.
func (s *Simulator) FailPlacements(exchange string, n int, placed bool) error {
	a, err := s.account(exchange)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.failPlace, a.failPlaced = n, placed
	a.mu.Unlock()
	return nil
}
