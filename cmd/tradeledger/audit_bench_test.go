package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// BenchmarkAuditLog measures verify and replay throughput (events/s) on a
// log of TRADELEDGER_BENCH_EVENTS events (default 1,000,000): orders of
// three events each (requested, accepted, filled), alternating buys and
// sells on four pairs. Building the log is not measured; raw-scan (read
// every event, apply nothing) is the reference. Run with -benchtime 1x.
func BenchmarkAuditLog(b *testing.B) {
	n := benchEnvInt(b, "TRADELEDGER_BENCH_EVENTS", 1_000_000)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "events.db")
	store := sqlite.NewStore(path)
	if err := store.Open(); err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	start := time.Now()
	total := buildBenchLog(b, store, n)
	b.Logf("built a log of %d events in %s", total, time.Since(start).Round(time.Millisecond))

	b.Run("raw-scan", func(b *testing.B) { // the reference: read every event, do nothing
		for i := 0; i < b.N; i++ {
			start := time.Now()
			it := store.ReadAll(ctx, 0, 0)
			c := 0
			for it.Next() {
				c++
			}
			it.Close()
			if c != total {
				b.Fatalf("scanned %d", c)
			}
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "events/s")
		}
	})
	b.Run("verify", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start := time.Now()
			sum, err := audit.VerifyLog(ctx, store, audit.VerifyOptions{})
			if err != nil || !sum.OK || sum.Events != int64(total) {
				b.Fatalf("verify: %v %+v", err, sum)
			}
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "events/s")
		}
	})
	b.Run("replay", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start := time.Now()
			rep, err := replayState(ctx, store, nil, logCut{Position: ^uint64(0) >> 1}, domain.LOFO,
				projections.PnlScope{Keys: []string{"All"}, Quote: "USDT"}, time.UTC, time.Now(), nil, nil)
			if err != nil || rep.AsOf.Events != int64(total) || rep.AsOf.Failures != 0 {
				b.Fatalf("replay: %v %+v", err, rep.AsOf)
			}
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "events/s")
		}
	})
}

// buildBenchLog appends about n events with 64 concurrent writers (the
// store's group commit makes that fast) and returns how many it appended.
func buildBenchLog(b *testing.B, store *sqlite.Store, n int) int {
	ctx := context.Background()
	orders := n / 3
	clock := domain.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	pairs := []string{"USDT-BTC", "USDT-ETH", "USDT-SOL", "USDT-XRP"}
	var wg sync.WaitGroup
	jobs := make(chan int64, 1024)
	errs := make(chan error, 64)
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range jobs {
				at := clock.Now().Add(time.Duration(id) * time.Second)
				side, price := domain.Buy, 100+id%50
				if id%2 == 1 {
					side, price = domain.Sell, 101+id%50
				}
				pair := pairs[id%int64(len(pairs))]
				mk := func(typ string, data any) domain.Event {
					e := domain.NewEvent(domain.NewManualClock(at), typ, data)
					e.Actor = domain.ActorCore
					return e
				}
				p := decimal.MustDecimal(strconv.FormatInt(price, 10))
				q := decimal.MustDecimal("0.5")
				evs := []domain.Event{
					mk(domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: pair, Side: side, Kind: domain.KindLimit, Amount: q, Price: p, ClientOrderID: fmt.Sprint("c", id)}),
					mk(domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprint("x", id)}),
					mk(domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint("f", id), Price: p, Quantity: q, Fee: decimal.MustDecimal("0.05"), FeeAsset: "USDT"}),
				}
				if _, err := store.Append(ctx, domain.OrderStream(id), domain.NoStream, evs...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for id := int64(1); id <= int64(orders); id++ {
		jobs <- id
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	return orders * 3
}
