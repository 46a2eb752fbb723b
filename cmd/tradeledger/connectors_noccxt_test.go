//go:build !ccxt

package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// A binary built without the ccxt tag refuses to start on a configuration
// naming `connector: ccxt`, with the command that builds one that has it;
// while it runs, such an exchange trades on paper and says why.
func TestCCXTNeedsTheTag(t *testing.T) {
	cfg, err := domain.ConfigFromMap(map[string]any{"bot": map[string]any{"SIMULATOR": false}, "pairs": map[string]any{}, "strategies": map[string]any{}, "GUI": map[string]any{},
		"exchanges": map[string]any{"kraken": map[string]any{"connector": "ccxt"}}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := testConnectors().Choose(cfg, "kraken")
	if err != nil || ch.Connector != "paper" || !ch.Fallback || !strings.Contains(ch.Reason, "make build-ccxt") {
		t.Fatalf("%+v %v: want paper, a fallback, and a reason naming make build-ccxt", ch, err)
	}

	// The configuration is written while the service runs (on paper:
	// SIMULATOR true), then the service starts again.
	e := startTradingE2E(t)
	status, cur := e.get("config/full")
	if status != 200 {
		t.Fatalf("config = %d %v", status, cur)
	}
	doc := cur["config"].(map[string]any)
	doc["exchanges"].(map[string]any)["kraken"] = map[string]any{"connector": "ccxt"}
	if status, out := e.post("config/update", map[string]any{"data": doc}, ""); status != 200 {
		t.Fatalf("config/update = %d %v", status, out)
	}
	e.m.Close()
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = e.m.Config.Data, "127.0.0.1:0", "127.0.0.1:0"
	m.Logger, m.Clock, m.ManualCycles, m.ManualCheckpoints = zap.NewNop(), e.clock, true, true
	err = m.Run(context.Background())
	m.Close()
	if err == nil || !strings.Contains(errorLine(err), `exchange "kraken" uses connector "ccxt"`) || !strings.Contains(errorLine(err), "go build -tags ccxt") {
		t.Fatalf("start with a ccxt exchange: %v, want a refusal naming the exchange and the build command", err)
	}
}
