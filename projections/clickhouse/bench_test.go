package clickhouse

import (
	"context"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// bigLog appends n orders of one fill each (OrderRequested, OrderFilled)
// over three pairs and about two years, alternately buying and selling the
// same quantity, with 32 concurrent writers (group commit).
func bigLog(tb testing.TB, store domain.EventStore, n int) { bigLogShifted(tb, store, n, 0) }

// bigLogShifted is bigLog with its prices moved by shift (mod 50): another
// bot's log of the same shape.
func bigLogShifted(tb testing.TB, store domain.EventStore, n, shift int) {
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
				price := domain.DecimalFromInt(int64(100 + (i*7919+shift)%50))
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
// orders of one fill each (default 200,000: issue 19's size) into
// ClickHouse and reports the export throughput, then pnl/overview (All,
// Europe/Amsterdam) answered by the in-memory Ledger and by the ClickHouse
// Reader: p50 and p99 of 300 requests one after the other, and requests/s
// with 4 clients; and the same over the log's last 30 days (ch-30d-*, 100
// requests). Every ClickHouse request is computed (ch-*); the HTTP
// server caches encoded overviews by Reader.Version (the sink's
// checkpoint), whose cost alone is ver-p50/ver-p99, the cost of a
// request answered from that cache.
//
// TRADELEDGER_BENCH_2M=1 also measures 2,000,000 orders (writing that log
// takes about 9 minutes on the shared 2-core machine, exporting it 2 to 3
// more) and reports its p99 over the first size's (issue 19: ≤ 1.5).
func BenchmarkExportAndOverview(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("TRADELEDGER_BENCH_FILLS")); err == nil && v > 0 {
		n = v
	}
	f1 := benchOverview(b, n)
	if os.Getenv("TRADELEDGER_BENCH_2M") == "" {
		return
	}
	f2 := benchOverview(b, 2_000_000)
	b.Logf("pnl/overview from ClickHouse at 2,000,000 vs %d orders: p99 %.2f×, p50 %.2f×", n,
		float64(f2.p99)/float64(f1.p99), float64(f2.p50)/float64(f1.p50))
	b.ReportMetric(float64(f2.p50.Microseconds())/1000, "ch-2M-p50-ms")
	b.ReportMetric(float64(f2.p99.Microseconds())/1000, "ch-2M-p99-ms")
	b.ReportMetric(f2.rps, "ch-2M-req/s")
	b.ReportMetric(float64(f2.p99)/float64(f1.p99), "ch-2M/200k-p99")
}

type latency struct {
	p50, p99 time.Duration
	rps      float64
}

// measure times call: n calls one after the other (p50, p99), then n
// calls from 4 goroutines (requests/s).
func measure(tb testing.TB, n int, call func() error) latency {
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t := time.Now()
		if err := call(); err != nil {
			tb.Fatal(err)
		}
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	start := time.Now()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := call(); err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return latency{p50: ds[len(ds)/2], p99: ds[len(ds)*99/100], rps: float64(n) / time.Since(start).Seconds()}
}

func benchOverview(b *testing.B, n int) latency {
	url := testURL(b)
	store := openStore(b)
	start := time.Now()
	bigLog(b, store, n)
	b.Logf("log of %d fills written in %s", n, time.Since(start).Round(time.Millisecond))
	s := NewSink(url, store)
	s.BatchRows = 50_000
	start = time.Now()
	st, err := s.Export(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	if st.Fills < int64(n) { // more: a pair folded again (a quote joined to another) writes its fills' rows again
		b.Fatalf("exported %d fill rows, want at least %d", st.Fills, n)
	}
	b.Logf("export: %d events, %d rows (%d fill rows) in %s: %.0f fills/s, %.0f rows/s", st.Events, st.Rows, st.Fills,
		el.Round(time.Millisecond), float64(n)/el.Seconds(), float64(st.Rows)/el.Seconds())
	suffix := ""
	if n != 200_000 {
		suffix = "-" + strconv.Itoa(n)
	}
	b.ReportMetric(float64(n)/el.Seconds(), "fills/s"+suffix)

	mem := ledgerOf(b, store, domain.LOFO)
	r := NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		b.Fatal(err)
	}
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: ams,
		Now: time.Date(2024, 11, 1, 12, 0, 0, 0, time.UTC)}
	overview := func(src PnlSource) func() error {
		return func() error { _, err := src.Overview(q); return err }
	}
	// A first request each, outside the figures (connections, caches).
	mo, err := mem.Overview(q)
	if err != nil {
		b.Fatal(err)
	}
	co, err := r.Overview(q)
	if err != nil {
		b.Fatal(err)
	}
	if mb, cb := mustJSON(b, mo, nil), mustJSON(b, co, nil); mb != cb || len(mo.DailyHistory) < n/1440 {
		b.Fatalf("overviews differ or too few days:\nmemory     %.2000s\nclickhouse %.2000s", mb, cb)
	}
	m := measure(b, 300, overview(mem))
	c := measure(b, 300, overview(r))
	b.Logf("pnl/overview (All, Europe/Amsterdam) over %d orders: memory p50 %s p99 %s %.0f req/s; clickhouse p50 %s p99 %s %.0f req/s",
		n, m.p50, m.p99, m.rps, c.p50, c.p99, c.rps)
	b.ReportMetric(float64(m.p50.Microseconds())/1000, "mem-p50-ms"+suffix)
	b.ReportMetric(float64(m.p99.Microseconds())/1000, "mem-p99-ms"+suffix)
	b.ReportMetric(float64(c.p50.Microseconds())/1000, "ch-p50-ms"+suffix)
	b.ReportMetric(float64(c.p99.Microseconds())/1000, "ch-p99-ms"+suffix)
	b.ReportMetric(c.rps, "ch-req/s"+suffix)
	// A dashboard's date range: the log's last 30 days (aggregates and days
	// from the buckets; pairs, strategies and period figures as over all
	// time).
	end := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute)
	qr := q
	qr.From, qr.To = end.Add(-30*24*time.Hour).UnixMilli(), end.UnixMilli()
	mr, err := mem.Overview(qr)
	if err != nil {
		b.Fatal(err)
	}
	cro, err := r.Overview(qr)
	if mb, cb := mustJSON(b, mr, nil), mustJSON(b, cro, err); mb != cb || len(mr.DailyHistory) < 29 {
		b.Fatalf("30-day overviews differ or too few days:\nmemory     %.2000s\nclickhouse %.2000s", mb, cb)
	}
	cr := measure(b, 100, func() error { _, err := r.Overview(qr); return err })
	b.Logf("pnl/overview (last 30 days, Europe/Amsterdam): clickhouse p50 %s p99 %s %.0f req/s", cr.p50, cr.p99, cr.rps)
	b.ReportMetric(float64(cr.p50.Microseconds())/1000, "ch-30d-p50-ms"+suffix)
	b.ReportMetric(float64(cr.p99.Microseconds())/1000, "ch-30d-p99-ms"+suffix)
	if v, ok := any(r).(interface{ Version() uint64 }); ok {
		w := measure(b, 300, func() error { v.Version(); return nil })
		b.Logf("Reader.Version (an overview from the HTTP cache): p50 %s p99 %s %.0f req/s", w.p50, w.p99, w.rps)
		b.ReportMetric(float64(w.p50.Microseconds())/1000, "ver-p50-ms"+suffix)
		b.ReportMetric(float64(w.p99.Microseconds())/1000, "ver-p99-ms"+suffix)
	}
	return c
}
