package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// TestCancelRequestRetriesOnConflict: the cancel request goes through the
// command path (eventstore.Run): when another writer appended to the
// order's stream since the Trader last saw it, the append conflicts, the
// Trader catches up (its Wait) and decides again, instead of failing with
// ECONFLICT.
func TestCancelRequestRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	clock := domain.NewManualClock(time.Date(2026, 5, 6, 7, 8, 0, 0, time.UTC))
	store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sim := paper.NewSimulator(clock)
	if err := sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("60000")); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(store, sim.Exchange, nil, projections.NewBalances(), clock)
	tr := eng.Trader
	tr.Activity = cycling{"binance": true}
	// The Trader's only projection runner: Wait applies what the log holds
	// beyond what it applied, so a test decides when the Trader catches up.
	var applied uint64
	eng.Desk.Wait = func(ctx context.Context, pos uint64) error {
		it := store.ReadAll(ctx, 0, 0)
		defer it.Close()
		for it.Next() {
			e := it.Event()
			if e.Position <= applied {
				continue
			}
			for _, p := range eng.Projections() {
				if err := p.Apply(&e); err != nil {
					return err
				}
			}
			applied = e.Position
		}
		return it.Err()
	}
	id, err := tr.Submit(ctx, limit(domain.Buy, "0.01", "1000")) // rests far below the market
	if err != nil {
		t.Fatal(err)
	}
	o, _ := eng.Orders.Order(id)
	// Another writer records a partial fill the Trader has not seen.
	fill := domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "elsewhere-1", Price: decimal.MustDecimal("1000"), Quantity: decimal.MustDecimal("0.004"), FeeAsset: "USDT"})
	if _, err := store.Append(ctx, domain.OrderStream(id), domain.ExpectedVersion(o.Version), fill); err != nil {
		t.Fatal(err)
	}
	if err := tr.Cancel(ctx, "binance", "USDT-BTC", id, "tester", ""); err != nil {
		t.Fatalf("cancel after another writer's append: %v, want the command to decide again and succeed", err)
	}
	o, _ = eng.Orders.Order(id)
	if got, want := o.State, domain.OrderStateCancelled; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
	if got, want := o.Filled, decimal.MustDecimal("0.004"); got != want {
		t.Fatalf("filled %s, want %s (the other writer's fill kept)", got, want)
	}
}
