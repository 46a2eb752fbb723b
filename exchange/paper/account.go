package paper

import (
	"sort"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Account is one simulated exchange: an account with its own markets
// (their price walks), balances, fee, orders and fills. It implements
// domain.Exchange; Simulator.Exchange and Simulator.Account return it.
type Account struct {
	name     string
	sim      *Simulator
	fee      decimal.Decimal // guarded by mu (Simulator.refresh changes it)
	feeAsset string          // ExchangeSettings.FeeAsset
	tickMs   int64
	window   int64 // steps kept for 24h statistics and candles
	markets  map[string]*market
	pairs    []string // sorted

	mu         sync.Mutex
	balances   map[string]*balance
	orders     map[string]*order
	byClient   map[string]*order
	resting    map[string][]*order // per pair, in placement order
	fills      []domain.Fill
	fillBase   uint64 // Seq of fills[i] is fillBase+i+1
	nextID     int64
	failPlace  int
	failPlaced bool
	// hidden are the fills (by Seq) that DelayFills keeps out of the
	// lists until ReleaseFills; hideNext how many of the next fills join
	// them.
	hidden   map[uint64]bool
	hideNext int
	// failHistory: the history's calls answered before it fails
	// (FailHistory; 0: none).
	failHistory int
	// opened is when the account was opened in this process (ms): its
	// lists of fills start there (ListedFrom).
	opened int64

	settingsVersion int64 // Simulator.SettingsVersion when fee was set (guarded by Simulator.mu)
}

var _ domain.Exchange = (*Account)(nil)

// newAccount opens the account of exchange name with its settings (zero
// fields: the Simulator's defaults), its markets a window of steps into
// their walks.
func (s *Simulator) newAccount(name string, set ExchangeSettings) *Account {
	tick := s.Tick
	if tick <= 0 {
		tick = DefaultTick
	}
	a := &Account{
		name:     name,
		sim:      s,
		fee:      s.FeeRate,
		tickMs:   tick.Milliseconds(),
		window:   int64(DefaultWindow / tick),
		markets:  make(map[string]*market),
		balances: make(map[string]*balance),
		orders:   make(map[string]*order),
		byClient: make(map[string]*order),
		resting:  make(map[string][]*order),
	}
	// Order ids and fill sequences start from the clock, so that a
	// restarted simulator (its state is in memory) never reuses an id or
	// a fill cursor recorded in the log before the restart.
	a.fillBase = uint64(s.Clock.Now().UnixMilli()) * 1000
	a.opened = s.Clock.Now().UnixMilli()
	a.nextID = int64(a.fillBase)
	if a.tickMs <= 0 {
		a.tickMs = 1
	}
	if a.window < 1 {
		a.window = 1
	}
	if set.Fee != nil {
		a.fee = *set.Fee
	}
	bals := set.Balances
	if bals == nil {
		bals = s.Balances
	}
	for asset, v := range bals {
		a.balances[asset] = &balance{available: v}
	}
	pairs := set.Pairs
	if pairs == nil {
		pairs = s.Pairs
	}
	a.feeAsset = set.FeeAsset
	pairs = a.withFeeMarket(pairs, set)
	now := s.Clock.Now().UnixMilli() / a.tickMs
	for _, p := range pairs {
		if m, ok := a.newMarket(p, now); ok {
			a.markets[p.Pair] = m
			a.pairs = append(a.pairs, p.Pair)
		}
	}
	sort.Strings(a.pairs)
	return a
}

func (a *Account) market(pair string) (*market, error) {
	m, ok := a.markets[pair]
	if !ok {
		return nil, domain.Errorf(domain.ENOTFOUND, "pair %s is not listed on %s", pair, a.name)
	}
	return m, nil
}

// Name returns the exchange's name.
func (a *Account) Name() string { return a.name }

// FeeRate returns the exchange's fee rate (0.001 = 0.1%).
func (a *Account) FeeRate() decimal.Decimal {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fee
}
