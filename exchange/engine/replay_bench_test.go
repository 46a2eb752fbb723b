package engine_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// replayOrders returns the events of orders first…first+n-1 as a restart
// replays them: every order keyed (as the core's are), requested and
// accepted; all but every 100th filled (those stay open).
func replayOrders(clock domain.Clock, first, n int64) []domain.Event {
	out := make([]domain.Event, 0, 3*n)
	for id := first; id < first+n; id++ {
		stream := domain.OrderStream(id)
		req := domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{
			OrderID: id, Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit,
			Amount: decimal.MustDecimal("0.001"), Price: decimal.MustDecimal("60000"),
			ClientOrderID:  domain.ClientOrderID(domain.NewEventID(clock.Now())),
			IdempotencyKey: fmt.Sprintf("core:binance:USDT-BTC:%d:0", 1_700_000_000_000+id),
		})
		acc := domain.NewEvent(clock, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: strconv.FormatInt(9_000_000+id, 10)})
		req.Stream, req.Version = stream, 0
		acc.Stream, acc.Version = stream, 1
		out = append(out, req, acc)
		if id%100 != 0 {
			fill := domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{
				FillID: strconv.FormatInt(id, 10), Price: decimal.MustDecimal("60000"), Quantity: decimal.MustDecimal("0.001"),
				Fee: decimal.MustDecimal("0.06"), FeeAsset: "USDT", Seq: uint64(id),
			})
			fill.Stream, fill.Version = stream, 2
			out = append(out, fill)
		}
	}
	return out
}

// BenchmarkReplayOrders replays about 1M order events (≈336k orders, 1% of
// them left open, every one with an Idempotency-Key) into a fresh Trader,
// as a restart does, and reports the replay rate and the heap the Trader
// keeps per order afterwards.
func BenchmarkReplayOrders(b *testing.B) { benchReplayOrders(b, false) }

// BenchmarkReplayOrdersPredecoded is BenchmarkReplayOrders with the hot
// payloads decoded beforehand, outside the timing, as the projection
// runner's reading goroutine does (domain.Event.Predecode): what the
// Trader itself costs on a restart.
func BenchmarkReplayOrdersPredecoded(b *testing.B) { benchReplayOrders(b, true) }

func benchReplayOrders(b *testing.B, predecode bool) {
	const events = 1_000_000
	clock := domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	const chunk = 10_000 // orders generated at a time, outside the timing
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		state := engine.NewOrders(nil)
		var applied, orders int64
		var elapsed, cpu time.Duration
		var mallocs uint64
		for applied < events {
			evs := replayOrders(clock, orders+1, chunk)
			if predecode {
				in := jsonscan.Interner{}
				for j := range evs {
					evs[j].Predecode(in)
				}
			}
			orders += chunk
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			start, cpu0 := time.Now(), processCPU(b)
			for j := range evs {
				if err := state.Apply(&evs[j]); err != nil {
					b.Fatal(err)
				}
			}
			elapsed += time.Since(start)
			cpu += processCPU(b) - cpu0
			runtime.ReadMemStats(&m1)
			mallocs += m1.Mallocs - m0.Mallocs
			applied += int64(len(evs))
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if got := state.OpenOrders("binance"); got != int(orders/100) {
			b.Fatalf("%d open orders after the replay, want %d", got, orders/100)
		}
		b.ReportMetric(float64(applied)/elapsed.Seconds(), "events/s")
		// On a shared machine the wall clock counts the other processes'
		// turns; the CPU this process spent and its allocations do not.
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(applied), "cpu-ns/event")
		b.ReportMetric(float64(mallocs)/float64(applied), "allocs/event")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(orders), "heapB/order")
		runtime.KeepAlive(state)
	}
}

// BenchmarkOnTickerAfterReplay is a price tick on a Trader that replayed
// 100k orders (1k still open, none armed): a tick costs what the pair's
// armed orders cost, not what the history holds.
func BenchmarkOnTickerAfterReplay(b *testing.B) {
	ctx := context.Background()
	clock := domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sim := paper.NewSimulator(clock)
	eng := engine.New(nil, sim.Exchange, nil, projections.NewBalances(), clock)
	evs := replayOrders(clock, 1, 100_000)
	for j := range evs {
		if err := eng.Orders.Apply(&evs[j]); err != nil {
			b.Fatal(err)
		}
	}
	x, _ := sim.Exchange("binance")
	tk, err := x.Ticker(ctx, "USDT-BTC")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := eng.Emulator.OnTicker(ctx, "binance", tk); err != nil {
			b.Fatal(err)
		}
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
