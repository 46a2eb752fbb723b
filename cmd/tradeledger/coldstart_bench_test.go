package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// BenchmarkColdStart measures `serve` from start to ready (every projection
// replayed, listeners open) on a log of TRADELEDGER_BENCH_ORDERS orders
// (default 1,000,000; three events each), and the heap the read models hold
// per order afterwards, and the ratio of that replay to a scan of the same
// log through the store that applies nothing. Targets (docs/benchmarks.md): ready in
// ≤ 5 s with 1M orders; replay into all projections ≥ 500,000 events/s and
// ≥ 50% of a raw scan. Run with -benchtime 1x; set
// TRADELEDGER_BENCH_DATA to a directory to keep the log for the next run.
func BenchmarkColdStart(b *testing.B) {
	orders := 1_000_000
	if v := os.Getenv("TRADELEDGER_BENCH_ORDERS"); v != "" {
		var err error
		if orders, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	// TRADELEDGER_BENCH_DATA keeps the data dir between runs (the log takes
	// longer to build than to replay): it is built there when missing.
	dir := os.Getenv("TRADELEDGER_BENCH_DATA")
	if dir == "" {
		dir = b.TempDir()
	}
	store := sqlite.NewStore(filepath.Join(dir, "events.db"))
	if err := store.Open(); err != nil {
		b.Fatal(err)
	}
	events := 3 * orders
	fresh := false
	if head, _ := store.Head(context.Background()); head == 0 {
		start := time.Now()
		events = buildBenchLog(b, store, 3*orders)
		b.Logf("built a log of %d events in %s", events, time.Since(start).Round(time.Millisecond))
		fresh = true
	} else if head < uint64(events) || head > uint64(events)+16 {
		// serve itself appends a few events at its first start.
		b.Fatalf("%s holds %d events, not the %d of %d orders", dir, head, events, orders)
	} else {
		events = int(head)
	}
	// A log kept from before the Merkle tree gets it now, not during the
	// measured start (serve would build it in the background).
	if err := store.BuildTree(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	store.Close()
	if fresh {
		// What is measured is a restart. A first start also writes the
		// initial configuration, and that first write waits for the
		// store's integrity check of the whole file (about 1.5 s more
		// here); serve never meets a million orders without a
		// configuration but in this benchmark.
		start := time.Now()
		m := benchMain(dir)
		if err := m.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		m.Close()
		b.Logf("first start (initial configuration written) in %s", time.Since(start).Round(time.Millisecond))
		events++
	}
	// TRADELEDGER_BENCH_HEAPPROFILE names a file for the heap profile of
	// the read models once ready (finely sampled: it slows the replay).
	profile := os.Getenv("TRADELEDGER_BENCH_HEAPPROFILE")
	if profile != "" {
		runtime.MemProfileRate = 4096
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		m := benchMain(dir)
		// serve runs under a cancellable (signal) context; so does this.
		ctx, cancel := context.WithCancel(context.Background())
		start, cpu0 := time.Now(), processCPU(b)
		if err := m.Run(ctx); err != nil {
			b.Fatal(err)
		}
		ready := time.Since(start)
		cpu := processCPU(b) - cpu0
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(ready.Seconds(), "s-to-ready")
		// On a shared machine the wall clock counts the other processes'
		// turns; the CPU this process spent getting ready does not (on
		// an idle box, ready ≈ cpu-s/2 when both cores are kept busy).
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(events)/ready.Seconds(), "events/s")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(orders), "heap-B/order")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(events), "allocs/event")
		// The bytes allocated set how often the collector runs during
		// the replay; unlike the times, this figure does not depend on
		// the machine's load.
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(events), "alloc-B/event")
		b.ReportMetric(float64(after.NumGC-before.NumGC), "GCs")
		if profile != "" {
			writeHeapProfile(b, profile)
		}
		m.Close()
		cancel()

		// The reference: the same log read through the store, every event
		// decoded from its row but applied nowhere.
		b.StopTimer()
		scan := time.Now()
		raw := scanLog(b, filepath.Join(dir, "events.db"))
		rawTime := time.Since(scan)
		b.ReportMetric(float64(raw)/rawTime.Seconds(), "raw-events/s")
		b.ReportMetric(rawTime.Seconds()/ready.Seconds(), "ratio")
		b.StartTimer()
	}
}

// writeHeapProfile writes the heap profile as of the last collection to path.
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchMain is serve on data dir dir, quiet, on a free loopback port.
func benchMain(dir string) *Main {
	m := NewMain()
	m.Logger = zap.NewNop()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
	return m
}

// scanLog reads every event of the store at path and returns how many.
func scanLog(b *testing.B, path string) int {
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	n := 0
	err := domain.ReadAheadBatches(context.Background(), s.ReadAll(context.Background(), 0, 0), func(batch []domain.Event) bool {
		n += len(batch)
		return true
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
