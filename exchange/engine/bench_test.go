package engine_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// BenchmarkSubmit places limit orders through Trader.Submit (no HTTP) with
// 64 concurrent callers over the SQLite store, waiting for the projections
// like the API does: the order manager's own share of the placement cost.
func BenchmarkSubmit(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b)
	e.sim.Balances = map[string]decimal.Decimal{"USDT": decimal.DecimalFromInt(1_000_000_000)}
	tr := e.tr
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
