package http

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"
	"golang.org/x/net/netutil"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// Defaults for Server settings.
const (
	DefaultMaxBodyBytes    = 1 << 20 // 1 MiB
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultBodyTimeout is how long a request body may take to arrive
	// once its headers are in (1 MiB at 50 KB/s).
	DefaultBodyTimeout = 20 * time.Second
	// DefaultHeaderTimeout is how long a client may take to send the
	// request line and headers.
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that sends no new
	// request for that long.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxConns caps the open connections of each listener; more
	// wait in the kernel's accept queue until one closes.
	DefaultMaxConns = 512
)

// Server is the HTTP API: the listeners, the router and its middleware.
// Fill its settings and dependencies (the interfaces the resource files
// declare; each resource's handler type reads only its part of them),
// then Open; Close shuts it down gracefully.
type Server struct {
	// Logger receives one line per request and every internal error.
	Logger *zap.Logger
	// Clock is the source of time for responses and events.
	Clock domain.Clock
	// Store is the event log; handlers write through commands
	// (eventstore.Run).
	Store domain.EventStore
	// Runner feeds the projections; commands wait on it (read-your-writes).
	Runner ProjectionRunner
	// MaxBodyBytes bounds request bodies (413 beyond).
	MaxBodyBytes int64
	// BodyTimeout bounds the time a request body takes to arrive after
	// its headers: a body trickled slower is answered 408 and its
	// connection closed (≤ 0: no bound).
	BodyTimeout time.Duration
	// HeaderTimeout bounds the time to read a request's headers;
	// IdleTimeout closes keep-alive connections idle that long.
	HeaderTimeout, IdleTimeout time.Duration
	// MaxConns caps the concurrent connections of each listener (≤ 0: no
	// cap). Connections beyond it wait to be accepted until one closes.
	MaxConns int
	// WriteStallTimeout drops a response whose client takes none of it
	// for that long (writestall.go; ≤ 0: never).
	WriteStallTimeout time.Duration
	// TLSCertFile and TLSKeyFile, when both set, serve HTTPS on the main
	// listener.
	TLSCertFile, TLSKeyFile string

	// Dependencies of the resource groups; each group's file documents its
	// own. A nil dependency leaves its routes answering 503.
	Auth *Authenticator
	// Pnl, when set, answers the PNL and assets/total routes instead of
	// Ledger (pnlsource.go): the ClickHouse reader with --read-from
	// clickhouse.
	Pnl PnlReader
	// Ledger serves order history, PNL, asset history, chart marks, the
	// books and the fills' pnl of orders/all, each route group reading
	// its part (LedgerReader: orders.go, pnl.go, assets.go, chart.go,
	// reports.go, orderlist.go).
	Ledger LedgerReader
	// OrderList picks the orders of orders/all (orderlist.go), which
	// reads them from Store and their fills' pnl from Ledger.
	OrderList OrderIndex
	// States, when set, serves reads as of a past time and under another
	// lot matching method (asof.go): past states rebuilt from the log and
	// kept within bounds.
	States PastStates
	// Sink, when set, is the ClickHouse analytics sink: /healthz reports
	// its lag (health.go).
	Sink SinkStatus
	// Fleet, when set, answers the fleet routes from the analytics store
	// every instance writes to (fleet.go); unset, they answer 503.
	Fleet FleetReader
	// Connectors, when set, lists each exchange's connector for /healthz.
	Connectors func() []ConnectorStatus
	// Attention, when set, says which orders need attention (an exchange
	// sent a number the ledger cannot hold; their pairs are paused), ""
	// when none: /healthz is then degraded with that reason.
	Attention func() string
	// SnapshotCheck, when set, says where the background check of the
	// read-model snapshot the start loaded stands (/healthz
	// start.snapshot.check) and, once it found the snapshot not to be
	// the log's state, why (/healthz is then degraded).
	SnapshotCheck func() (state, problem string)
	// VerifyKeys, when set, checks an exchange's credentials (fields in
	// clear, "key" and "secret") against the exchange under the new
	// configuration before license/keys/edit writes them: EUNAUTHORIZED
	// when the exchange refuses them (license.go).
	VerifyKeys func(ctx context.Context, cfg domain.Config, exchange string, fields map[string]string) error
	// Wallet returns config.bot.service_wallet, whose first 16 bytes are
	// the key of encrypted login passwords (auth routes).
	Wallet func() string
	// Passwords is the password read model: hash, generation (auth routes).
	Passwords PasswordReader
	// Logins throttles failed logins per client address; nil means
	// NewLoginLimiter's defaults, created when the routes are registered.
	Logins *LoginLimiter
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client that logins are throttled and recorded by (auth.go);
	// from any other peer the header is ignored.
	TrustedProxies []netip.Prefix
	// Trader places and cancels orders and serves balances and pair lists
	// (trade.go, balances.go, pairs.go).
	Trader Trader
	// Core is the bot core's read side (market, chart/data, coremem and
	// system routes).
	Core CoreReader
	// Audit serves audit/verify, audit/events and the live event stream
	// (audit.go); Verifier, when set, is what audit/verify answers: the
	// chains, the Merkle tree and the last checkpoint kept beside it, as
	// `tradeledger verify` checks them (else the chains alone).
	Audit    *Audit
	Verifier LogVerifier
	// Tlog serves the checkpoints, proofs and tiles of the Merkle tree
	// over the log (proof.go, tlog.go); PublicTlog serves /tlog/* without
	// a token.
	Tlog       TransparencyLog
	PublicTlog bool
	// Witnesses, when set, reports the witnesses the checkpoints are sent
	// to (witnesses.go): audit/witnesses, audit/checkpoint's JSON and
	// /healthz, degraded while one refuses a checkpoint as inconsistent.
	Witnesses func() WitnessReport
	// Config is the configuration read model (config, license, system;
	// the configuration in force for chart/data, reconciliation, paper).
	Config ConfigReader
	// Files is the read model of files and state files (file routes).
	Files FileStore
	// Secrets encrypts exchange secrets before they reach the log
	// (config/update, license/keys/edit).
	Secrets *domain.SecretBox
	// Reconciler, when set, serves the reconciliation routes and adds the
	// open balance discrepancies to /healthz (reconcile.go); Paper, when
	// set, records activity outside the service on a paper exchange
	// (paper.go).
	Reconciler Reconciler
	Paper      PaperActivity
	// RealConnector reports whether an exchange of cfg would trade for
	// real with bot.SIMULATOR false (nil: none would). A configuration
	// that sets SIMULATOR false for an exchange without one (and without
	// its own simulator: true) is refused: it would trade on paper.
	RealConnector func(cfg domain.Config, exchange string) bool

	// CORSOrigins are the origins (scheme://host[:port]) whose pages may
	// call the main listener from a browser (cors.go); none by default.
	CORSOrigins []string
	// Metrics, when set, is served at /metrics behind the bearer token
	// (metrics.go); ObserveRequest, when set, is told of every answered
	// request (route template, method, status, duration).
	Metrics        http.Handler
	ObserveRequest func(route, method string, status int, d time.Duration)

	main, files     *http.Server
	mainLn, filesLn net.Listener
	// streams runs the server's commands one at a time per stream
	// (commands): concurrent writes to the configuration or a file wait
	// for each other instead of losing version races.
	streams eventstore.StreamLocks
}

// NewServer returns a Server with default settings.
func NewServer() *Server {
	return &Server{
		Logger:        zap.NewNop(),
		Clock:         domain.SystemClock{},
		MaxBodyBytes:  DefaultMaxBodyBytes,
		BodyTimeout:   DefaultBodyTimeout,
		HeaderTimeout: DefaultHeaderTimeout,
		IdleTimeout:   DefaultIdleTimeout,
		MaxConns:      DefaultMaxConns,

		WriteStallTimeout: DefaultWriteStallTimeout,
	}
}

// Open listens on addr (every route) and, when filesAddr is not empty, on
// filesAddr (login, configuration and file routes), and serves in the
// background.
func (s *Server) Open(addr, filesAddr string) error {
	var err error
	if s.mainLn, err = s.listen(addr); err != nil {
		return err
	}
	s.main = s.httpServer(s.Handler())
	tls := s.TLSCertFile != "" && s.TLSKeyFile != ""
	go func() {
		var err error
		if tls {
			err = s.main.ServeTLS(s.mainLn, s.TLSCertFile, s.TLSKeyFile)
		} else {
			err = s.main.Serve(s.mainLn)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("main listener stopped", zap.Error(err))
		}
	}()
	if filesAddr == "" {
		return nil
	}
	if s.filesLn, err = s.listen(filesAddr); err != nil {
		s.main.Close()
		return err
	}
	s.files = s.httpServer(s.FilesHandler())
	go func() {
		if err := s.files.Serve(s.filesLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("files listener stopped", zap.Error(err))
		}
	}()
	return nil
}

// listen opens a TCP listener on addr holding at most MaxConns
// connections at once.
func (s *Server) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	if s.MaxConns > 0 {
		ln = netutil.LimitListener(ln, s.MaxConns)
	}
	return ln, nil
}

// httpServer returns an http.Server for h with the connection timeouts.
// There is no whole-request ReadTimeout (it would cut a slow body without
// an answer: requestBasics bounds bodies and answers 408) and no
// WriteTimeout (event streams are long; they set their own deadlines).
func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: s.HeaderTimeout, IdleTimeout: s.IdleTimeout}
}

// URL is the base URL of the main listener (after Open).
func (s *Server) URL() string {
	return listenerURL(s.mainLn, s.TLSCertFile != "" && s.TLSKeyFile != "")
}

// FilesURL is the base URL of the files listener (after Open), or "".
func (s *Server) FilesURL() string { return listenerURL(s.filesLn, false) }

func listenerURL(ln net.Listener, tls bool) string {
	if ln == nil {
		return ""
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://" + ln.Addr().String()
}

// Close stops accepting requests and waits (up to DefaultShutdownTimeout)
// for those in flight.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultShutdownTimeout)
	defer cancel()
	var errs []error
	for _, srv := range []*http.Server{s.main, s.files} {
		if srv != nil {
			errs = append(errs, srv.Shutdown(ctx))
		}
	}
	return errors.Join(errs...)
}

// Handler returns the handler of the main listener: every route.
func (s *Server) Handler() http.Handler {
	h := s.resources()
	r, api := s.newRouter()
	h.health.register(r)
	h.ops.register(r, s.requireToken)
	h.logins.registerAuth(api, s.requireToken)
	h.dashboard.register(r)
	h.logins.registerSession(api, s.requireToken)
	protected := api.NewRoute().Subrouter()
	protected.Use(s.requireToken, s.singleValuedQuery) // query.go
	h.time.register(protected)
	h.trade.register(protected)
	h.balances.register(protected)
	h.pairs.register(protected)
	h.orders.register(protected)
	h.orderList.register(protected)
	h.pnl.register(protected)
	h.books.register(protected)
	h.assets.register(protected)
	h.marks.register(protected)
	h.market.register(protected)
	h.coreMem.register(protected)
	h.system.register(protected)
	h.license.register(protected)
	h.config.register(protected)
	h.files.register(protected)
	h.audit.register(protected)
	h.tlog.registerProofs(protected)
	h.reconcile.register(protected)
	h.paper.register(protected)
	h.witnesses.register(protected)
	h.fleet.register(protected)
	var tilesAuth mux.MiddlewareFunc
	if !s.PublicTlog {
		tilesAuth = s.requireToken
	}
	h.tlog.registerTiles(r, tilesAuth)
	return s.withCORS(r) // cors.go
}

// FilesHandler returns the handler of the files listener: login,
// configuration and files.
func (s *Server) FilesHandler() http.Handler {
	h := s.resources()
	r, api := s.newRouter()
	r.Handle("/healthz", handlerFunc(h.health.handleHealth)).Methods("GET")
	h.logins.registerAuth(api, s.requireToken)
	protected := api.NewRoute().Subrouter()
	protected.Use(s.requireToken, s.singleValuedQuery) // query.go
	h.config.register(protected)
	h.files.register(protected)
	return r
}

func (s *Server) newRouter() (root, api *mux.Router) {
	root = mux.NewRouter()
	methodNotAllowed := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s", r.Method, r.URL.Path))
	}
	// mux calls these outside its middleware chain, so they get the basics
	// (request id, recovery, log line) themselves.
	root.NotFoundHandler = s.requestBasics(handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		// mux reports a wrong method as not found when a catch-all
		// subrouter (the protected one) comes after the route, so ask
		// the router whether another method would match.
		if allowed := allowedMethods(root, r); len(allowed) > 0 {
			for _, m := range allowed {
				w.Header().Add("Allow", m)
			}
			methodNotAllowed(w, r)
			return nil
		}
		return domain.Errorf(domain.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path)
	}))
	root.MethodNotAllowedHandler = s.requestBasics(http.HandlerFunc(methodNotAllowed))
	root.Use(s.requestBasics)
	api = root.PathPrefix("/api/v1").Subrouter()
	return root, api
}

// allowedMethods returns the methods other than r's for which root has a
// route matching r's path.
func allowedMethods(root *mux.Router, r *http.Request) []string {
	var allowed []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if m == r.Method {
			continue
		}
		probe := *r
		probe.Method = m
		var match mux.RouteMatch
		if root.Match(&probe, &match) && match.MatchErr == nil {
			allowed = append(allowed, m)
		}
	}
	return allowed
}

type ctxKey int

const (
	ctxRequest ctxKey = iota // *requestInfo
	ctxSubject
	ctxScope // domain.Scope of the request's token
)

// requestInfo is what requestBasics gives a request: its id and the
// server's logger, which logger(r) names the request in.
type requestInfo struct {
	id     string
	logger *zap.Logger
}

// requestID returns the id given to the request.
func requestID(r *http.Request) string {
	if info, ok := r.Context().Value(ctxRequest).(*requestInfo); ok {
		return info.id
	}
	return ""
}

// subject returns the authenticated token subject, or "".
func subject(r *http.Request) string {
	sub, _ := r.Context().Value(ctxSubject).(string)
	return sub
}

// withSubject returns r authenticated as sub: subject(r) answers it and
// the commands run with r's context record it as their actor.
func withSubject(r *http.Request, sub string) *http.Request {
	ctx := context.WithValue(r.Context(), ctxSubject, sub)
	return r.WithContext(eventstore.WithActor(ctx, sub))
}

// tokenScope returns the scope of the request's token (admin for a
// password login's token or a dashboard session), or "" before
// authentication.
func tokenScope(r *http.Request) domain.Scope {
	sc, _ := r.Context().Value(ctxScope).(domain.Scope)
	return sc
}

// withScope returns r carrying its token's scope (tokenScope).
func withScope(r *http.Request, sc domain.Scope) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), ctxScope, sc))
}

// requestBasics gives every request an id, a body limit, panic recovery and
// one log line (method, path, status, duration, request id: never a query,
// header or body, so no secret can reach the log).
func (s *Server) requestBasics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requestID(r) != "" { // already wrapped (not-found handler inside the chain)
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		id := domain.NewEventID(start)
		// The request's logger (logger(r)) is made when something is
		// logged: most requests log only the line below.
		ctx := context.WithValue(r.Context(), ctxRequest, &requestInfo{id: id, logger: s.Logger})
		ctx = eventstore.WithCorrelation(ctx, id)
		r = r.WithContext(ctx)
		stall := newStallWriter(w, s.WriteStallTimeout)
		sw := &statusWriter{ResponseWriter: stall}
		sw.Header().Set("X-Request-Id", id)
		defer stall.done()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger(r).Error("panic", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
				if !sw.wrote {
					Error(sw, r, fmt.Errorf("panic: %v", p))
				}
			}
			d := time.Since(start)
			if ce := s.Logger.Check(zap.InfoLevel, "request"); ce != nil {
				ce.Write(zap.String("request_id", id),
					zap.String("method", r.Method),
					zap.String("path", r.URL.Path),
					zap.Int("status", sw.status),
					zap.Duration("duration", d))
			}
			s.observeRequest(r, sw.status, d)
		}()
		if !s.readBody(sw, r) {
			return
		}
		next.ServeHTTP(sw, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets streaming handlers (server-sent events) flush through.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
