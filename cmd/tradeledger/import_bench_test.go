package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// importBenchPairs are the pairs of the generated folder.
var importBenchPairs = []string{"USDT-BTC", "USDT-ETH", "USDT-BNB", "USDT-SOL", "USDT-XRP", "USDT-ADA", "USDT-DOGE", "USDT-DOT", "USDT-LTC", "USDT-LINK"}

// writeImportFolder writes a Gunbot folder with orders orders spread over
// the ten pairs of importBenchPairs: a config.json naming them, and one
// state file per pair with its orders newest first, as Gunbot keeps them
// (buys and sells alternating, one minute apart, sells never more than the
// lot bought before).
func writeImportFolder(tb testing.TB, dir string, orders int) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "json"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var pairs []string
	for _, p := range importBenchPairs {
		pairs = append(pairs, fmt.Sprintf("%q: {\"strategy\": \"manual\", \"enabled\": true, \"override\": {}}", p))
	}
	cfg := `{"pairs": {"binance": {` + strings.Join(pairs, ", ") + `}}, "strategies": {"manual": {"STRATEGY": "manual"}},
 "exchanges": {"binance": {"isEncrypted": false, "delay": 5}}, "bot": {"SIMULATOR": true}, "GUI": {}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	const start = int64(1_700_000_000_000)
	for p, pair := range importBenchPairs {
		n := orders / len(importBenchPairs)
		if p < orders%len(importBenchPairs) {
			n++
		}
		var b strings.Builder
		b.WriteString("{\n  \"orders\": [\n")
		for i := n - 1; i >= 0; i-- { // newest first
			side, amount := "buy", "0.002"
			if i%2 == 1 {
				side, amount = "sell", "0.001"
			}
			rate := strconv.Itoa(30000 + (i*7919)%5000)
			fmt.Fprintf(&b, "    {\"time\": %d, \"pair\": %q, \"type\": %q, \"rate\": %s, \"amount\": %s, \"id\": %d, \"cost\": 1}",
				start+int64(i)*60_000+int64(p), pair, side, rate, amount, 1_000_000*(p+1)+i)
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("  ],\n  \"balances\": {}\n}\n")
		if err := os.WriteFile(filepath.Join(dir, "json", "binance-"+pair+"-state.json"), []byte(b.String()), 0o644); err != nil {
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
			FillID: fmt.Sprintf("f-%d", i), Price: domain.MustDecimal("27123.45"), Quantity: domain.MustDecimal("0.0123"),
			Fee: domain.MustDecimal("0.00001230"), FeeAsset: "BTC",
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

// BenchmarkImport imports a Gunbot folder of 200,000 orders over 10 pairs
// (TRADELEDGER_BENCH_IMPORT_ORDERS for another size) into a new data dir
// with `tradeledger import`, and reports orders/s, events/s and their ratio
// to the store's own 64-writer append rate measured in the same run
// ("ratio-append64"). Targets (issue 19): ≥ 50,000 orders/s and a ratio ≥
// 0.5. The folder is generated before the clock starts; the import's time
// includes reading and parsing it, opening the data dir and every append
// made durable.
func BenchmarkImport(b *testing.B) {
	orders := 200_000
	if v := os.Getenv("TRADELEDGER_BENCH_IMPORT_ORDERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("TRADELEDGER_BENCH_IMPORT_ORDERS=%q: not a positive number", v)
		}
		orders = n
	}
	b.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	from := filepath.Join(b.TempDir(), "gunbot")
	writeImportFolder(b, from, orders)
	b.ResetTimer()
	var importTime, importCPU time.Duration
	var events uint64
	var rate64 float64
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		rate64 += appendRate64(b, 20_000)
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
	}
	secs := importTime.Seconds()
	b.ReportMetric(float64(orders*b.N)/secs, "orders/s")
	b.ReportMetric(float64(events)/secs, "events/s")
	// The process's CPU (user and system, every thread) per order: steadier
	// than the rate on a shared machine.
	b.ReportMetric(float64(importCPU.Microseconds())/float64(orders*b.N), "cpu-us/order")
	b.ReportMetric(rate64/float64(b.N), "append64-events/s")
	b.ReportMetric(float64(events)/secs/(rate64/float64(b.N)), "ratio-append64")
}
