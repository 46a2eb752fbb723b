package paper

import (
	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange"
)

// Connector describes the simulator as a connector: named paper, it is
// the one the engine chooses for every exchange while bot.SIMULATOR is
// true or an exchange's entry says simulator: true (and for an exchange
// whose connector the binary lacks). An account is the simulator's
// account of that exchange name; it needs no keys.
func (s *Simulator) Connector() exchange.Connector {
	return exchange.Connector{
		Name:      "paper",
		Simulated: true,
		Open:      func(a exchange.Account) (domain.Exchange, error) { return s.Exchange(a.Exchange) },
	}
}
