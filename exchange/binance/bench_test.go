package binance_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/exchange/binance"
	"github.com/tradeledger/tradeledger/exchange/binance/fixture"
	"github.com/tradeledger/tradeledger/exchange/exchangetest"
)

// BenchmarkAccountBackfill: tradeledger sync's backfill of an account with
// 100,000 trades placed by hand (TRADELEDGER_BENCH_TRADES sets how many)
// over ten days, from the Binance fixture over loopback (myTrades in
// 24-hour windows paged by fromId, allOrders for their client ids), into
// an SQLite log with the engine's and the accounts' read models fed; and,
// in the same run, the store's batch append of the same ExternalFill
// events (one element a fact, as the backfill appends them) into a fresh
// log: the ceiling the backfill is measured against (ratio; target ≥ 0.8).
// read-only-trades/s is the connector reading the same trades from the
// fixture without recording them: what the exchange's side allows.
func BenchmarkAccountBackfill(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("TRADELEDGER_BENCH_TRADES")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fx := fixture.New("bench-key", "bench-secret")
		now := time.Now()
		start := now.Add(-10 * 24 * time.Hour)
		step := 10 * 24 * time.Hour / time.Duration(n)
		dec := decimal.MustDecimal
		fx.SetBalance("USDT", dec("1000000000"))
		fx.SetBalance("BTC", dec("1000000"))
		for k := 0; k < n; k++ {
			side := "BUY"
			if k%2 == 1 {
				side = "SELL"
			}
			if _, err := fx.HandTrade("BTCUSDT", side, dec("0.001"), dec("60000.01"), dec("0.06000001"), "USDT", start.Add(time.Duration(k)*step)); err != nil {
				b.Fatal(err)
			}
		}

		// The reference: the same facts, decided, appended in one batch.
		ref := sqlite.NewStore(filepath.Join(b.TempDir(), "ref.db"))
		if err := ref.Open(); err != nil {
			b.Fatal(err)
		}
		clock := domain.NewManualClock(now)
		batch := make([]domain.StreamAppend, 0, n)
		for k := 0; k < n; k++ {
			evs, err := domain.DecideExternalFill(clock, domain.ExternalFill{Exchange: "binance", Pair: "USDT-BTC", TradeID: "binance-BTCUSDT-" + strconv.Itoa(5001+k),
				OrderID: strconv.Itoa(1001 + k), ClientOrderID: "web_" + strconv.Itoa(1001+k), Side: domain.Buy, Price: dec("60000.01"), Quantity: dec("0.001"),
				QuoteQuantity: dec("60.00001"), Fee: dec("0.06000001"), FeeAsset: "USDT", Time: start.Add(time.Duration(k) * step).UnixMilli()})
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, domain.StreamAppend{Stream: domain.AccountStream("binance"), Expected: domain.Any, Events: evs})
		}
		refStart := time.Now()
		if _, err := eventstore.NewCommands(ref, nil).AppendBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
		refRate := float64(n) / time.Since(refStart).Seconds()
		ref.Close()

		// The exchange alone, in the same run: the connector reading the
		// fixture's trades over the window, nothing recorded — the part
		// of the backfill the log does not bound (here the fixture's
		// serving shares the two cores with it).
		reader := &binance.Exchange{ExchangeName: "binance", Key: "bench-key", Secret: "bench-secret", BaseURL: fx.URL, Now: time.Now, WeightPerMinute: 1 << 30}
		readStart := time.Now()
		read := 0
		for from, to := start.Add(-time.Minute).UnixMilli(), now.UnixMilli(); from < to; {
			page, err := reader.Activity(ctx, domain.ActivityQuery{Kind: domain.ActivityTrades, Scope: "USDT-BTC", From: from, To: to})
			if err != nil {
				b.Fatal(err)
			}
			read += len(page.Trades)
			from = page.Next
		}
		if read != n {
			b.Fatalf("read %d trades, want %d", read, n)
		}
		readRate := float64(n) / time.Since(readStart).Seconds()

		env := exchangetest.NewAccountEnv(b, exchangetest.AccountHarness{
			Exchange: func() domain.Exchange {
				return &binance.Exchange{ExchangeName: "binance", Key: "bench-key", Secret: "bench-secret", BaseURL: fx.URL, Now: time.Now,
					WeightPerMinute: 1 << 30, SAPIScale: 1e6, Pairs: func() []string { return []string{"USDT-BTC"} }}
			},
			Pair: "USDT-BTC", Amount: dec("0.001"), Clock: domain.NewManualClock(now),
		})
		b.StartTimer()
		t0 := time.Now()
		st, err := env.Engine.Accounts.Backfill(ctx, "binance", start.Add(-time.Minute), nil)
		elapsed := time.Since(t0)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if st.External != n {
			b.Fatalf("%d external trades recorded, want %d (%+v)", st.External, n, st)
		}
		rate := float64(n) / elapsed.Seconds()
		b.ReportMetric(rate, "trades/s")
		b.ReportMetric(refRate, "batch-append-events/s")
		b.ReportMetric(rate/refRate, "ratio")
		b.ReportMetric(elapsed.Seconds(), "backfill-s")
		b.ReportMetric(readRate, "read-only-trades/s")
		env.Close()
		fx.Close()

	}
}
