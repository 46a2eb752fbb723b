package projections

import (
	"encoding/json"
	"math/rand"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Benchmarks over 1M orders across 50 pairs (docs/benchmarks.md). Each order is
// three events (OrderRequested, OrderAccepted, OrderFilled) with one fill;
// orders are 2.5 s apart, so the log spans about 29 days. Run once:
//
//	go test ./projections -run XXX -bench Ledger -benchtime 1x

const (
	benchOrders = 1_000_000
	benchPairs  = 50
)

// benchEvents returns the events of orders [from, from+n) of the synthetic
// log (deterministic for a given from).
func benchEvents(from, n int) []domain.Event {
	return benchEventsIDs(from, n, func(i int) int64 { return int64(i + 1) })
}

// benchEventsIDs is benchEvents with order number i's id orderID(i) (an
// import's, say).
func benchEventsIDs(from, n int, orderID func(i int) int64) []domain.Event {
	rng := rand.New(rand.NewSource(int64(from)))
	evs := make([]domain.Event, 0, 3*n)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := from; i < from+n; i++ {
		id := orderID(i)
		pair := "USDT-C" + strconv.Itoa(i%benchPairs)
		side := "buy"
		if rng.Intn(2) == 0 {
			side = "sell"
		}
		price := strconv.Itoa(1000+rng.Intn(200)) + "." + strconv.Itoa(10+rng.Intn(89)) + "000000"
		qty := "0." + strconv.Itoa(10+rng.Intn(89)) + "000000"
		tm := t0 + int64(i)*2500
		stream := domain.OrderStream(id)
		pos := uint64(3*i + 1)
		evs = append(evs,
			domain.Event{Stream: stream, Version: 0, Position: pos, Type: domain.TypeOrderRequested, Time: tm, Data: []byte(
				`{"orderId":` + strconv.FormatInt(id, 10) + `,"exchange":"binance","pair":"` + pair + `","side":"` + side +
					`","kind":"limit","amount":"` + qty + `","price":"` + price + `","clientOrderId":"tl-` + strconv.FormatInt(id, 10) + `"}`)},
			domain.Event{Stream: stream, Version: 1, Position: pos + 1, Type: domain.TypeOrderAccepted, Time: tm, Data: []byte(`{"exchangeOrderId":"x` + strconv.FormatInt(id, 10) + `"}`)},
			domain.Event{Stream: stream, Version: 2, Position: pos + 2, Type: domain.TypeOrderFilled, Time: tm, Data: []byte(
				`{"fillId":"f` + strconv.FormatInt(id, 10) + `","price":"` + price + `","quantity":"` + qty + `","fee":"0.00100000","feeAsset":"USDT","seq":` + strconv.FormatInt(id, 10) + `}`)},
		)
	}
	return evs
}

// buildBenchLedger replays the synthetic log of n orders and returns the
// ledger and the time spent in Apply (generation excluded).
func buildBenchLedger(tb testing.TB, n int) (*Ledger, time.Duration, int) {
	l, spent, _, events := buildBenchLedgerCPU(tb, n)
	return l, spent, events
}

// buildBenchLedgerCPU is buildBenchLedger that also returns the process's
// CPU time spent in Apply (and a first read, which settles): on a loaded
// machine the figure to compare.
func buildBenchLedgerCPU(tb testing.TB, n int) (*Ledger, time.Duration, time.Duration, int) {
	l := NewLedger(domain.LOFO)
	var spent, cpu time.Duration
	events := 0
	const batch = 20_000
	for from := 0; from < n; from += batch {
		evs := benchEvents(from, min(batch, n-from))
		start, c0 := time.Now(), processCPUTime()
		for i := range evs {
			if err := l.Apply(&evs[i]); err != nil {
				tb.Fatal(err)
			}
		}
		spent, cpu = spent+time.Since(start), cpu+processCPUTime()-c0
		events += len(evs)
	}
	start, c0 := time.Now(), processCPUTime()
	_ = l.RecordCount()
	spent, cpu = spent+time.Since(start), cpu+processCPUTime()-c0
	return l, spent, cpu, events
}

// processCPUTime is the CPU time (user and system) the process has used.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLedgerReplay reports replay throughput into the Ledger (every
// read model of this package but config/files), and, for reference, what
// encoding/json alone manages on the same order payloads.
func BenchmarkLedgerReplay(b *testing.B) {
	for range b.N {
		_, spent, cpu, events := buildBenchLedgerCPU(b, benchOrders)
		b.ReportMetric(float64(events)/spent.Seconds(), "events/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/event")
	}
	evs := benchEvents(0, 100_000)
	start := time.Now()
	for i := range evs {
		switch evs[i].Type {
		case domain.TypeOrderRequested:
			var r domain.OrderRequested
			_ = json.Unmarshal(evs[i].Data, &r)
		case domain.TypeOrderFilled:
			var f domain.OrderFilled
			_ = json.Unmarshal(evs[i].Data, &f)
		}
	}
	b.ReportMetric(float64(len(evs))/time.Since(start).Seconds(), "encoding/json-events/s")
}

// BenchmarkLedgerHeapPerOrder reports the heap the ledger keeps per order.
func BenchmarkLedgerHeapPerOrder(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		l, _, _ := buildBenchLedger(b, benchOrders)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/benchOrders, "heap-bytes/order")
		runtime.KeepAlive(l)
	}
}

// BenchmarkLedgerQueries reports p99 latency of orders/page (random pages,
// single and multi-key) and pnl/overview (All, UTC and Kathmandu) on the
// read model itself, without HTTP.
func BenchmarkLedgerQueries(b *testing.B) {
	l, _, _ := buildBenchLedger(b, benchOrders)
	ktm, _ := LoadZone("Asia/Kathmandu")
	var keys []string
	for p := 0; p < 10; p++ {
		keys = append(keys, "binance/USDT-C"+strconv.Itoa(p))
	}
	now := time.Date(2024, 1, 30, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewSource(1))
	cases := []struct {
		name string
		f    func()
	}{
		{"page", func() { _, _, _ = l.Page("binance/USDT-C7", rng.Intn(400), 50) }},
		{"page-multi-10", func() { _, _, _ = l.PageMulti(keys, rng.Intn(4000), 50) }},
		{"overview-all-utc", func() {
			_, _ = l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: now})
		}},
		{"overview-all-ktm", func() { _, _ = l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: ktm, Now: now}) }},
		{"overview-10-keys", func() { _, _ = l.Overview(OverviewQuery{Scope: PnlScope{Keys: keys}, Loc: ktm, Now: now}) }},
	}
	for range b.N {
		for _, c := range cases {
			lat := make([]time.Duration, 500)
			for i := range lat {
				s := time.Now()
				c.f()
				lat[i] = time.Since(s)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), c.name+"-p99-µs")
		}
	}
}
