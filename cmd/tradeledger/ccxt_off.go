//go:build !ccxt

package main

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

// ccxtBuilt: this binary has no ccxt connector (built without -tags
// ccxt, which keeps a cold build short). `make build-ccxt` builds one
// that has.
const ccxtBuilt = false

// ccxtAccounts is the ccxt connectors' cache (Connectors.ccxt); this
// binary has none to keep.
type ccxtAccounts struct{}

// buildHint completes the reason of an exchange that trades on paper for
// want of a connector.
func buildHint(name string) string {
	if name == ConnectorCCXT {
		return " (ccxt exchanges need a binary built with the ccxt tag: make build-ccxt)"
	}
	return ""
}

// exchange is EUNAVAILABLE: this binary has no ccxt connector.
func (*ccxtAccounts) exchange(*Connectors, domain.Config, string) (domain.Exchange, error) {
	return nil, domain.Errorf(domain.EUNAVAILABLE, "this binary has no ccxt connector: build it with make build-ccxt")
}

func (m *Main) verifyCCXTKeys(context.Context, domain.Config, string, map[string]string) error {
	return domain.Errorf(domain.EUNAVAILABLE, "this binary has no ccxt connector: build it with make build-ccxt")
}
