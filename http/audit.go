package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// Defaults for Audit settings.
const (
	DefaultAuditPageSize  = 100
	DefaultAuditMaxPage   = 1000
	DefaultAuditMaxScan   = 100_000
	DefaultAuditHeartbeat = 15 * time.Second
)

// Audit holds the settings and live state of the auditors' routes:
//
//	GET /api/v1/audit/verify   the log's hash chains checked (domain.VerifyLog) as JSON
//	GET /api/v1/audit/events   pages through the log, secrets redacted
//	GET /api/v1/events/stream  new events pushed live as server-sent events
//
// They read the log (Server.Store, a LogReader). One Audit serves one
// Server lifetime: once that server shuts down (or Close is called), live
// streams end.
type Audit struct {
	// MaxPage bounds the limit parameter of audit/events.
	MaxPage int
	// MaxScan bounds how many events one audit/events request reads when
	// its filters skip most of them; the answer's next position lets the
	// client go on.
	MaxScan int
	// Heartbeat is the interval of comment lines that keep an idle event
	// stream (and the proxies on its way) alive.
	Heartbeat time.Duration
	// StreamWriteTimeout drops a stream whose consumer takes no write
	// for that long (streamlimits.go); MaxStreamsPerToken bounds the
	// streams of one token (429 beyond, ≤ 0: no bound);
	// StreamBufferBytes bounds what a stream reads ahead of its consumer.
	StreamWriteTimeout time.Duration
	MaxStreamsPerToken int
	StreamBufferBytes  int

	verifying chan struct{}                              // one verify at a time: it reads the whole log
	streams   atomic.Int64                               // live event streams (Streams)
	onFailure atomic.Pointer[func(domain.VerifySummary)] // OnVerifyFailure

	mu       sync.Mutex
	perToken map[[32]byte]int // live streams per credential (acquireStream)
	hooked   map[*http.Server]bool
	closing  chan struct{}
	closed   bool
}

// NewAudit returns an Audit with default settings.
func NewAudit() *Audit {
	return &Audit{
		MaxPage:   DefaultAuditMaxPage,
		MaxScan:   DefaultAuditMaxScan,
		Heartbeat: DefaultAuditHeartbeat,
		verifying: make(chan struct{}, 1),

		StreamWriteTimeout: DefaultStreamWriteTimeout,
		MaxStreamsPerToken: DefaultMaxStreamsPerToken,
		StreamBufferBytes:  DefaultStreamBufferBytes,

		hooked:  make(map[*http.Server]bool),
		closing: make(chan struct{}),
	}
}

// Close ends every live event stream; new streams end at once.
func (a *Audit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		a.closed = true
		close(a.closing)
	}
	return nil
}

// hookShutdown makes srv's graceful shutdown end the live streams (which
// http.Server.Shutdown would otherwise wait for until its deadline).
func (a *Audit) hookShutdown(r *http.Request) {
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.hooked[srv] {
		a.hooked[srv] = true
		srv.RegisterOnShutdown(func() { a.Close() })
	}
}

// LogVerifier checks the whole log as `tradeledger verify` does: its hash
// chains, its Merkle tree rebuilt from the events, and the last
// checkpoint kept beside the tree (transparency.Log.Verify). The summary
// is not OK when any of them fails, with the problem in plain words; the
// error is for a log that could not be read.
type LogVerifier interface {
	Verify(ctx context.Context, opts domain.VerifyOptions) (domain.VerifySummary, error)
}

// LogReader reads the event log in commit order (domain.EventStore
// without its writes): audit/events pages through it, events/stream
// follows it.
type LogReader interface {
	ReadAll(ctx context.Context, from uint64, max int) domain.EventIterator
	Subscribe(ctx context.Context, from uint64) domain.EventIterator
	Head(ctx context.Context) (uint64, error)
}

// chainVerifier is audit/verify's LogVerifier without Server.Verifier:
// the log's hash chains alone (domain.VerifyLog).
type chainVerifier struct {
	store domain.EventStore
}

// Verify checks the hash chains of the whole log.
func (v chainVerifier) Verify(ctx context.Context, opts domain.VerifyOptions) (domain.VerifySummary, error) {
	return domain.VerifyLog(ctx, v.store, opts)
}

// auditHandler serves the auditors' routes: audit/verify through a
// LogVerifier, audit/events and events/stream from a LogReader, with the
// Audit's settings and live state (503 without the Audit or the log).
type auditHandler struct {
	audit  *Audit
	log    LogReader
	verify LogVerifier
}

func (h *auditHandler) register(r *mux.Router) {
	r.Handle("/audit/verify", requires(h.ready, h.handleAuditVerify)).Methods("GET")
	r.Handle("/audit/events", requires(h.ready, h.handleAuditEvents)).Methods("GET")
	r.Handle("/events/stream", requires(h.ready, h.handleEventStream)).Methods("GET")
}

func (h *auditHandler) ready() error {
	if h.audit == nil || h.log == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "audit is not configured")
	}
	return nil
}

// handleAuditVerify answers domain.VerifySummary, the verdict of
// `tradeledger verify --json` (Server.Verifier): ok, events, streams,
// lastPosition, headsDigest, faultCount, tree (the Merkle tree's records,
// the last checkpoint's size, the log's events, and its problem: a log
// cut at its end, a tree that differs) and, for a tampered log, problem
// (the failures in plain words), faults (the first maxFaults faulty
// events, default domain.DefaultMaxFaults) and fault (the first of them);
// heads only with heads=true (every order is a stream, so the list grows
// with the history). A tampered log is still a 200: the check itself
// succeeded.
func (h *auditHandler) handleAuditVerify(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	opts := domain.VerifyOptions{MaxFaults: domain.DefaultMaxFaults}
	if v := q.Get("heads"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return domain.Errorf(domain.EINVALID, "heads must be true or false, not %q", v)
		}
		opts.Heads = b
	}
	if q.Has("maxFaults") {
		n, err := queryUint(q, "maxFaults", 0)
		if err != nil || n > maxListedFaults {
			return domain.Errorf(domain.EINVALID, "maxFaults must be an integer from 0 to %d", maxListedFaults)
		}
		opts.MaxFaults = int(n)
		if n == 0 {
			opts.MaxFaults = -1 // count only
		}
	}
	select {
	case h.audit.verifying <- struct{}{}:
		defer func() { <-h.audit.verifying }()
	case <-r.Context().Done():
		return nil // the client left
	}
	sum, err := h.verify.Verify(r.Context(), opts)
	if err != nil {
		return err
	}
	if !sum.OK {
		h.audit.verifyFailed(sum) // webhooks (metrics.go)
	}
	writeJSON(w, http.StatusOK, sum)
	return nil
}

// maxListedFaults bounds audit/verify's maxFaults: the answer stays small
// whatever the damage (faultCount still counts every fault).
const maxListedFaults = 10_000

// eventFilter selects events by stream prefix and type.
type eventFilter struct {
	stream string          // prefix; "" matches every stream
	types  map[string]bool // nil matches every type
}

// parseEventFilter reads stream (a stream name prefix such as "order-")
// and type (an event type; repeated or comma-separated for several).
func parseEventFilter(q url.Values) (eventFilter, error) {
	f := eventFilter{stream: q.Get("stream")}
	for _, v := range q["type"] {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				return f, domain.Errorf(domain.EINVALID, "type must name an event type, such as OrderFilled")
			}
			if f.types == nil {
				f.types = map[string]bool{}
			}
			f.types[t] = true
		}
	}
	return f, nil
}

func (f eventFilter) match(e *domain.Event) bool {
	return strings.HasPrefix(e.Stream, f.stream) && (f.types == nil || f.types[e.Type])
}

// auditEvent is an event as auditors see it: the whole envelope, with the
// data of secret-bearing events masked (Redacted true: its hash then no
// longer matches the shown data, by design).
type auditEvent struct {
	domain.Event
	Redacted bool `json:"redacted,omitempty"`
}

// secretMask replaces every secret value shown to auditors.
const secretMask = "********"

// redact returns the event as auditors may see it. ExchangeKeysSet shows
// the exchange and field names but no field value; PasswordSet shows the
// generation but not the hash; in any event, a configuration document's
// credentials (domain.IsSecretPath, under any "exchanges" object) and
// bot.service_wallet are masked (domain.MaskSecretsIn): ConfigReplaced
// carries the wallet, and logs written before secrets were recognised by
// rule may carry nested credentials in clear.
func redact(e domain.Event) auditEvent {
	switch e.Type {
	case domain.TypeExchangeKeysSet, domain.TypePasswordSet:
	default:
		if !mayHoldSecret(e.Data) {
			return auditEvent{Event: e}
		}
	}
	var v any
	if err := json.Unmarshal(e.Data, &v); err != nil {
		e.Data = json.RawMessage(`{}`)
		return auditEvent{Event: e, Redacted: true}
	}
	changed := false
	if m, ok := v.(map[string]any); ok {
		switch e.Type {
		case domain.TypeExchangeKeysSet:
			if fields, ok := m["fields"].(map[string]any); ok {
				for k := range fields {
					fields[k], changed = secretMask, true
				}
			} else if m["fields"] != nil {
				m["fields"], changed = secretMask, true
			}
		case domain.TypePasswordSet:
			if h, ok := m["hash"].(string); ok && h != "" {
				m["hash"], changed = secretMask, true
			}
		}
	}
	if domain.MaskSecretsIn(v) {
		changed = true
	}
	if !changed {
		return auditEvent{Event: e}
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	e.Data = b
	return auditEvent{Event: e, Redacted: true}
}

// mayHoldSecret is a cheap pre-check: does data mention what
// domain.MaskSecretsIn looks for?
func mayHoldSecret(data []byte) bool {
	return bytes.Contains(data, []byte(`"exchanges"`)) || bytes.Contains(data, []byte(`"service_wallet"`))
}

// auditEventsResponse is one page of the log. Next is the position to ask
// for next (from=next); More says whether the log held events at or beyond
// Next when the page was read.
type auditEventsResponse struct {
	Events []auditEvent `json:"events"`
	Next   uint64       `json:"next"`
	More   bool         `json:"more"`
	Head   uint64       `json:"head"`
}

// handleAuditEvents pages through the log in commit order: from (position,
// inclusive, default 0), limit (1…MaxPage, default 100), stream (prefix)
// and type filters. A page may hold fewer than limit events when the
// filters skipped more than MaxScan; follow next while more is true.
func (h *auditHandler) handleAuditEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, err := queryUint(q, "from", 0)
	if err != nil {
		return err
	}
	limit, err := queryUint(q, "limit", DefaultAuditPageSize)
	if err != nil {
		return err
	}
	if limit < 1 || limit > uint64(h.audit.MaxPage) {
		return domain.Errorf(domain.EINVALID, "limit must be between 1 and %d", h.audit.MaxPage)
	}
	filter, err := parseEventFilter(q)
	if err != nil {
		return err
	}

	resp := auditEventsResponse{Events: []auditEvent{}, Next: from}
	it := h.log.ReadAll(r.Context(), from, 0)
	scanned := 0
	for it.Next() {
		e := it.Event()
		scanned++
		resp.Next = e.Position + 1
		if filter.match(&e) {
			resp.Events = append(resp.Events, redact(e))
			if len(resp.Events) == int(limit) {
				break
			}
		}
		if scanned >= h.audit.MaxScan {
			break
		}
	}
	err = it.Err()
	it.Close()
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	if resp.Head, err = h.log.Head(r.Context()); err != nil {
		return fmt.Errorf("read head: %w", err)
	}
	resp.More = resp.Next <= resp.Head
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// queryUint reads a non-negative integer query parameter (def when absent).
func queryUint(q url.Values, name string, def uint64) (uint64, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, domain.Errorf(domain.EINVALID, "%s must be a non-negative integer, not %q", name, v)
	}
	return n, nil
}

// handleEventStream pushes events as server-sent events, one per event:
//
//	id: <position>
//	data: <the event as in audit/events, on one line>
//
// with the same stream and type filters as audit/events. It starts after
// the position in the Last-Event-ID header (a reconnecting EventSource
// sends it: the stream resumes without gaps or repeats), else at the from
// parameter, else with the next event committed. Comment lines
// (": heartbeat") keep idle connections open. The stream ends when the
// client goes away or the server shuts down.
func (h *auditHandler) handleEventStream(w http.ResponseWriter, r *http.Request) error {
	filter, err := parseEventFilter(r.URL.Query())
	if err != nil {
		return err
	}
	from, err := h.streamStart(r)
	if err != nil {
		return err
	}
	a := h.audit
	release, err := a.acquireStream(credentialKey(r))
	if err != nil {
		return err
	}
	defer release()
	a.hookShutdown(r)
	a.streams.Add(1)
	defer a.streams.Add(-1)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	events, followErr := a.startFollowing(ctx, h.log, from, filter)
	st := newEventStream(w, r, a)
	if st.open(from) != nil {
		return nil // the client left
	}
	// The answer is under way: how the stream ends is logged, not
	// answered.
	st.pump(ctx, events, followErr)
	return nil
}

// streamStart is the position an event stream starts at: after the
// Last-Event-ID header, else the from parameter, else the next event
// committed.
func (h *auditHandler) streamStart(r *http.Request) (uint64, error) {
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		return resumeAfter(last)
	}
	if q := r.URL.Query(); q.Has("from") {
		return queryUint(q, "from", 0)
	}
	head, err := h.log.Head(r.Context())
	if err != nil {
		return 0, fmt.Errorf("read head: %w", err)
	}
	return head + 1, nil
}

// startFollowing follows the log from position from in a goroutine
// (Audit.follow) until ctx ends. events is unbuffered: the reader holds
// one page of the log, never more (streamlimits.go). It is closed when
// the follower ends, and followErr then holds why.
func (a *Audit) startFollowing(ctx context.Context, store LogReader, from uint64, filter eventFilter) (events <-chan domain.Event, followErr <-chan error) {
	out := make(chan domain.Event)
	errc := make(chan error, 1)
	go func() {
		defer close(out)
		errc <- a.follow(ctx, store, from, filter, out)
	}()
	return out, errc
}

// resumeAfter returns the position after a Last-Event-ID header, or
// EINVALID: it must be an event position, and the last one (2^64-1) has no
// successor (it must not wrap to 0 and replay the whole log).
func resumeAfter(last string) (uint64, error) {
	pos, err := strconv.ParseUint(strings.TrimSpace(last), 10, 64)
	if err != nil || pos == math.MaxUint64 {
		return 0, domain.Errorf(domain.EINVALID, "Last-Event-ID must be an event position (a non-negative integer below 2^64-1), not %q", truncate(last, 40))
	}
	return pos + 1, nil
}
