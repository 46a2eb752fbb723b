package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/cmd/benchab/loadgen"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// BenchmarkPlacementOpenLoop measures the placement latency users feel
// (issue 32): 64 clients place limit orders through serve's HTTP API
// (127.0.0.1:0, the paper exchange, the SQLite store, every read model) at
// a fixed arrival rate of TRADELEDGER_BENCH_RATE orders/s in total
// (default 1,000). It is an open loop: each client sends its orders at
// their intended times (its own 1/64 of the schedule, staggered), and a
// latency runs from the intended start, not from the send, so that a slow
// answer also counts against the orders queued behind it (no coordinated
// omission). Each segment places TRADELEDGER_BENCH_PLACEMENTS orders
// (default 10,000: 10 s at 1,000/s).
//
// The log beneath holds TRADELEDGER_BENCH_PLACEMENT_LOG orders of history
// beforehand (default 200,000; three events each), large enough that a
// read-model snapshot takes a while to write. Each of two rounds runs
// three segments: the reference ("time": GET /api/v1/time through the
// same server, clients and schedule — what the machine and the HTTP
// plumbing alone cost), placements with no snapshot written ("plain"),
// and placements with serve's snapshot writer running ("snap") every
// TRADELEDGER_BENCH_SNAPSHOT_EVERY events (default 10,000: a snapshot
// every 3.3 s at 1,000 orders/s of three events each, ten times as often
// as serve's default --snapshot-every writes them at that rate), each
// written at TRADELEDGER_BENCH_SNAPSHOT_RATE bytes a second (default
// serve's, projections.DefaultSnapshotWriteRate; 0: as fast as it
// encodes).
//
// Reported for each kind: p50/p99/p999/max in ms over all its orders, the
// slowest segment's achieved rate, the CPU per order, and the time this
// process's threads waited for a core per order; then p99-over-time-p99
// (plain p99 ÷ the reference's), snap-p99-ratio (snap p99 ÷ plain p99),
// the snapshots written and the longest the placements were held for a
// freeze (Frozen.Held), the WAL's fdatasyncs (mean and longest, in ms) —
// the disk is shared with the snapshot files —, the share of the run some
// task of the machine waited for a core (PSI) and the machine's load
// (/proc/loadavg, 1 minute) when the run began. Targets: plain p99 ≤ 10
// ms, snap-p99-ratio ≤ 1.2.
//
// TRADELEDGER_BENCH_DATA=dir keeps the pristine log in dir/<orders> for
// the next run (each run places its orders into a copy of it).
func BenchmarkPlacementOpenLoop(b *testing.B) {
	logOrders := benchEnvInt(b, "TRADELEDGER_BENCH_PLACEMENT_LOG", 200_000)
	perSegment := benchEnvInt(b, "TRADELEDGER_BENCH_PLACEMENTS", 10_000)
	rate := benchEnvInt(b, "TRADELEDGER_BENCH_RATE", 1_000)
	every := benchEnvInt(b, "TRADELEDGER_BENCH_SNAPSHOT_EVERY", 10_000)
	const clients, rounds = 64, 2

	dir := b.TempDir()
	if keep := os.Getenv("TRADELEDGER_BENCH_DATA"); keep != "" {
		pristine := filepath.Join(keep, strconv.Itoa(logOrders))
		if err := os.MkdirAll(pristine, 0o700); err != nil {
			b.Fatal(err)
		}
		prepareBenchLog(b, pristine, logOrders)
		copyDataDir(b, pristine, dir)
	} else {
		prepareBenchLog(b, dir, logOrders)
	}

	ctx := context.Background()
	m := benchMain(dir)
	m.ManualCycles = true // no core cycle: what is measured is the placement path
	m.Config.SnapshotDir = filepath.Join(dir, "bench-snapshots")
	if err := m.Run(ctx); err != nil {
		m.Close()
		b.Fatal(err)
	}
	defer m.Close()
	if v := os.Getenv("TRADELEDGER_BENCH_SNAPSHOT_RATE"); v != "" {
		rate, err := strconv.ParseInt(v, 10, 64)
		if err != nil || rate < 0 {
			b.Fatalf("TRADELEDGER_BENCH_SNAPSHOT_RATE=%q: not a rate in bytes a second", v)
		}
		m.Snapshots.WriteRate = rate
	}
	// Enough quote for every order, whatever the history left: the
	// simulated account opens at its first use, after this, with these
	// starting balances and the log's fills on them (as
	// config.exchanges.binance.simulator.balances would set them).
	settings := m.Simulator.Settings
	m.Simulator.Settings = func(name string) (paper.ExchangeSettings, bool) {
		set, ok := settings(name)
		set.Balances = map[string]decimal.Decimal{"USDT": decimal.DecimalFromInt(1_000_000_000), "BTC": decimal.DecimalFromInt(1_000)}
		return set, ok
	}
	store, ok := m.DataDir.Store.(*sqlite.Store)
	if !ok {
		b.Fatalf("the store is a %T, not SQLite", m.DataDir.Store)
	}
	token, err := m.Server.Auth.IssueToken("bench")
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	do := func(method, path, body string) (int, string, error) {
		req, _ := http.NewRequest(method, m.Server.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out), err
	}
	for _, c := range []struct{ path, body string }{
		{"/api/v1/config/pair/add", `{"pair":"USDT-BTC","exchange":"binance","settings":{"strategy":"manual","DELAY":1}}`},
		{"/api/v1/system/start", ``},
	} {
		if status, out, err := do("POST", c.path, c.body); err != nil || status != 200 {
			b.Fatalf("%s = %d %s %v", c.path, status, out, err)
		}
	}
	// A limit buy above the market: the paper exchange fills it at once
	// (OrderRequested, OrderAccepted, OrderFilled, as the history's
	// orders), so that the open orders stay few, as a bot's do.
	const order = `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.0001,"price":1000000}}`
	place := func() error {
		status, out, err := do("POST", "/api/v1/trade/buy", order)
		if err == nil && status != 200 {
			err = fmt.Errorf("trade/buy = %d %s", status, out)
		}
		return err
	}
	// The reference: the server's clock, through the same server, clients
	// and schedule: what the machine and the HTTP plumbing alone cost.
	clockRead := func() error {
		status, out, err := do("GET", "/api/v1/time", "")
		if err == nil && status != 200 {
			err = fmt.Errorf("time = %d %s", status, out)
		}
		return err
	}
	// Warm up: the simulated exchange builds its history on first use,
	// the connections open.
	for range clients {
		if err := place(); err != nil {
			b.Fatal(err)
		}
	}
	// Then a second of placements at the rate, not counted: the first
	// placements at the rate after start once stalled for 400 ms, which
	// the later segments never did (a one-time cost of the start).
	if r := openLoop(clients, rate, rate, place); r.err != nil {
		b.Fatal(r.err)
	}

	// The store's fdatasyncs of the WAL, counted per kind of segment: how
	// far the disk (shared with the snapshot files) bounds the placements.
	var plainSyncs, snapSyncs syncTimes
	defer store.SetObserver(nil)

	load, pressure0, start := benchLoad(), cpuPressure(), time.Now()
	var plain, snapped, ref openLoopResult
	var snapshots int
	var maxHeld, writing, plainCPU, snapCPU, plainWait, snapWait time.Duration
	b.ResetTimer()
	for range b.N {
		for range rounds {
			r := openLoop(clients, perSegment, rate, clockRead)
			if r.err != nil {
				b.Fatal(r.err)
			}
			ref.add(r)

			store.SetObserver(&plainSyncs)
			cpu0, wait0 := processCPU(b), runqWait()
			r = openLoop(clients, perSegment, rate, place)
			plainCPU += processCPU(b) - cpu0
			plainWait += runqWait() - wait0
			if r.err != nil {
				b.Fatal(r.err)
			}
			plain.add(r)

			w := projections.NewSnapshotWriter(m.Runner, m.Snapshots, m.Clock)
			w.Every, w.Poll = uint64(every), 10*time.Millisecond
			var writeErr error
			w.OnWrite = func(f *projections.Frozen, file projections.SnapshotFile, err error) {
				if err != nil {
					writeErr = err
					return
				}
				snapshots++
				maxHeld = max(maxHeld, f.Held)
				writing += file.Encode
			}
			store.SetObserver(&snapSyncs)
			cpu0, wait0 = processCPU(b), runqWait()
			w.Start()
			r = openLoop(clients, perSegment, rate, place)
			w.Close()
			snapCPU += processCPU(b) - cpu0
			snapWait += runqWait() - wait0
			if writeErr != nil {
				b.Fatal(writeErr)
			}
			if r.err != nil {
				b.Fatal(r.err)
			}
			snapped.add(r)
		}
	}
	b.StopTimer()
	// The premise of the freezes' figures: the orders filled.
	if open := len(m.Engine.Orders.Unfinished()); open > clients {
		b.Fatalf("%d orders still open: the placed orders did not fill at once", open)
	}
	plain.report(b, "")
	snapped.report(b, "snap-")
	ref.report(b, "time-")
	b.ReportMetric(plain.quantile(0.99).Seconds()/ref.quantile(0.99).Seconds(), "p99-over-time-p99")
	b.ReportMetric(snapped.quantile(0.99).Seconds()/plain.quantile(0.99).Seconds(), "snap-p99-ratio")
	b.ReportMetric(float64(snapshots), "snapshots")
	b.ReportMetric(float64(maxHeld.Microseconds())/1000, "snap-max-held-ms")
	if snapshots > 0 {
		b.ReportMetric(writing.Seconds()/float64(snapshots), "snap-write-s")
	}
	// The CPU the whole process (server, store, read models, snapshot
	// writer and these clients) spent per order: unlike the latencies it
	// hardly moves with the other processes' load, and 2 cores divided
	// by it bound the rate.
	b.ReportMetric(float64(plainCPU.Microseconds())/float64(len(plain.lat)), "cpu-us/order")
	b.ReportMetric(float64(snapCPU.Microseconds())/float64(len(snapped.lat)), "snap-cpu-us/order")
	// What the other processes cost these placements: the time this
	// process's threads were ready to run but waited for a core (summed
	// over its threads, per order), and the share of the run during which
	// some task of the machine waited for one (PSI).
	b.ReportMetric(float64(plainWait.Microseconds())/float64(len(plain.lat)), "runq-wait-us/order")
	b.ReportMetric(float64(snapWait.Microseconds())/float64(len(snapped.lat)), "snap-runq-wait-us/order")
	if p := cpuPressure(); p > 0 {
		b.ReportMetric(float64(p-pressure0)/float64(time.Since(start).Microseconds()), "cpu-pressure")
	}
	plainSyncs.report(b, "")
	snapSyncs.report(b, "snap-")
	b.ReportMetric(load, "load")
}

// syncTimes counts the store's fdatasyncs of its WAL and their time.
type syncTimes struct{ syncs, nanos, slowest atomic.Int64 }

func (o *syncTimes) ObserveAppend(time.Duration) {}
func (o *syncTimes) ObserveBatch(int)            {}
func (o *syncTimes) ObserveSync(d time.Duration) {
	o.syncs.Add(1)
	o.nanos.Add(int64(d))
	for {
		s := o.slowest.Load()
		if int64(d) <= s || o.slowest.CompareAndSwap(s, int64(d)) {
			return
		}
	}
}

// report reports the mean and the longest fdatasync in ms.
func (o *syncTimes) report(b *testing.B, prefix string) {
	if n := o.syncs.Load(); n > 0 {
		b.ReportMetric(float64(o.nanos.Load())/float64(n)/1e6, prefix+"ms/sync")
		b.ReportMetric(float64(o.slowest.Load())/1e6, prefix+"max-ms/sync")
	}
}

// openLoopResult is what open-loop segments measured: each order's latency
// from its intended start, and each segment's achieved rate.
type openLoopResult struct {
	lat   []time.Duration
	rates []float64
	err   error
}

func (r *openLoopResult) add(o openLoopResult) {
	r.lat = append(r.lat, o.lat...)
	r.rates = append(r.rates, o.rates...)
	slices.Sort(r.lat)
}

// quantile is the q-quantile of the latencies (sorted).
func (r *openLoopResult) quantile(q float64) time.Duration {
	return loadgen.Quantile(r.lat, q)
}

func (r *openLoopResult) report(b *testing.B, prefix string) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(r.quantile(0.50)), prefix+"p50-ms")
	b.ReportMetric(ms(r.quantile(0.99)), prefix+"p99-ms")
	b.ReportMetric(ms(r.quantile(0.999)), prefix+"p999-ms")
	b.ReportMetric(ms(r.lat[len(r.lat)-1]), prefix+"max-ms")
	b.ReportMetric(slices.Min(r.rates), prefix+"orders/s")
}

// openLoop places n orders with clients clients at rate orders/s in total
// (loadgen.OpenLoop: each latency from the order's due time).
func openLoop(clients, n, rate int, place func() error) openLoopResult {
	r := loadgen.OpenLoop(clients, n, rate, place)
	return openLoopResult{lat: r.Latencies, rates: []float64{r.Rate}, err: r.Err}
}

// runqWait is how long this process's threads have waited on a run queue
// for a core (/proc/self/task/*/schedstat, the second field; 0 where it is
// missing).
func runqWait() time.Duration {
	tasks, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var sum int64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(raw)); len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			sum += n
		}
	}
	return time.Duration(sum)
}

// cpuPressure is the machine's total time, in µs, during which some task
// waited for a core (/proc/pressure/cpu "some"; 0 where it is missing).
func cpuPressure() int64 {
	raw, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	_, total, ok := strings.Cut(line, "total=")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	return n
}

// benchEnvInt is the integer in the environment variable name, or def.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: not a positive integer", name, v)
	}
	return n
}

// copyDataDir copies the files of data dir from (not its sub-directories,
// nor serve's lock) into to.
func copyDataDir(b *testing.B, from, to string) {
	entries, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	for _, en := range entries {
		if en.IsDir() || en.Name() == "serve.lock" {
			continue
		}
		src, err := os.Open(filepath.Join(from, en.Name()))
		if err != nil {
			b.Fatal(err)
		}
		dst, err := os.OpenFile(filepath.Join(to, en.Name()), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err == nil {
			_, err = io.Copy(dst, src)
			if cerr := dst.Close(); err == nil {
				err = cerr
			}
		}
		src.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}
