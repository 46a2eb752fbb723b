package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// BenchmarkScan replays a log of order events (requested, accepted,
// filled: BenchmarkPeer's payloads) into a counting projection through the
// Runner, two ways alternating in rounds in the same run: reading every
// event whole with ReadAll, whose row copy also checks each record's hash
// against the hash column ("hashes"), and with ReadAllNoHashes, which
// copies neither the hashes nor the column, as serve's replay does
// ("nohashes"). It prints both rates, their ratio and the machine's load.
// TRADELEDGER_BENCH_SCAN_EVENTS sets the log's size (default 1,000,000);
// TRADELEDGER_BENCH_SCAN_DB, when set, keeps the log in that file across
// runs (written when missing); TRADELEDGER_BENCH_SCAN_ONLY (hashes or
// nohashes) replays only that way, once per iteration, for instruction
// counts where wall time is too noisy.
func BenchmarkScan(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("TRADELEDGER_BENCH_SCAN_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	path := os.Getenv("TRADELEDGER_BENCH_SCAN_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "events.db")
	}
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	head, err := s.Head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	types := [3]string{domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled}
	clock := domain.SystemClock{}
	batch := make([]domain.Event, 0, 999)
	for i := int(head); i < n; i++ {
		e := benchEvent(clock, i)
		e.Type = types[i%3]
		batch = append(batch, e)
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := s.Append(ctx, fmt.Sprintf("order-%d", i), domain.NoStream, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	replay := func(noHashes bool) time.Duration {
		start := time.Now()
		r := projections.NewRunner(s)
		r.ReplayNoHashes = noHashes
		c := &counting{}
		r.Register(c)
		if err := r.Start(ctx); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		r.Close()
		if c.n != n {
			b.Fatalf("replayed %d events, want %d", c.n, n)
		}
		return took
	}
	// One way only, once, for counting instructions (valgrind
	// --tool=callgrind): TRADELEDGER_BENCH_SCAN_ONLY=hashes or nohashes.
	if only := os.Getenv("TRADELEDGER_BENCH_SCAN_ONLY"); only != "" {
		for i := 0; i < b.N; i++ {
			replay(only == "nohashes")
		}
		return
	}
	replay(true) // the file in the page cache
	b.ResetTimer()
	var with, without time.Duration
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			with += replay(false)
			without += replay(true)
		} else {
			without += replay(true)
			with += replay(false)
		}
	}
	events := float64(n * b.N)
	b.ReportMetric(events/with.Seconds(), "hashes-events/s")
	b.ReportMetric(events/without.Seconds(), "nohashes-events/s")
	b.ReportMetric(with.Seconds()/without.Seconds(), "ratio")
	b.ReportMetric(loadAvg(), "load")
}

// loadAvg is the machine's load over the last minute (0 where
// /proc/loadavg is missing).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(string(b), &l)
	return l
}
