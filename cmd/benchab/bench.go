package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/cmd/benchab/loadgen"
	"github.com/tradeledger/tradeledger/domain/gunbot/gunbottest"
)

// bench is one benchmark of a round: run measures build b and returns its
// figures (keyed by spec id; NaN where b cannot have one).
type bench struct {
	name string
	// needs says whether it runs in this comparison (a ClickHouse server
	// given, for example), and why not.
	needs func(m *Main) (bool, string)
	run   func(ctx context.Context, m *Main, b *build, folder string) (figures, error)
}

// benches are the benchmarks of a round, in their order.
var benches = []bench{
	{name: "import", run: runImport},
	{name: "start", run: runStart},
	{name: "snapstart", run: runSnapStart},
	{name: "replay", run: runReplay},
	{name: "verify", run: runVerify},
	{name: "append64", run: runAppend64},
	{name: "overview", run: runOverview, needs: func(m *Main) (bool, string) {
		return m.ClickHouse != "", "no ClickHouse server given (CLICKHOUSE=clickhouse://127.0.0.1:9000, or TRADELEDGER_TEST_CLICKHOUSE)"
	}},
	{name: "placement", run: runPlacement},
}

func benchNames() []string {
	var names []string
	for _, b := range benches {
		names = append(names, b.name)
	}
	return names
}

func isBench(name string) bool { return slices.Contains(benchNames(), name) }

// selected are the benchmarks -only names (all by default) that can run.
func (m *Main) selected() []bench {
	only := splitList(m.Only)
	var out []bench
	for _, b := range benches {
		if len(only) > 0 && !slices.Contains(only, b.name) {
			continue
		}
		if b.needs != nil {
			if ok, why := b.needs(m); !ok {
				m.logf("%s left out: %s", b.name, why)
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

func (m *Main) runs(benches []bench, name string) bool {
	return slices.ContainsFunc(benches, func(b bench) bool { return b.name == name })
}

// prepare imports the folder into b's data dir (untimed: it also warms the
// page cache and the binary), creates a token, writes a read-model
// snapshot of it outside the data dir (which replay, verify and the start
// without a snapshot never see), copies it for the placements and exports
// it to ClickHouse, as far as the selected benchmarks need them.
func (m *Main) prepare(ctx context.Context, b *build, folder string, benches []bench) error {
	m.logf("preparing %s (snapshots: %v)", b.label, b.snapshots)
	b.data = filepath.Join(b.dir, "data")
	if err := os.RemoveAll(b.data); err != nil {
		return err
	}
	if _, err := m.command(ctx, b, "import", "--data", b.data, "--from", folder); err != nil {
		return err
	}
	out, err := m.command(ctx, b, "token", "create", "--scope", "admin", "--name", "benchab", "--data", b.data)
	if err != nil {
		return err
	}
	b.token = lastLine(out)
	if b.snapshots && m.runs(benches, "snapstart") {
		b.snapDir = filepath.Join(b.dir, "snapshots")
		if _, err := m.command(ctx, b, "snapshot", "--data", b.data, "--snapshot-dir", b.snapDir); err != nil {
			return err
		}
	}
	if m.runs(benches, "placement") {
		b.placed = filepath.Join(b.dir, "placed")
		if err := copyDataDir(b.data, b.placed); err != nil {
			return err
		}
	}
	if m.runs(benches, "overview") {
		u, db, err := clickhouseDatabase(m.ClickHouse, b.short)
		if err != nil {
			return err
		}
		b.chURL = u
		m.chDBs = append(m.chDBs, db)
		if _, err := m.command(ctx, b, "export", "clickhouse", "--data", b.data, "--to", b.chURL); err != nil {
			return err
		}
	}
	return nil
}

// runImport: `tradeledger import` of the folder into a new data dir.
func runImport(ctx context.Context, m *Main, b *build, folder string) (figures, error) {
	data := filepath.Join(b.dir, "import")
	if err := os.RemoveAll(data); err != nil {
		return nil, err
	}
	defer os.RemoveAll(data)
	r, err := m.timed(ctx, b, "import", "--data", data, "--from", folder)
	if err != nil {
		return nil, err
	}
	if want := fmt.Sprintf("orders %d;", m.Orders); !strings.Contains(r.out, want) {
		return nil, fmt.Errorf("import summary %q lacks %q", r.out, want)
	}
	return figures{"import-s": r.wall.Seconds(), "import-cpu": r.cpu.Seconds()}, nil
}

// runStart: serve on the whole log, no snapshot, until ready.
func runStart(ctx context.Context, m *Main, b *build, _ string) (figures, error) {
	var extra []string
	if b.snapshots {
		extra = []string{"--snapshot-dir", filepath.Join(b.dir, "no-snapshots")}
	}
	return m.timedStart(ctx, b, "start", extra...)
}

// runSnapStart: serve from the read-model snapshot written at prepare and
// the events after it (the starts since), until ready.
func runSnapStart(ctx context.Context, m *Main, b *build, _ string) (figures, error) {
	if !b.snapshots {
		return figures{"snapstart-s": math.NaN(), "snapstart-cpu": math.NaN()}, nil
	}
	return m.timedStart(ctx, b, "snapstart", "--snapshot-dir", b.snapDir)
}

// timedStart serves b's data with the extra flags until ready, stops it,
// and reports the time and CPU to ready as name-s and name-cpu.
func (m *Main) timedStart(ctx context.Context, b *build, name string, extra ...string) (figures, error) {
	s, err := m.serve(ctx, b, b.data, extra...)
	if err != nil {
		return nil, err
	}
	if err := s.stop(); err != nil {
		return nil, err
	}
	return figures{name + "-s": s.ready.Seconds(), name + "-cpu": s.readyCPU.Seconds()}, nil
}

// runReplay: `tradeledger replay` of the whole log (no snapshot in the
// data dir).
func runReplay(ctx context.Context, m *Main, b *build, _ string) (figures, error) {
	r, err := m.timed(ctx, b, "replay", "--data", b.data)
	if err != nil {
		return nil, err
	}
	return figures{"replay-s": r.wall.Seconds(), "replay-cpu": r.cpu.Seconds()}, nil
}

// runVerify: `tradeledger verify` of the whole log.
func runVerify(ctx context.Context, m *Main, b *build, _ string) (figures, error) {
	r, err := m.timed(ctx, b, "verify", "--data", b.data)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(r.out, "OK") {
		return nil, fmt.Errorf("verify: %s", r.out)
	}
	return figures{"verify-s": r.wall.Seconds(), "verify-cpu": r.cpu.Seconds()}, nil
}

// runAppend64 runs BenchmarkAppend/writers=64 of the build's own
// eventstore/sqlite test binary: 64 writers appending through the store
// API, which no command line drives.
func runAppend64(ctx context.Context, m *Main, b *build, _ string) (figures, error) {
	cmd := exec.CommandContext(ctx, b.sqlite, "-test.run", "^$", "-test.bench", "^BenchmarkAppend$/^writers=64$", "-test.benchtime", "1x")
	cmd.Dir = filepath.Join(b.src, "eventstore", "sqlite")
	cmd.Env = childEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("BenchmarkAppend: %v\n%s", err, out)
	}
	metrics := benchMetrics(string(out), "BenchmarkAppend/writers=64")
	rate, ok := metrics["events/s"]
	if !ok {
		return figures{"append64": math.NaN(), "append64-cpu": math.NaN()}, nil
	}
	f := figures{"append64": rate, "append64-cpu": math.NaN()}
	if cpu, ok := metrics["cpu-us/event"]; ok {
		f["append64-cpu"] = cpu
	}
	return f, nil
}

// benchMetrics parses the metrics of the benchmark line of go test's
// output that starts with name: value-unit pairs after the iterations.
func benchMetrics(out, name string) map[string]float64 {
	metrics := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasPrefix(fields[0], name) {
			continue
		}
		for i := 2; i+1 < len(fields); i += 2 {
			if v, err := strconv.ParseFloat(fields[i], 64); err == nil {
				metrics[fields[i+1]] = v
			}
		}
	}
	return metrics
}

// overviewZones are the 60 time zones of the overview row, each asked once
// per serve: serve caches an overview's body per request, so each is
// computed.
var overviewZones = []string{
	"Europe/Amsterdam", "Europe/London", "Europe/Lisbon", "Europe/Berlin", "Europe/Paris", "Europe/Madrid",
	"Europe/Rome", "Europe/Athens", "Europe/Helsinki", "Europe/Kyiv", "Europe/Istanbul", "Europe/Moscow",
	"Atlantic/Reykjavik", "Atlantic/Azores", "Atlantic/Cape_Verde", "Africa/Casablanca", "Africa/Lagos",
	"Africa/Cairo", "Africa/Johannesburg", "Africa/Nairobi", "Asia/Dubai", "Asia/Tehran", "Asia/Kabul",
	"Asia/Karachi", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Dhaka", "Asia/Yangon", "Asia/Bangkok",
	"Asia/Jakarta", "Asia/Shanghai", "Asia/Singapore", "Asia/Hong_Kong", "Asia/Taipei", "Asia/Seoul",
	"Asia/Tokyo", "Australia/Perth", "Australia/Eucla", "Australia/Darwin", "Australia/Adelaide",
	"Australia/Brisbane", "Australia/Sydney", "Australia/Lord_Howe", "Pacific/Noumea", "Pacific/Auckland",
	"Pacific/Chatham", "Pacific/Tongatapu", "Pacific/Kiritimati", "Pacific/Honolulu", "Pacific/Marquesas",
	"America/Anchorage", "America/Los_Angeles", "America/Denver", "America/Phoenix", "America/Chicago",
	"America/New_York", "America/Caracas", "America/Halifax", "America/St_Johns", "America/Sao_Paulo",
}

// runOverview: POST pnl/overview (All) for each of overviewZones, one after
// the other, through serve --read-from clickhouse on the exported log;
// p50 and p99 of the 60 (the p99 of 60 is their slowest).
func runOverview(ctx context.Context, m *Main, b *build, _ string) (figures, error) {
	extra := []string{"--clickhouse", b.chURL, "--read-from", "clickhouse"}
	s, err := m.serve(ctx, b, b.data, extra...)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	overview := func(zone string) (time.Duration, error) {
		start := time.Now()
		status, body, err := s.call("POST", "/api/v1/pnl/overview", b.token, fmt.Sprintf(`{"timezone":%q,"keys":["All"]}`, zone))
		if err == nil && status != 200 {
			err = fmt.Errorf("pnl/overview %s = %d %s", zone, status, truncate(body, 300))
		}
		return time.Since(start), err
	}
	// A first request outside the figures (connections), in a zone not
	// among them.
	if _, err := overview("UTC"); err != nil {
		return nil, err
	}
	lat := make([]time.Duration, 0, len(overviewZones))
	for _, z := range overviewZones {
		d, err := overview(z)
		if err != nil {
			return nil, err
		}
		lat = append(lat, d)
	}
	if err := s.stop(); err != nil {
		return nil, err
	}
	slices.Sort(lat)
	return figures{"overview-p50": ms(loadgen.Quantile(lat, 0.50)), "overview-p99": ms(loadgen.Quantile(lat, 0.99))}, nil
}

// runPlacement: serve on the copy of the log, the core started, 64 clients
// placing limit buys that fill at once at a fixed rate (open loop), after a
// warm-up; p50, p99 and serve's CPU per order.
func runPlacement(ctx context.Context, m *Main, b *build, _ string) (figures, error) {
	s, err := m.serve(ctx, b, b.placed)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	if status, body, err := s.call("POST", "/api/v1/system/start", b.token, ""); err != nil || status != 200 {
		return nil, fmt.Errorf("system/start = %d %s %v", status, truncate(body, 300), err)
	}
	// A limit buy above the market: the paper exchange fills it at once
	// (OrderRequested, OrderAccepted, OrderFilled, as the history's), so
	// that the open orders stay few, as a bot's do.
	const order = `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.0001,"price":1000000}}`
	place := func() error {
		status, body, err := s.call("POST", "/api/v1/trade/buy", b.token, order)
		if err == nil && status != 200 {
			err = fmt.Errorf("trade/buy = %d %s", status, truncate(body, 300))
		}
		return err
	}
	// The first order waits for a pair to cycle (orders need one).
	deadline := time.Now().Add(time.Minute)
	for err := place(); err != nil; err = place() {
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Warm up: the connections, then a second at the rate, not counted.
	for range clients {
		if err := place(); err != nil {
			return nil, err
		}
	}
	if r := loadgen.OpenLoop(clients, m.Rate, m.Rate, place); r.Err != nil {
		return nil, r.Err
	}
	tr, err := m.startTrace(ctx, b, s.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	cpu0 := procCPU(s.cmd.Process.Pid)
	r := loadgen.OpenLoop(clients, m.Placements, m.Rate, place)
	cpu := procCPU(s.cmd.Process.Pid) - cpu0
	if err := tr.stop(r); err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	if err := s.stop(); err != nil {
		return nil, err
	}
	if err := tr.keepLog(s.log); err != nil {
		return nil, err
	}
	return figures{
		"place-p50": ms(loadgen.Quantile(r.Latencies, 0.50)), "place-p99": ms(loadgen.Quantile(r.Latencies, 0.99)),
		"place-cpu": float64(cpu.Microseconds()) / float64(m.Placements), "place-rate": r.Rate,
	}, nil
}

// writeGunbotFolder writes gunbottest's folder of orders orders under dir,
// with simulator balances enough for every placement on top of it.
func writeGunbotFolder(dir string, orders int) error {
	f := gunbottest.Folder{Orders: orders, SimulatorBalances: map[string]string{"USDT": "1000000000", "BTC": "1000"}}
	for _, file := range f.Files() {
		path := filepath.Join(dir, filepath.FromSlash(file.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, file.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyDataDir copies the files of data dir from (not its sub-directories,
// nor serve's lock) into a new directory to, synced.
func copyDataDir(from, to string) error {
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, en := range entries {
		if en.IsDir() || en.Name() == "serve.lock" {
			continue
		}
		src, err := os.Open(filepath.Join(from, en.Name()))
		if err != nil {
			return err
		}
		dst, err := os.OpenFile(filepath.Join(to, en.Name()), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err == nil {
			_, err = io.Copy(dst, src)
			if err == nil {
				// Written out now: else the disk's writeback of the copy
				// (the whole log) ran under the measured run that follows,
				// and the WAL's fdatasyncs waited behind it (100-280 ms
				// about half a second in, in both builds: the run's p99).
				err = dst.Sync()
			}
			if cerr := dst.Close(); err == nil {
				err = cerr
			}
		}
		src.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
