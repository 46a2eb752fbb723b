package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/projections/webhook"
)

// TestServeSendsWebhooks: a webhook added to the configuration through the
// API receives system/start, signed with the key its secretEnv names.
func TestServeSendsWebhooks(t *testing.T) {
	t.Setenv("HOOK_KEY", "shared secret")
	type hit struct{ kind, sig, body string }
	got := make(chan hit, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- hit{r.Header.Get("X-Tradeledger-Event"), r.Header.Get(webhook.SignatureHeader), string(b)}
	}))
	defer srv.Close()

	e := startTradingE2E(t)
	status, full := e.get("config/full")
	if status != 200 {
		t.Fatalf("config/full = %d", status)
	}
	cfg := full["config"].(map[string]any)
	cfg["notifications"] = map[string]any{"webhooks": []any{map[string]any{"url": srv.URL, "events": []any{"start", "stop"}, "secretEnv": "HOOK_KEY"}}}
	if status, out := e.post("config/update", map[string]any{"data": cfg}, ""); status != 200 {
		t.Fatalf("config/update = %d %v", status, out)
	}
	if status, out := e.post("system/start", nil, ""); status != 200 {
		t.Fatalf("system/start = %d %v", status, out)
	}
	select {
	case h := <-got:
		if h.kind != "start" || h.sig != webhook.Sign([]byte("shared secret"), []byte(h.body)) {
			t.Fatalf("webhook %+v", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook for system/start")
	}
}
