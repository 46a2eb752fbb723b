package projections

import (
	"strconv"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// fillEvents returns the three events of a new order id on pair filled at
// trade time tm (ms), at positions from pos.
func fillEvents(id int64, pair, side string, tm int64, pos uint64) []domain.Event {
	stream := domain.OrderStream(id)
	sid := strconv.FormatInt(id, 10)
	return []domain.Event{
		{Stream: stream, Version: 0, Position: pos, Type: domain.TypeOrderRequested, Time: tm, Data: []byte(
			`{"orderId":` + sid + `,"exchange":"binance","pair":"` + pair + `","side":"` + side +
				`","kind":"limit","amount":"0.10000000","price":"1050.50000000","clientOrderId":"tl-` + sid + `"}`)},
		{Stream: stream, Version: 1, Position: pos + 1, Type: domain.TypeOrderAccepted, Time: tm, Data: []byte(`{"exchangeOrderId":"x` + sid + `"}`)},
		{Stream: stream, Version: 2, Position: pos + 2, Type: domain.TypeOrderFilled, Time: tm, Data: []byte(
			`{"fillId":"f` + sid + `","price":"1050.50000000","quantity":"0.10000000","fee":"0.00100000","feeAsset":"USDT","exchangeTime":` +
				strconv.FormatInt(tm, 10) + `}`)},
	}
}

// BenchmarkLedgerLiveFill: on the 1M-order ledger of BenchmarkLedgerReplay,
// orders filled one at a time in trade order, each followed by a read of
// the pair's total, as a live service applies them: the common case, which
// the trade-time fold keeps O(1) (a fill after every fill of its pair is
// folded at once). Reports ns and allocations per order.
func BenchmarkLedgerLiveFill(b *testing.B) {
	l, _, _ := buildBenchLedger(b, benchOrders)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() + int64(benchOrders)*2500
	pos := uint64(3*benchOrders + 1)
	const n = 20_000
	evs := make([]domain.Event, 0, 3*n)
	for i := 0; i < n; i++ {
		side := "buy"
		if i%2 == 1 {
			side = "sell"
		}
		evs = append(evs, fillEvents(int64(benchOrders+1+i), "USDT-C"+strconv.Itoa(i%benchPairs), side, t0+int64(i)*2500, pos+uint64(3*i))...)
	}
	b.ResetTimer()
	for i := range b.N {
		if i > 0 { // the orders are applied once: a second pass would be late fills
			break
		}
		var m0, m1 runtimeMem
		m0.read()
		start, c0 := time.Now(), processCPUTime()
		for i := range evs {
			if err := l.Apply(&evs[i]); err != nil {
				b.Fatal(err)
			}
			if i%3 == 2 {
				if _, err := l.Total("binance/USDT-C" + strconv.Itoa((i/3)%benchPairs)); err != nil {
					b.Fatal(err)
				}
			}
		}
		el, cpu := time.Since(start), processCPUTime()-c0
		m1.read()
		b.ReportMetric(float64(el.Nanoseconds())/n, "ns/order")
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/order")
		b.ReportMetric(float64(m1.mallocs-m0.mallocs)/n, "allocs/order")
	}
}

// BenchmarkLedgerLateFill: on the 1M-order ledger, a fill recorded late —
// its trade time a minute, a day, a week or the whole history (28 days)
// before its pair's newest — then a read of its pair, which folds the pair
// again from its restart point before the late fill (ledgerfold.go).
// Reports the ms per late fill at each depth, and the pair's fills (20,000
// of the million) for scale.
func BenchmarkLedgerLateFill(b *testing.B) {
	l, _, _ := buildBenchLedger(b, benchOrders)
	// The pair's newest fill: order i is on pair i mod benchPairs, 2.5 s apart.
	last := benchOrders - 1 - (benchOrders-1-7)%benchPairs
	newest := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() + int64(last)*2500
	pos := uint64(3*benchOrders + 1)
	id := int64(benchOrders + 1)
	b.ResetTimer()
	for range b.N {
		for _, c := range []struct {
			name string
			back time.Duration
		}{{"minute", time.Minute}, {"day", 24 * time.Hour}, {"week", 7 * 24 * time.Hour}, {"history", 28 * 24 * time.Hour}} {
			const reps = 5
			var spent time.Duration
			for r := 0; r < reps; r++ {
				evs := fillEvents(id, "USDT-C7", "buy", newest-c.back.Milliseconds()+int64(r), pos)
				id, pos = id+1, pos+3
				start := time.Now()
				for i := range evs {
					if err := l.Apply(&evs[i]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := l.Total("binance/USDT-C7"); err != nil {
					b.Fatal(err)
				}
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Microseconds())/1000/reps, "late-"+c.name+"-ms")
		}
	}
}

// BenchmarkLedgerJitteredFills: one busy pair (20,000 buys of history,
// then 3,000 more 100 ms apart), each second fill recorded before the one
// it follows in trade time — the order concurrent placements can record
// their fills in —, a read after each fill: what the jitter costs (the
// late fill folds its pair again from the restart point before its
// 15-minute slot). Reports ns and CPU ns per fill.
func BenchmarkLedgerJitteredFills(b *testing.B) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for range b.N {
		l := NewLedger(domain.LOFO)
		pos := uint64(1)
		for i := 0; i < 20_000; i++ {
			for _, e := range fillEvents(int64(i+1), "USDT-BTC", "buy", t0+int64(i)*100, pos) {
				if err := l.Apply(&e); err != nil {
					b.Fatal(err)
				}
			}
			pos += 3
		}
		var evs [][]domain.Event
		for i := 20_000; i < 23_000; i++ {
			evs = append(evs, fillEvents(int64(i+1), "USDT-BTC", "buy", t0+int64(i)*100, 0))
		}
		for i := 0; i+1 < len(evs); i += 2 {
			evs[i], evs[i+1] = evs[i+1], evs[i]
		}
		start, c0 := time.Now(), processCPUTime()
		for _, order := range evs {
			for k := range order {
				e := order[k]
				e.Position = pos
				pos++
				if err := l.Apply(&e); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := l.Total("binance/USDT-BTC"); err != nil {
				b.Fatal(err)
			}
		}
		el, cpu := time.Since(start), processCPUTime()-c0
		b.ReportMetric(float64(el.Nanoseconds())/float64(len(evs)), "ns/fill")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(evs)), "cpu-ns/fill")
		b.ReportMetric(float64(l.refolds), "refolds")
	}
}
