package engine

import (
	"sort"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
)

// Balances is the last balances observed on each exchange, a projection
// of BalancesObserved (the balance-<exchange> streams): what the balances
// route answers, and what the Reconciler compares a new observation with
// so that an unchanged one appends nothing.
type Balances struct {
	mu    sync.Mutex
	state map[string]domain.BalancesObserved // exchange → last observed
}

// Name implements projections.Projection.
func (b *Balances) Name() string { return "engine-balances" }

// Apply implements projections.Projection.
func (b *Balances) Apply(e *domain.Event) error {
	if e.Type != domain.TypeBalancesObserved || !strings.HasPrefix(e.Stream, "balance-") {
		return nil
	}
	var p domain.BalancesObserved
	if err := e.Decode(&p); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == nil {
		b.state = map[string]domain.BalancesObserved{}
	}
	b.state[p.Exchange] = p
	return nil
}

// List returns the last observed balances of every exchange, sorted by
// exchange.
func (b *Balances) List() []domain.BalancesObserved {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]domain.BalancesObserved, 0, len(b.state))
	for _, o := range b.state {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Exchange < out[j].Exchange })
	return out
}

// last returns an exchange's last observed balances, and whether any were.
func (b *Balances) last(exchange string) (domain.BalancesObserved, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.state[exchange]
	return o, ok
}
