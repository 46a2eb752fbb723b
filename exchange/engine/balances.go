package engine

import "github.com/tradeledger/tradeledger/domain"

// BalanceBook is the read model of the last balances observed on each
// exchange (projections.Balances is the one serve and replay use): what
// the balances route answers, and what the Reconciler compares a new
// observation with, so that an unchanged one appends nothing. The engine
// applies its own BalancesObserved to it at once, and lists it among its
// Projections.
type BalanceBook interface {
	Projection
	// Balances returns each exchange's last observed balances, sorted by
	// exchange.
	Balances() []domain.BalancesObserved
}

// lastObserved returns an exchange's last observed balances in book, and
// whether any were.
func lastObserved(book BalanceBook, exchange string) (domain.BalancesObserved, bool) {
	for _, b := range book.Balances() {
		if b.Exchange == exchange {
			return b, true
		}
	}
	return domain.BalancesObserved{}, false
}
