package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

const dashboardHistoryDir = "../../testdata/dashboard-history"

// The issue-36 scenario: paper trades on binance/USDT-BTC in 2026, then an
// older Gunbot history of the same pair (testdata/dashboard-history,
// March 2024) imported into the live data dir. Every read matches lots in
// trade time, so the 2024 fills are matched among 2024 lots only, as if the
// history had been recorded first:
//
//	9001 buy 0.01 @ 60000 (03-09 10:00)   lot A {0.01, 600}
//	9002 sell 0.005 @ 62000 (03-09 23:30) takes 0.005 of A (300): +10
//	9003 buy 0.01 @ 58000 (03-10 02:00)   lot B {0.01, 580}
//	9004 sell 0.01 @ 57500 (03-10 12:00)  LOFO takes B (580): −5
//
// In log order (before issue 36) 9002 took the cheaper lot the 2026 paper
// buy had left, and the order records, the overview and the pair's total
// said otherwise than the reports and asOf. Now the order records, the
// overview's days and total, the pair's total, the realized report and
// the overview as of 2024-03-10 agree.
func TestImportedHistoryFoldsInTradeTime(t *testing.T) {
	e := startTradingE2E(t) // a live service on a manual clock at 2026-03-02
	e.startManualPair("binance", "USDT-BTC")
	e.cycle("59000")
	e.order("trade/buy/market", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01})
	e.cycle("61000")
	e.order("trade/sell/market", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.005})

	// The older history, imported while the service runs: it reads the
	// imported events as they come (late fills, folded again).
	if _, warn, err := importRun(t, "import", "--data", e.m.Config.Data, "--from", dashboardHistoryDir); err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	head, err := e.m.DataDir.Store.(interface{ Refresh() (uint64, error) }).Refresh() // another process's appends
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.m.Runner.WaitFor(ctx, head); err != nil {
		t.Fatalf("the service did not read the import: %v", err)
	}

	key := url.QueryEscape("binance/USDT-BTC")
	status, page := exactGet(e, "orders/page?key="+key+"&page=0&pageSize=100")
	if status != 200 {
		t.Fatalf("orders/page = %d %v", status, page)
	}
	pnlOf := map[int64]decimal.Decimal{} // sells' pnl by trade time (imported ids are derived from the source)
	var recordsPnl decimal.Decimal
	for _, r := range page["data"].([]any) {
		rec := r.(map[string]any)
		p := decimalOf(t, rec["pnl"])
		recordsPnl = recordsPnl.Add(p)
		if rec["type"] == "sell" {
			pnlOf[intOf(t, rec["time"])] = p
		}
	}
	const sell9002, sell9004 = 1710027000000, 1710072000000 // their trade times
	if pnlOf[sell9002] != decimal.DecimalFromInt(10) || pnlOf[sell9004] != decimal.DecimalFromInt(-5) {
		t.Fatalf("order records: 9002 pnl %s, 9004 pnl %s; want 10 and −5 (lots matched in trade time)", pnlOf[sell9002], pnlOf[sell9004])
	}

	// The pair's total (the Pair page) and the overview sum the records.
	status, total := exactGet(e, "pnl/total?key="+key)
	if status != 200 || decimalOf(t, total["pnl"]) != recordsPnl {
		t.Fatalf("pnl/total = %d %v, want pnl %s (the records' sum)", status, total, recordsPnl)
	}
	overview := func(asOf string) map[string]decimal.Decimal {
		t.Helper()
		path := "pnl/overview"
		if asOf != "" {
			path += "?asOf=" + asOf
		}
		status, o := exactDo(e, "POST", path, `{"timezone":"UTC","keys":["binance/USDT-BTC"]}`)
		if status != 200 {
			t.Fatalf("%s = %d %v", path, status, o)
		}
		days := map[string]decimal.Decimal{"total": decimalOf(t, o["total"].(map[string]any)["pnl"])}
		for _, d := range o["dailyHistory"].([]any) {
			day := d.(map[string]any)
			days[day["date"].(string)] = decimalOf(t, day["pnl"])
		}
		return days
	}
	now := overview("")
	if now["total"] != recordsPnl || now["2024-03-09"] != decimal.DecimalFromInt(10) || now["2024-03-10"] != decimal.DecimalFromInt(-5) {
		t.Fatalf("overview now: %v, want total %s, 2024-03-09 +10, 2024-03-10 −5", now, recordsPnl)
	}
	then := overview("2024-03-10T23:59:59Z")
	if then["2024-03-09"] != now["2024-03-09"] || then["2024-03-10"] != now["2024-03-10"] || then["total"] != decimal.DecimalFromInt(5) {
		t.Fatalf("overview as of 2024-03-10: %v; now: %v (the same days, total +5)", then, now)
	}

	// The realized report under the same method: each disposal's gain is
	// its fill's pnl, and they add up to the overview's total.
	status, rep := exactGet(e, "reports/realized?method=lofo&currency=none&keys="+key+"&pageSize=1000")
	if status != 200 {
		t.Fatalf("reports/realized = %d %v", status, rep)
	}
	var gains decimal.Decimal
	for _, r := range rep["rows"].([]any) {
		d := r.(map[string]any)
		g := decimalOf(t, d["gain"])
		gains = gains.Add(g)
		if at := intOf(t, d["disposedAt"]); g != pnlOf[at] {
			t.Errorf("realized: the disposal at %d gains %s, its record says %s", at, g, pnlOf[at])
		}
	}
	if gains != now["total"] {
		t.Fatalf("realized gains %s, overview total %s: the two pages disagree", gains, now["total"])
	}
}

// exactGet is e.get with the answer's numbers kept exact (json.Number).
func exactGet(e *tradingE2E, path string) (int, map[string]any) { return exactDo(e, "GET", path, "") }

// exactDo sends a request with a JSON body (none when "") and decodes the
// answer with its numbers as json.Number.
func exactDo(e *tradingE2E, method, path, body string) (int, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.m.Server.URL()+"/api/v1/"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	out := map[string]any{}
	if err := dec.Decode(&out); err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	return resp.StatusCode, out
}

func intOf(t *testing.T, v any) int64 {
	t.Helper()
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return n
}

// decimalOf reads a JSON number of an answer exactly.
func decimalOf(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	d, err := decimal.ParseDecimal(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return d
}
