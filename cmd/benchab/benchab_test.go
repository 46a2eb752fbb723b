package main

import (
	"archive/tar"
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportRatios checks the table's arithmetic: each round's ratio is a
// speed (a rate HEAD ÷ REF, a time REF ÷ HEAD), the min, median and max
// are over the rounds' pairs, and a build without a figure is n/a.
func TestReportRatios(t *testing.T) {
	r := newResults("REF x", "HEAD y")
	for round, v := range []struct{ refS, headS, refRate, headRate float64 }{
		{2.0, 1.0, 100, 50}, // HEAD twice as fast in time, half the rate
		{3.0, 3.0, 100, 100},
		{1.0, 4.0, 100, 400},
	} {
		r.add(round+1, false, 1, figures{"import-s": v.refS, "append64": v.refRate, "snapstart-s": nan})
		r.add(round+1, true, 2, figures{"import-s": v.headS, "append64": v.headRate, "snapstart-s": 0.5})
	}
	var out bytes.Buffer
	r.report(&out, "header")
	table := out.String()
	for _, want := range []string{
		"| import (wall) | s | 1.00 / 2.00 / 3.00 | 1.00 / 3.00 / 4.00 | 0.25 / 1.00 / 2.00 |",
		"| appends, 64 writers (go test in each tree) | events/s | 100 / 100 / 100 | 50 / 100 / 400 | 0.50 / 1.00 / 4.00 |",
		"| serve to /readyz from a snapshot (wall) | s | n/a | 0.500 / 0.500 / 0.500 | n/a |",
		"load (1 min) when each measurement began: 1.00–2.00",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("report lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "verify") {
		t.Errorf("report has a row for a figure never measured:\n%s", table)
	}
}

// TestBenchMetrics reads go test's benchmark line as the tree's test
// binary prints it.
func TestBenchMetrics(t *testing.T) {
	out := "goos: linux\nBenchmarkAppend/writers=64         \t       1\t 433155371 ns/op\t         6.22 cpu-us/event\t    146727 events/s\t  0.75 ratio\nPASS\n"
	got := benchMetrics(out, "BenchmarkAppend/writers=64")
	if got["events/s"] != 146727 || got["cpu-us/event"] != 6.22 || got["ratio"] != 0.75 {
		t.Fatalf("metrics %v", got)
	}
	if got := benchMetrics(out, "BenchmarkReplay"); len(got) != 0 {
		t.Fatalf("metrics of a benchmark not run: %v", got)
	}
}

// TestClickHouseDatabase: each build gets a database of its own on the
// server given, the query kept.
func TestClickHouseDatabase(t *testing.T) {
	u, db, err := clickhouseDatabase("clickhouse://127.0.0.1:9000/tradeledger_test?dial_timeout=2s", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if want := "tradeledger_test_benchab_head_"; !strings.HasPrefix(db, want) {
		t.Errorf("database %q, want the prefix %q", db, want)
	}
	if want := "clickhouse://127.0.0.1:9000/" + db + "?dial_timeout=2s"; u != want {
		t.Errorf("URL %q, want %q", u, want)
	}
	if _, _, err := clickhouseDatabase("http://127.0.0.1:8123", "REF"); err == nil {
		t.Error("an http URL accepted")
	}
}

// TestUntar extracts files and directories and passes over paths that
// would leave the directory.
func TestUntar(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name, body string
		dir        bool
	}{{"cmd/", "", true}, {"cmd/main.go", "package main\n", false}, {"../evil", "x", false}, {"/abs", "x", false}} {
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}
		if f.dir {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	root := t.TempDir()
	dir := filepath.Join(root, "src")
	if err := untar(&buf, dir); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "cmd", "main.go")); err != nil || string(raw) != "package main\n" {
		t.Fatalf("cmd/main.go = %q, %v", raw, err)
	}
	if _, err := os.Stat(filepath.Join(root, "evil")); err == nil {
		t.Error("../evil written outside the directory")
	}
}

// TestFigureSpecs: every figure a benchmark returns has a row.
func TestFigureSpecs(t *testing.T) {
	ids := map[string]bool{}
	for _, s := range specs {
		if ids[s.id] {
			t.Errorf("row %s twice", s.id)
		}
		ids[s.id] = true
	}
	// The figures of the builds that have none are NaN, and their ids
	// are the same as those measured.
	b := &build{}
	f, err := runSnapStart(context.Background(), &Main{}, b, "")
	if err != nil {
		t.Fatal(err)
	}
	for id, v := range f {
		if !ids[id] || !math.IsNaN(v) {
			t.Errorf("snapstart without snapshots: %s = %v", id, v)
		}
	}
}

// TestAgainstItself runs the whole comparison, HEAD against itself, on a
// small history, when TRADELEDGER_TEST_BENCHAB is set (it builds the
// binary twice: minutes on a cold cache).
func TestAgainstItself(t *testing.T) {
	if os.Getenv("TRADELEDGER_TEST_BENCHAB") == "" {
		t.Skip("TRADELEDGER_TEST_BENCHAB is not set: skipping the comparison of HEAD with itself (it builds tradeledger twice)")
	}
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out}
	if err := m.ParseFlags([]string{"-ref", "HEAD", "-rounds", "1", "-orders", "500", "-placements", "200", "-rate", "200",
		"-work", t.TempDir(), "-only", "import,start,snapstart,replay,verify,placement"}); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	m.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, row := range []string{"| import (wall) |", "| serve to /readyz, whole log (wall) |", "| replay, whole log (wall) |",
		"| verify (wall) |", "| placement at the rate, 64 clients, p99 |"} {
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, row) {
				line = l
			}
		}
		if line == "" || strings.HasSuffix(line, "| n/a |") {
			t.Errorf("row %q missing or without a ratio:\n%s", row, out.String())
		}
	}
}
