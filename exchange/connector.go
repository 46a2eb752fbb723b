// Package exchange describes the exchange connectors: each connector
// package (exchange/paper, exchange/binance, exchange/ccxt) exports one
// Connector that says everything the rest of the program needs of it (its
// name, how to open an account on it, how to check keys, which settings of
// the configuration it reads, what /healthz says of it). One explicit list
// in cmd/tradeledger (connectors.go) names the descriptors this binary has;
// exchange/engine chooses one per configured exchange and owns what every
// connector shares: the placement guard and the health wrapper. What
// connectors work out alike from their exchange's answers is here
// (TradeScopes).
//
// A connector implements domain.Exchange. Beyond that contract, a
// placement the exchange refuses because it already has an order with
// that client order id is ECONFLICT: the engine's guard then looks the
// order up instead of answering a refusal.
package exchange

import (
	"context"
	"net/http"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Connector describes one connector. Name is required; a connector this
// binary lacks sets Missing and nothing else.
type Connector struct {
	// Name is what an exchange entry's `connector:` names (and an
	// exchange's name without its "#n" suffix, when it has no
	// `connector:`).
	Name string
	// Simulated marks the paper exchange: chosen for every exchange while
	// bot.SIMULATOR is true or its entry says simulator: true, it needs no
	// keys and has no account to cache.
	Simulated bool
	// Open returns the connector of one account. It does not call the
	// exchange; EINVALID when the account's settings cannot work (an
	// exchange the library does not know, a testnet it has none of).
	Open func(a Account) (domain.Exchange, error)
	// VerifyKeys checks an account's keys with an authenticated call:
	// EUNAUTHORIZED when the exchange refuses them. Nil: keys are not
	// checked.
	VerifyKeys func(ctx context.Context, a Account) (KeyCheck, error)
	// Settings names the fields of the exchange's entry that Open reads
	// besides the credentials; an account is opened again when one of them
	// or a credential changes.
	Settings []string
	// Describe adds to the reason /healthz and the start-up log give for
	// an exchange trading on this connector (its testnet, its exchange id);
	// nil adds nothing.
	Describe func(exchange string, entry map[string]any) string
	// Knows reports whether this connector could serve an exchange whose
	// name is not its own (ccxt knows "kraken"): the reason of an exchange
	// that falls back to paper says to name the connector. Nil: none.
	Knows func(exchange string) bool
	// Missing, when set, says that this binary lacks the connector and how
	// to build one that has it; a configuration naming it fails at start.
	Missing string
}

// Account is what a connector is opened with: one configured exchange.
type Account struct {
	// Exchange is the exchange's name in the configuration ("binance#2").
	Exchange string
	// Entry is its configuration entry (config.exchanges.<name>).
	Entry map[string]any
	// Keys are its credentials in clear, by lower-case field name ("key",
	// "secret", "password" …).
	Keys map[string]string
	// Pairs lists its configured pairs (a connector scans their fills).
	Pairs func() []string
	// Now is the clock Retry-After is measured on.
	Now func() time.Time
	// HTTPClient carries the connector's requests (nil: its default).
	HTTPClient *http.Client
	// URL, when set, replaces the exchange's API host: the entry's url
	// (config.exchanges.<name>.url: a regional host, a proxy), or a
	// test's fixture server.
	URL string
}

// KeyCheck is what VerifyKeys learned of accepted keys.
type KeyCheck struct {
	// Withdraw: the keys may withdraw funds (a trading bot needs only
	// reading and spot trading).
	Withdraw bool
	// Unknown: the connector cannot tell whether they may withdraw.
	Unknown bool
}

// Setting returns an entry's boolean setting (false when absent or not a
// boolean).
func (a Account) Setting(name string) bool {
	v, _ := a.Entry[name].(bool)
	return v
}
