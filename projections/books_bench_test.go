package projections

import (
	"io"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
)

// Benchmarks of the books (issue 31) over the Ledger of the synthetic log
// of ledger_bench_test.go: 1M orders on 50 pairs, one fill each, buys and
// sells at random. Targets: the realized report and the statement of the
// whole history ≤ 2 s each; exports ≥ 200,000 rows/s with the heap they
// add flat in the log's size. Run once:
//
//	go test ./projections -run '^$' -bench Books -benchtime 1x

// BenchmarkBooksReports times the realized report (totals and the first
// page of disposals) and the statement over the whole history, per method.
func BenchmarkBooksReports(b *testing.B) {
	l, _, _ := buildBenchLedger(b, benchOrders)
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.HIFO, domain.Average} {
		q := books.Query{Method: m, Currency: "USDT"}
		b.Run("realized/"+m.String(), func(b *testing.B) {
			var r *books.Realized
			start := time.Now()
			for range b.N {
				var err error
				if r, err = books.RealizedReport(l, q, 0, 100); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/report")
			b.ReportMetric(float64(r.Disposals), "disposals")
		})
		b.Run("statement/"+m.String(), func(b *testing.B) {
			start := time.Now()
			for range b.N {
				if _, err := books.StatementReport(l, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/report")
		})
	}
}

// BenchmarkBooksExport reports each format's rows/s over the whole history
// (to a writer that discards), and the most heap an export adds while it
// runs, at 100,000 and at 1,000,000 orders: the export holds a read-ahead
// per pair, not the history, so the figure should not grow with it.
func BenchmarkBooksExport(b *testing.B) {
	for _, orders := range []int{100_000, benchOrders} {
		l, _, _ := buildBenchLedger(b, orders)
		for _, f := range books.Formats {
			b.Run(string(f)+"/orders="+strconv.Itoa(orders), func(b *testing.B) {
				q := books.Query{Method: domain.FIFO, Currency: "USDT"}
				var rows int64
				start := time.Now()
				for range b.N {
					var err error
					if rows, err = books.Export(io.Discard, l, f, q, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(rows)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
				b.ReportMetric(float64(rows), "rows")
				b.ReportMetric(float64(peakExtraHeap(b, func() {
					if _, err := books.Export(io.Discard, l, f, q, nil); err != nil {
						b.Fatal(err)
					}
				}))/1e6, "peak-extra-heap-MB")
			})
		}
		runtime.KeepAlive(l)
	}
}

// peakExtraHeap runs f and returns the most heap it held while it ran
// beyond what was in use before: the live heap after a collection,
// sampled every 10 ms (what is merely not collected yet grows with the
// read model's size, as the collector lets garbage reach the live heap's
// size before it runs, so it is not counted).
func peakExtraHeap(b *testing.B, f func()) uint64 {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			runtime.GC()
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base.HeapAlloc && m.HeapAlloc-base.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc - base.HeapAlloc)
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak.Load()
}
