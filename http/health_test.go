package http

import (
	"context"
	"errors"
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

// fakeSink is a ClickHouse sink as /healthz reads it.
type fakeSink struct {
	err     error
	stopped bool
}

func (s *fakeSink) Lag(context.Context) (uint64, error) { return 0, nil }
func (s *fakeSink) Err() error                          { return s.err }
func (s *fakeSink) Stopped() bool                       { return s.stopped }

// A sink waiting out ClickHouse being down is reported but the service is
// "ok"; a sink that stopped for good (its rows refused) degrades it with
// the reason, since nothing but an operator brings it back.
func TestHealthDegradedWhenTheSinkStopped(t *testing.T) {
	sink := &fakeSink{}
	ts := newTestServer(t, func(ts *testServer) { ts.Server.Sink = sink })
	health := func() healthResponse {
		status, body := ts.do("GET", "/healthz", nil, "")
		if status != 200 {
			t.Fatalf("healthz = %d %s, want 200", status, body)
		}
		return decodeBody[healthResponse](t, body)
	}
	if h := health(); h.Status != "ok" || h.SinkError != "" {
		t.Fatalf("healthy sink: %+v", h)
	}
	sink.err = errors.New("dial tcp 127.0.0.1:9000: connection refused")
	if h := health(); h.Status != "ok" || h.SinkError != "clickhouse unavailable" {
		t.Fatalf("transient sink failure: %+v, want ok with sinkError", h)
	}
	sink.err, sink.stopped = errors.New("insert into orders7: code 16: no such column"), true
	h := health()
	if h.Status != "degraded" || !strings.Contains(h.Reason, "sink stopped") || !strings.Contains(h.SinkError, "sink stopped") {
		t.Fatalf("stopped sink: %+v, want degraded naming the sink", h)
	}
	if strings.Contains(h.Reason, "no such column") {
		t.Fatalf("stopped sink: %+v, the details belong in the log", h)
	}
}
