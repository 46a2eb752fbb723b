package main

import (
	"testing"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

func TestSimulatorSettings(t *testing.T) {
	entry := initialConfig("0x00112233445566778899aabbccddeeff")["exchanges"].(map[string]any)["binance"].(map[string]any)
	set := simulatorSettings("binance", entry, zap.NewNop())
	if set.Fee == nil || *set.Fee != decimal.MustDecimal("0.001") {
		t.Fatalf("fee %v, want 0.001", set.Fee)
	}
	if len(set.Balances) != 4 || set.Balances["USDT"] != decimal.DecimalFromInt(10000) || set.Balances["BTC"] != decimal.MustDecimal("0.5") {
		t.Fatalf("balances %v", set.Balances)
	}
	bad := map[string]any{"simulator": map[string]any{"fee": "cheap", "balances": map[string]any{"USDT": "lots", "ETH": -1, "BTC": 2}}}
	set = simulatorSettings("x", bad, zap.NewNop())
	if set.Fee != nil || len(set.Balances) != 1 || set.Balances["BTC"] != decimal.DecimalFromInt(2) {
		t.Fatalf("bad values kept: fee %v balances %v", set.Fee, set.Balances)
	}
	if set := simulatorSettings("x", map[string]any{}, zap.NewNop()); set.Fee != nil || set.Balances != nil {
		t.Fatalf("no simulator block: %+v", set)
	}
}
