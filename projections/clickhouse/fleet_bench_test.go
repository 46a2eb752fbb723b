package clickhouse

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// BenchmarkFleetOverview measures fleet/overview (Fleet.Overview: every
// instance's figures over all time in one currency, and their total) over
// 10 instances of TRADELEDGER_BENCH_FLEET_ORDERS orders each (default
// 100,000: DESIGN §9's size) in one database, beside one instance's
// pnl/overview (All, over all time) from the same database in the same run:
// p50 and p99 of 300 requests one after the other, every one computed (no
// HTTP cache), and requests/s with 4 clients.
//
// Each instance is a log of its own (bigLog's shape, prices shifted per
// instance) exported by a sink under its name, bench-00 … bench-09; the
// one instance read alone is bench-00.
func BenchmarkFleetOverview(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("TRADELEDGER_BENCH_FLEET_ORDERS")); err == nil && v > 0 {
		n = v
	}
	const instances = 10
	url := testURL(b)
	ctx := context.Background()
	var written, exported time.Duration
	for i := 0; i < instances; i++ {
		store := openStore(b)
		start := time.Now()
		bigLogShifted(b, store, n, 7*i)
		written += time.Since(start)
		s := NewSink(url, store)
		s.Instance, s.BatchRows = fmt.Sprintf("bench-%02d", i), 50_000
		start = time.Now()
		if _, err := s.Export(ctx); err != nil {
			b.Fatal(err)
		}
		exported += time.Since(start)
	}
	b.Logf("%d logs of %d orders written in %s, exported as bench-00 … bench-%02d in %s", instances, n,
		written.Round(time.Millisecond), instances-1, exported.Round(time.Millisecond))

	r := NewReader(url, domain.LOFO)
	r.Instance = "bench-00"
	if err := r.Open(); err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	f := NewFleet(url)
	if err := f.Open(); err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: time.Date(2024, 11, 1, 12, 0, 0, 0, time.UTC)}
	fq := domain.FleetQuery{Currency: "USDT", Method: domain.LOFO}
	// A first request each, outside the figures; the fleet's figures
	// checked against the instance's own.
	one, err := r.Overview(q)
	if err != nil {
		b.Fatal(err)
	}
	fo, err := f.Overview(ctx, fq)
	if err != nil {
		b.Fatal(err)
	}
	if len(fo.Instances) != instances || fo.Total.Instances != instances || fo.Total.NumberOfTrades != instances*one.Total.NumberOfTrades ||
		fo.Instances[0].Pnl != one.Total.Pnl || one.Total.NumberOfTrades != int64(n) {
		b.Fatalf("fleet of %d instances: %d listed, %d trades; one instance: %d trades, pnl %v (the fleet's: %v)", instances,
			len(fo.Instances), fo.Total.NumberOfTrades, one.Total.NumberOfTrades, one.Total.Pnl, fo.Instances[0].Pnl)
	}
	single := measure(b, 300, func() error { _, err := r.Overview(q); return err })
	fleet := measure(b, 300, func() error { _, err := f.Overview(ctx, fq); return err })
	b.Logf("over %d instances × %d orders: fleet/overview p50 %s p99 %s %.0f req/s; one instance's pnl/overview p50 %s p99 %s %.0f req/s; fleet/one p99 %.2f×",
		instances, n, fleet.p50, fleet.p99, fleet.rps, single.p50, single.p99, single.rps, float64(fleet.p99)/float64(single.p99))
	b.ReportMetric(float64(fleet.p50.Microseconds())/1000, "fleet-p50-ms")
	b.ReportMetric(float64(fleet.p99.Microseconds())/1000, "fleet-p99-ms")
	b.ReportMetric(fleet.rps, "fleet-req/s")
	b.ReportMetric(float64(single.p50.Microseconds())/1000, "one-p50-ms")
	b.ReportMetric(float64(single.p99.Microseconds())/1000, "one-p99-ms")
	b.ReportMetric(float64(fleet.p99)/float64(single.p99), "fleet/one-p99")
}
