package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
)

// BenchmarkReconcileCycle: one reconciliation cycle of the core on an
// account holding 100 assets (the paper exchange, in process): the
// balances read before and after, every history read from its cursor
// less the lookback (nothing new), the balance the ledger implies
// compared with the exchange's for each asset. cycle-µs is one cycle;
// compare-µs the comparison alone (domain.DecideBalanceCheck over the 100
// assets, with the read model's view).
func BenchmarkReconcileCycle(b *testing.B) {
	const assets = 100
	a := newAccountEnv(b)
	balances := map[string]decimal.Decimal{}
	for i := 0; i < assets; i++ {
		balances[fmt.Sprintf("A%03d", i)] = decimal.MustDecimal(fmt.Sprintf("%d.123456789", i+1))
	}
	balances["USDT"], balances["BTC"] = decimal.MustDecimal("10000"), decimal.MustDecimal("1")
	a.sim.Settings = func(string) (paper.ExchangeSettings, bool) { return paper.ExchangeSettings{Balances: balances}, true }
	ctx := context.Background()
	a.setPrice("USDT-BTC", "60000")
	if err := a.eng.Accounts.Sync(ctx, "binance"); err != nil {
		b.Fatal(err)
	}
	v, _ := a.book.View("binance")
	if !v.Opened || len(v.Implied) < assets {
		b.Fatalf("opened %v with %d assets", v.Opened, len(v.Implied))
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		a.clock.Advance(engine.DefaultSyncInterval)
		if err := a.eng.Accounts.Sync(ctx, "binance"); err != nil {
			b.Fatal(err)
		}
	}
	cycle := time.Since(start) / time.Duration(b.N)
	b.StopTimer()
	if d := a.book.Discrepancies(); len(d) != 0 {
		b.Fatalf("discrepancies: %v", d)
	}
	x, _ := a.sim.Exchange("binance")
	reported, _ := x.Balances(ctx)
	const reps = 1000
	t0 := time.Now()
	for i := 0; i < reps; i++ {
		view, _ := a.book.View("binance")
		domain.DecideBalanceCheck(a.clock, "binance", view.Implied, reported, view.Open, 0)
	}
	b.ReportMetric(float64(cycle.Microseconds()), "cycle-µs")
	b.ReportMetric(float64(time.Since(t0).Microseconds())/reps, "compare-µs")
}
