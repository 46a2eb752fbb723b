package http

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestAsOfBusy: while the server builds as many past states as it may, a
// read that needs another is answered 503 with Retry-After; a client that
// leaves cancels the build its read started.
func TestAsOfBusy(t *testing.T) {
	var gated *snaptest.GatedStore
	var states *projections.States
	ts := newBooksServer(t, false, func(ts *testServer) {
		gated = snaptest.NewGatedStore(ts.Store)
		states = projections.NewStates(gated)
		states.MaxBuilds, states.MaxQueued = 1, 0
		ts.Server.States = states
	})
	overview := func(ctx context.Context, asOf int64) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("%s/api/v1/pnl/overview?asOf=%d", ts.URL, asOf),
			strings.NewReader(`{"timezone":"UTC","keys":["All"]}`))
		req.Header.Set("Authorization", bearer(ts.Token))
		req.Header.Set("Content-Type", "application/json")
		return http.DefaultClient.Do(req)
	}
	ctx, leave := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		resp, err := overview(ctx, bkAt(1, 0).UnixMilli())
		if err == nil {
			resp.Body.Close()
		}
		first <- err
	}()
	for gated.Started.Load() == 0 {
		runtime.Gosched()
	}
	resp, err := overview(context.Background(), bkAt(2, 0).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a second past state while one builds: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	leave()
	<-first
	for gated.Cancelled.Load() == 0 || states.Pending() != 0 {
		runtime.Gosched()
	}
	if ts.Server.States.Builds() != 0 {
		t.Fatal("the build of a client that left was kept")
	}
	// With the gate open, the same read is answered.
	close(gated.Gate)
	status, body := ts.do("POST", fmt.Sprintf("/api/v1/pnl/overview?asOf=%d", bkAt(2, 0).UnixMilli()), map[string]any{"timezone": "UTC", "keys": []string{"All"}}, ts.Token)
	if status != 200 {
		t.Fatalf("then: %d %s", status, body)
	}
}
