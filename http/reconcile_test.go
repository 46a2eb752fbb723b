package http

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/projections"
)

// fakeReconciler answers the reconciliation routes with what it was given
// and remembers the window asked for.
type fakeReconciler struct {
	rec            domain.Reconciliation
	views          []domain.AccountView
	open           []domain.BalanceDiscrepancy
	from, to, asOf int64
	facts          []domain.AccountFact
	limit          int
}

func (f *fakeReconciler) Reconcile(_ context.Context, x string, from, to int64) (domain.Reconciliation, error) {
	f.from, f.to = from, to
	r := f.rec
	r.Exchange = x
	return r, nil
}

func (f *fakeReconciler) ReconcileAsOf(_ context.Context, x string, from, to, asOf int64) (domain.Reconciliation, error) {
	f.from, f.to, f.asOf = from, to, asOf
	r := f.rec
	r.Exchange = x
	return r, nil
}

func (f *fakeReconciler) Activity(_ context.Context, x string, from, to int64, limit int) ([]domain.AccountFact, bool, error) {
	f.from, f.to, f.limit = from, to, limit
	if len(f.facts) > limit {
		return f.facts[:limit], true, nil
	}
	return f.facts, false, nil
}

func (f *fakeReconciler) Accounts() []domain.AccountView             { return f.views }
func (f *fakeReconciler) Discrepancies() []domain.BalanceDiscrepancy { return f.open }

// TestReconciliationRoutes: the reconciliation answers the issue's shape
// (checked against openapi.json), its window and asOf read as documented,
// bad parameters are 400s naming them; reconciliation/accounts says since
// when a discrepancy is open; /healthz is degraded while one is.
func TestReconciliationRoutes(t *testing.T) {
	n := func(s string) decimal.Number { return decimal.Number(decimal.MustDecimal(s)) }
	f := &fakeReconciler{
		rec: domain.Reconciliation{Status: domain.ReconciledDiscrepancy, CheckedAt: "2026-01-02T03:04:05.000Z",
			Assets: []domain.AssetReconciliation{{Asset: "BTC", Ledger: n("0.5"), Exchange: n("0.75"), Difference: n("0.25")}},
			Fills:  domain.FillReconciliation{Matched: 3, Missing: 1}, Activity: domain.ActivityCounts{Trades: 5, ExternalTrades: 1, Deposits: 1}},
		open: []domain.BalanceDiscrepancy{{Account: "binance", Asset: "BTC", Ledger: decimal.MustDecimal("0.5"), Exchange: decimal.MustDecimal("0.75"),
			Difference: decimal.MustDecimal("0.25"), Since: testEpoch.UnixMilli()}},
	}
	f.views = []domain.AccountView{{Exchange: "binance", Opened: true, Opening: domain.AccountOpened{Exchange: "binance", Time: testEpoch.UnixMilli() - 3600_000},
		Implied: map[string]decimal.Decimal{"BTC": decimal.MustDecimal("0.5")}, Observed: []domain.AssetBalance{{Asset: "BTC", Available: decimal.MustDecimal("0.75")}},
		ObservedAt: testEpoch.UnixMilli(), Open: map[string]domain.BalanceDiscrepancy{"BTC": f.open[0]},
		Covered: map[string][]domain.Span{"deposits": {{From: 1, Through: testEpoch.UnixMilli()}}}}}
	ts := newTestServer(t, func(ts *testServer) { ts.Server.Reconciler = f })

	status, body := ts.do("GET", "/api/v1/reconciliation?exchange=binance", nil, ts.Token)
	var got map[string]any
	if status != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("reconciliation = %d %s", status, body)
	}
	for _, k := range []string{"exchange", "status", "checkedAt", "assets", "fills", "activity"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s in %s", k, body)
		}
	}
	if len(got) != 6 {
		t.Errorf("fields beyond the issue's shape: %s", body)
	}
	if !strings.Contains(string(body), `"difference":0.25`) || got["exchange"] != "binance" {
		t.Errorf("body %s", body)
	}
	if now := ts.Clock.Now().UnixMilli(); f.from != now-DefaultReconcileWindow.Milliseconds() || f.to != 0 {
		t.Errorf("default window %d..%d", f.from, f.to)
	}
	if status, _ := ts.do("GET", "/api/v1/reconciliation?exchange=binance&from=2026-01-01&to=2026-01-01", nil, ts.Token); status != 200 ||
		f.from != time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() || f.to != time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).UnixMilli() {
		t.Errorf("a date window: %d %d..%d", status, f.from, f.to)
	}
	asOf := testEpoch.Add(-time.Hour).UnixMilli()
	if status, _ := ts.do("GET", "/api/v1/reconciliation?exchange=binance&asOf="+time.UnixMilli(asOf).UTC().Format(time.RFC3339), nil, ts.Token); status != 200 || f.asOf != asOf {
		t.Errorf("asOf: %d %d", status, f.asOf)
	}
	for q, field := range map[string]string{"": "exchange", "?exchange=binance&from=soon": "from", "?exchange=binance&to=x": "to",
		"?exchange=binance&asOf=x": "asOf", "?exchange=binance&from=2026-01-02&to=2026-01-01": "to"} {
		status, body := ts.do("GET", "/api/v1/reconciliation"+q, nil, ts.Token)
		if status != 400 || !strings.Contains(string(body), field) {
			t.Errorf("%s = %d %s, want 400 naming %s", q, status, body, field)
		}
	}

	status, body = ts.do("GET", "/api/v1/reconciliation/accounts", nil, ts.Token)
	if status != 200 || !strings.Contains(string(body), `"since":"2026-01-02T03:04:05Z"`) || !strings.Contains(string(body), `"status":"discrepancy"`) ||
		!strings.Contains(string(body), `"history":"deposits"`) {
		t.Errorf("accounts = %d %s", status, body)
	}
	status, body = ts.do("GET", "/healthz", nil, "")
	if status != 200 || !strings.Contains(string(body), `"degraded"`) || !strings.Contains(string(body), "binance BTC differs by 0.25") {
		t.Errorf("healthz = %d %s", status, body)
	}
	f.open = nil
	if _, body := ts.do("GET", "/healthz", nil, ""); strings.Contains(string(body), "degraded") {
		t.Errorf("healthz without a discrepancy: %s", body)
	}

	f.facts = []domain.AccountFact{
		{Kind: "trade", External: true, Time: testEpoch.UnixMilli() - 1000, EventID: "e2", Position: 9, Actor: domain.ActorSync, Fact: json.RawMessage(`{"tradeId":"7"}`)},
		{Kind: "deposit", Time: testEpoch.UnixMilli() - 2000, EventID: "e1", Position: 8, Actor: domain.ActorSync, Fact: json.RawMessage(`{"id":"d1"}`)},
	}
	status, body = ts.do("GET", "/api/v1/reconciliation/activity?exchange=binance", nil, ts.Token)
	var act struct {
		Exchange string `json:"exchange"`
		Facts    []struct {
			Kind     string          `json:"kind"`
			External bool            `json:"external"`
			At       string          `json:"at"`
			Fact     json.RawMessage `json:"fact"`
		} `json:"facts"`
		More bool `json:"more"`
	}
	if status != 200 || json.Unmarshal(body, &act) != nil || len(act.Facts) != 2 || !act.Facts[0].External || act.Facts[0].At != "2026-01-02T03:04:04Z" ||
		string(act.Facts[0].Fact) != `{"tradeId":"7"}` || act.Facts[1].External || act.More {
		t.Errorf("activity = %d %s", status, body)
	}
	if now := ts.Clock.Now().UnixMilli(); f.from != now-DefaultActivityWindow.Milliseconds() || f.to != now+1 || f.limit != DefaultActivityLimit {
		t.Errorf("activity's default window %d..%d limit %d", f.from, f.to, f.limit)
	}
	if status, body := ts.do("GET", "/api/v1/reconciliation/activity?exchange=binance&limit=1", nil, ts.Token); status != 200 || !strings.Contains(string(body), `"more":true`) {
		t.Errorf("limit 1 = %d %s", status, body)
	}
	for q, field := range map[string]string{"": "exchange", "?exchange=binance&limit=0": "limit", "?exchange=binance&limit=1001": "limit",
		"?exchange=binance&from=soon": "from", "?exchange=binance&from=2026-01-02&to=2026-01-01": "to"} {
		status, body := ts.do("GET", "/api/v1/reconciliation/activity"+q, nil, ts.Token)
		if status != 400 || !strings.Contains(string(body), field) {
			t.Errorf("activity%s = %d %s, want 400 naming %s", q, status, body, field)
		}
	}
}

// fakePaper decides simulated activity against fixed balances.
type fakePaper struct{ simulated bool }

func (p fakePaper) Simulated(string) (bool, string) { return p.simulated, "bot.SIMULATOR is false" }

func (p fakePaper) DecideActivity(clock domain.Clock, a domain.PaperActivity) ([]domain.Event, error) {
	return domain.DecidePaperActivity(clock, a, func(string) decimal.Decimal { return decimal.MustDecimal("10") }, func(string) bool { return true })
}

// TestPaperActivityRoute: an admin's activity is recorded in the paper
// exchange's stream, amounts exactly as sent; bad input is a 400 naming
// the field and records nothing; a read token may not; an exchange on a
// real connector is a 409.
func TestPaperActivityRoute(t *testing.T) {
	tokens := projections.NewTokens()
	paper := &fakePaper{simulated: true}
	ts := newTestServer(t, func(ts *testServer) {
		ts.Runner.Register(tokens)
		ts.Server.Auth.Grants = tokens.Active
		ts.Server.Paper = paper
	})
	status, body := ts.do("POST", "/api/v1/paper/activity", map[string]any{"exchange": "binance", "kind": "deposit", "asset": "eth", "amount": "1.000000000001"}, ts.Token)
	if status != 200 || !strings.Contains(string(body), `"status":"success"`) {
		t.Fatalf("deposit = %d %s", status, body)
	}
	evs := ts.events()
	last := evs[len(evs)-1]
	var p domain.PaperActivity
	if last.Stream != domain.PaperStream("binance") || last.Decode(&p) != nil || p.Asset != "ETH" || p.Amount.String() != "1.000000000001" {
		t.Fatalf("recorded %s %s", last.Stream, last.Data)
	}
	status, _ = ts.do("POST", "/api/v1/paper/activity", `{"exchange":"binance","kind":"deposit","asset":"ETH","amount":0.1}`, ts.Token)
	if status != 200 {
		t.Errorf("a JSON number amount = %d", status)
	}
	head := len(ts.events())
	for _, c := range []struct {
		body  string
		field string
	}{
		{`{"exchange":"binance","kind":"withdrawal","asset":"ETH","amount":"11"}`, "amount"},
		{`{"exchange":"binance","kind":"deposit","asset":"ETH","amount":[1]}`, "amount"},
		{`{"exchange":"binance","kind":"trade","pair":"USDT-BTC","side":"buy","amount":"1","price":"-1"}`, "price"},
		{`{"exchange":"binance","kind":"deposit","asset":"ETH"}`, "amount"},
		{`{"kind":"deposit","asset":"ETH","amount":"1"}`, "exchange"},
		{`{"exchange":"binance","kind":"deposit","asset":"ETH","amount":"1","amount":"2"}`, "amount"},
	} {
		status, body := ts.do("POST", "/api/v1/paper/activity", c.body, ts.Token)
		if status != 400 || !strings.Contains(string(body), c.field) {
			t.Errorf("%s = %d %s, want 400 naming %s", c.body, status, body, c.field)
		}
	}
	read, id, exp, err := ts.Server.Auth.IssueScoped("auditor", domain.ScopeRead, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ts.appendEvent(domain.StreamTokens, domain.NewEvent(ts.Clock, domain.TypeTokenCreated, domain.TokenCreated{Name: "auditor", Scope: domain.ScopeRead, ID: id, Expires: exp.UnixMilli()}))
	if status, _ := ts.do("POST", "/api/v1/paper/activity", map[string]any{"exchange": "binance", "kind": "deposit", "asset": "ETH", "amount": "1"}, read); status != 403 {
		t.Errorf("a read token = %d, want 403", status)
	}
	paper.simulated = false
	if status, _ := ts.do("POST", "/api/v1/paper/activity", map[string]any{"exchange": "binance", "kind": "deposit", "asset": "ETH", "amount": "1"}, ts.Token); status != 409 {
		t.Errorf("a real exchange = %d, want 409", status)
	}
	if n := len(ts.events()); n != head+1 { // the token's event
		t.Errorf("refused activity appended %d events", n-head-1)
	}
}
