package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// BenchmarkVerify measures `tradeledger verify` (every event's hash and
// chain, the ids, the Merkle tree rebuilt from the events and checked
// against the stored one) against its reference in the same run: a plain
// scan of the same log, every event read through ReadAll into a counting
// loop ("scan-events/s"; "ratio" = verify ÷ scan, target ≥ 0.5, issue 32).
// The two alternate which goes first from one iteration to the next;
// "load" is the machine's load (/proc/loadavg, one minute) when the run
// began, "cpu-us/event" verify's CPU (user and system, every thread),
// "scan-cpu-us/event" the scan's, "scan-hash-cpu-us/event" that of the
// scan with the hashing every verification must do (each event's hash and
// its Merkle record, plainScan), and "ratio-bound" the ratio a
// verification that did only that, on every CPU at once, would reach.
//
// The log is TRADELEDGER_BENCH_VERIFY_DATA when set: a data directory
// (verify only reads it, but give it a copy: the data dir's keys are
// created when missing), for example a copy of a 1M-order log. Otherwise a
// new data dir with a log of TRADELEDGER_BENCH_EVENTS events (default
// 1,000,000; orders of three events, buildBenchLog) and its Merkle tree,
// built before the clock starts.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	dir := os.Getenv("TRADELEDGER_BENCH_VERIFY_DATA")
	if dir == "" {
		n := benchEnvInt(b, "TRADELEDGER_BENCH_EVENTS", 1_000_000)
		dir = filepath.Join(b.TempDir(), "data")
		d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		buildBenchLog(b, d.Store.(*sqlite.Store), n)
		if err := d.Tree.BuildTree(ctx, nil); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
	// Both read the file from the page cache: the first would otherwise
	// pay for the disk.
	warmFile(b, filepath.Join(dir, "events.db"))
	load := benchLoad()
	var verifyTime, scanTime, verifyCPU, scanCPU, hashCPU time.Duration
	var events int
	scan := func() {
		cpu := processCPU(b)
		t, n := plainScan(b, filepath.Join(dir, "events.db"), false)
		scanTime, scanCPU, events = scanTime+t, scanCPU+processCPU(b)-cpu, n
		cpu = processCPU(b)
		plainScan(b, filepath.Join(dir, "events.db"), true)
		hashCPU += processCPU(b) - cpu
	}
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			scan()
		}
		start, cpu := time.Now(), processCPU(b)
		out, errOut, err := importRun(b, "verify", "--data", dir)
		verifyTime += time.Since(start)
		verifyCPU += processCPU(b) - cpu
		if err != nil || !strings.HasPrefix(out, "OK: ") {
			b.Fatalf("verify: %v\n%s%s", err, out, errOut)
		}
		if i%2 == 1 {
			scan()
		}
	}
	total := float64(events * b.N)
	rate, scanRate := total/verifyTime.Seconds(), total/scanTime.Seconds()
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(scanRate, "scan-events/s")
	b.ReportMetric(rate/scanRate, "ratio")
	b.ReportMetric(float64(verifyCPU.Microseconds())/total, "cpu-us/event")
	b.ReportMetric(float64(scanCPU.Microseconds())/total, "scan-cpu-us/event")
	b.ReportMetric(float64(hashCPU.Microseconds())/total, "scan-hash-cpu-us/event")
	// The most any verification could reach here: it reads the log and
	// hashes every event and Merkle record (scan-hash-cpu-us/event) on all
	// the CPUs at once, with nothing else to do.
	bound := scanTime.Seconds() / (hashCPU.Seconds() / float64(runtime.GOMAXPROCS(0)))
	b.ReportMetric(min(bound, 1), "ratio-bound")
	b.ReportMetric(load, "load")
	b.Logf("verify %.0f events/s, a plain scan of the same log %.0f events/s: ratio %.2f (load %.2f); CPU per event: verify %.2f µs, scan %.2f µs, scan and hashes %.2f µs (ratio bound on %d CPUs %.2f)",
		rate, scanRate, rate/scanRate, load, float64(verifyCPU.Microseconds())/total, float64(scanCPU.Microseconds())/total,
		float64(hashCPU.Microseconds())/total, runtime.GOMAXPROCS(0), bound)
}

// plainScan reads every event of the store at path through ReadAll into a
// counting loop, and returns its time (the store's opening excluded) and
// the count. With hash, it also computes each event's hash from its
// contents (domain.ComputeHash) and adds it to a Merkle tree's frontier:
// the hashing every verification must do, on one CPU.
func plainScan(b *testing.B, path string, hash bool) (time.Duration, int) {
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	it := s.ReadAll(context.Background(), 0, 0)
	n := 0
	var tree audit.TreeFrontier
	var stored [64]domain.Hash
	for it.Next() {
		n++
		if hash {
			e := it.Event()
			tree.Add(domain.ComputeHash(&e), stored[:0])
		}
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	it.Close()
	return time.Since(start), n
}
