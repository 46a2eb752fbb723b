package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/gunbot"
	"github.com/tradeledger/tradeledger/domain/gunbot/gunbottest"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// writeImportFolder writes the Gunbot folder gunbottest generates with
// orders orders spread over its ten pairs (gunbottest.Folder.Files: a
// config.json naming them, one state file per pair, newest first).
func writeImportFolder(tb testing.TB, dir string, orders int) {
	tb.Helper()
	for _, f := range (gunbottest.Folder{Orders: orders}).Files() {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// appendRate64 measures the store's own durable append rate with 64
// writers, each append one order-sized event opening a new stream (as
// eventstore/sqlite's BenchmarkAppend does), over total events.
func appendRate64(b *testing.B, total int) float64 {
	b.Helper()
	const writers = 64
	s := sqlite.NewStore(filepath.Join(b.TempDir(), "events.db"))
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	perWriter := total / writers
	clock := domain.SystemClock{}
	evs := make([]domain.Event, perWriter*writers)
	for i := range evs {
		evs[(i%writers)*perWriter+i/writers] = domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{
			FillID: fmt.Sprintf("f-%d", i), Price: decimal.MustDecimal("27123.45"), Quantity: decimal.MustDecimal("0.0123"),
			Fee: decimal.MustDecimal("0.00001230"), FeeAsset: "BTC",
		})
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if _, err := s.Append(context.Background(), domain.OrderStream(next.Add(1)), domain.NoStream, evs[w*perWriter+i]); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return float64(len(evs)) / time.Since(start).Seconds()
}

// batchAppendTime is the reference of BenchmarkImport: the store's own
// batch append of the orders of the folder at from, converted as the import
// converts them (gunbot.Read, Importer.Order) before the clock starts, into
// a new store with the import's checkpoint size, in AppendBatch calls of
// importChunk orders as the import makes them (an order whose id another
// holds is moved to the next free id first, where the import appends it
// alone after its chunk). It returns the time and the process's CPU of
// the appends, and how many events they wrote.
func batchAppendTime(b *testing.B, from string) (time.Duration, time.Duration, int) {
	b.Helper()
	folder, err := gunbot.Read(os.DirFS(from))
	if err != nil {
		b.Fatal(err)
	}
	conv := &gunbot.Importer{Clock: domain.SystemClock{}}
	chunks := make([][]domain.StreamAppend, 0, len(folder.Orders)/importChunk+1)
	events := 0
	// Orders whose time-ordered id another holds take the next free one,
	// as the import settles them (settleConflict), here before the clock.
	taken := make(map[int64]bool, len(folder.Orders))
	for i := range folder.Orders {
		o := &folder.Orders[i]
		for taken[o.ID] {
			o.ID++
		}
		taken[o.ID] = true
	}
	for i := 0; i < len(folder.Orders); i += importChunk {
		part := folder.Orders[i:min(i+importChunk, len(folder.Orders))]
		batch := make([]domain.StreamAppend, len(part))
		for j, o := range part {
			batch[j] = conv.Order(o).StreamAppend
			events += len(batch[j].Events)
		}
		chunks = append(chunks, batch)
	}
	s := sqlite.NewStore(filepath.Join(b.TempDir(), "events.db"))
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.SetCheckpointPages(importCheckpointPages)
	ctx := eventstore.WithActor(context.Background(), domain.ActorImport)
	start, cpu := time.Now(), processCPU(b)
	for _, batch := range chunks {
		if _, err := s.AppendBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start), processCPU(b) - cpu, events
}

// BenchmarkImport imports a Gunbot folder of 200,000 orders over 10 pairs
// (TRADELEDGER_BENCH_IMPORT_ORDERS for another size) into a new data dir
// with `tradeledger import`, and reports orders/s, events/s and two
// references measured in the same run: the store's own batch-append
// ceiling ("batch-events/s", batchAppendTime: the same orders' events,
// built before its clock starts, appended with AppendBatch in the
// import's chunks; "ratio-batch" = import ÷ it, target ≥ 0.8, issue 32),
// and the store's 64-writer single-append rate ("ratio-append64", issue
// 19: ≥ 0.5). "cpu-ratio-batch" compares their CPU per event (the
// reference's ÷ the import's). The two timed parts alternate which goes first from one
// iteration to the next; "load" is the machine's load (/proc/loadavg, one
// minute) when the run began. The folder is generated before the clock
// starts; the import's time includes reading and parsing it, opening the
// data dir and every append made durable.
func BenchmarkImport(b *testing.B) {
	orders := benchEnvInt(b, "TRADELEDGER_BENCH_IMPORT_ORDERS", 200_000)
	b.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	from := filepath.Join(b.TempDir(), "gunbot")
	writeImportFolder(b, from, orders)
	load := benchLoad()
	b.ResetTimer()
	var importTime, importCPU, batchTime, batchCPU time.Duration
	var events, batchEvents uint64
	var rate64 float64
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		rate64 += appendRate64(b, 20_000)
		reference := func() {
			t, cpu, evs := batchAppendTime(b, from)
			batchTime, batchCPU = batchTime+t, batchCPU+cpu
			batchEvents += uint64(evs)
		}
		if n%2 == 0 {
			reference()
		}
		data := filepath.Join(b.TempDir(), fmt.Sprint("data", n))
		b.StartTimer()
		start, cpu := time.Now(), processCPU(b)
		out, warn, err := importRun(b, "import", "--data", data, "--from", from)
		importTime += time.Since(start)
		importCPU += processCPU(b) - cpu
		b.StopTimer()
		if err != nil {
			b.Fatalf("import: %v\n%s", err, warn)
		}
		if want := fmt.Sprintf("orders %d;", orders); !strings.Contains(out, want) {
			b.Fatalf("import summary %q lacks %q", out, want)
		}
		events += uint64(3*orders + 1)
		if n%2 == 1 {
			reference()
		}
	}
	secs := importTime.Seconds()
	rate, batchRate := float64(events)/secs, float64(batchEvents)/batchTime.Seconds()
	b.ReportMetric(float64(orders*b.N)/secs, "orders/s")
	b.ReportMetric(rate, "events/s")
	// The process's CPU (user and system, every thread) per order: steadier
	// than the rate on a shared machine.
	b.ReportMetric(float64(importCPU.Microseconds())/float64(orders*b.N), "cpu-us/order")
	b.ReportMetric(batchRate, "batch-events/s")
	b.ReportMetric(rate/batchRate, "ratio-batch")
	// The same comparison in CPU per event, which the disk's and the
	// machine's drift move less: the share of the import's CPU that the
	// store's batch append of its events takes.
	cpuRatio := (batchCPU.Seconds() / float64(batchEvents)) / (importCPU.Seconds() / float64(events))
	b.ReportMetric(float64(batchCPU.Microseconds())/float64(batchEvents), "batch-cpu-us/event")
	b.ReportMetric(float64(importCPU.Microseconds())/float64(events), "cpu-us/event")
	b.ReportMetric(cpuRatio, "cpu-ratio-batch")
	b.ReportMetric(rate64/float64(b.N), "append64-events/s")
	b.ReportMetric(rate/(rate64/float64(b.N)), "ratio-append64")
	b.ReportMetric(load, "load")
	b.Logf("import %.0f events/s, the store's batch append of the same events %.0f events/s: ratio %.2f, CPU ratio %.2f (load %.2f)", rate, batchRate, rate/batchRate, cpuRatio, load)
}
