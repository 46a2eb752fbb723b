package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/gunbot-history: four BTC fills over five days in March 2024,
// LOFO, no fees (hand-computed):
//
//	03-01 10:00Z buy  0.01  @ 50000 (lot 500)
//	03-02 12:00Z sell 0.005 @ 52000 → 260 − 0.005×50000 = +10
//	03-04 09:00Z buy  0.01  @ 49000 (lot 490)
//	03-05 15:00Z sell 0.015 @ 51000 → 765 − (490 + 250) = +25
const gunbotHistoryDir = "../../testdata/gunbot-history"

// TestReplayImportedHistoryByTradeTime: a history imported today replays to
// a date inside it (the import's own events are stamped today; the fills
// carry their trade time), and a date means the end of that day in
// --timezone.
func TestReplayImportedHistoryByTradeTime(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	data := filepath.Join(t.TempDir(), "data")
	if _, warn, err := importRun(t, "import", "--data", data, "--from", gunbotHistoryDir); err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	for _, c := range []struct {
		args      []string
		pnl       float64
		fills     int // orders in the PNL's trade count
		tradeTime bool
	}{
		{[]string{"--until", "2024-03-01"}, 0, 1, true},
		{[]string{"--until", "2024-03-02"}, 10, 2, true},
		{[]string{"--until", "2024-03-02", "--timezone", "Asia/Tokyo"}, 10, 2, true},        // ends 03-02 15:00Z
		{[]string{"--until", "2024-03-02", "--timezone", "Pacific/Kiritimati"}, 0, 1, true}, // ends 03-02 10:00Z
		{[]string{"--until", "2024-03-04T08:59:59Z"}, 10, 2, true},
		{[]string{"--until", "2024-03-04"}, 10, 3, true},
		{[]string{"--until", "1709650800000"}, 35, 4, true},
		{nil, 35, 4, false}, // no cut: the whole log, now
	} {
		args := append([]string{"replay", "--data", data, "--json"}, c.args...)
		out, errOut, code := auditRun(t, args...)
		if code != 0 {
			t.Fatalf("replay %v: exit %d %s", c.args, code, errOut)
		}
		var rep struct {
			Cut  string       `json:"cut"`
			AsOf replayResult `json:"asOf"`
			Pnl  struct {
				Total struct {
					Pnl            float64 `json:"pnl"`
					NumberOfTrades int     `json:"numberOfTrades"`
					BuyCount       int     `json:"buyCount"`
					SellCount      int     `json:"sellCount"`
				} `json:"total"`
			} `json:"pnlOverview"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("replay %v output: %v\n%s", c.args, err, out)
		}
		if got := rep.Pnl.Total.Pnl; got != c.pnl {
			t.Fatalf("replay %v: total pnl %v, want %v (cut %q, %d events)", c.args, got, c.pnl, rep.Cut, rep.AsOf.Events)
		}
		if got := rep.Pnl.Total.BuyCount + rep.Pnl.Total.SellCount; got != c.fills {
			t.Fatalf("replay %v: %d buys and sells, want %d", c.args, got, c.fills)
		}
		if got := strings.HasPrefix(rep.Cut, "trade time ≤ "); got != c.tradeTime {
			t.Fatalf("replay %v: cut %q", c.args, rep.Cut)
		}
		if c.tradeTime && rep.AsOf.Later == 0 && c.pnl != 35 {
			t.Fatalf("replay %v: no later events left out, cut %q", c.args, rep.Cut)
		}
		if !strings.Contains(errOut, "cut: "+rep.Cut) {
			t.Fatalf("replay %v: the summary line does not say the cut: %s", c.args, errOut)
		}
	}
	// The text output says the cut too.
	out, _, code := auditRun(t, "replay", "--data", data, "--until", "2024-03-02")
	if code != 0 || !strings.Contains(out, "State as of trade time ≤ 2024-03-02T23:59:59.999Z") {
		t.Fatalf("text output (exit %d):\n%s", code, out)
	}
	if _, errOut, code := auditRun(t, "replay", "--data", data, "--until", "03/02/2024"); code == 0 || !strings.Contains(errOut, "neither a date") {
		t.Fatalf("a malformed --until: exit %d %s", code, errOut)
	}
}

// TestImportNewestFirstStateFile: Gunbot keeps a state file's orders newest
// first; the import appends them in trade-time order, so the PNL is the same
// as for the oldest-first file (+35), not a sell with no lot to consume.
func TestImportNewestFirstStateFile(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "json"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(gunbotHistoryDir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(gunbotHistoryDir, "json", "binance-USDT-BTC-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	orders := state["orders"].([]any)
	for i, j := 0, len(orders)-1; i < j; i, j = i+1, j-1 {
		orders[i], orders[j] = orders[j], orders[i]
	}
	if b, err = json.Marshal(state); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "json", "binance-USDT-BTC-state.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	if _, warn, err := importRun(t, "import", "--data", data, "--from", src); err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	out, errOut, code := auditRun(t, "replay", "--data", data, "--json")
	if code != 0 {
		t.Fatalf("replay: exit %d %s", code, errOut)
	}
	var rep struct {
		Pnl struct {
			Total struct {
				Pnl float64 `json:"pnl"`
			} `json:"total"`
		} `json:"pnlOverview"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Pnl.Total.Pnl != 35 {
		t.Fatalf("total pnl of the newest-first history %v, want 35", rep.Pnl.Total.Pnl)
	}
}
