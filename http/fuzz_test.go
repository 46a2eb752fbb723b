package http

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// fuzzEnv is every dependency of the router wired as serve wires it, over
// a SQLite log in a temp dir, served in-process (no listener), with a
// valid token.
type fuzzEnv struct {
	srv     *Server
	handler http.Handler
	store   *sqlite.Store
	token   string

	mu      sync.Mutex
	projErr []string // projection failures: a write the API accepted but the read side could not apply
}

func newFuzzEnv(tb testing.TB) *fuzzEnv {
	tb.Helper()
	env := &fuzzEnv{}
	clock := domain.NewManualClock(testEpoch)
	env.store = sqlite.NewStore(filepath.Join(tb.TempDir(), "events.db"))
	if err := env.store.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { env.store.Close() })
	appendEv := func(stream string, e domain.Event) {
		e.Actor = "test"
		if _, err := env.store.Append(context.Background(), stream, domain.Any, e); err != nil {
			tb.Fatal(err)
		}
	}
	hash, err := cheapArgon2.Hash(testPassword)
	if err != nil {
		tb.Fatal(err)
	}
	appendEv(domain.StreamCredentials, domain.NewEvent(clock, domain.TypePasswordSet, domain.PasswordSet{Hash: hash, Generation: 1}))
	// One enabled pair and the core on, so that orders are placed.
	doc := strings.Replace(coreTestConfig, `"pairs":{}`, `"pairs":{"binance":{"USDT-BTC":{"strategy":"manual","enabled":true}}}`, 1)
	appendEv(domain.StreamConfig, domain.NewEvent(clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: json.RawMessage(doc)}))
	appendEv(domain.StreamSystem, domain.NewEvent(clock, domain.TypeSystemStarted, domain.SystemStarted{}))

	runner := projections.NewRunner(env.store)
	runner.OnError = func(p projections.Projection, e *domain.Event, err error) {
		env.mu.Lock()
		env.projErr = append(env.projErr, p.Name()+": "+e.Type+": "+err.Error())
		env.mu.Unlock()
	}
	passwords := projections.NewPassword()
	ledger := projections.NewLedger(domain.LOFO)
	cfg, files := projections.NewConfig(), projections.NewFiles(ledger)
	for _, p := range []projections.Projection{passwords, ledger, cfg, files} {
		runner.Register(p)
	}
	sim := paper.NewSimulator(clock)
	sim.Settings = func(name string) (paper.ExchangeSettings, bool) {
		_, ok := cfg.Current().Exchange(name)
		return paper.ExchangeSettings{}, ok
	}
	eng := engine.New(env.store, sim.Exchange, cfg, projections.NewBalances(), clock)
	c, tr := eng.Scheduler, eng.Trader
	c.ABP, eng.Desk.Wait = ledger.ABP, runner.WaitFor
	for _, p := range eng.Projections() {
		runner.Register(p)
	}
	if err := runner.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { runner.Close() })
	if err := sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("60000")); err != nil {
		tb.Fatal(err)
	}
	box, err := secrets.NewSecretBox(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		tb.Fatal(err)
	}

	s := NewServer()
	s.Clock, s.Store, s.Runner = clock, env.store, runner
	s.Auth = &Authenticator{Secret: bytes.Repeat([]byte{7}, 32), TokenTTL: 24 * 3600e9, Clock: clock, Generation: passwords.Generation}
	s.Wallet, s.Passwords = cfg.Wallet, passwords
	s.Ledger, s.Trader, s.Core = ledger, tr, c
	s.Audit = NewAudit()
	s.Config, s.Files, s.Secrets = cfg, files, box
	tb.Cleanup(func() { s.Audit.Close() })
	env.srv = s
	env.handler = s.Handler()
	if env.token, err = s.Auth.IssueToken(LoginSubject); err != nil {
		tb.Fatal(err)
	}
	return env
}

// streamRecorder is a ResponseRecorder that ends a server-sent event
// stream as soon as it starts (the client going away), so that the
// stream handler returns.
type streamRecorder struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
}

func (w *streamRecorder) WriteHeader(code int) {
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.cancel()
	}
	w.ResponseRecorder.WriteHeader(code)
}

var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}

var fuzzContentTypes = []string{"", "application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"}

// serve sends one request with the token and checks the contract of every
// answer: no 5xx (a panic is answered 500 by the recovery middleware, so
// it counts), an error is the JSON envelope with its status, a 4xx appends
// nothing (but the LoginFailed record of a refused login), and the read
// side applies whatever was appended.
func (env *fuzzEnv) serve(t *testing.T, method byte, target string, ctype byte, lastEventID string, body []byte) {
	m := fuzzMethods[int(method)%len(fuzzMethods)]
	u, err := url.Parse(target)
	if err != nil || u.Host != "" || u.Scheme != "" || u.Opaque != "" {
		return
	}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/api/v1/" + u.Path
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequest(m, "/", bytes.NewReader(body)).WithContext(ctx)
	req.URL, req.RequestURI = u, u.RequestURI()
	req.Header.Set("Authorization", "Bearer "+env.token)
	if ct := fuzzContentTypes[int(ctype)%len(fuzzContentTypes)]; ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	before, err := env.store.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec := &streamRecorder{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
	env.handler.ServeHTTP(rec, req)
	status, out := rec.Code, rec.Body.Bytes()
	what := m + " " + u.String()
	t.Logf("%s → %d %.120s", what, status, out)
	if status >= 500 {
		t.Fatalf("%s → %d %s", what, status, out)
	}
	if status >= 400 && m != "HEAD" {
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s → %d with Content-Type %q: %s", what, status, ct, out)
		}
		var e errorResponse
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.Status != "error" || e.Code != status || e.Message == "" {
			t.Fatalf("%s → %d, not the error envelope: %s", what, status, out)
		}
	}
	if status >= 400 {
		it := env.store.ReadAll(context.Background(), before+1, 0)
		for it.Next() {
			if e := it.Event(); e.Type != domain.TypeLoginFailed {
				it.Close()
				t.Fatalf("%s → %d appended %s to %s", what, status, e.Type, e.Stream)
			}
		}
		it.Close()
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	if len(env.projErr) > 0 {
		t.Fatalf("%s → %d: the read side failed to apply what was appended: %v", what, status, env.projErr)
	}
}

// FuzzRouter sends arbitrary requests to the whole router with a valid
// token. Its seeds (a request per route, and hostile variants) run in make
// test; make fuzz mutates them.
func FuzzRouter(f *testing.F) {
	type seed struct {
		method      byte // index in fuzzMethods
		path        string
		ctype       byte // index in fuzzContentTypes
		lastEventID string
		body        string
	}
	const get, post = 0, 1
	order := `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"price":50000}}`
	seeds := []seed{
		{get, "/healthz", 0, "", ""},
		{get, "/api/v1/time", 0, "", ""},
		{get, "/api/v1/auth/status", 0, "", ""},
		{post, "/api/v1/auth/login", 1, "", `{"password":"ENC:AAAA"}`},
		{post, "/api/v1/trade/buy", 1, "", order},
		{post, "/api/v1/trade/sell/market", 0, "", `{"exch":"binance","pair":"USDT-BTC","amt":1e-3}`},
		{post, "/api/v1/trade/buy/stoplimit", 1, "", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"stopPrice":61000,"limitPrice":61500}}`},
		{post, "/api/v1/trade/sell/trailingstop", 1, "", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"price":60000,"stopPrice":59000}}`},
		{post, "/api/v1/trade/buy/oco", 1, "", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"price":59000,"stopPrice":61000,"limit":61500}}`},
		{post, "/api/v1/trade/close/market", 1, "", `{"data":{"exch":"binance","pair":"USDT-BTC"}}`},
		{post, "/api/v1/trade/cancel", 1, "", `{"data":{"exch":"binance","pair":"USDT-BTC","id":"1","price":1,"type":"limit"}}`},
		{post, "/api/v1/trade/buy", 3, "", order},
		{post, "/api/v1/trade/buy", 1, "", `{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"amt":5,"price":1}}`},
		{post, "/api/v1/trade/buy", 1, "", "{\"data\":{\"exch\":\"binance\xff\",\"pair\":\"USDT-BTC\",\"amt\":1,\"price\":1}}"},
		{get, "/api/v1/orders?key=binance/USDT-BTC", 0, "", ""},
		{get, "/api/v1/orders/page?key=binance%2FUSDT-BTC&page=0&pageSize=10", 0, "", ""},
		{get, "/api/v1/orders/open?key=binance/USDT-BTC", 0, "", ""},
		{get, "/api/v1/orders/day?timezone=Europe/Moscow&keys[]=binance/USDT-BTC", 0, "", ""},
		{get, "/api/v1/market/candles?key=binance/USDT-BTC", 0, "", ""},
		{post, "/api/v1/chart/data", 1, "", `{"exchange":"binance","pair":"USDT-BTC"}`},
		{post, "/api/v1/coremem/single", 1, "", `{"exchange":"binance","pair":"USDT-BTC","elements":["ABP"]}`},
		{post, "/api/v1/balances", 1, "", `{}`},
		{post, "/api/v1/assets/total", 1, "", `{"exchange":"binance","base":"USDT","timezone":"UTC"}`},
		{get, "/api/v1/pairs?exchange=binance", 0, "", ""},
		{post, "/api/v1/pnl/overview", 1, "", `{"timezone":"UTC","keys":["binance/USDT-BTC"],"dateRange":{"startDate":0,"endDate":1767323045000}}`},
		{get, "/api/v1/pnl/daily?timezone=UTC&keys[]=binance/USDT-BTC&startTimestamp=0&endTimestamp=1767323045000", 0, "", ""},
		{post, "/api/v1/system/start", 1, "", ``},
		{post, "/api/v1/license/keys/edit", 1, "", `{"wallet":"x","verifyExchange":"binance","newLicenses":{}}`},
		{get, "/api/v1/config/full", 0, "", ""},
		{post, "/api/v1/config/update", 1, "", `{"data":` + coreTestConfig + `}`},
		{post, "/api/v1/config/update", 1, "", `{"data":{"bot":{},"exchanges":{"binance":{"delay":0}},"pairs":{},"strategies":{},"GUI":{}}}`},
		{post, "/api/v1/config/pair/add", 1, "", `{"exchange":"binance","pair":"USDT-ETH","settings":{"strategy":"gain","TRADING_LIMIT":50}}`},
		{post, "/api/v1/config/pair/remove", 1, "", `{"exchange":"binance","pair":"USDT-ETH"}`},
		{post, "/api/v1/config/strategy/add", 1, "", `{"name":"mine","settings":{"STEP":2}}`},
		{post, "/api/v1/config/strategy/remove", 1, "", `{"name":"mine"}`},
		{get, "/api/v1/files/strategy", 0, "", ""},
		{post, "/api/v1/files/strategy/write", 1, "", `{"filename":"a.js","document":"// x"}`},
		{post, "/api/v1/files/strategy/get", 1, "", `{"filename":"a.js"}`},
		{post, "/api/v1/files/strategy/delete", 1, "", `{"filename":"../a.js"}`},
		{post, "/api/v1/files/autoconfig/write", 1, "", `{"document":"{\"a\":1}"}`},
		{post, "/api/v1/files/custom-editor/write", 1, "", `{"document":{"a":[1,2]}}`},
		{post, "/api/v1/files/backup", 1, "", ``},
		{post, "/api/v1/files/state/get", 1, "", `{"filename":"binance-USDT-BTC-state.json"}`},
		{get, "/api/v1/audit/verify", 0, "", ""},
		{get, "/api/v1/audit/events?from=0&limit=5&type=OrderRequested", 0, "", ""},
		{get, "/api/v1/events/stream", 0, "3", ""},
		{get, "/api/v1/events/stream", 0, "18446744073709551615", ""},
		{get, "/api/v1/events/stream?from=x", 0, "", ""},
		{post, "/api/v1/dashboard/login", 1, "", `{"password":"x"}`},
		{2, "/api/v1/time", 0, "", ""},
		{get, "/api/v1/no/such/route", 0, "", ""},
		{get, "/", 0, "", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.ctype, s.lastEventID, []byte(s.body))
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, method byte, path string, ctype byte, lastEventID string, body []byte) {
		env.serve(t, method, path, ctype, lastEventID, body)
	})
}

// FuzzTradeBody: reading a trade body never panics; the one-pass reading
// finds exactly the fields the encoding/json path finds; and whatever is
// read passed jsonscan.CheckJSON (no repeated key, valid UTF-8, one value).
func FuzzTradeBody(f *testing.F) {
	for _, s := range []string{
		`{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"price":1000}}`,
		`{"exch":"binance","pair":"USDT-BTC","amt":"0.5","x":null,"y":true}`,
		`{"data":{"amt":1,"amt":2}}`, `{"amt":1,"\u0061mt":2}`, `{"data":null,"amt":1}`, `{"data":{"a":[1]}}`,
		`{"data":{"amt":NaN}}`, `{"data":{}}}`, "{\"pair\":\"\xff\"}", `{"data":{"a":1},"data":{"a":2}}`, ``, ` `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeTrade(httptest.NewRequest("POST", "/", bytes.NewReader(body)))
		if err != nil {
			if domain.ErrorCode(err) != domain.EINVALID {
				t.Fatalf("%q: %v, want EINVALID", body, err)
			}
			return
		}
		if err := jsonscan.CheckJSON(body); err != nil {
			t.Fatalf("%q read although CheckJSON refuses it: %v", body, err)
		}
		if fast, ok := flatTradeFields(body); ok {
			slow, err := decodeTrade(httptest.NewRequest("POST", "/", bytes.NewReader(append([]byte(" "), body...))))
			if err != nil {
				t.Fatalf("%q: one pass read it, encoding/json refuses it: %v", body, err)
			}
			if len(fast) != len(slow) {
				t.Fatalf("%q: one pass %v, encoding/json %v", body, fast, slow)
			}
			for k, v := range slow {
				if string(fast[k]) != string(bytes.TrimSpace(v)) {
					t.Fatalf("%q: field %s one pass %s, encoding/json %s", body, k, fast[k], v)
				}
			}
		}
		if got == nil {
			t.Fatalf("%q: no error and no fields", body)
		}
	})
}

// FuzzLastEventID: a Last-Event-ID header resumes strictly after the
// position it names, or is refused; it never wraps to replaying the log
// from the start.
func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"0", "7", " 42 ", "18446744073709551615", "18446744073709551614", "-1", "1e3", "+5", "0x10", "", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, last string) {
		from, err := resumeAfter(last)
		if err != nil {
			// The message quotes at most 40 bytes of the header.
			if domain.ErrorCode(err) != domain.EINVALID || len(domain.ErrorMessage(err)) > 300 {
				t.Fatalf("%q: %v", last, err)
			}
			return
		}
		if from == 0 {
			t.Fatalf("%q resumes at 0: the whole log again", last)
		}
		if got := strconv.FormatUint(from-1, 10); got != strings.TrimSpace(last) && strings.TrimLeft(strings.TrimSpace(last), "0") != strings.TrimLeft(got, "0") {
			t.Fatalf("%q resumes after %s", last, got)
		}
	})
}
