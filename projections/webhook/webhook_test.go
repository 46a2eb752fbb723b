package webhook

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// receive returns the next delivery the test server records, or fails the
// test after 10 s without one.
func receive[T any](t *testing.T, got <-chan T) T {
	t.Helper()
	var r T
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
	return r
}

type received struct {
	body             []byte
	kind, sig, deliv string
}

// TestDeliveriesSignedRetriedAndFiltered: an httptest receiver fails twice
// then accepts; the fill after From arrives once, signed; events at or
// before From, and kinds the webhook did not ask for, are not sent.
func TestDeliveriesSignedRetriedAndFiltered(t *testing.T) {
	got := make(chan received, 10)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got <- received{body: b, kind: r.Header.Get("X-Tradeledger-Event"), sig: r.Header.Get(SignatureHeader), deliv: r.Header.Get("X-Tradeledger-Delivery")}
	}))
	defer srv.Close()

	cfg, err := domain.ConfigFromMap(map[string]any{"GUI": map[string]any{}, "bot": map[string]any{}, "exchanges": map[string]any{}, "pairs": map[string]any{}, "strategies": map[string]any{},
		"notifications": map[string]any{"webhooks": []any{
			map[string]any{"url": srv.URL, "events": []any{"fills", "rejections"}, "secretEnv": "TEST_HOOK_KEY"},
			map[string]any{"url": "ftp://nope"},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	targets, errs := Targets(cfg, func(k string) string {
		if k == "TEST_HOOK_KEY" {
			return "hook key"
		}
		return ""
	})
	if len(targets) != 1 || len(errs) != 1 || string(targets[0].Key) != "hook key" {
		t.Fatalf("targets %+v, errs %v", targets, errs)
	}
	n := NewNotifier(func() []Target { return targets })
	n.From = 10
	n.Backoff = func(int) time.Duration { return 0 }
	n.Start()
	defer n.Close()

	clock := domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ev := func(pos uint64, typ string, data any) *domain.Event {
		e := domain.NewEvent(clock, typ, data)
		e.Position, e.Stream = pos, domain.OrderStream(7)
		return &e
	}
	old := ev(9, domain.TypeOrderFilled, domain.OrderFilled{FillID: "old"})
	started := ev(11, domain.TypeSystemStarted, domain.SystemStarted{})
	fill := ev(12, domain.TypeOrderFilled, domain.OrderFilled{FillID: "f1", Price: decimal.MustDecimal("100"), Quantity: decimal.MustDecimal("1")})
	for _, e := range []*domain.Event{old, started, fill} {
		if err := n.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	r := receive(t, got)
	if r.kind != "fills" || r.deliv != fill.ID || calls.Load() != 3 {
		t.Fatalf("delivery %+v after %d calls", r, calls.Load())
	}
	if want := Sign([]byte("hook key"), r.body); r.sig != want {
		t.Fatalf("signature %q, want %q", r.sig, want)
	}
	var p Payload
	if err := json.Unmarshal(r.body, &p); err != nil || p.Position != 12 || p.Type != domain.TypeOrderFilled {
		t.Fatalf("payload %+v %v", p, err)
	}
	n.Close()
	select {
	case extra := <-got:
		t.Fatalf("unexpected delivery %s", extra.body)
	default:
	}
}

// TestApplyNeverBlocks: with the sender stopped and the queue full, Apply
// returns at once (the delivery is dropped).
func TestApplyNeverBlocks(t *testing.T) {
	n := NewNotifier(func() []Target { return []Target{{URL: "http://127.0.0.1:1/"}} })
	n.queue = make(chan delivery, 1)
	clock := domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	done := make(chan struct{})
	go func() {
		for i := uint64(1); i <= 5; i++ {
			e := domain.NewEvent(clock, domain.TypeOrderRejected, domain.OrderRejected{Reason: "x"})
			e.Position = i
			n.Apply(&e)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Apply blocked on a full queue")
	}
	if len(n.queue) != 1 {
		t.Fatalf("queue holds %d, want 1", len(n.queue))
	}
}

// TestNotifyVerifyFailure: Notify reaches the webhooks that want its kind
// only.
func TestNotifyVerifyFailure(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.Path + " " + r.Header.Get("X-Tradeledger-Event")
	}))
	defer srv.Close()
	n := NewNotifier(func() []Target {
		return []Target{{URL: srv.URL + "/fills", Kinds: []string{"fills"}}, {URL: srv.URL + "/audit", Kinds: []string{"verifyFailures"}}}
	})
	n.Start()
	defer n.Close()
	n.Notify("verifyFailures", "VerifyFailed", "verify-9-1", audit.VerifySummary{FaultCount: 1})
	if g := receive(t, got); g != "/audit verifyFailures" {
		t.Fatalf("delivered %q", g)
	}
	n.Close()
	if len(got) != 0 {
		t.Fatalf("extra delivery %q", <-got)
	}
}

// Each signed checkpoint goes to the webhooks that want "checkpoints",
// with the signed note as recorded: another party keeps a copy.
func TestCheckpointsDelivered(t *testing.T) {
	got := make(chan received, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{body: b, kind: r.Header.Get("X-Tradeledger-Event")}
	}))
	defer srv.Close()
	n := NewNotifier(func() []Target { return []Target{{URL: srv.URL, Kinds: []string{"checkpoints"}}} })
	n.Start()
	defer n.Close()
	clock := domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := domain.CheckpointSigned{Origin: "tradeledger/log/1", Size: 5, Root: "cm9vdA==", Note: "tradeledger/log/1\n5\ncm9vdA==\n\n— sig\n"}
	e := domain.NewEvent(clock, domain.TypeCheckpointSigned, c)
	e.Position, e.Stream = 6, domain.StreamCheckpoints
	if err := n.Apply(&e); err != nil {
		t.Fatal(err)
	}
	r := receive(t, got)
	var p struct {
		Payload
		Data domain.CheckpointSigned `json:"data"`
	}
	if err := json.Unmarshal(r.body, &p); err != nil || r.kind != "checkpoints" || p.Data != c {
		t.Fatalf("delivery %s (kind %s, %v)", r.body, r.kind, err)
	}
}
