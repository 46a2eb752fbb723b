package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
)

// The books of testdata/gunbot-history (replay_tradetime_test.go: buys
// 03-01 and 03-04, sells 03-02 (+10) and 03-05 (+25) under LOFO), imported
// today: `export --format` writes them by trade time, the same bytes each
// time, and the file whole.
func TestBooksExportCommand(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	data := filepath.Join(t.TempDir(), "data")
	if _, warn, err := importRun(t, "import", "--data", data, "--from", gunbotHistoryDir); err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	out := filepath.Join(t.TempDir(), "realized.csv")
	run := func(args ...string) string {
		t.Helper()
		_, errOut, code := auditRun(t, append([]string{"export", "--data", data}, args...)...)
		if code != 0 {
			t.Fatalf("export %v: exit %d %s", args, code, errOut)
		}
		return errOut
	}
	summary := run("--format", "realized", "--method", "lofo", "--from", "2024-03-02", "--to", "2024-03-05", "--out", out)
	if !strings.Contains(summary, "exported 3 rows (realized, lofo") {
		t.Errorf("summary: %s", summary)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// 03-02: 0.005 of the 03-01 lot (+10); 03-05: the 03-04 lot (490 →
	// 510: +20) and 0.005 of the 03-01 lot (250 → 255: +5).
	if len(recs) != 4 || strings.Join(recs[0], ",") != books.RealizedHeader {
		t.Fatalf("%d rows:\n%s", len(recs), b)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	var gain domain.Decimal
	for _, r := range recs[1:] {
		gain = gain.Add(domain.MustDecimal(r[col["gain"]]))
	}
	if gain != domain.DecimalFromInt(35) || recs[1][col["disposed_at"]] != "2024-03-02T12:00:00.000Z" {
		t.Errorf("gains %s, first disposal %s\n%s", gain, recs[1][col["disposed_at"]], b)
	}
	again := filepath.Join(t.TempDir(), "again.csv")
	run("--format", "realized", "--method", "lofo", "--from", "2024-03-02", "--to", "2024-03-05", "--out", again)
	if b2, _ := os.ReadFile(again); string(b2) != string(b) {
		t.Error("the same export twice gave different bytes")
	}
	// As of 03-03 (trade time), the second sell is not in the books yet.
	koinly := filepath.Join(t.TempDir(), "koinly.csv")
	run("--format", "koinly", "--until", "2024-03-03", "--out", koinly)
	b, _ = os.ReadFile(koinly)
	if lines := strings.Split(strings.TrimSpace(string(b)), "\r\n"); len(lines) != 3 || lines[0] != books.KoinlyHeader {
		t.Errorf("koinly as of 03-03:\n%s", b)
	}
	// --keys picks pairs; --scope and --currency override the defaults.
	keyed := filepath.Join(t.TempDir(), "keyed.csv")
	if summary := run("--format", "realized", "--method", "lofo", "--from", "2024-03-02", "--to", "2024-03-05", "--keys", " binance/USDT-BTC",
		"--scope", "universal", "--currency", "none", "--out", keyed); !strings.Contains(summary, "exported 3 rows (realized, lofo") {
		t.Errorf("summary with --keys: %s", summary)
	}
	if summary := run("--format", "realized", "--keys", "binance/USDT-ETH", "--out", keyed); !strings.Contains(summary, "exported 0 rows") {
		t.Errorf("summary with --keys of a pair never traded: %s", summary)
	}
	// Bad flags say which, and write nothing.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	for _, args := range [][]string{{"--format", "xlsx"}, {"--format", "fills", "--method", "fofo"}, {"--format", "fills", "--from", "someday"},
		{"--format", "fills", "--from", "2024-03-05", "--to", "2024-03-01"}, {"--format", "fills", "--to", "someday"},
		{"--format", "fills", "--keys", "binance/USDT-BTC,nokey"}, {"--format", "fills", "--keys", "binance/BTC"},
		{"--format", "fills", "--scope", "global"}, {"--format", "fills", "--timezone", "Mars/Base"}} {
		_, errOut, code := auditRun(t, append(append([]string{"export", "--data", data}, args...), "--out", bad)...)
		if code == 0 || !strings.Contains(errOut, args[len(args)-2]) {
			t.Errorf("export %v: exit %d %s", args, code, errOut)
		}
		if _, err := os.Stat(bad); err == nil {
			t.Errorf("export %v wrote a file", args)
		}
	}
}

// asOf on the API reads an imported history by trade time, as replay
// --until does (replay_tradetime_test.go's figures).
func TestAsOfReadsImportedHistoryByTradeTime(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	data := filepath.Join(t.TempDir(), "data")
	if _, warn, err := importRun(t, "import", "--data", data, "--from", gunbotHistoryDir); err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	ctx := context.Background()
	d, err := OpenDataDir(ctx, data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runner := projections.NewRunner(d.Store)
	ledger := projections.NewLedger(domain.LOFO)
	runner.Register(ledger)
	if err := runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	clock := domain.NewManualClock(time.Now())
	srv := tlhttp.NewServer()
	srv.Clock, srv.Store, srv.Runner, srv.Ledger, srv.States = clock, d.Store, runner, ledger, projections.NewStates(d.Store)
	srv.Auth = &tlhttp.Authenticator{Secret: d.JWTSecret, TokenTTL: time.Hour, Clock: clock}
	api := srv.Handler()
	token, _ := srv.Auth.IssueToken("tester")
	for _, c := range []struct {
		asOf string
		pnl  float64
	}{{"2024-03-01T23:59:59Z", 0}, {"2024-03-02T23:59:59Z", 10}, {"1709650800000", 35}} {
		req := httptest.NewRequest("POST", "/api/v1/pnl/overview?asOf="+c.asOf, strings.NewReader(`{"timezone":"UTC","keys":["All"]}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var o struct {
			Total struct {
				Pnl float64 `json:"pnl"`
			} `json:"total"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &o) != nil || o.Total.Pnl != c.pnl {
			t.Errorf("overview as of %s: %d pnl %v, want %v (%s)", c.asOf, rec.Code, o.Total.Pnl, c.pnl, rec.Body)
		}
		if rec.Header().Get(tlhttp.AsOfHeader) == "" {
			t.Errorf("as of %s: no %s header", c.asOf, tlhttp.AsOfHeader)
		}
	}
}
