//go:build !ccxt

// Package ccxt is the long-tail connector, built only with -tags ccxt (see
// ccxt.go): a binary built without the tag has only its descriptor, which
// says how to build one that has it.
package ccxt

import "github.com/tradeledger/tradeledger/exchange"

// Connector describes the ccxt connector this binary lacks: a
// configuration naming it fails at start with the build command.
var Connector = exchange.Connector{
	Name:    "ccxt",
	Missing: "build a binary with the ccxt connector: make build-ccxt (go build -tags ccxt ./cmd/tradeledger), or make release",
}
