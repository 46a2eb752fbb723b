package clickhouse

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// benchZones are zones of every kind the reader plans: whole hours with
// and without daylight saving time (changes at local midnight, twice a
// year in Casablanca), constant 30- and 45-minute offsets, and 30- and
// 45-minute offsets that change (by an hour in Adelaide and Chatham, by
// 30 minutes on Lord Howe).
var benchZones = []string{
	"UTC", "Europe/Amsterdam", "Europe/London", "America/New_York", "America/Los_Angeles", "America/Havana",
	"America/Santiago", "America/Sao_Paulo", "Africa/Casablanca", "Asia/Tokyo", "Australia/Sydney",
	"Pacific/Auckland", "Pacific/Apia", "Pacific/Kiritimati", "Etc/GMT+12",
	"Asia/Kolkata", "Asia/Kathmandu", "Asia/Kabul", "Asia/Tehran", "Asia/Yangon", "Australia/Eucla",
	"Australia/Darwin", "Pacific/Marquesas", "Australia/Adelaide", "Australia/Lord_Howe", "Pacific/Chatham",
	"America/St_Johns",
}

// BenchmarkOverviewZones exports bigLog's TRADELEDGER_BENCH_FILLS orders
// (default 200,000: January to May 2023, over the northern and southern
// spring's clock changes) and asks Reader.Overview (All, over all time)
// in each of benchZones, one after the other, every answer computed and
// checked against the in-memory Ledger's; then ROUNDS (3) more passes
// timed: p50 and p99 (the slowest of a pass; the median pass's and the
// worst), the slowest zones logged with their times. The export's CPU in
// this process (the sink's) is export-cpu-s.
func BenchmarkOverviewZones(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("TRADELEDGER_BENCH_FILLS")); err == nil && v > 0 {
		n = v
	}
	url := testURL(b)
	store := openStore(b)
	bigLog(b, store, n)
	start, cpu := time.Now(), processCPU()
	st, err := NewSink(url, store).Export(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("export of %d orders: %d rows in %s, %s of this process's CPU", n, st.Rows, time.Since(start).Round(time.Millisecond),
		(processCPU() - cpu).Round(time.Millisecond))
	b.ReportMetric((processCPU() - cpu).Seconds(), "export-cpu-s")
	mem := ledgerOf(b, store, domain.LOFO)
	r := NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	now := time.Date(2023, 5, 20, 12, 0, 0, 0, time.UTC)
	query := func(zn string) projections.OverviewQuery {
		loc, err := projections.LoadZone(zn)
		if err != nil {
			b.Fatal(err)
		}
		return projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: loc, Now: now}
	}
	if _, err := r.Overview(query("UTC")); err != nil { // connections, outside the figures
		b.Fatal(err)
	}
	for _, zn := range benchZones {
		q := query(zn)
		mo, merr := mem.Overview(q)
		co, cerr := r.Overview(q)
		if m, c := mustJSON(b, mo, merr), mustJSON(b, co, cerr); m != c {
			b.Fatalf("overview in %s differs:\nmemory     %.1500s\nclickhouse %.1500s", zn, m, c)
		}
	}
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	var p50s, p99s []float64
	for round := 0; round < rounds; round++ {
		type timed struct {
			zone string
			d    time.Duration
		}
		var ts []timed
		for _, zn := range benchZones {
			q := query(zn)
			t := time.Now()
			if _, err := r.Overview(q); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, timed{zn, time.Since(t)})
		}
		slices.SortFunc(ts, func(a, c timed) int { return int(a.d - c.d) })
		var slow []string
		for _, t := range ts[len(ts)-6:] {
			slow = append(slow, t.zone+" "+t.d.Round(10*time.Microsecond).String())
		}
		p50, p99 := ts[len(ts)/2].d, ts[len(ts)-1].d
		p50s, p99s = append(p50s, float64(p50.Microseconds())/1000), append(p99s, float64(p99.Microseconds())/1000)
		b.Logf("round %d: p50 %s, p99 %s; slowest: %s", round+1, p50, p99, strings.Join(slow, ", "))
	}
	slices.Sort(p50s)
	slices.Sort(p99s)
	b.ReportMetric(p50s[len(p50s)/2], "p50-ms")
	b.ReportMetric(p99s[len(p99s)/2], "p99-ms")
	b.ReportMetric(p99s[len(p99s)-1], "p99-max-ms")
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
