package engine_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// BenchmarkSubmit places limit orders through Trader.Submit (no HTTP) with
// 64 concurrent callers over the SQLite store, waiting for the projections
// like the API does: the order manager's own share of the placement cost.
func BenchmarkSubmit(b *testing.B) {
	ctx := context.Background()
	store := sqlite.NewStore(filepath.Join(b.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	clock := domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sim := paper.NewSimulator(clock)
	sim.Balances = map[string]decimal.Decimal{"USDT": decimal.DecimalFromInt(1_000_000_000)}
	runner := projections.NewRunner(store)
	eng := engine.New(store, sim.Exchange, nil, projections.NewBalances(), clock)
	tr := eng.Trader
	tr.Activity, eng.Desk.Wait = cycling{"binance": true}, runner.WaitFor
	for _, p := range eng.Projections() {
		runner.Register(p)
	}
	if err := runner.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer runner.Close()
	req := limit(domain.Buy, "0.001", "1000")
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < 64; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := tr.Submit(ctx, req); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orders/s")
}
