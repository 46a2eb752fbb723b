package binance

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange"
)

// Connector describes the Binance spot connector: an exchange entry named
// binance (or binance#n, or with `connector: binance`) trades on it once
// bot.SIMULATOR is false. It reads the entry's key and secret, and
// testnet (Binance's spot testnet). Keys are checked against the account
// endpoint, which also says whether they may withdraw.
var Connector = exchange.Connector{
	Name:       "binance",
	Open:       func(a exchange.Account) (domain.Exchange, error) { return open(a), nil },
	VerifyKeys: verifyKeys,
	Settings:   []string{"testnet"},
	Describe: func(_ string, entry map[string]any) string {
		if t, _ := entry["testnet"].(bool); t {
			return "testnet"
		}
		return ""
	},
}

// open returns an account's connector.
func open(a exchange.Account) *Exchange {
	x := New(a.Exchange, a.Keys["key"], a.Keys["secret"], a.Setting("testnet"))
	if a.URL != "" {
		x.BaseURL = a.URL
	}
	x.Now, x.HTTPClient, x.Pairs = a.Now, a.HTTPClient, a.Pairs
	return x
}

func verifyKeys(ctx context.Context, a exchange.Account) (exchange.KeyCheck, error) {
	withdraw, err := open(a).VerifyKeys(ctx)
	return exchange.KeyCheck{Withdraw: withdraw}, err
}
