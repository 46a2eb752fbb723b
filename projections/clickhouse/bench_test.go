package clickhouse

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// bigLog appends n orders of one fill each (OrderRequested, OrderFilled)
// over three pairs and about two years, alternately buying and selling the
// same quantity, with 32 concurrent writers (group commit).
func bigLog(tb testing.TB, store domain.EventStore, n int) {
	tb.Helper()
	pairs := []struct{ exchange, pair string }{{"binance", "USDT-BTC"}, {"binance", "USDT-ETH"}, {"binance", "USDT-SOL"}}
	t0 := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	const writers = 32
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += writers {
				clock := domain.NewManualClock(t0.Add(time.Duration(i) * time.Minute))
				p := pairs[i%len(pairs)]
				side := domain.Buy
				if (i/len(pairs))%2 == 1 { // buy, sell, buy, sell…: a bot's inventory stays small
					side = domain.Sell
				}
				price := domain.DecimalFromInt(int64(100 + (i*7919)%50))
				qty := domain.MustDecimal("0.5")
				id := int64(i + 1)
				evs := []domain.Event{
					domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: p.exchange, Pair: p.pair,
						Side: side, Kind: domain.KindLimit, Amount: qty, Price: price, ClientOrderID: "c" + strconv.Itoa(i)}),
					domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "f" + strconv.Itoa(i), Price: price,
						Quantity: qty, Fee: price.Mul(qty).DivInt(1000), FeeAsset: "USDT"}),
				}
				if _, err := store.Append(context.Background(), domain.OrderStream(id), domain.NoStream, evs...); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// BenchmarkExportAndOverview exports a log of TRADELEDGER_BENCH_FILLS
// fills (default 1,000,000) into ClickHouse and reports the export
// throughput, then the latency of pnl/overview (All, UTC) answered by the
// in-memory Ledger and by the ClickHouse Reader.
func BenchmarkExportAndOverview(b *testing.B) {
	url := testURL(b)
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("TRADELEDGER_BENCH_FILLS")); err == nil && v > 0 {
		n = v
	}
	store := openStore(b)
	start := time.Now()
	bigLog(b, store, n)
	b.Logf("log of %d fills written in %s", n, time.Since(start).Round(time.Millisecond))
	b.ResetTimer()
	var st ExportStats
	for i := 0; i < b.N; i++ {
		s := NewSink(url, store)
		s.BatchRows = 50_000
		start = time.Now()
		var err error
		if st, err = s.Export(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.StopTimer()
	if st.Fills != int64(n) && b.N == 1 {
		b.Fatalf("exported %d fills, want %d", st.Fills, n)
	}
	b.Logf("export: %d events, %d rows (%d fills) in %s: %.0f fills/s, %.0f rows/s", st.Events, st.Rows, st.Fills,
		el.Round(time.Millisecond), float64(st.Fills)/el.Seconds(), float64(st.Rows)/el.Seconds())
	b.ReportMetric(float64(st.Fills)/el.Seconds(), "fills/s")
	b.ReportMetric(float64(st.Rows)/el.Seconds(), "rows/s")

	mem := ledgerOf(b, store, domain.LOFO)
	r := NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC,
		Now: time.Date(2024, 11, 1, 12, 0, 0, 0, time.UTC)}
	lat := func(src PnlSource) (p50, p99 time.Duration, body string) {
		var ds []time.Duration
		for i := 0; i < 30; i++ {
			t := time.Now()
			o, err := src.Overview(q)
			ds = append(ds, time.Since(t))
			if err != nil {
				b.Fatal(err)
			}
			body = fmt.Sprint(o.Total)
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2], ds[len(ds)*99/100], body
	}
	m50, m99, mb := lat(mem)
	c50, c99, cb := lat(r)
	b.Logf("pnl/overview (All, UTC): memory p50 %s p99 %s; clickhouse p50 %s p99 %s", m50, m99, c50, c99)
	if mb != cb {
		b.Fatalf("overview totals differ:\nmemory     %s\nclickhouse %s", mb, cb)
	}
	b.ReportMetric(float64(m50.Microseconds())/1000, "mem-p50-ms")
	b.ReportMetric(float64(m99.Microseconds())/1000, "mem-p99-ms")
	b.ReportMetric(float64(c50.Microseconds())/1000, "ch-p50-ms")
	b.ReportMetric(float64(c99.Microseconds())/1000, "ch-p99-ms")
}
