//go:build ccxt

package ccxt

import (
	"context"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange"
)

// Connector describes the ccxt connector: an exchange entry with
// `connector: ccxt` trades on it once bot.SIMULATOR is false. It reads the
// entry's key, secret and password (or passphrase), ccxtId (ccxt's
// exchange id; default: the exchange's name without its "#n" suffix) and
// testnet (the exchange's sandbox). Keys are checked with an authenticated
// call (the balances); ccxt cannot tell whether they may withdraw.
var Connector = exchange.Connector{
	Name: "ccxt",
	Open: func(a exchange.Account) (domain.Exchange, error) {
		x := open(a)
		if err := x.Open(); err != nil {
			return nil, err
		}
		return x, nil
	},
	VerifyKeys: func(ctx context.Context, a exchange.Account) (exchange.KeyCheck, error) {
		return exchange.KeyCheck{Unknown: true}, open(a).VerifyKeys(ctx)
	},
	Settings: []string{"ccxtId", "testnet"},
	Describe: func(name string, entry map[string]any) string {
		s := "ccxt exchange " + idOf(name, entry)
		if t, _ := entry["testnet"].(bool); t {
			s += "; testnet"
		}
		return s
	},
	Knows: Known,
}

// idOf is an entry's ccxt exchange id: ccxtId, else the exchange's name
// without its instance suffix.
func idOf(name string, entry map[string]any) string {
	id, _ := entry["ccxtId"].(string)
	if id == "" {
		id, _, _ = strings.Cut(name, "#")
	}
	return strings.ToLower(id)
}

// open returns an account's connector, not opened.
func open(a exchange.Account) *Exchange {
	x := New(a.Exchange, idOf(a.Exchange, a.Entry), a.Keys["key"], a.Keys["secret"])
	x.Password = a.Keys["password"]
	if x.Password == "" {
		x.Password = a.Keys["passphrase"]
	}
	x.Sandbox, x.URL, x.HTTPClient, x.Pairs = a.Setting("testnet"), a.URL, a.HTTPClient, a.Pairs
	if a.Now != nil {
		x.Now = a.Now
	}
	return x
}
