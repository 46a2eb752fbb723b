// Package webhook delivers chosen events of the log to HTTP endpoints
// (config.notifications.webhooks[]): fills, rejections, start/stop, failed
// logins, signed checkpoints, and verify failures found by audit/verify (Notify), each POSTed as JSON with an HMAC-SHA256 signature header,
// retried with backoff. Delivery runs beside trading and never blocks it:
// the projection only queues, and a full queue drops (and logs) instead of
// waiting.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// Event kinds a webhook subscribes to, and the event types behind them.
var kinds = map[string]string{
	domain.TypeOrderFilled:   "fills",
	domain.TypeOrderRejected: "rejections",
	domain.TypeSystemStarted: "start",
	domain.TypeSystemStopped: "stop",
	domain.TypeLoginFailed:   "failedLogins",
	// Each signed checkpoint of the log's Merkle tree, so that another
	// party keeps a copy the operator cannot take back.
	domain.TypeCheckpointSigned: "checkpoints",
	// An exchange number the ledger cannot hold: the order's pair paused.
	domain.TypeOrderNeedsAttention: "attention",
	// An account's balance differs from the one the ledger implies, and
	// when it agrees again.
	domain.TypeBalanceDiscrepancy:        "discrepancies",
	domain.TypeBalanceDiscrepancyCleared: "discrepancies",
	// A witness refused a checkpoint as inconsistent with what it
	// cosigned: the log forked, was rewritten or cut under its key.
	domain.TypeWitnessRefused: "witnessRefusals",
	// A read-model snapshot serve started from was not the log's state.
	domain.TypeSnapshotDiscarded: "snapshots",
}

// Defaults of Notifier.
const (
	DefaultQueue       = 1024
	DefaultMaxAttempts = 6
	DefaultTimeout     = 10 * time.Second
	// DefaultSecretEnv names the environment variable holding the HMAC
	// key when a webhook does not name one (secretEnv).
	DefaultSecretEnv = "TRADELEDGER_WEBHOOK_SECRET"
	// SignatureHeader carries "sha256=" + hex(HMAC-SHA256(key, body)).
	SignatureHeader = "X-Tradeledger-Signature"
)

// Target is one configured webhook.
type Target struct {
	URL string
	// Kinds are the event kinds sent ("fills", "rejections", "start",
	// "stop", "failedLogins", "checkpoints", "verifyFailures", "attention",
	// "discrepancies", "witnessRefusals", "snapshots");
	// empty means all.
	Kinds []string
	// Key signs the body (empty: no signature header).
	Key []byte
}

// Targets reads config.notifications.webhooks: each an object with url
// (http or https), events (kinds, optional) and secretEnv (the environment
// variable holding the HMAC key, default TRADELEDGER_WEBHOOK_SECRET). The
// key itself is never in the configuration, which the API shows and the
// log keeps. Bad entries are returned as errors and left out.
func Targets(c domain.Config, getenv func(string) string) ([]Target, []error) {
	n, ok := c.Section("notifications")
	if !ok {
		return nil, nil
	}
	list, _ := n["webhooks"].([]any)
	var out []Target
	var errs []error
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("notifications.webhooks[%d]: not an object", i))
			continue
		}
		url, _ := m["url"].(string)
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			errs = append(errs, fmt.Errorf("notifications.webhooks[%d].url: an http(s) URL is required", i))
			continue
		}
		t := Target{URL: url}
		if evs, ok := m["events"].([]any); ok {
			for _, e := range evs {
				if s, ok := e.(string); ok {
					t.Kinds = append(t.Kinds, s)
				}
			}
		}
		env, _ := m["secretEnv"].(string)
		if env == "" {
			env = DefaultSecretEnv
		}
		if k := getenv(env); k != "" {
			t.Key = []byte(k)
		}
		out = append(out, t)
	}
	return out, errs
}

func (t Target) wants(kind string) bool {
	if len(t.Kinds) == 0 {
		return true
	}
	for _, k := range t.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// Payload is the JSON body of a delivery.
type Payload struct {
	Kind     string          `json:"kind"`
	Type     string          `json:"type"`
	ID       string          `json:"id"`
	Stream   string          `json:"stream"`
	Position uint64          `json:"position"`
	Time     int64           `json:"time"`
	Data     json.RawMessage `json:"data"`
}

type delivery struct {
	target Target
	body   []byte
	kind   string
	id     string
}

// Notifier is a projection that queues deliveries of new events (those
// after From) and sends them from its own goroutine. Fill the settings,
// register it before the replay, then Start; Close stops it.
type Notifier struct {
	// Targets returns the webhooks configured now.
	Targets func() []Target
	// From is the log position already delivered (or never to deliver):
	// the head at start, so a restart does not send history again.
	From uint64
	// Client sends the requests.
	Client *http.Client
	// MaxAttempts bounds the tries of one delivery.
	MaxAttempts int
	// Backoff is the wait before retry n (1, 2, …): 1 s doubling to 5 min
	// by default; tests shorten it.
	Backoff func(n int) time.Duration
	Logger  *zap.Logger

	queue  chan delivery
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
}

// NewNotifier returns a Notifier with default settings.
func NewNotifier(targets func() []Target) *Notifier {
	return &Notifier{
		Targets:     targets,
		Client:      &http.Client{Timeout: DefaultTimeout},
		MaxAttempts: DefaultMaxAttempts,
		Backoff: func(n int) time.Duration {
			return min(time.Second<<(n-1), 5*time.Minute)
		},
		Logger: zap.NewNop(),
		queue:  make(chan delivery, DefaultQueue),
	}
}

// Name implements projections.Projection.
func (n *Notifier) Name() string { return "webhooks" }

// Apply implements projections.Projection: an event after From of a kind a
// webhook wants is queued for it; a full queue drops it with a log line.
// It never waits.
func (n *Notifier) Apply(e *domain.Event) error {
	if e.Position <= n.From || n.Targets == nil {
		return nil // history (a replay), or nobody to tell
	}
	kind, ok := kinds[e.Type]
	if !ok {
		return nil
	}
	var body []byte
	for _, t := range n.Targets() {
		if !t.wants(kind) {
			continue
		}
		if body == nil {
			var err error
			if body, err = json.Marshal(Payload{Kind: kind, Type: e.Type, ID: e.ID, Stream: e.Stream, Position: e.Position, Time: e.Time, Data: e.Data}); err != nil {
				return nil
			}
		}
		select {
		case n.queue <- delivery{target: t, body: body, kind: kind, id: e.ID}:
		default:
			n.Logger.Warn("webhook queue full: delivery dropped", zap.String("url", t.URL), zap.String("event", e.ID))
		}
	}
	return nil
}

// Notify queues a notification that is not an event of the log (kind
// "verifyFailures": the audit found the log faulty) for the webhooks that
// want kind; id names the delivery. Like Apply, it never waits.
func (n *Notifier) Notify(kind, typ, id string, data any) {
	if n.Targets == nil {
		return
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return
	}
	var body []byte
	for _, t := range n.Targets() {
		if !t.wants(kind) {
			continue
		}
		if body == nil {
			if body, err = json.Marshal(Payload{Kind: kind, Type: typ, ID: id, Data: raw}); err != nil {
				return
			}
		}
		select {
		case n.queue <- delivery{target: t, body: body, kind: kind, id: id}:
		default:
			n.Logger.Warn("webhook queue full: delivery dropped", zap.String("url", t.URL), zap.String("notification", id))
		}
	}
}

// Start sends queued deliveries in the background until Close.
func (n *Notifier) Start() {
	n.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel, n.done = cancel, make(chan struct{})
		go func() {
			defer close(n.done)
			for {
				select {
				case d := <-n.queue:
					n.deliver(ctx, d)
				case <-ctx.Done():
					return
				}
			}
		}()
	})
}

// Close stops the sender; deliveries still queued are dropped.
func (n *Notifier) Close() error {
	if n.cancel != nil {
		n.cancel()
		<-n.done
	}
	return nil
}

// deliver POSTs d until a 2xx answer, MaxAttempts tries, or ctx ends.
func (n *Notifier) deliver(ctx context.Context, d delivery) {
	for attempt := 1; ; attempt++ {
		err := n.post(ctx, d)
		if err == nil {
			return
		}
		if attempt >= n.MaxAttempts || ctx.Err() != nil {
			n.Logger.Warn("webhook delivery failed", zap.String("url", d.target.URL), zap.String("event", d.id), zap.Int("attempts", attempt), zap.Error(err))
			return
		}
		select {
		case <-time.After(n.Backoff(attempt)):
		case <-ctx.Done():
			return
		}
	}
}

func (n *Notifier) post(ctx context.Context, d delivery) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.target.URL, bytes.NewReader(d.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tradeledger-webhook")
	req.Header.Set("X-Tradeledger-Event", d.kind)
	req.Header.Set("X-Tradeledger-Delivery", d.id)
	if len(d.target.Key) > 0 {
		req.Header.Set(SignatureHeader, Sign(d.target.Key, d.body))
	}
	resp, err := n.Client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %d", resp.StatusCode)
	}
	return nil
}

// Sign returns the signature header's value for body: "sha256=" and the
// hex HMAC-SHA256 under key. Receivers recompute it over the raw body and
// compare in constant time (hmac.Equal).
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// SnapshotVersion implements projections.Snapshotter.
func (n *Notifier) SnapshotVersion() uint32 { return 1 }

// Freeze implements projections.Snapshotter: a Notifier folds nothing from
// the log (it sends the events after From, the head when the service
// started, and keeps only its queue, which a restart does not carry), so
// its state in a snapshot is empty.
func (n *Notifier) Freeze() func(*snap.Encoder) { return func(*snap.Encoder) {} }

// Load implements projections.Snapshotter (an empty state).
func (n *Notifier) Load(*snap.Decoder) (func(), error) { return func() {}, nil }
