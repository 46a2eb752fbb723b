package http

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// TestScopedTokens: a read token reads and is refused every change (403,
// nothing written); a trade token trades but does not configure; revoking
// a token refuses it at once (401); the login's token keeps full access;
// a token whose id was never recorded is refused.
func TestScopedTokens(t *testing.T) {
	tokens := projections.NewTokens()
	ts := newTestServer(t, func(ts *testServer) {
		ts.Runner.Register(tokens)
		ts.Server.Auth.Grants = tokens.Active
	})
	issue := func(name string, scope domain.Scope, record bool) (token, id string) {
		t.Helper()
		token, id, exp, err := ts.Server.Auth.IssueScoped(name, scope, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if record {
			ts.appendEvent(domain.StreamTokens, domain.NewEvent(ts.Clock, domain.TypeTokenCreated, domain.TokenCreated{Name: name, Scope: scope, ID: id, Expires: exp.UnixMilli()}))
		}
		return token, id
	}
	read, readID := issue("auditor", domain.ScopeRead, true)
	trade, _ := issue("bot", domain.ScopeTrade, true)
	unrecorded, _ := issue("ghost", domain.ScopeAdmin, false)

	pairAdd := map[string]any{"pair": "USDT-BTC", "exchange": "binance"}
	order := map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 1, "price": 1}}
	head := len(ts.events())
	for _, c := range []struct {
		token        string
		method, path string
		body         any
		want         int // 0: anything but 401/403
	}{
		{read, "GET", "/api/v1/auth/status", nil, 200},
		{read, "GET", "/api/v1/time", nil, 200},
		{read, "POST", "/api/v1/config/pair/add", pairAdd, 403},
		{read, "POST", "/api/v1/system/start", nil, 403},
		{read, "POST", "/api/v1/trade/buy", order, 403},
		{read, "POST", "/api/v1/files/strategy/write", map[string]any{"filename": "a.js", "document": "x"}, 403},
		{trade, "POST", "/api/v1/config/pair/add", pairAdd, 403},
		{trade, "POST", "/api/v1/trade/buy", order, 0}, // past the scope check (no trader here: 503)
		{trade, "GET", "/api/v1/time", nil, 200},
		{unrecorded, "GET", "/api/v1/time", nil, 401},
		{ts.Token, "POST", "/api/v1/config/pair/add", pairAdd, 0},
	} {
		status, body := ts.do(c.method, c.path, c.body, c.token)
		if c.want == 0 && (status == 401 || status == 403) || c.want != 0 && status != c.want {
			t.Errorf("%s %s with %.12s… = %d %s, want %d", c.method, c.path, c.token, status, body, c.want)
		}
		if c.want == 403 && !strings.Contains(string(body), "scope") {
			t.Errorf("%s %s: 403 body %s does not name the scope", c.method, c.path, body)
		}
		if c.want == 403 && len(ts.events()) != head {
			t.Fatalf("%s %s refused with 403 but wrote events", c.method, c.path)
		}
	}

	// auth/scope tells each token its own scope (a dashboard showing
	// another instance refuses a token that can write there).
	for _, c := range []struct {
		token string
		scope string
	}{{read, "read"}, {trade, "trade"}, {ts.Token, "admin"}} {
		status, body := ts.do("GET", "/api/v1/auth/scope", nil, c.token)
		if got := decodeBody[authScopeResponse](t, body).Scope; status != 200 || string(got) != c.scope {
			t.Errorf("auth/scope with the %s token = %d %s, want scope %s", c.scope, status, body, c.scope)
		}
	}

	ts.appendEvent(domain.StreamTokens, domain.NewEvent(ts.Clock, domain.TypeTokenRevoked, domain.TokenRevoked{Name: "auditor", ID: readID}))
	if status, _ := ts.do("GET", "/api/v1/time", nil, read); status != 401 {
		t.Fatalf("revoked token = %d, want 401", status)
	}
	ts.Clock.Advance(2 * time.Hour)
	if status, _ := ts.do("GET", "/api/v1/time", nil, trade); status != 401 {
		t.Fatalf("expired token = %d, want 401", status)
	}
}

// TestEveryRouteHasAScope: reads are read, trading is trade, and the
// rest is admin; every POST that a read token may call only reads.
func TestEveryRouteHasAScope(t *testing.T) {
	s := NewServer()
	router := s.Handler().(*mux.Router)
	seen := 0
	router.Walk(func(r *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err1 := r.GetPathTemplate()
		methods, err2 := r.GetMethods()
		if err1 != nil || err2 != nil {
			return nil
		}
		for _, m := range methods {
			key := m + " " + path
			if sc, ok := routeScopes[key]; ok {
				seen++
				if strings.HasPrefix(path, "/api/v1/trade/") != (sc == domain.ScopeTrade) {
					t.Errorf("%s has scope %s", key, sc)
				}
			}
		}
		return nil
	})
	if seen != len(routeScopes) {
		t.Errorf("routeScopes names %d routes, the router serves %d of them", len(routeScopes), seen)
	}
}

// TestUnknownTokenCatchesUpOnce: a signed token that Grants does not know
// runs CatchUp and is asked about again (a token another process created
// a moment ago is then accepted); one still unknown after it is refused
// without running CatchUp again on its next use.
func TestUnknownTokenCatchesUpOnce(t *testing.T) {
	clock := domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	a := &Authenticator{Secret: []byte(strings.Repeat("s", 32)), TokenTTL: time.Hour, Clock: clock}
	fresh, freshID, _, err := a.IssueScoped("fresh", domain.ScopeRead, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ghost, _, _, err := a.IssueScoped("ghost", domain.ScopeRead, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	a.Grants = func(id string, _ time.Time) (domain.Scope, bool) { return domain.ScopeRead, known[id] }
	catchUps := 0
	a.CatchUp = func(context.Context) error {
		catchUps++
		known[freshID] = true // the other process's TokenCreated, applied now
		return nil
	}
	if _, scope, err := a.VerifyScoped(fresh); err != nil || scope != domain.ScopeRead || catchUps != 1 {
		t.Fatalf("a token created a moment ago: scope %q, err %v, %d catch-ups; want read, nil, 1", scope, err, catchUps)
	}
	for i := range 3 {
		if _, _, err := a.VerifyScoped(ghost); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Fatalf("unknown token, use %d: err %v, want EUNAUTHORIZED", i, err)
		}
	}
	if catchUps != 2 {
		t.Fatalf("%d catch-ups after three uses of an unknown token, want 1 more", catchUps)
	}
}
