package main

import (
	"context"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// The rates the core records while it cycles name the core as their
// actor, as the core's other events do (the audit shows who wrote each
// event).
func TestServeRatesAreRecordedByTheCore(t *testing.T) {
	e := startTradingE2E(t)
	e.startManualPair("binance", "USDT-BTC")
	e.cycle("60000")
	it := e.m.DataDir.Store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	rates := 0
	for it.Next() {
		if ev := it.Event(); ev.Type == domain.TypeRateObserved {
			rates++
			if ev.Actor != domain.ActorCore {
				t.Errorf("RateObserved at %d has actor %q, want %q", ev.Position, ev.Actor, domain.ActorCore)
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if rates == 0 {
		t.Fatal("no RateObserved after a cycle")
	}
}
