package exchange_test

import (
	"slices"
	"testing"

	"github.com/tradeledger/tradeledger/exchange"
)

// TradeScopes lists each pair once, in order: configured, traded, or a
// market between two held assets (not one with a single held asset).
func TestTradeScopes(t *testing.T) {
	markets := []exchange.Market{{"USDT-BTC", "BTC", "USDT"}, {"USDT-ETH", "ETH", "USDT"}, {"BTC-ETH", "ETH", "BTC"}, {"EUR-BTC", "BTC", "EUR"}}
	configured := func() []string { return []string{"USDT-XRP", "USDT-BTC"} }
	got := exchange.TradeScopes(configured, []string{"USDT-DOGE", "USDT-BTC"}, []string{"BTC", "USDT", "ETH"}, markets)
	if want := []string{"BTC-ETH", "USDT-BTC", "USDT-DOGE", "USDT-ETH", "USDT-XRP"}; !slices.Equal(got, want) {
		t.Errorf("scopes %v, want %v", got, want)
	}
	if got := exchange.TradeScopes(nil, nil, []string{"BTC"}, markets); len(got) != 0 {
		t.Errorf("scopes %v with one held asset and nothing configured, want none", got)
	}
}
