package http

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/argon2id"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// Fixed values of every test server.
const (
	testWallet   = "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8" // Server.Wallet
	testPassword = "correct horse battery"              // registered as generation 1
)

// cheapArgon2 keeps tests fast; the format and checks are the same.
var cheapArgon2 = argon2id.Params{Time: 1, Memory: 64, Threads: 1, SaltLen: 16, KeyLen: 32}

// testEpoch is where a test server's clock starts.
var testEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testServer is a running Server on 127.0.0.1:0 over a SQLite store in
// t.TempDir(), with the password projection registered, testPassword set
// and a valid token. Build it with newTestServer; it closes itself at the
// end of the test.
type testServer struct {
	t *testing.T
	// URL is the base URL of the main listener ("http://127.0.0.1:port").
	URL string
	// Server is the server under test; set its dependencies in a setup
	// function (before Open).
	Server *Server
	// Store is the event log; Runner feeds the projections from it.
	Store  *sqlite.Store
	Runner *projections.Runner
	// Clock drives the server's time (tokens, events, rate limits).
	Clock *domain.ManualClock
	// Passwords is the registered password projection.
	Passwords *projections.Password
	// Token is a valid bearer token for LoginSubject.
	Token string

	logs *syncBuffer
}

// newTestServer starts a test server. Each setup function runs before the
// replay and before the listeners open: register projections on ts.Runner,
// append fixture events to ts.Store (with ts.Clock) and set ts.Server's
// dependency fields there, e.g.
//
//	ts := newTestServer(t, func(ts *testServer) {
//		orders := projections.NewOrders()
//		ts.Runner.Register(orders)
//		ts.Server.Orders = orders
//	})
//	status, body := ts.do("GET", "/api/v1/orders?key=…", nil, ts.Token)
func newTestServer(t *testing.T, setup ...func(ts *testServer)) *testServer {
	t.Helper()
	ts := &testServer{t: t, Clock: domain.NewManualClock(testEpoch), logs: &syncBuffer{}}
	ts.Store = sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := ts.Store.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Store.Close() })

	hash, err := cheapArgon2.Hash(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	ts.appendEvent(domain.StreamCredentials, domain.NewEvent(ts.Clock, domain.TypePasswordSet, domain.PasswordSet{Hash: hash, Generation: 1}))

	ts.Runner = projections.NewRunner(ts.Store)
	ts.Passwords = projections.NewPassword()
	ts.Runner.Register(ts.Passwords)

	s := NewServer()
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	s.Logger = zap.New(zapcore.NewCore(enc, zapcore.AddSync(ts.logs), zapcore.DebugLevel))
	s.Clock, s.Store, s.Runner = ts.Clock, ts.Store, ts.Runner
	s.Auth = &Authenticator{Secret: bytes.Repeat([]byte{7}, 32), TokenTTL: time.Hour, Clock: ts.Clock, Generation: ts.Passwords.Generation}
	s.Wallet = func() string { return testWallet }
	s.Passwords = ts.Passwords
	ts.Server = s

	for _, f := range setup {
		f(ts)
	}
	if err := ts.Runner.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Runner.Close() })
	if err := s.Open("127.0.0.1:0", ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ts.URL = s.URL()
	if ts.Token, err = s.Auth.IssueToken(LoginSubject); err != nil {
		t.Fatal(err)
	}
	return ts
}

// do sends a request and returns the status and body. body is sent as is
// when it is a string or []byte, as JSON otherwise (nil: no body); token,
// when not empty, goes in "Authorization: Bearer <token>". Any transport
// error fails the test.
func (ts *testServer) do(method, path string, body any, token string) (int, []byte) {
	ts.t.Helper()
	resp := ts.request(method, path, body, map[string]string{"Authorization": bearer(token)})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}

// request is do with any headers (an empty value is left out), returning
// the whole response; the caller closes its body.
func (ts *testServer) request(method, path string, body any, headers map[string]string) *http.Response {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	validateResponse(ts.t, req, resp) // against openapi.json
	return resp
}

func bearer(token string) string {
	if token == "" {
		return ""
	}
	return "Bearer " + token
}

// appendEvent appends e to stream (actor "test") and fails the test on
// error; after the runner started it also waits for the projections.
func (ts *testServer) appendEvent(stream string, e domain.Event) domain.AppendResult {
	ts.t.Helper()
	e.Actor = "test"
	res, err := ts.Store.Append(context.Background(), stream, domain.Any, e)
	if err != nil {
		ts.t.Fatal(err)
	}
	if ts.URL != "" {
		if err := ts.Runner.WaitFor(context.Background(), res.LastPosition); err != nil {
			ts.t.Fatal(err)
		}
	}
	return res
}

// events returns every event of the log, in order.
func (ts *testServer) events() []domain.Event {
	ts.t.Helper()
	it := ts.Store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	var out []domain.Event
	for it.Next() {
		out = append(out, it.Event())
	}
	if err := it.Err(); err != nil {
		ts.t.Fatal(err)
	}
	return out
}

// Logs returns everything the server logged so far, one JSON line per
// entry.
func (ts *testServer) Logs() string { return ts.logs.String() }

// decodeBody unmarshals a JSON response body, failing the test if it is not
// JSON.
func decodeBody[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("response is not JSON: %v: %q", err, body)
	}
	return v
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (the logger).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
