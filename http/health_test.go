package http

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// writeFailingStore is the test server's SQLite store reporting a write
// failure through WriteErr, as sqlite.Store does after a full disk, a
// failed fdatasync or a failed integrity check (eventstore/sqlite's
// TestWriteErr* show those).
type writeFailingStore struct {
	*sqlite.Store
	err atomic.Pointer[domain.Error]
}

func (s *writeFailingStore) WriteErr() error {
	if e := s.err.Load(); e != nil {
		return e
	}
	return s.Store.WriteErr()
}

// /healthz stays 200 but says "degraded", with the reason, while the
// store's writes fail, and "ok" again once they succeed.
func TestHealthDegradedWhileWritesFail(t *testing.T) {
	var store *writeFailingStore
	ts := newTestServer(t, func(ts *testServer) {
		store = &writeFailingStore{Store: ts.Store}
		ts.Server.Store = store
	})
	health := func() healthResponse {
		status, body := ts.do("GET", "/healthz", nil, "")
		if status != 200 {
			t.Fatalf("healthz = %d %s, want 200", status, body)
		}
		return decodeBody[healthResponse](t, body)
	}
	if h := health(); h.Status != "ok" || h.Reason != "" {
		t.Fatalf("healthy store: %+v", h)
	}
	store.err.Store(domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: database or disk is full"))
	if h := health(); h.Status != "degraded" || !strings.Contains(h.Reason, "disk is full") {
		t.Fatalf("full disk: %+v, want degraded naming it", h)
	}
	store.err.Store(domain.Errorf(domain.EINTERNAL, "event log /secret/path/events.db failed its integrity check: page 7"))
	if h := health(); h.Status != "degraded" || !strings.Contains(h.Reason, "integrity") || strings.Contains(h.Reason, "/secret/path") {
		t.Fatalf("integrity verdict: %+v, want degraded, without the file's path", h)
	}
	store.err.Store(nil)
	if h := health(); h.Status != "ok" {
		t.Fatalf("after recovery: %+v", h)
	}
}
