package http

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// cfgEnv is a server with the config, license and file routes on a real
// SQLite log in a temp dir, for the tests of this engineer's routes.
type cfgEnv struct {
	t      *testing.T
	srv    *cfgServer
	http   *httptest.Server
	store  *sqlite.Store
	runner *projections.Runner
	clock  *domain.ManualClock
	token  string
	box    *domain.SecretBox
	bodies []string // every response body, for the secret-leak check
}

// cfgServer is the server under test with its configuration read model as
// built (the Server holds it as a ConfigReader), and its configuration
// writer.
type cfgServer struct {
	*Server
	Config *projections.Config
}

// runConfig runs a configuration command as the config routes do.
func (s *cfgServer) runConfig(r *http.Request, decide func(domain.ConfigState) ([]domain.Event, error), check func(context.Context, domain.ConfigState, []domain.Event) error) error {
	return s.resources().config.w.run(r, decide, check)
}

const cfgWallet = "0xabcdef0123456789abcdef0123456789abcdef01"

// cfgInitial is a first configuration as initConfig writes it.
func cfgInitial() map[string]any {
	return map[string]any{
		"bot":       map[string]any{"service_wallet": cfgWallet, "SIMULATOR": true},
		"exchanges": map[string]any{"binance": map[string]any{"isEncrypted": false, "key": "", "secret": "", "delay": 10}},
		"pairs":     map[string]any{},
		"strategies": map[string]any{
			"gain":     map[string]any{"GAIN": 1},
			"stepgrid": map[string]any{"STEP": 1},
			"manual":   map[string]any{},
		},
		"GUI": map[string]any{},
	}
}

func newCfgEnv(t *testing.T) *cfgEnv {
	t.Helper()
	store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg, err := domain.ConfigFromMap(cfgInitial())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(cfg)
	clock := domain.NewManualClock(time.UnixMilli(1700000000000))
	e := domain.NewEvent(clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: body})
	e.Actor = domain.ActorCLI
	if _, err := store.Append(context.Background(), domain.StreamConfig, domain.NoStream, e); err != nil {
		t.Fatal(err)
	}
	runner := projections.NewRunner(store)
	ledger := projections.NewLedger(domain.LOFO)
	cv, fv := projections.NewConfig(), projections.NewFiles(ledger)
	runner.Register(cv)
	runner.Register(ledger)
	runner.Register(fv)
	runner.OnError = func(p projections.Projection, e *domain.Event, err error) {
		t.Errorf("projection %s: event %s/%d: %v", p.Name(), e.Stream, e.Version, err)
	}
	if err := runner.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	key := bytes.Repeat([]byte{7}, 32)
	box, err := domain.NewSecretBox(key)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer()
	s.Clock, s.Store, s.Runner = clock, store, runner
	s.Auth = &Authenticator{Secret: bytes.Repeat([]byte{9}, 32), TokenTTL: time.Hour, Clock: clock}
	s.Config, s.Files, s.Secrets = cv, fv, box
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	token, err := s.Auth.IssueToken("tester")
	if err != nil {
		t.Fatal(err)
	}
	return &cfgEnv{t: t, srv: &cfgServer{Server: s, Config: cv}, http: hs, store: store, runner: runner, clock: clock, token: token, box: box}
}

// do sends body (marshalled unless a string) and returns status and body.
func (e *cfgEnv) do(method, path string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.http.URL+"/api/v1"+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	e.bodies = append(e.bodies, string(b))
	return resp.StatusCode, b
}

// must calls do and fails unless the status is want.
func (e *cfgEnv) must(want int, method, path string, body any) []byte {
	e.t.Helper()
	status, b := e.do(method, path, body)
	if status != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, b)
	}
	return b
}

// refuse calls do and fails unless the status is want and the message
// contains msg.
func (e *cfgEnv) refuse(want int, msg, method, path string, body any) {
	e.t.Helper()
	before := e.head()
	status, b := e.do(method, path, body)
	if status != want || !strings.Contains(string(b), msg) {
		e.t.Fatalf("%s %s: status %d body %s; want %d containing %q", method, path, status, b, want, msg)
	}
	if after := e.head(); after != before {
		e.t.Fatalf("%s %s refused but the log moved from %d to %d", method, path, before, after)
	}
}

func (e *cfgEnv) head() uint64 {
	e.t.Helper()
	h, err := e.store.Head(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// events returns every event of the log.
func (e *cfgEnv) events() []domain.Event {
	e.t.Helper()
	it := e.store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	var out []domain.Event
	for it.Next() {
		out = append(out, it.Event())
	}
	if err := it.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// append appends events directly (as another writer would) and waits for
// the projections.
func (e *cfgEnv) append(stream string, events ...domain.Event) {
	e.t.Helper()
	for i := range events {
		events[i].Actor = "test"
	}
	res, err := e.store.Append(context.Background(), stream, domain.Any, events...)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.runner.WaitFor(context.Background(), res.LastPosition); err != nil {
		e.t.Fatal(err)
	}
}

// fullConfig returns config/full's config as a map.
func (e *cfgEnv) fullConfig() map[string]any {
	e.t.Helper()
	var resp struct {
		Status string         `json:"status"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(e.must(200, "GET", "/config/full", nil), &resp); err != nil {
		e.t.Fatal(err)
	}
	if resp.Status != "success" {
		e.t.Fatalf("status %q", resp.Status)
	}
	return resp.Config
}

// path walks m along keys.
func cfgPath(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// newTestRequest is a request context for calling handlers' helpers
// directly.
func newTestRequest(t *testing.T) *http.Request {
	t.Helper()
	return httptest.NewRequest("POST", "/api/v1/config/update", nil)
}
