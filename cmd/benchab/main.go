// Command benchab compares two builds of tradeledger on this machine:
// `make bench-ab REF=<commit>` (DESIGN §9: no regression against the
// previous landed version, in the same run). It builds REF from a `git
// archive` of it in a directory of its own (the working tree is never
// touched) and HEAD from the working tree as it is, then measures both
// alternately, round after round, with one driver (this program, HEAD's):
//
//   - import: `tradeledger import` of the same generated Gunbot folder
//     (gunbottest: 200,000 orders on 10 pairs) into a new data dir;
//   - start to ready: `serve` on the imported log until /readyz answers
//     200, replaying the whole log, and from a read-model snapshot of it
//     (n/a for a build without snapshots);
//   - replay and verify: `tradeledger replay` and `tradeledger verify` of
//     the whole log;
//   - appends, 64 writers: the only figure taken inside each tree, the
//     same `go test -bench` (BenchmarkAppend/writers=64 of
//     eventstore/sqlite) of each tree's own test binary;
//   - the ClickHouse overview: POST pnl/overview for 60 distinct time zones
//     one after the other, each computed (serve caches a body per zone),
//     with --read-from clickhouse on the log exported there (only when a
//     ClickHouse server is given);
//   - placement: limit orders that fill at once, through serve's HTTP API
//     at a fixed 1,000 orders/s from 64 clients (open loop: each latency
//     from the order's intended start), p50 and p99.
//
// Each round runs every benchmark for both builds, REF first in odd rounds
// and HEAD first in even ones. The report gives each figure per round, and
// at the end a table of each figure's min, median and max for both builds
// and of the ratio HEAD/REF per round (as a speed: for a time or a
// latency REF's ÷ HEAD's, so that ≥ 1 always means HEAD is as fast or
// faster), with the machine's load (/proc/loadavg) beside them: the box is
// shared, so compare ratios, and the CPU figures first.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := &Main{Stdout: os.Stdout, Stderr: os.Stderr}
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "benchab:", err)
		os.Exit(2)
	}
	err := m.Run(ctx)
	m.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchab:", err)
		os.Exit(1)
	}
}

// Main is one comparison: its settings (from the flags), the two builds and
// the figures measured.
type Main struct {
	Ref        string // the commit to compare HEAD with
	Rounds     int
	Orders     int    // orders of the generated history
	Placements int    // orders placed per round and build
	Rate       int    // placements per second
	ClickHouse string // clickhouse://host:port[/db] or "" (no overview row)
	Only       string // comma-separated benchmark names, "" for all
	Work       string // directory for the builds and data dirs; "" a new temporary one
	Keep       bool   // keep Work at the end
	Trace      string // directory for the placement's traces (perf profile, latencies by due time); "" none

	Stdout, Stderr io.Writer

	repo    string // the working tree's root
	work    string
	removed bool
	ref     *build
	head    *build
	results *results
	chDBs   []string // ClickHouse databases made, dropped at Close
	traced  int      // placement runs traced so far (-trace)
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("benchab", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.StringVar(&m.Ref, "ref", "", "the commit to compare HEAD (the working tree) with (required)")
	fs.IntVar(&m.Rounds, "rounds", 3, "rounds; each runs every benchmark once for each build")
	fs.IntVar(&m.Orders, "orders", 200_000, "orders of the generated Gunbot history")
	fs.IntVar(&m.Placements, "placements", 10_000, "orders placed per round and build")
	fs.IntVar(&m.Rate, "rate", 1_000, "placements per second (64 clients, open loop)")
	fs.StringVar(&m.ClickHouse, "clickhouse", "", "ClickHouse server (clickhouse://host:9000) for the overview row; empty: that row is left out")
	fs.StringVar(&m.Only, "only", "", "run only these benchmarks (comma-separated: "+strings.Join(benchNames(), ",")+")")
	fs.StringVar(&m.Work, "work", "", "directory for the builds and data dirs (default: a new temporary one, removed at the end)")
	fs.BoolVar(&m.Keep, "keep", false, "keep the work directory")
	fs.StringVar(&m.Trace, "trace", "", "directory for each placement run's `perf record -g` of serve, its latencies by due time and serve's log (GODEBUG=gctrace=1 shows there)")
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "usage: benchab -ref COMMIT [flags]\n\nBuilds COMMIT beside the working tree and runs the same benchmarks on both, alternately.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if m.Ref == "" {
		fs.Usage()
		return fmt.Errorf("-ref: give the commit to compare with (make bench-ab REF=<commit>)")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if m.Rounds < 1 || m.Orders < 1 || m.Placements < 1 || m.Rate < 1 {
		return fmt.Errorf("-rounds, -orders, -placements and -rate must be positive")
	}
	for _, name := range splitList(m.Only) {
		if !isBench(name) {
			return fmt.Errorf("-only: no benchmark %q (there are %s)", name, strings.Join(benchNames(), ", "))
		}
	}
	return nil
}

// Run builds both trees, prepares their data and measures them.
func (m *Main) Run(ctx context.Context) error {
	repo, err := gitOutput(ctx, ".", "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("not in a git working tree: %w", err)
	}
	m.repo = repo
	m.work = m.Work
	if m.work == "" {
		if m.work, err = os.MkdirTemp("", "benchab-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(m.work, 0o755); err != nil {
		return err
	}
	m.logf("benchab: work directory %s; %d CPUs, load %s", m.work, runtime.NumCPU(), loadavg())
	if m.ref, err = m.buildRef(ctx); err != nil {
		return err
	}
	if m.head, err = m.buildHead(ctx); err != nil {
		return err
	}
	m.results = newResults(m.ref.label, m.head.label)
	folder, err := m.writeFolder()
	if err != nil {
		return err
	}
	benches := m.selected()
	for _, b := range []*build{m.ref, m.head} {
		if err := m.prepare(ctx, b, folder, benches); err != nil {
			return fmt.Errorf("%s: %w", b.label, err)
		}
	}
	for round := 1; round <= m.Rounds; round++ {
		order := []*build{m.ref, m.head}
		if round%2 == 0 {
			order = []*build{m.head, m.ref}
		}
		m.logf("\n== round %d of %d (%s first), load %s", round, m.Rounds, order[0].label, loadavg())
		for _, bench := range benches {
			for _, b := range order {
				if err := ctx.Err(); err != nil {
					return err
				}
				load := load1()
				figs, err := bench.run(ctx, m, b, folder)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", round, bench.name, b.label, err)
				}
				m.results.add(round, b == m.head, load, figs)
				m.logf("%-5s %-10s %s (load %.2f)", b.short, bench.name, figs.String(), load)
			}
		}
	}
	m.results.report(m.Stdout, m.header())
	return nil
}

// Close stops what is left, drops the ClickHouse databases made and removes
// the work directory (unless kept).
func (m *Main) Close() {
	m.dropClickHouse()
	if m.work != "" && m.Work == "" && !m.Keep && !m.removed {
		os.RemoveAll(m.work)
		m.removed = true
	}
}

// header describes the comparison above its table.
func (m *Main) header() string {
	return fmt.Sprintf("REF %s, HEAD %s; %d rounds, %d orders of history, placements %d at %d/s; %d CPUs; %s",
		m.ref.describe, m.head.describe, m.Rounds, m.Orders, m.Placements, m.Rate, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
}

func (m *Main) logf(format string, args ...any) {
	fmt.Fprintf(m.Stdout, format+"\n", args...)
}

// writeFolder writes the generated Gunbot folder both builds import.
func (m *Main) writeFolder() (string, error) {
	dir := filepath.Join(m.work, "gunbot")
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := writeGunbotFolder(dir, m.Orders); err != nil {
		return "", err
	}
	return dir, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
