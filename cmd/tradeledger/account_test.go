package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/engine"
)

// syncCycle moves the clock past the account sync's interval and runs a
// core cycle: the sync reads the paper account's new activity and checks
// its balances.
func (e *tradingE2E) syncCycle() {
	e.t.Helper()
	e.clock.Advance(engine.DefaultSyncInterval)
	e.cycle("60000")
}

// TestAccountReconciledOverHTTP: a paper account through serve's wiring:
// activity outside the service posted to paper/activity (bad input a 400
// naming the field, nothing recorded), read by the cycle's sync, the
// account reconciled to zero difference over HTTP; a drift makes a
// discrepancy naming the asset and the amount on the reconciliation, on
// /healthz, in the metrics and on reconciliation/accounts; asOf before it
// answers ok; the command line's reconcile and sync agree and record
// nothing twice.
func TestAccountReconciledOverHTTP(t *testing.T) {
	e := startTradingE2E(t)
	e.startManualPair("binance", "USDT-BTC")
	e.cycle("60000") // the first cycle's sync opens the account
	// What happens from now on is after the opening (a fact at the
	// opening's very millisecond is in its balances).
	e.clock.Advance(time.Second)
	start := e.clock.Now().UnixMilli()
	e.order("trade/buy/market", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01})
	e.syncCycle()
	e.clock.Advance(time.Second)

	head := e.head()
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"exchange": "binance", "kind": "deposit", "asset": "ETH"}, "amount"},
		{map[string]any{"exchange": "binance", "kind": "gift", "asset": "ETH", "amount": "1"}, "kind"},
		{map[string]any{"exchange": "nowhere", "kind": "deposit", "asset": "ETH", "amount": "1"}, "exchange"},
		{map[string]any{"exchange": "binance", "kind": "withdrawal", "asset": "USDT", "amount": "1000000"}, "amount"},
		{map[string]any{"exchange": "binance", "kind": "trade", "pair": "USDT-BTC", "side": "buy", "amount": "0.1", "price": "x"}, "price"},
		{map[string]any{"exchange": "binance", "kind": "deposit", "asset": "ETH", "amount": map[string]any{}}, "amount"},
	} {
		status, out := e.post("paper/activity", bad.body, "")
		if msg, _ := out["message"].(string); status != 400 || !strings.Contains(msg, bad.field) {
			t.Errorf("paper/activity %v = %d %v, want 400 naming %s", bad.body, status, out, bad.field)
		}
	}
	if h := e.head(); h != head {
		t.Fatalf("refused activity appended %d events", h-head)
	}
	for _, a := range []map[string]any{
		{"exchange": "binance", "kind": "deposit", "asset": "ETH", "amount": "2"},
		{"exchange": "binance", "kind": "withdrawal", "asset": "USDT", "amount": "100", "fee": "1"},
		{"exchange": "binance", "kind": "trade", "pair": "USDT-ETH", "side": "sell", "amount": "0.5", "price": "3000", "fee": "1.5"},
		{"exchange": "binance", "kind": "conversion", "asset": "ETH", "amount": "0.001", "toAsset": "BNB", "toAmount": "0.0049", "fee": "0.0001"},
	} {
		if status, out := e.post("paper/activity", a, ""); status != 200 || out["status"] != "success" || out["id"] == "" {
			t.Fatalf("paper/activity %v = %d %v", a, status, out)
		}
	}
	// Nothing reaches the account's log before the sync reads it.
	if n := e.accountEvents()[domain.TypeDeposit]; n != 0 {
		t.Fatalf("the deposit is in the log before a sync (%d)", n)
	}
	e.syncCycle()
	e.syncCycle()
	got := e.accountEvents()
	for _, typ := range []string{domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion} {
		if got[typ] != 1 {
			t.Errorf("%d %s in the account's log, want 1 (%v)", got[typ], typ, got)
		}
	}
	q := "reconciliation?exchange=binance&from=" + strconv.FormatInt(start, 10)
	status, rec := e.get(q)
	if status != 200 || rec["status"] != "ok" {
		t.Fatalf("%s = %d %v", q, status, rec)
	}
	for _, a := range rec["assets"].([]any) {
		if d := a.(map[string]any)["difference"].(float64); d != 0 {
			t.Errorf("%v differs", a)
		}
	}
	if act := rec["activity"].(map[string]any); act["externalTrades"] != 1.0 || act["deposits"] != 1.0 || act["withdrawals"] != 1.0 || act["conversions"] != 1.0 || act["trades"] != 2.0 {
		t.Errorf("activity %v", act)
	}
	if f := rec["fills"].(map[string]any); f["matched"] != 1.0 || f["extra"] != 0.0 {
		t.Errorf("fills %v", f)
	}
	// The activity as the log holds it: the trade by hand marked
	// external, newest first, each fact once.
	status, act := e.get("reconciliation/activity?exchange=binance&from=" + strconv.FormatInt(start, 10))
	facts, _ := act["facts"].([]any)
	kinds := map[string]int{}
	for i, f := range facts {
		fact := f.(map[string]any)
		kinds[fact["kind"].(string)]++
		if ext := fact["external"].(bool); ext != (fact["kind"] == "trade") {
			t.Errorf("fact %v: external %v", fact, ext)
		}
		if i > 0 && fact["position"].(float64) > facts[i-1].(map[string]any)["position"].(float64) && fact["time"] == facts[i-1].(map[string]any)["time"] {
			t.Errorf("facts not newest first: %v", facts)
		}
	}
	if status != 200 || len(facts) != 4 || kinds["trade"] != 1 || kinds["deposit"] != 1 || kinds["withdrawal"] != 1 || kinds["conversion"] != 1 || act["more"] != false {
		t.Errorf("reconciliation/activity = %d %v", status, act)
	}
	if status, act := e.get("reconciliation/activity?exchange=binance&limit=2&from=" + strconv.FormatInt(start, 10)); status != 200 || len(act["facts"].([]any)) != 2 || act["more"] != true {
		t.Errorf("reconciliation/activity limit 2 = %d %v", status, act)
	}
	beforeDrift := e.clock.Now().UnixMilli()
	e.clock.Advance(time.Second)

	if status, out := e.post("paper/activity", map[string]any{"exchange": "binance", "kind": "drift", "asset": "BTC", "amount": "0.25"}, ""); status != 200 {
		t.Fatalf("drift = %d %v", status, out)
	}
	e.syncCycle()
	e.syncCycle()
	status, rec = e.get(q)
	if status != 200 || rec["status"] != "discrepancy" {
		t.Fatalf("after a drift %s = %d %v", q, status, rec)
	}
	for _, a := range rec["assets"].([]any) {
		row := a.(map[string]any)
		if d := row["difference"].(float64); (d != 0) != (row["asset"] == "BTC") || (row["asset"] == "BTC" && d != 0.25) {
			t.Errorf("after a drift of 0.25 BTC: %v", row)
		}
	}
	if status, body := serveGet(t, e.m, "/healthz", ""); status != 200 || !strings.Contains(body, `"degraded"`) || !strings.Contains(body, "BTC differs by 0.25") {
		t.Errorf("/healthz = %d %s", status, body)
	}
	if _, body := serveGet(t, e.m, "/metrics", e.token); !strings.Contains(body, "tradeledger_balance_discrepancies 1") ||
		!strings.Contains(body, `tradeledger_balance_discrepancy{asset="BTC",exchange="binance"} 0.25`) {
		t.Errorf("/metrics has no discrepancy:\n%.2000s", body)
	}
	status, accs := e.get("reconciliation/accounts")
	if status != 200 || !strings.Contains(mustJSON(t, accs), `"since"`) || !strings.Contains(mustJSON(t, accs), `"status":"discrepancy"`) {
		t.Errorf("reconciliation/accounts = %d %v", status, accs)
	}
	status, past := e.get(q + "&asOf=" + strconv.FormatInt(beforeDrift, 10))
	if status != 200 || past["status"] != "ok" {
		t.Errorf("asOf before the drift = %d %v", status, past)
	}
	for _, bad := range []string{"reconciliation", "reconciliation?exchange=nowhere", "reconciliation?exchange=binance&from=yesterday", "reconciliation?exchange=binance&asOf=x"} {
		if status, out := e.get(bad); status != 400 {
			t.Errorf("%s = %d %v, want 400", bad, status, out)
		}
	}

	// The command line, on the same data dir once serve stopped: the
	// same answer; a sync from the start records nothing new.
	before := e.accountEvents()
	dir := e.m.Config.Data
	e.m.Close()
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), []string{"reconcile", "--data", dir, "--exchange", "binance", "--from", strconv.FormatInt(start, 10), "--json"},
		strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, errOut.String())
	}
	var cli struct {
		Status   string
		Activity domain.ActivityCounts
	}
	if err := json.Unmarshal(out.Bytes(), &cli); err != nil || cli.Status != domain.ReconciledDiscrepancy || cli.Activity.Deposits != 1 {
		t.Fatalf("reconcile --json: %v %s", err, out.String())
	}
	out.Reset()
	if err := Run(context.Background(), []string{"sync", "--data", dir, "--exchange", "binance", "--since", time.UnixMilli(start).UTC().Format(time.RFC3339)},
		strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("sync: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "0 new") || !strings.Contains(out.String(), "histories continued from where an earlier sync had read to") ||
		!strings.Contains(out.String(), "0 deposits, 0 withdrawals") {
		t.Errorf("sync again: %s", out.String())
	}
	out.Reset()
	_ = Run(context.Background(), []string{"reconcile", "--data", dir, "--exchange", "binance", "--from", strconv.FormatInt(start, 10)},
		strings.NewReader(""), &out, &errOut)
	if !strings.Contains(out.String(), "1 deposit, 1 withdrawal,") {
		t.Errorf("reconcile's activity line, counted in words: %s", out.String())
	}
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	after := countTypes(t, d.Store, domain.AccountStream("binance"))
	for _, typ := range []string{domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion, domain.TypeBalanceDiscrepancy} {
		if after[typ] != before[typ] {
			t.Errorf("the command line recorded %d %s, had %d", after[typ], typ, before[typ])
		}
	}
	if err := Run(context.Background(), []string{"sync", "--data", dir, "--exchange", "binance"}, strings.NewReader(""), &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "--since") {
		t.Errorf("sync without --since: %v", err)
	}
	for _, args := range [][]string{{"sync", "--since", "2024-01-01"}, {"reconcile"}} {
		for _, exchange := range []string{"", "nowhere"} {
			a := append([]string{args[0], "--data", dir}, args[1:]...)
			if exchange != "" {
				a = append(a, "--exchange", exchange)
			}
			if err := Run(context.Background(), a, strings.NewReader(""), &out, &errOut); err == nil || !strings.Contains(err.Error(), "--exchange") {
				t.Errorf("%v: %v, want a refusal naming --exchange", a, err)
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// accountEvents counts the paper exchange binance's account events by type.
func (e *tradingE2E) accountEvents() map[string]int {
	return countTypes(e.t, e.m.DataDir.Store, domain.AccountStream("binance"))
}

func countTypes(t *testing.T, store domain.EventStore, stream string) map[string]int {
	t.Helper()
	out := map[string]int{}
	it := store.ReadStream(context.Background(), stream, 0, 0)
	defer it.Close()
	for it.Next() {
		out[it.Event().Type]++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
