//go:build ccxt

package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/ccxt"
)

// ccxtBuilt: this binary has the ccxt connector (built with -tags ccxt).
const ccxtBuilt = true

// ccxtAccounts caches one ccxt connector per exchange account, replaced
// when its keys or settings change.
type ccxtAccounts struct {
	mu sync.Mutex
	m  map[string]*ccxtAccount
}

type ccxtAccount struct {
	fingerprint [32]byte
	x           *ccxt.Exchange
}

// buildHint completes the reason of an exchange that trades on paper for
// want of a connector: a name ccxt knows needs `connector: ccxt`.
func buildHint(name string) string {
	if ccxt.Known(name) {
		return fmt.Sprintf(" (ccxt knows %s: set connector: ccxt to trade on it)", name)
	}
	return ""
}

// ccxtSettings reads a ccxt exchange's entry: ccxtId (default: the name
// without its instance suffix) and testnet.
func ccxtSettings(name string, entry map[string]any) (id string, testnet bool) {
	id, _ = entry["ccxtId"].(string)
	if id == "" {
		id, _, _ = strings.Cut(name, "#")
	}
	testnet, _ = entry["testnet"].(bool)
	return strings.ToLower(id), testnet
}

// newCCXT returns an unopened connector for one account.
func (c *Connectors) newCCXT(name string, entry map[string]any, keys map[string]string) *ccxt.Exchange {
	id, testnet := ccxtSettings(name, entry)
	x := ccxt.New(name, id, keys["key"], keys["secret"])
	x.Password = keys["password"]
	if x.Password == "" {
		x.Password = keys["passphrase"]
	}
	x.Sandbox, x.URL, x.HTTPClient = testnet, c.CCXTURL, c.HTTPClient
	if c.Now != nil {
		x.Now = c.Now
	}
	return x
}

// exchange returns the ccxt connector of a configured exchange, opened
// once per account and settings: EINVALID without keys, or for a ccxtId
// ccxt does not know.
func (a *ccxtAccounts) exchange(c *Connectors, cfg domain.Config, name string) (domain.Exchange, error) {
	entry, keys, err := c.account(cfg, name)
	if err != nil {
		return nil, err
	}
	id, testnet := ccxtSettings(name, entry)
	fp := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%t", id, keys["key"], keys["secret"], keys["password"]+keys["passphrase"], testnet)))
	a.mu.Lock()
	defer a.mu.Unlock()
	if acc, ok := a.m[name]; ok && acc.fingerprint == fp {
		return acc.x, nil
	}
	x := c.newCCXT(name, entry, keys)
	x.Pairs = c.pairsOf(name)
	if err := x.Open(); err != nil {
		return nil, err
	}
	if a.m == nil {
		a.m = map[string]*ccxtAccount{}
	}
	a.m[name] = &ccxtAccount{fingerprint: fp, x: x}
	return x, nil
}

// verifyCCXTKeys checks new keys of a ccxt exchange with an authenticated
// call (the balances): keys the exchange refuses are EUNAUTHORIZED.
// ccxt has no unified way to read a key's permissions, so withdrawal
// permission is not checked; the log says so.
func (m *Main) verifyCCXTKeys(ctx context.Context, cfg domain.Config, exchange string, fields map[string]string) error {
	if fields["key"] == "" || fields["secret"] == "" {
		return domain.Errorf(domain.EINVALID, "newLicenses.%s: key and secret are required to trade on %s", exchange, ConnectorCCXT)
	}
	entry, _ := cfg.Exchange(exchange)
	x := m.Connectors.newCCXT(exchange, entry, fields)
	err := x.VerifyKeys(ctx)
	switch {
	case domain.ErrorCode(err) == domain.EUNAUTHORIZED:
		return domain.Errorf(domain.EUNAUTHORIZED, "verifyExchange: %s", domain.ErrorMessage(err))
	case err != nil:
		return err
	}
	m.Logger.Info("exchange keys accepted; ccxt cannot tell whether they may withdraw: create keys without withdrawal permission",
		zap.String("exchange", exchange), zap.String("ccxtId", x.ID))
	return nil
}
