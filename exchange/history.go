package exchange

import (
	"maps"
	"slices"
)

// Market is a listed market as TradeScopes reads it: its pair and the
// pair's two assets.
type Market struct {
	Pair, Base, Quote string
}

// TradeScopes is what a connector whose exchange lists an account's trades
// per market answers to domain.AccountHistory's ActivityScopes for trades:
// the configured pairs (configured may be nil), the pairs the connector
// traded, and the pair of every market between two of the assets given;
// sorted, each once.
func TradeScopes(configured func() []string, traded, assets []string, markets []Market) []string {
	held := make(map[string]bool, len(assets))
	for _, a := range assets {
		held[a] = true
	}
	pairs := map[string]bool{}
	if configured != nil {
		for _, p := range configured() {
			pairs[p] = true
		}
	}
	for _, p := range traded {
		pairs[p] = true
	}
	for _, m := range markets {
		if held[m.Base] && held[m.Quote] {
			pairs[m.Pair] = true
		}
	}
	return slices.Sorted(maps.Keys(pairs))
}
