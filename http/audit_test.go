package http_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	tlhttp "github.com/tradeledger/tradeledger/http"
)

// auditServer serves the audit routes over a fresh SQLite log on
// 127.0.0.1:0 and returns it with a valid token.
type auditServer struct {
	*tlhttp.Server
	store *sqlite.Store
	path  string
	token string
	clock *domain.ManualClock
}

func newAuditServer(t *testing.T) *auditServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.db")
	store := sqlite.NewStore(path)
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_000_000))
	s := tlhttp.NewServer()
	s.Clock, s.Store = clock, store
	s.Auth = &tlhttp.Authenticator{Secret: bytes.Repeat([]byte{7}, 32), TokenTTL: time.Hour, Clock: clock}
	s.Audit = tlhttp.NewAudit()
	if err := s.Open("127.0.0.1:0", ""); err != nil {
		t.Fatal(err)
	}
	token, err := s.Auth.IssueToken("auditor")
	if err != nil {
		t.Fatal(err)
	}
	a := &auditServer{Server: s, store: store, path: path, token: token, clock: clock}
	t.Cleanup(func() {
		s.Close()
		store.Close()
	})
	return a
}

// append writes one event of type typ with data to stream.
func (a *auditServer) append(t *testing.T, stream, typ string, data any) domain.AppendResult {
	t.Helper()
	e := domain.NewEvent(a.clock, typ, data)
	e.Actor = "test"
	res, err := a.store.Append(context.Background(), stream, domain.Any, e)
	if err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(time.Second)
	return res
}

func (a *auditServer) get(t *testing.T, path string, into any) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", a.URL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if into != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return resp.StatusCode, string(body)
}

type pageEvent struct {
	domain.Event
	Redacted bool `json:"redacted"`
}

type eventsPage struct {
	Events []pageEvent `json:"events"`
	Next   uint64      `json:"next"`
	More   bool        `json:"more"`
	Head   uint64      `json:"head"`
}

func TestAuditEventsPagesAndRedacts(t *testing.T) {
	a := newAuditServer(t)
	const cipher, phc = "Q0lQSEVSVEVYVC1vZi1zZWNyZXQ=", "$argon2id$v=19$m=65536,t=1,p=1$c2FsdA$aGFzaA"
	a.append(t, "order-1", domain.TypeOrderRequested, map[string]any{"orderId": 1, "pair": "USDT-BTC"})
	a.append(t, domain.StreamCredentials, domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: "binance", Fields: map[string]string{"key": cipher, "secret": cipher}})
	a.append(t, "order-1", domain.TypeOrderAccepted, map[string]any{})
	a.append(t, domain.StreamCredentials, domain.TypePasswordSet, domain.PasswordSet{Hash: phc, Generation: 2})
	a.append(t, "order-2", domain.TypeOrderRequested, map[string]any{"orderId": 2, "pair": "USDT-ETH"})
	a.append(t, "order-1", domain.TypeOrderFilled, map[string]any{"fillId": "f1"})
	a.append(t, domain.StreamConfig, domain.TypeConfigReplaced, map[string]any{"config": map[string]any{"exchanges": map[string]any{"kraken": map[string]any{"apiSecret": "plain-oops"}}}})

	// Page through everything, 3 at a time.
	var all []pageEvent
	var bodies strings.Builder
	from := uint64(0)
	for pages := 0; ; pages++ {
		var p eventsPage
		code, body := a.get(t, fmt.Sprintf("/api/v1/audit/events?from=%d&limit=3", from), &p)
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		bodies.WriteString(body)
		all = append(all, p.Events...)
		if p.Head != 7 {
			t.Fatalf("head=%d, want 7", p.Head)
		}
		if !p.More {
			break
		}
		if pages > 5 || p.Next <= from {
			t.Fatalf("paging does not advance: from %d next %d", from, p.Next)
		}
		from = p.Next
	}
	if len(all) != 7 {
		t.Fatalf("paged %d events, want 7", len(all))
	}
	for i, e := range all {
		if e.Position != uint64(i+1) {
			t.Fatalf("event %d at position %d", i, e.Position)
		}
	}
	for _, secret := range []string{cipher, phc, "plain-oops", "c2FsdA"} {
		if strings.Contains(bodies.String(), secret) {
			t.Fatalf("a secret reached the audit listing: %s", secret)
		}
	}
	keys, pw, cfg := all[1], all[3], all[6]
	if !keys.Redacted || !strings.Contains(string(keys.Data), `"binance"`) || !strings.Contains(string(keys.Data), `"secret":"********"`) {
		t.Fatalf("ExchangeKeysSet shown as %s (redacted %v)", keys.Data, keys.Redacted)
	}
	if !pw.Redacted || !strings.Contains(string(pw.Data), `"generation":2`) {
		t.Fatalf("PasswordSet shown as %s", pw.Data)
	}
	if !cfg.Redacted || all[0].Redacted || all[5].Redacted {
		t.Fatalf("redacted flags: config %v, order %v, fill %v", cfg.Redacted, all[0].Redacted, all[5].Redacted)
	}
	// Unredacted events are shown exactly as stored: their hashes check.
	if got := domain.ComputeHash(&all[5].Event); got != all[5].Hash {
		t.Fatal("an unredacted event's hash does not match its shown contents")
	}

	// Filters: stream prefix and types.
	var p eventsPage
	if code, body := a.get(t, "/api/v1/audit/events?stream=order-&type=OrderRequested,OrderFilled", &p); code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var got []string
	for _, e := range p.Events {
		got = append(got, fmt.Sprintf("%s/%s", e.Stream, e.Type))
	}
	if want := "order-1/OrderRequested order-2/OrderRequested order-1/OrderFilled"; strings.Join(got, " ") != want {
		t.Fatalf("filtered=%v, want %s", got, want)
	}
	if p.More || p.Next != 8 {
		t.Fatalf("filtered page next=%d more=%v, want 8 false", p.Next, p.More)
	}

	for _, c := range []struct{ query, word string }{
		{"limit=0", "limit"}, {"limit=1001", "limit"}, {"limit=x", "limit"}, {"from=-1", "from"}, {"type=", "type"},
	} {
		code, body := a.get(t, "/api/v1/audit/events?"+c.query, nil)
		if code != 400 || !strings.Contains(body, c.word) {
			t.Fatalf("%s: status %d %s, want 400 naming %s", c.query, code, body, c.word)
		}
	}
}

func TestAuditVerifyEndpoint(t *testing.T) {
	a := newAuditServer(t)
	for i := 0; i < 3; i++ {
		a.append(t, "order-1", "Tested", map[string]string{"n": fmt.Sprintf("%04d", i)})
		a.append(t, "order-2", "Tested", map[string]string{"n": fmt.Sprintf("%04d", 10+i)})
	}
	var sum audit.VerifySummary
	if code, body := a.get(t, "/api/v1/audit/verify?heads=true", &sum); code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	if !sum.OK || sum.Events != 6 || sum.Streams != 2 || len(sum.Heads) != 2 || sum.LastPosition != 6 || sum.FaultCount != 0 {
		t.Fatalf("summary=%+v", sum)
	}
	// A summary by default: the heads only when asked for.
	var short audit.VerifySummary
	a.get(t, "/api/v1/audit/verify", &short)
	if len(short.Heads) != 0 || short.HeadsDigest != sum.HeadsDigest || !short.OK {
		t.Fatalf("default summary=%+v", short)
	}
	for _, q := range []string{"heads=maybe", "maxFaults=x", "maxFaults=-1", "maxFaults=10001"} {
		if code, body := a.get(t, "/api/v1/audit/verify?"+q, nil); code != 400 || !strings.Contains(body, strings.Split(q, "=")[0]) {
			t.Fatalf("%s: %d %s", q, code, body)
		}
	}
	if code, body := a.get(t, "/api/v1/audit/verify?heads=maybe", nil); code != 400 || !strings.Contains(body, "heads") {
		t.Fatalf("heads=maybe: %d %s", code, body)
	}

	// Edit the payload of order-1 version 1 (position 3) in the file.
	db, err := sql.Open("sqlite3", "file:"+a.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	for _, col := range []string{"record", "data"} {
		res, err := db.Exec(`UPDATE events SET ` + col + ` = CAST(replace(CAST(` + col + ` AS TEXT), '"0001"', '"9991"') AS BLOB) WHERE position = 3`)
		if err == nil {
			k, _ := res.RowsAffected()
			n += int(k)
		}
	}
	if n != 1 {
		t.Fatalf("edited %d rows, want 1", n)
	}
	// And order-2 version 2 (position 6), later in the log.
	if _, err := db.Exec(`UPDATE events SET record = CAST(replace(CAST(record AS TEXT), '"0012"', '"9912"') AS BLOB) WHERE position = 6`); err != nil {
		t.Fatal(err)
	}
	sum = audit.VerifySummary{}
	a.get(t, "/api/v1/audit/verify", &sum)
	if sum.OK || sum.Fault == nil || sum.Fault.Stream != "order-1" || sum.Fault.Version != 1 || sum.Fault.Position != 3 {
		t.Fatalf("tampered log summary=%+v fault=%+v", sum, sum.Fault)
	}
	if sum.FaultCount != 2 || len(sum.Faults) != 2 || sum.Faults[1].Stream != "order-2" || sum.Faults[1].Position != 6 || sum.Events != 6 {
		t.Fatalf("every fault: %+v, want order-1@3 and order-2@6", sum)
	}
	sum = audit.VerifySummary{}
	a.get(t, "/api/v1/audit/verify?maxFaults=1", &sum)
	if sum.FaultCount != 2 || len(sum.Faults) != 1 || sum.Faults[0].Position != 3 {
		t.Fatalf("maxFaults=1: %+v", sum)
	}
}

// sseClient reads server-sent events.
type sseClient struct {
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

type sseEvent struct {
	id      string
	data    string
	comment string
}

func (a *auditServer) stream(t *testing.T, query, lastID string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", a.URL()+"/api/v1/events/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("stream: status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c := &sseClient{resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	// The opening comment says the stream is subscribed.
	if ev, err := c.next(); err != nil || !strings.HasPrefix(ev.comment, "streaming from position") {
		t.Fatalf("opening: %+v %v", ev, err)
	}
	return c
}

// next reads one event, or one comment.
func (c *sseClient) next() (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.id != "" || ev.data != "" || ev.comment != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
			ev.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
}

// nextEvent skips comments and returns the next event.
func (c *sseClient) nextEvent(t *testing.T) (string, pageEvent) {
	t.Helper()
	for {
		ev, err := c.next()
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		if ev.id == "" {
			continue
		}
		var e pageEvent
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatalf("event data %q: %v", ev.data, err)
		}
		return ev.id, e
	}
}

func (c *sseClient) close() {
	c.cancel()
	c.resp.Body.Close()
}

func TestEventStreamInOrderAndResumes(t *testing.T) {
	a := newAuditServer(t)
	a.append(t, "order-0", "Before", map[string]int{}) // position 1: before the stream starts
	c := a.stream(t, "", "")
	for i := 0; i < 10; i++ {
		a.append(t, fmt.Sprintf("order-%d", i%3), "Tested", map[string]int{"i": i})
	}
	var got []uint64
	last := ""
	for len(got) < 5 {
		id, e := c.nextEvent(t)
		if id != fmt.Sprint(e.Position) {
			t.Fatalf("id %s for position %d", id, e.Position)
		}
		got, last = append(got, e.Position), id
	}
	c.close() // disconnect mid-way; the server keeps committing
	for i := 10; i < 15; i++ {
		a.append(t, fmt.Sprintf("order-%d", i%3), "Tested", map[string]int{"i": i})
	}
	c = a.stream(t, "", last)
	defer c.close()
	for len(got) < 15 {
		_, e := c.nextEvent(t)
		got = append(got, e.Position)
	}
	for i, pos := range got {
		if want := uint64(i + 2); pos != want {
			t.Fatalf("received positions %v: gap or repeat at %d (want %d)", got, i, want)
		}
	}
	// Live after the catch-up.
	res := a.append(t, "order-9", "Later", map[string]int{})
	if _, e := c.nextEvent(t); e.Position != res.LastPosition || e.Type != "Later" {
		t.Fatalf("live event %+v, want position %d", e.Event, res.LastPosition)
	}
}

func TestEventStreamFiltersHeartbeatsAndShutdown(t *testing.T) {
	a := newAuditServer(t)
	a.Audit.Heartbeat = 20 * time.Millisecond
	a.append(t, "order-1", domain.TypeOrderRequested, map[string]int{})
	a.append(t, "order-1", domain.TypeOrderFilled, map[string]int{})
	a.append(t, domain.StreamCredentials, domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: "x", Fields: map[string]string{"secret": "CIPHER"}})
	a.append(t, "order-2", domain.TypeOrderFilled, map[string]int{})

	c := a.stream(t, "?from=0&type=OrderFilled,ExchangeKeysSet", "")
	defer c.close()
	var types []string
	for len(types) < 3 {
		_, e := c.nextEvent(t)
		if strings.Contains(string(e.Data), "CIPHER") {
			t.Fatal("secret in the event stream")
		}
		types = append(types, e.Stream+"/"+e.Type)
	}
	if want := "order-1/OrderFilled credentials/ExchangeKeysSet order-2/OrderFilled"; strings.Join(types, " ") != want {
		t.Fatalf("filtered stream=%v, want %s", types, want)
	}
	// Idle: heartbeats keep coming.
	for {
		ev, err := c.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.comment == "heartbeat" {
			break
		}
	}
	// Shutdown ends the stream at once (no waiting for the deadline).
	if err := a.Server.Close(); err != nil {
		t.Fatalf("server close with a live stream: %v", err)
	}
	for {
		if _, err := c.next(); err != nil {
			break // EOF: the server ended the stream
		}
	}
}

func TestEventStreamNeedsTokenAndValidates(t *testing.T) {
	a := newAuditServer(t)
	resp, err := http.Get(a.URL() + "/api/v1/events/stream")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("no token: status %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", a.URL()+"/api/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Last-Event-ID", "abc")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "Last-Event-ID") {
		t.Fatalf("bad Last-Event-ID: %d %s", resp.StatusCode, body)
	}
}
