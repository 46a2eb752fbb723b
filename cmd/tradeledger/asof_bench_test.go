package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// BenchmarkAsOfOverview serves pnl/overview as of a time in the middle of
// the history (BenchmarkGrowth's log of 1M orders, one a second from
// 2025-01-01, on four pairs; TRADELEDGER_BENCH_ORDERS to change the size)
// from a running serve: the first request builds the past state from the
// log (s-first), the next ones read it kept (p50/p99 over 50), beside the
// live overview's; and the heap the kept state holds. Set
// TRADELEDGER_BENCH_DATA to keep the log between runs. Run with
// -benchtime 1x.
func BenchmarkAsOfOverview(b *testing.B) {
	orders := benchEnvInt(b, "TRADELEDGER_BENCH_ORDERS", 1_000_000)
	dir := b.TempDir()
	if keep := os.Getenv("TRADELEDGER_BENCH_DATA"); keep != "" {
		dir = filepath.Join(keep, strconv.Itoa(orders))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	prepareBenchLog(b, dir, orders)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end := t0.Add(time.Duration(orders+3600) * time.Second)
	mid := t0.Add(time.Duration(orders/2) * time.Second).UnixMilli()
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		m := benchMain(dir)
		m.Clock = domain.NewManualClock(end)
		if err := m.Run(ctx); err != nil {
			b.Fatal(err)
		}
		token, err := m.Server.Auth.IssueToken("bench")
		if err != nil {
			b.Fatal(err)
		}
		body := `{"timezone":"Europe/Amsterdam","keys":["All"]}`
		do := func(query string) time.Duration {
			req, _ := http.NewRequest("POST", m.Server.URL()+"/api/v1/pnl/overview"+query, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || (query != "" && resp.Header.Get("X-As-Of") == "") {
				b.Fatalf("overview%s: %d", query, resp.StatusCode)
			}
			return time.Since(start)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		q := fmt.Sprintf("?asOf=%d", mid)
		b.ReportMetric(do(q).Seconds(), "s-first")
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "state-heap-MB")
		for _, c := range []struct{ name, query string }{{"asof", q}, {"live", ""}} {
			lat := make([]time.Duration, 50)
			for i := range lat {
				lat[i] = do(c.query)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, c.name+"-p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, c.name+"-p99-ms")
		}
		m.Close()
	}
}
