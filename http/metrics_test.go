package http

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/projections"
)

// TestReadyz: /readyz is 200 once the projections have applied the log and
// the store accepts writes (its first append ran the integrity check); 503
// while the projections have not replayed the log, and once the store
// refuses writes.
func TestReadyz(t *testing.T) {
	ts := newTestServer(t)
	status, body := ts.do("GET", "/readyz", nil, "")
	if status != 200 || !strings.Contains(string(body), `"status":"ready"`) {
		t.Fatalf("/readyz = %d %s, want 200 ready", status, body)
	}

	// A runner that has not replayed the log: not ready.
	s := NewServer()
	s.Store, s.Runner = ts.Store, projections.NewRunner(ts.Store)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "catching up") {
		t.Fatalf("/readyz before the replay = %d %s, want 503", rec.Code, rec.Body)
	}

	ts.Store.Close()
	if status, body := ts.do("GET", "/readyz", nil, ""); status != 503 || !strings.Contains(string(body), "does not accept writes") {
		t.Fatalf("/readyz with the store closed = %d %s, want 503", status, body)
	}
}
