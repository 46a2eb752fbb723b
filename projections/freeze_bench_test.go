package projections

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// BenchmarkFreeze: how long a snapshot's freeze holds placements (issue 41
// item 3), projection by projection: the Ledger and the OrderList fed
// TRADELEDGER_BENCH_FREEZE_ORDERS orders (default 200,000, the placement
// benchmark's history), with the Trader's ids (dense, from 1) or an
// import's (from domain.ImportedOrderIDs, increasing with the trade time,
// 2^20 apart). Each of 21 rounds places 100 more orders (so that the
// copy-on-write parts copy what the next freeze shares), then freezes:
// reported are the median pause (wall; the machine is shared), the median
// CPU time of the freezing goroutine's process (GC excluded), the bytes
// allocated per freeze (what the freeze copies: the load-free figure), and
// those allocated feeding the 100 orders after a freeze (the events'
// and, with copy-on-write, the first changes' copies of what the freeze
// shared).
func BenchmarkFreeze(b *testing.B) {
	n := 200_000
	if v := os.Getenv("TRADELEDGER_BENCH_FREEZE_ORDERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("TRADELEDGER_BENCH_FREEZE_ORDERS=%q", v)
		}
	}
	for _, ids := range []struct {
		name string
		id   func(i int) int64
	}{
		{"trader", func(i int) int64 { return int64(i + 1) }},
		{"imported", func(i int) int64 { return domain.ImportedOrderIDs + int64(i)<<20 }},
	} {
		b.Run(ids.name, func(b *testing.B) {
			ledger, list := NewLedger(domain.LOFO), NewOrderList()
			n := n // orders fed so far
			feed := func(from, count int) {
				evs := benchEventsIDs(from, count, ids.id)
				for i := range evs {
					if err := ledger.Apply(&evs[i]); err != nil {
						b.Fatal(err)
					}
					if err := list.Apply(&evs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			for from := 0; from < n; from += 20_000 {
				feed(from, min(20_000, n-from))
			}
			_ = ledger.RecordCount() // settled
			for _, p := range []Snapshotter{ledger, list} {
				b.Run(p.Name(), func(b *testing.B) {
					for range b.N {
						var walls, cpus []time.Duration
						var alloc, fed uint64
						const rounds = 21
						for r := range rounds {
							var m0, m1 runtime.MemStats
							runtime.ReadMemStats(&m0)
							feed(n+r*100, 100)
							_ = ledger.RecordCount()
							runtime.ReadMemStats(&m1)
							if r > 0 { // after a freeze: what its sharing costs the next changes
								fed += m1.TotalAlloc - m0.TotalAlloc
							}
							runtime.GC()
							runtime.ReadMemStats(&m0)
							t0, c0 := time.Now(), processCPUTime()
							enc := p.Freeze()
							walls, cpus = append(walls, time.Since(t0)), append(cpus, processCPUTime()-c0)
							runtime.ReadMemStats(&m1)
							alloc += m1.TotalAlloc - m0.TotalAlloc
							_ = enc
						}
						n += rounds * 100
						slices.Sort(walls)
						slices.Sort(cpus)
						b.ReportMetric(float64(walls[rounds/2].Microseconds()), "freeze-us")
						b.ReportMetric(float64(cpus[rounds/2].Microseconds()), "freeze-cpu-us")
						b.ReportMetric(float64(alloc)/rounds/1024, "freeze-KiB")
						b.ReportMetric(float64(fed)/(rounds-1)/1024, "next-100-orders-KiB")
					}
				})
			}
		})
	}
}
