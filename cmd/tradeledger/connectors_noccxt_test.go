//go:build !ccxt

package main

import (
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// A binary built without the ccxt tag trades a `connector: ccxt` exchange
// on paper, and says how to build one that does not.
func TestCCXTNeedsTheTag(t *testing.T) {
	cfg, err := domain.ConfigFromMap(map[string]any{"bot": map[string]any{"SIMULATOR": false}, "pairs": map[string]any{}, "strategies": map[string]any{}, "GUI": map[string]any{},
		"exchanges": map[string]any{"kraken": map[string]any{"connector": "ccxt"}}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := ChooseConnector(cfg, "kraken")
	if err != nil || ch.Connector != ConnectorPaper || !ch.Fallback || !strings.Contains(ch.Reason, "make build-ccxt") {
		t.Fatalf("%+v %v: want paper, a fallback, and a reason naming make build-ccxt", ch, err)
	}
}
