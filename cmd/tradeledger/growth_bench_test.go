package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// BenchmarkGrowth shows how serve's costs grow with history: at 100,000,
// 1,000,000 and (opt-in, TRADELEDGER_BENCH_10M=1: it takes many minutes and
// several GB) 10,000,000 orders of three events each, it reports the cold
// start (s-to-ready; s-to-integrity-checked once serve's background check
// of the store file is done), the heap the read models hold per order, the
// p99 of orders/page (pageSize=100) on the first and on the last page, of
// pnl/overview (All, Europe/Amsterdam) and of orders/day (today by the
// server's clock, an hour after the last order: up to a day of fills on
// every pair, the MaxDayOrders newest listed) — one client over loopback,
// after one warming request — and verify's throughput over the whole log.
// A page and an overview should cost the same whatever the history; a cold
// start, the heap and verify grow with it, linearly at most.
//
// With and without read-model snapshots: s-to-ready is a start that
// replays the whole log; snap-s-to-ready one from a snapshot 100,000
// events old (written beforehand into a directory of the benchmark's own),
// with the machine's load when the sizes began.
//
// TRADELEDGER_BENCH_DATA=dir keeps each size's log in dir/<orders> for
// the next run (building it is the slow part). Run with -benchtime 1x.
func BenchmarkGrowth(b *testing.B) {
	sizes := []int{100_000, 1_000_000}
	if os.Getenv("TRADELEDGER_BENCH_10M") == "1" {
		sizes = append(sizes, 10_000_000)
	}
	for _, orders := range sizes {
		b.Run("orders="+strconv.Itoa(orders), func(b *testing.B) { benchGrowth(b, orders) })
	}
}

func benchGrowth(b *testing.B, orders int) {
	dir := b.TempDir()
	if keep := os.Getenv("TRADELEDGER_BENCH_DATA"); keep != "" {
		dir = filepath.Join(keep, strconv.Itoa(orders))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	events := prepareBenchLog(b, dir, orders)
	// The log's orders are one second apart from 2025-01-01 (buildBenchLog):
	// the server's clock stands an hour after the last one.
	end := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(orders+3600) * time.Second)
	ctx := context.Background()
	snapDir := b.TempDir()
	snapFile, _ := benchSnapshot(b, dir, snapDir, uint64(max(events-100_000, 1)))
	load := benchLoad()
	b.ResetTimer()
	for range b.N {
		debug.FreeOSMemory() // as a new process: its page faults are part of a start
		m := benchMain(dir)
		m.Config.SnapshotDir, m.Clock = snapDir, domain.NewManualClock(end)
		start := time.Now()
		if err := m.Run(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "snap-s-to-ready")
		if info, ok, _ := m.Runner.Snapshot(); !ok || info.Position != snapFile.Position {
			b.Fatalf("serve did not start from the snapshot at %d", snapFile.Position)
		}
		m.Close()
		b.ReportMetric(load, "load")

		debug.FreeOSMemory()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m = benchMain(dir)
		m.Config.SnapshotDir = b.TempDir() // none: the whole log replayed
		m.Clock = domain.NewManualClock(end)
		start = time.Now()
		if err := m.Run(ctx); err != nil {
			b.Fatal(err)
		}
		ready := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(ready.Seconds(), "s-to-ready")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(orders), "heap-B/order")
		// serve checks the store file's integrity in the background once
		// ready (it reads every page); the requests below are measured
		// after it, not beside it.
		if c, ok := m.DataDir.Store.(interface{ CheckIntegrity() error }); ok {
			if err := c.CheckIntegrity(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(time.Since(start).Seconds(), "s-to-integrity-checked")
		}

		token, err := m.Server.Auth.IssueToken("bench")
		if err != nil {
			b.Fatal(err)
		}
		client := &http.Client{}
		do := func(method, path, body string) {
			req, _ := http.NewRequest(method, m.Server.URL()+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("%s %s: %d", method, path, resp.StatusCode)
			}
		}
		// buildBenchLog spreads the orders over four pairs evenly.
		const key = "binance%2FUSDT-BTC"
		lastPage := (orders/4 - 1) / 100
		days := "/api/v1/orders/day?timezone=Europe%2FAmsterdam"
		for _, p := range []string{"USDT-BTC", "USDT-ETH", "USDT-SOL", "USDT-XRP"} {
			days += "&keys[]=binance%2F" + p
		}
		cases := []struct{ name, method, path, body string }{
			{"page-first", "GET", "/api/v1/orders/page?key=" + key + "&page=0&pageSize=100", ""},
			{"page-last", "GET", "/api/v1/orders/page?key=" + key + "&page=" + strconv.Itoa(lastPage) + "&pageSize=100", ""},
			{"overview", "POST", "/api/v1/pnl/overview", `{"timezone":"Europe/Amsterdam","keys":["All"]}`},
			{"day", "GET", days, ""},
		}
		const requests = 200
		for _, c := range cases {
			do(c.method, c.path, c.body) // warm: the first answer may fill a cache
			lat := make([]time.Duration, requests)
			for i := range lat {
				t := time.Now()
				do(c.method, c.path, c.body)
				lat[i] = time.Since(t)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), c.name+"-p99-µs")
			// The median too: on a shared machine a p99 of 200 requests
			// is mostly the time the others' threads held the cores.
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), c.name+"-p50-µs")
		}
		m.Close()

		store := sqlite.NewStore(filepath.Join(dir, "events.db"))
		if err := store.Open(); err != nil {
			b.Fatal(err)
		}
		// serve may have signed a checkpoint of the log at its start.
		head, err := store.Head(ctx)
		if err != nil {
			b.Fatal(err)
		}
		vstart := time.Now()
		sum, err := audit.VerifyLog(ctx, store, audit.VerifyOptions{})
		if err != nil || !sum.OK || sum.Events != int64(head) {
			b.Fatalf("verify: %v %+v (want %d events)", err, sum, head)
		}
		b.ReportMetric(float64(head)/time.Since(vstart).Seconds(), "verify-events/s")
		store.Close()
	}
}

// prepareBenchLog makes sure dir holds the benchmark log of orders orders
// (buildBenchLog) and that serve has started on it once (the first start
// writes the initial configuration), and returns the log's event count.
func prepareBenchLog(b *testing.B, dir string, orders int) int {
	store := sqlite.NewStore(filepath.Join(dir, "events.db"))
	if err := store.Open(); err != nil {
		b.Fatal(err)
	}
	head, err := store.Head(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if head == 0 {
		start := time.Now()
		buildBenchLog(b, store, 3*orders)
		b.Logf("built a log of %d orders in %s", orders, time.Since(start).Round(time.Millisecond))
	} else if head < uint64(3*orders) || head > uint64(3*orders)+16 {
		b.Fatalf("%s holds %d events, not the %d of %d orders", dir, head, 3*orders, orders)
	}
	// A log kept from before the Merkle tree gets it now, not during the
	// measured start (serve would build it in the background).
	if err := store.BuildTree(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	store.Close()
	if head == 0 {
		m := benchMain(dir)
		if err := m.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
	store = sqlite.NewStore(filepath.Join(dir, "events.db"))
	if err := store.Open(); err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	if head, err = store.Head(context.Background()); err != nil {
		b.Fatal(err)
	}
	return int(head)
}
