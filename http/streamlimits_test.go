package http

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

func withAudit(configure func(a *Audit)) func(ts *testServer) {
	return func(ts *testServer) {
		ts.Server.Audit = NewAudit()
		if configure != nil {
			configure(ts.Server.Audit)
		}
	}
}

// appendPadded appends n events of about size bytes each in one append.
func appendPadded(t *testing.T, ts *testServer, n, size int) {
	t.Helper()
	pad := strings.Repeat("x", size)
	evs := make([]domain.Event, n)
	for i := range evs {
		evs[i] = domain.NewEvent(ts.Clock, "Padded", map[string]any{"i": i, "pad": pad})
		evs[i].Actor = "test"
	}
	if _, err := ts.Store.Append(context.Background(), "pad", domain.Any, evs...); err != nil {
		t.Fatal(err)
	}
}

// openStream sends GET events/stream?from=0 on a raw connection whose
// receive buffer is small, and reads the response headers.
func openStream(t *testing.T, ts *testServer, token string) (net.Conn, *bufio.Reader) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	io.WriteString(c, "GET /api/v1/events/stream?from=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+"\r\n\r\n")
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(safetyNet))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events/stream = %d %s", resp.StatusCode, b)
	}
	return c, br
}

// waitFor polls cond until it holds; the safety net fails the test if it
// never does.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(safetyNet); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, safetyNet)
		}
	}
}

// A consumer that stops reading is dropped once a write has waited
// StreamWriteTimeout: the connection closes and the handler ends (today it
// waits on the socket for ever, pinning its goroutine and buffers).
func TestEventStreamDropsStalledConsumer(t *testing.T) {
	ts := newTestServer(t, withAudit(func(a *Audit) { a.StreamWriteTimeout = 200 * time.Millisecond }))
	appendPadded(t, ts, 160, 64<<10) // ≈10 MB: more than the sockets buffer
	c, br := openStream(t, ts, ts.Token)
	waitFor(t, "stalled consumer dropped", func() bool { return strings.Contains(ts.Logs(), "event stream dropped") })
	waitFor(t, "stream handler ended", func() bool { return ts.Server.Audit.Streams() == 0 })
	// What the buffers held arrives, then the end: the server closed.
	c.SetReadDeadline(time.Now().Add(safetyNet))
	b, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("reading the dropped stream: %v, want EOF", err)
	}
	if n := strings.Count(string(b), "\nid: "); n >= 160 {
		t.Fatalf("the dropped consumer got all %d events", n)
	}
}

// readRecorder records how a stream reads the store.
type readRecorder struct {
	*sqlite.Store
	mu   sync.Mutex
	bad  []string // reads beyond the bounds
	maxN int      // the largest page asked of ReadAll
}

func (s *readRecorder) ReadAll(ctx context.Context, from uint64, maxPage int) domain.EventIterator {
	s.mu.Lock()
	if maxPage <= 0 || maxPage > streamPageEvents {
		s.bad = append(s.bad, "ReadAll of an unbounded page")
	}
	s.maxN = max(s.maxN, maxPage)
	s.mu.Unlock()
	return s.Store.ReadAll(ctx, from, maxPage)
}

func (s *readRecorder) Subscribe(ctx context.Context, from uint64) domain.EventIterator {
	head, _ := s.Store.Head(ctx)
	if head >= from && head-from >= streamPageEvents {
		s.mu.Lock()
		s.bad = append(s.bad, "Subscribe far behind the head (its batches are not bounded)")
		s.mu.Unlock()
	}
	return s.Store.Subscribe(ctx, from)
}

// A stream that starts far behind the head reads the log in pages no
// larger than streamPageEvents and subscribes only once it is near the
// head, so that a slow consumer pins a page, not the log; it still gets
// every event, in order.
func TestEventStreamReadsBoundedPages(t *testing.T) {
	ts := newTestServer(t, withAudit(nil))
	from, err := ts.Store.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const n = 5 * streamPageEvents
	appendPadded(t, ts, n, 1<<10)
	rec := &readRecorder{Store: ts.Store}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan domain.Event)
	done := make(chan error, 1)
	go func() { done <- ts.Server.Audit.follow(ctx, rec, from+1, eventFilter{stream: "pad"}, out) }()
	for i := 0; i < n; i++ {
		e := <-out
		if got, want := e.Version, int64(i); got != want {
			t.Fatalf("event %d: version %d, want %d (in order, none skipped)", i, got, want)
		}
	}
	cancel()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bad) > 0 {
		t.Fatalf("unbounded reads: %v", rec.bad)
	}
	if rec.maxN < 1 {
		t.Fatalf("no page read with ReadAll (largest page %d): the catch-up went through the subscription", rec.maxN)
	}
}

// One token holds at most MaxStreamsPerToken streams; the next is 429
// with the JSON error, while another token still gets its own.
func TestEventStreamsPerTokenBounded(t *testing.T) {
	ts := newTestServer(t, withAudit(func(a *Audit) { a.MaxStreamsPerToken = 2 }))
	openStream(t, ts, ts.Token)
	openStream(t, ts, ts.Token)
	status, body := ts.do("GET", "/api/v1/events/stream", nil, ts.Token)
	if status != http.StatusTooManyRequests {
		t.Fatalf("third stream of a token = %d %s, want 429", status, body)
	}
	if e := decodeBody[errorResponse](t, body); e.Code != 429 || !strings.Contains(e.Message, "event streams") {
		t.Fatalf("error body %+v", e)
	}
	other, err := ts.Server.Auth.IssueToken(LoginSubject)
	if err != nil {
		t.Fatal(err)
	}
	openStream(t, ts, other)
}
