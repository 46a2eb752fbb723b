//go:build ccxt

// Package ccxt is the long-tail connector (docs/architecture.md): one Exchange per
// account of any exchange github.com/ccxt/ccxt/go/v4 knows (Kraken, Bybit,
// OKX, KuCoin, Coinbase …), spot markets only.
//
// What it adds to the library, which has no context, a fixed 30 s
// timeout, a throttler that races under -race and one flat error type:
//   - every call runs under our deadline (the caller's context, at most
//     Timeout): a call that has not answered by then is EUNAVAILABLE, an
//     unknown outcome. Calls to one account run one at a time (ccxt's
//     exchange object is not safe for concurrent use), and the library's
//     HTTP client gets Timeout too, so an abandoned call ends soon after;
//   - ccxt's throttler is off; our own limiter per account
//     (golang.org/x/time/rate) runs at the exchange's published rate
//     (ccxt's rateLimit) unless RequestsPerSecond says otherwise. A 429 or
//     418 answer, or a rate-limit error in the body, stops every call for
//     Retry-After (RateLimitBackoff when the exchange sends none):
//     EUNAVAILABLE naming the rate limit, nothing sent;
//   - errors are mapped by ccxt's error type (see mapErr) to the domain's
//     codes and to the connector contract: network errors, timeouts and
//     5xx are unknown outcomes (EUNAVAILABLE); InsufficientFunds and
//     InvalidOrder are refusals (EINVALID); OrderNotFound and BadSymbol
//     ENOTFOUND; AuthenticationError and PermissionDenied EUNAUTHORIZED;
//   - the client order id goes with every placement in the exchange's own
//     field (profiles: newClientOrderId, orderLinkId, clOrdId, cl_ord_id,
//     clientOid, client_order_id …); an id the exchange cannot take whole
//     ("tl" and 32 hex digits is longer than OKX's 32 and Kraken's 18) is
//     sent as its 32 hex digits, which both take, and read back;
//   - filters from ccxt's market precision and limits are applied before
//     anything is sent (domain.MarketFilters.Apply);
//   - a duplicate refusal of a placement is ECONFLICT: the engine's
//     placement guard (engine.Guard) looks the order up, as it looks up an
//     id sent before instead of sending it again.
//
// Fills come from fetchMyTrades. Seq is the trade time in ms shifted left
// 20 bits plus 20 bits of a hash of the trade id.
//
// The package builds only with -tags ccxt (make build-ccxt, make
// test-ccxt): ccxt is large, and a build without the tag (make run, go test
// ./...) neither compiles nor links it.
//
// Its tests (exchange/exchangetest against the Kraken fixture, failure
// cases included) pass with -race: ccxt's own throttler, the part that
// races, is off.
package ccxt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	ccxtlib "github.com/ccxt/ccxt/go/v4"
	"golang.org/x/time/rate"

	"github.com/tradeledger/tradeledger/domain"
)

// Defaults of Exchange settings.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMarketsTTL       = time.Hour
	DefaultRateLimitBackoff = 30 * time.Second
	// DefaultBurst is how many requests the limiter lets through at once.
	DefaultBurst = 5
)

// Exchanges lists the exchange ids ccxt knows (ccxtId values).
func Exchanges() []string { return append([]string(nil), ccxtlib.Exchanges...) }

// Known reports whether ccxt knows the exchange id.
func Known(id string) bool {
	for _, e := range ccxtlib.Exchanges {
		if e == id {
			return true
		}
	}
	return false
}

// Exchange is one account on one ccxt exchange. Fill its settings before
// the first call; it is safe for concurrent use after that.
type Exchange struct {
	// ExchangeName is the exchange's name in the configuration
	// ("kraken", "kraken#2").
	ExchangeName string
	// ID is ccxt's exchange id ("kraken", "bybit", "okx" …).
	ID string
	// Key, Secret and Password (OKX's and KuCoin's passphrase) are the
	// account's credentials.
	Key, Secret, Password string
	// Sandbox selects the exchange's testnet; EINVALID on an exchange
	// that has none in ccxt.
	Sandbox bool
	// URL, when set, replaces the host of every API URL of the exchange
	// (tests: a fixture server), keeping each URL's path.
	URL string
	// Now is the clock Retry-After is measured on.
	Now func() time.Time
	// Timeout bounds each call (and each of ccxt's HTTP requests).
	Timeout time.Duration
	// RequestsPerSecond is our limiter's rate (0: the exchange's
	// published rate from ccxt); Burst its burst (0: DefaultBurst).
	RequestsPerSecond float64
	Burst             int
	// RateLimitBackoff is how long calls stop after a rate-limit error
	// without Retry-After.
	RateLimitBackoff time.Duration
	// HTTPClient's transport carries ccxt's requests (nil: a fresh
	// http.Transport); its timeout is replaced by Timeout.
	HTTPClient *http.Client
	// Pairs lists pairs whose fills FillsSince scans besides those this
	// connector placed orders on, for exchanges that need a symbol.
	Pairs func() []string

	once    sync.Once
	initErr error
	client  ccxtlib.IExchange
	core    *ccxtlib.Exchange
	prof    profile
	limiter *rate.Limiter
	sem     chan struct{} // one ccxt call at a time
	// lastStart is when the last call started (ms, guarded by sem):
	// nonces of ms-clocked exchanges (Kraken) must grow.
	lastStart int64

	mu           sync.Mutex
	markets      map[string]market // by pair
	bySymbol     map[string]market // by ccxt symbol
	marketsAt    time.Time
	blockedUntil time.Time
	blockReason  string
	retryAfter   time.Duration     // from the last 429/418, read by mapErr
	limited      bool              // a 429/418 came during the current call
	placed       map[string]string // client order id → pair, sent by this connector
	clients      map[string]string // order id → client order id
	traded       map[string]bool   // pairs with orders from this connector
}

type market struct {
	pair, symbol, base, quote string
	filters                   domain.MarketFilters
}

var _ domain.Exchange = (*Exchange)(nil)

// New returns a connector for one account of a ccxt exchange.
func New(name, id, key, secret string) *Exchange {
	return &Exchange{ExchangeName: name, ID: strings.ToLower(id), Key: key, Secret: secret}
}

// Name is the exchange's name in the configuration.
func (x *Exchange) Name() string { return x.ExchangeName }

// Open checks the settings and prepares ccxt's client, without a request:
// EINVALID for an exchange ccxt does not know or a testnet it has none
// of. Every call opens the connector itself; Open reports early.
func (x *Exchange) Open() error { return x.init() }

func (x *Exchange) init() error {
	x.once.Do(func() { x.initErr = x.open() })
	return x.initErr
}

func (x *Exchange) open() error {
	if x.Now == nil {
		x.Now = time.Now
	}
	if x.Timeout <= 0 {
		x.Timeout = DefaultTimeout
	}
	if x.RateLimitBackoff <= 0 {
		x.RateLimitBackoff = DefaultRateLimitBackoff
	}
	if x.Burst <= 0 {
		x.Burst = DefaultBurst
	}
	x.sem = make(chan struct{}, 1)
	x.placed, x.clients, x.traded = map[string]string{}, map[string]string{}, map[string]bool{}
	if !Known(x.ID) {
		return domain.Errorf(domain.EINVALID, "exchange %s: ccxt has no exchange %q (ccxtId)", x.ExchangeName, x.ID)
	}
	x.prof = profileOf(x.ID)
	opts := map[string]interface{}{
		// ccxt's throttler has a data race; ours limits instead.
		"enableRateLimit": false,
		"timeout":         x.Timeout.Milliseconds(),
	}
	if x.Key != "" {
		opts["apiKey"] = x.Key
	}
	if x.Secret != "" {
		opts["secret"] = x.Secret
	}
	if x.Password != "" {
		opts["password"] = x.Password
	}
	c := ccxtlib.CreateExchange(x.ID, opts)
	if c == nil {
		return domain.Errorf(domain.EINVALID, "exchange %s: ccxt has no exchange %q (ccxtId)", x.ExchangeName, x.ID)
	}
	core, err := coreOf(c)
	if err != nil {
		return domain.Errorf(domain.EINTERNAL, "exchange %s: %v", x.ExchangeName, err)
	}
	if err := x.setHTTPClient(core); err != nil {
		return domain.Errorf(domain.EINTERNAL, "exchange %s: %v", x.ExchangeName, err)
	}
	if x.Sandbox {
		urls, _ := core.Urls.(map[string]interface{})
		if _, ok := urls["test"]; !ok {
			return domain.Errorf(domain.EINVALID, "exchange %s: %s has no testnet in ccxt; remove testnet: true", x.ExchangeName, x.ID)
		}
		c.SetSandboxMode(true)
	}
	if x.URL != "" {
		urls, _ := core.Urls.(map[string]interface{})
		if urls != nil {
			urls["api"] = rebase(urls["api"], strings.TrimRight(x.URL, "/"))
		}
	}
	perSecond := x.RequestsPerSecond
	if perSecond <= 0 {
		perSecond = 1
		if core.RateLimit > 0 {
			perSecond = 1000 / core.RateLimit
		}
	}
	x.limiter = rate.NewLimiter(rate.Limit(perSecond), x.Burst)
	x.client, x.core = c, core
	return nil
}

// coreOf returns the base ccxt.Exchange inside a typed exchange
// (*ccxt.Kraken → Core *KrakenCore → Exchange).
func coreOf(c ccxtlib.IExchange) (*ccxtlib.Exchange, error) {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("ccxt returned %T, not a typed exchange", c)
	}
	core := v.Elem().FieldByName("Core")
	if !core.IsValid() || core.Kind() != reflect.Pointer || core.IsNil() {
		return nil, fmt.Errorf("ccxt %T has no Core", c)
	}
	ex := core.Elem().FieldByName("Exchange")
	if !ex.IsValid() || ex.Type() != reflect.TypeOf(ccxtlib.Exchange{}) {
		return nil, fmt.Errorf("ccxt %T has no base Exchange", c)
	}
	return ex.Addr().Interface().(*ccxtlib.Exchange), nil
}

// setHTTPClient replaces ccxt's HTTP client (unexported, a fixed 30 s
// timeout, its own transport) by one with our timeout whose transport
// reads Retry-After. Pinned to ccxt v4.5.20's field name: a test fails
// if it moves.
func (x *Exchange) setHTTPClient(core *ccxtlib.Exchange) error {
	f := reflect.ValueOf(core).Elem().FieldByName("httpClient")
	if !f.IsValid() || f.Type() != reflect.TypeOf((*http.Client)(nil)) {
		return errors.New("ccxt's Exchange has no httpClient *http.Client field: the pinned ccxt version changed")
	}
	var base http.RoundTripper = &http.Transport{Proxy: http.ProxyFromEnvironment}
	if x.HTTPClient != nil && x.HTTPClient.Transport != nil {
		base = x.HTTPClient.Transport
	}
	hc := &http.Client{Timeout: x.Timeout, Transport: retryAfterTransport{base: base, x: x}}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(hc))
	return nil
}

// rebase points every URL under v at base, keeping each URL's path.
func rebase(v interface{}, base string) interface{} {
	switch t := v.(type) {
	case string:
		u, err := url.Parse(t)
		if err != nil || u.Host == "" {
			return t
		}
		return base + u.EscapedPath()
	case map[string]interface{}:
		out := make(map[string]interface{}, len(t))
		for k, e := range t {
			out[k] = rebase(e, base)
		}
		return out
	}
	return v
}

// retryAfterTransport notes Retry-After of 429 and 418 answers; ccxt reads
// the answer itself and raises its rate-limit error, which mapErr turns
// into a pause of that length.
type retryAfterTransport struct {
	base http.RoundTripper
	x    *Exchange
}

func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusTeapot {
		t.x.mu.Lock()
		t.x.limited = true
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
			t.x.retryAfter = time.Duration(s) * time.Second
		}
		t.x.mu.Unlock()
	}
	return res, nil
}

// call runs fn (one ccxt call) under ctx and at most Timeout, after the
// rate-limit gate, one call per account at a time, and maps its error. A
// call still running at the deadline is left to finish (ccxt cannot be
// cancelled) and the caller gets EUNAVAILABLE: the outcome is unknown.
func (x *Exchange) call(ctx context.Context, what string, fn func() error) error {
	if err := x.init(); err != nil {
		return err
	}
	if err := x.gate(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, x.Timeout)
	defer cancel()
	select {
	case x.sem <- struct{}{}:
	case <-ctx.Done():
		return domain.Errorf(domain.EUNAVAILABLE, "%s: an earlier request has not answered yet; %s not sent", x.ExchangeName, what)
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-x.sem }()
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("ccxt panicked: %v", r)
			}
		}()
		for time.Now().UnixMilli() <= x.lastStart {
			runtime.Gosched()
		}
		err := fn()
		// After fn: its requests' nonces are all ≤ now.
		x.lastStart = time.Now().UnixMilli()
		done <- err
	}()
	select {
	case err := <-done:
		x.mu.Lock()
		limited := x.limited
		x.limited = false
		x.mu.Unlock()
		if err == nil && limited {
			// A 429/418 ccxt swallowed (it ignores a failed fetchCurrencies
			// inside loadMarkets): the exchange said to back off all the same.
			err = ccxtlib.RateLimitExceeded(x.ID + " answered HTTP 429")
		}
		return x.mapErr(what, err)
	case <-ctx.Done():
		return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer %s in time: the outcome is unknown", x.ExchangeName, what)
	}
}

// gate refuses while a rate-limit pause runs, then waits for the limiter.
func (x *Exchange) gate(ctx context.Context) error {
	x.mu.Lock()
	until, reason := x.blockedUntil, x.blockReason
	x.mu.Unlock()
	if now := x.Now(); now.Before(until) {
		return domain.Errorf(domain.EUNAVAILABLE, "%s: %s; retry after %s", x.ExchangeName, reason, until.Sub(now).Round(time.Second))
	}
	if err := x.limiter.Wait(ctx); err != nil {
		return domain.Errorf(domain.EUNAVAILABLE, "%s: our rate limit of %.3g requests a second is used up for now; retry later", x.ExchangeName, float64(x.limiter.Limit()))
	}
	return nil
}

// errType returns ccxt's error type and message ("" when err is not
// ccxt's). The message loses the stack trace ccxt appends.
func errType(err error) (typ, msg string) {
	var ce *ccxtlib.Error
	if !errors.As(err, &ce) {
		return "", ""
	}
	msg = ce.Message
	if i := strings.Index(msg, "]\nStack"); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, "\nStack"); i >= 0 {
		msg = msg[:i]
	}
	return string(ce.Type), strings.TrimSpace(msg)
}

// mapErr turns ccxt's flat errors into domain errors (see the package
// comment). Rate-limit errors start a pause of Retry-After, or of
// RateLimitBackoff.
func (x *Exchange) mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := domain.AsError(err); ok {
		return err
	}
	typ, msg := errType(err)
	if msg == "" {
		msg = err.Error()
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	switch typ {
	case "RateLimitExceeded", "DDoSProtection":
		x.mu.Lock()
		wait := x.retryAfter
		x.retryAfter = 0
		if wait <= 0 {
			wait = x.RateLimitBackoff
		}
		reason := "rate limit reached (" + typ + ")"
		x.blockedUntil, x.blockReason = x.Now().Add(wait), reason
		x.mu.Unlock()
		return domain.Errorf(domain.EUNAVAILABLE, "%s: %s on %s: %s; retry after %s", x.ExchangeName, reason, what, msg, wait)
	case "AuthenticationError", "PermissionDenied", "AccountSuspended", "AccountNotEnabled":
		return domain.Errorf(domain.EUNAUTHORIZED, "%s refused the API key (%s): %s", x.ExchangeName, typ, msg)
	case "OrderNotFound", "BadSymbol":
		return domain.Errorf(domain.ENOTFOUND, "%s: %s: %s", x.ExchangeName, what, msg)
	case "InsufficientFunds", "InvalidOrder", "BadRequest", "ArgumentsRequired", "OperationRejected",
		"MarketClosed", "NotSupported", "OrderNotFillable", "OrderImmediatelyFillable", "InvalidAddress",
		"DuplicateOrderId", "ContractUnavailable", "NoChange", "BadResponse", "NullResponse":
		return domain.Errorf(domain.EINVALID, "%s refused %s (%s): %s", x.ExchangeName, what, typ, msg)
	case "ExchangeError":
		// ccxt's catch-all for an error the exchange stated: a refusal,
		// unless it names the key.
		if authMessage(msg) {
			return domain.Errorf(domain.EUNAUTHORIZED, "%s refused the API key: %s", x.ExchangeName, msg)
		}
		return domain.Errorf(domain.EINVALID, "%s refused %s: %s", x.ExchangeName, what, msg)
	}
	// NetworkError, RequestTimeout, ExchangeNotAvailable, OnMaintenance,
	// InvalidNonce, a 5xx or anything unexpected: no definite answer.
	return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer %s (%s): the outcome is unknown", x.ExchangeName, what, firstLine(msg))
}

func authMessage(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"invalid key", "invalid signature", "invalid api", "api key", "apikey", "unauthorized", "permission denied"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
