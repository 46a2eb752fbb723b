package http

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/argon2id"
	"github.com/tradeledger/tradeledger/eventstore"
)

// DefaultTokenTTL is how long a token is valid unless --token-ttl says else.
const DefaultTokenTTL = 24 * time.Hour

// LoginSubject is the subject of tokens issued by a password login (there
// is one operator account), and so the actor of the events its requests
// cause.
const LoginSubject = "admin"

// MinSecretBytes is the shortest HS256 secret the Authenticator uses.
const MinSecretBytes = 32

// Authenticator issues and checks the API's bearer tokens: HS256 JWTs with
// sub, iat, exp, jti and the password generation ("gen"), so that a password
// change revokes every earlier token.
type Authenticator struct {
	// Secret is the HS256 key (32 random bytes from the data directory).
	Secret []byte
	// TokenTTL is the lifetime of issued tokens.
	TokenTTL time.Duration
	// Clock dates tokens and checks expiry.
	Clock domain.Clock
	// Generation returns the current password generation; tokens of an
	// older generation are refused.
	Generation func() int64
	// Grants says whether a scoped token (tokens.go) is active; without it
	// scoped tokens are refused.
	Grants Grants
	// CatchUp, when set, brings the read models behind Grants, Generation
	// and the logins' password up to the log's head, with what another
	// process (a tradeledger command beside serve) appended a moment ago.
	// A signed scoped token that Grants does not know, and a login whose
	// password does not match, are checked once more after it: a token
	// created or a password set just before works at once, instead of
	// after the store's next poll. A token is caught up for once (caughtUp).
	CatchUp func(ctx context.Context) error

	// verified remembers tokens whose signature and claims were checked,
	// so that a client's every request does not parse and HMAC its token
	// again; expiry and generation are still checked on every use.
	mu       sync.Mutex
	verified map[string]verifiedToken
	caughtUp map[string]bool // scoped token ids CatchUp ran for (bounded as verified)
}

// catchUpTimeout bounds the wait of one CatchUp.
const catchUpTimeout = 2 * time.Second

// catchUp runs CatchUp (when set) with catchUpTimeout, and reports
// whether it completed.
func (a *Authenticator) catchUp(ctx context.Context) bool {
	if a.CatchUp == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	return a.CatchUp(ctx) == nil
}

// catchUpFor runs catchUp for the scoped token id the first time it is
// refused (Grants does not know it), and reports whether it ran: a token
// created a moment ago by another process is then known. A token still
// refused after it (revoked, or of another log) does not run it again.
func (a *Authenticator) catchUpFor(id string) bool {
	if a.CatchUp == nil {
		return false
	}
	a.mu.Lock()
	done := a.caughtUp[id]
	if !done {
		if a.caughtUp == nil || len(a.caughtUp) >= maxVerifiedTokens {
			a.caughtUp = make(map[string]bool)
		}
		a.caughtUp[id] = true
	}
	a.mu.Unlock()
	return !done && a.catchUp(context.Background())
}

// verifiedToken is what Verify needs of a token it checked before.
type verifiedToken struct {
	subject       string
	generation    int64
	issued, until time.Time
	scope         domain.Scope // of a scoped token (tokens.go); "" for a login's
	id            string
}

// maxVerifiedTokens bounds Authenticator's cache; past it, the cache starts
// over.
const maxVerifiedTokens = 4096

// tokenClaims are the JWT claims of an API token.
type tokenClaims struct {
	jwt.RegisteredClaims
	Generation int64 `json:"gen"`
	// Scope is set on scoped tokens (tokens.go) only.
	Scope domain.Scope `json:"scope,omitempty"`
}

// IssueToken returns a signed token for subject at the current password
// generation.
func (a *Authenticator) IssueToken(subject string) (string, error) {
	return a.issueToken(subject, a.generation())
}

// issueToken signs a token of the given password generation (the login
// handler passes the generation of the hash it checked, so a concurrent
// password change cannot hand out a token of the new generation).
func (a *Authenticator) issueToken(subject string, generation int64) (string, error) {
	if len(a.Secret) < MinSecretBytes {
		return "", domain.Errorf(domain.EUNAVAILABLE, "token secret is not configured")
	}
	now := a.Clock.Now()
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	ttl := a.TokenTTL
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	claims := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   subject,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			ID:        hex.EncodeToString(jti[:]),
		},
		Generation: generation,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(a.Secret)
}

func (a *Authenticator) generation() int64 {
	if a.Generation == nil {
		return 0
	}
	return a.Generation()
}

// Verify checks a token and returns its subject. Only HS256 with our secret
// is accepted (no "none", no other HMAC size, no RSA/ECDSA key confusion);
// a bad signature, an expired token, a token dated in the future, one
// without exp or sub, and one of an older password generation are all
// EUNAUTHORIZED.
func (a *Authenticator) Verify(token string) (string, error) {
	sub, _, err := a.VerifyScoped(token)
	return sub, err
}

// VerifyScoped is Verify that also returns what the token may do: a
// login's token is ScopeAdmin; a scoped token (tokens.go) has its scope
// while Grants says it is active (not revoked), and is EUNAUTHORIZED
// otherwise. A password change does not revoke scoped tokens.
func (a *Authenticator) VerifyScoped(token string) (string, domain.Scope, error) {
	if len(a.Secret) < MinSecretBytes {
		return "", "", domain.Errorf(domain.EUNAVAILABLE, "token secret is not configured")
	}
	now := a.Clock.Now()
	a.mu.Lock()
	v, ok := a.verified[token]
	a.mu.Unlock()
	if ok && !now.Before(v.issued) && now.Before(v.until) {
		return a.checkGrant(v, now)
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		// WithValidMethods already refuses other algorithms; checking the
		// method's type too keeps that true if the option is ever lost.
		if m, ok := t.Method.(*jwt.SigningMethodHMAC); !ok || m != jwt.SigningMethodHS256 {
			return nil, jwt.ErrTokenSignatureInvalid
		}
		return a.Secret, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(a.Clock.Now),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	)
	if err != nil || claims.Subject == "" {
		return "", "", domain.Errorf(domain.EUNAUTHORIZED, "invalid or expired token")
	}
	v = verifiedToken{subject: claims.Subject, generation: claims.Generation, until: claims.ExpiresAt.Time, scope: claims.Scope, id: claims.ID}
	if claims.IssuedAt != nil {
		v.issued = claims.IssuedAt.Time
	}
	if _, _, err := a.checkGrant(v, now); err != nil {
		return "", "", err
	}
	a.mu.Lock()
	if a.verified == nil || len(a.verified) >= maxVerifiedTokens {
		a.verified = make(map[string]verifiedToken)
	}
	a.verified[token] = v
	a.mu.Unlock()
	return a.checkGrant(v, now)
}

// PasswordReader is the login password's read model (projections.Password).
type PasswordReader interface {
	// Current returns the registered password's argon2id hash ("" when
	// none is registered) and its generation.
	Current() (hash string, generation int64)
	// IsRegistered reports whether a password is registered.
	IsRegistered() bool
}

// loginHandler serves the logins, the API's (auth/login, with auth/status
// and auth/scope) and the dashboard's (dashboard/login and logout,
// session.go), with one flow (passwordLogin): the password checked against
// the PasswordReader's hash under the LoginLimiter, the attempt recorded
// through the command path, a token issued by the Authenticator. Without
// them (or the wallet, for the API's ENC passwords) a login is 503.
type loginHandler struct {
	auth      *Authenticator
	passwords PasswordReader
	// wallet returns config.bot.service_wallet, the key of the API's
	// encrypted passwords.
	wallet func() string
	logins *LoginLimiter
	// clientHost names the client a login is throttled and recorded by
	// (Server.clientHost: the peer, or behind a trusted proxy the
	// address it saw).
	clientHost func(r *http.Request) string
	cmds       *eventstore.Commands
	clock      domain.Clock
}

// registerAuth serves login (no token needed; a bearer header is accepted
// and ignored, as the example clients send one), status and scope (behind
// requireToken).
func (h *loginHandler) registerAuth(r *mux.Router, requireToken mux.MiddlewareFunc) {
	r.Handle("/auth/login", handlerFunc(h.handleLogin)).Methods("POST")
	r.Handle("/auth/status", requireToken(handlerFunc(h.handleAuthStatus))).Methods("GET")
	r.Handle("/auth/scope", requireToken(handlerFunc(handleAuthScope))).Methods("GET")
}

type loginRequest struct {
	Password *string `json:"password"`
}

type loginResponse struct {
	Status string `json:"status"`
	Token  string `json:"token"`
}

// loginRefused is the one message of every refused login, whatever the
// reason, so that a client learns nothing about which check failed.
const loginRefused = "invalid password"

// errNoAuth is the answer of the login routes on a server without what a
// login needs.
var errNoAuth = domain.Errorf(domain.EUNAVAILABLE, "authentication is not configured")

// handleLogin answers POST /api/v1/auth/login {password:"ENC:…"} with
// {status:"success", token}. Every refusal is 401 with one message and a
// LoginFailed event (address and reason category, never the secret); an
// address with too many recent failures gets 429 with Retry-After before
// anything is checked. A success records LoginSucceeded.
func (h *loginHandler) handleLogin(w http.ResponseWriter, r *http.Request) error {
	if h.wallet == nil {
		return errNoAuth
	}
	token, err := h.passwordLogin(w, r, "login", func(password, hash string) (string, error) {
		return checkLogin(password, h.wallet(), hash)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, loginResponse{Status: "success", Token: token})
	return nil
}

// passwordLogin is the one login flow, of the API (ENC password, handleLogin)
// and of the dashboard (clear password, handleDashboardLogin): 429 while the
// client's address has too many recent failures; the body {password}; the
// attempt counted before the password is checked, so a burst of concurrent
// guesses gets exactly MaxFailures checks, not as many as arrive before the
// first failures are recorded; check (reason "" for the right password)
// under the limiter's hashing slots; a LoginFailed event and one 401 message
// for every refusal, whatever its reason, or a LoginSucceeded event and a
// full-access token. A refusal is its error (with Retry-After set on w for
// a 429); what names the flow in the log.
func (h *loginHandler) passwordLogin(w http.ResponseWriter, r *http.Request, what string, check func(password, hash string) (reason string, err error)) (token string, err error) {
	if h.auth == nil || h.passwords == nil || h.logins == nil {
		return "", errNoAuth
	}
	host := h.clientHost(r)
	addr := limiterKey(host)
	if err := tooManyLogins(w, h.logins.Wait(addr, h.clock.Now())); err != nil {
		return "", err
	}
	var req loginRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return "", err
	}
	if req.Password == nil {
		return "", domain.Errorf(domain.EINVALID, "field \"password\" is required")
	}
	if err := tooManyLogins(w, h.logins.Reserve(addr, h.clock.Now())); err != nil {
		return "", err
	}
	reason, generation, err := h.checkCurrentPassword(r.Context(), *req.Password, check)
	if err != nil {
		return "", err
	}
	if reason != "" {
		logger(r).Warn(what+" refused", zap.String("remote", addr), zap.String("reason", reason))
		if err := h.recordLogin(r, domain.DecideLoginFailed(host, reason, h.clock)); err != nil {
			// The client is refused either way; a store outage must not
			// turn a refusal into a different answer.
			logger(r).Error("record LoginFailed", zap.Error(err))
		}
		return "", domain.Errorf(domain.EUNAUTHORIZED, loginRefused)
	}
	token, err = h.auth.issueToken(LoginSubject, generation)
	if err != nil {
		return "", err
	}
	r = withSubject(r, LoginSubject)
	if err := h.recordLogin(r, domain.DecideLoginSucceeded(LoginSubject, host, h.clock)); err != nil {
		// No token without its audit record.
		return "", err
	}
	h.logins.Succeeded(addr)
	logger(r).Info(what, zap.String("remote", addr))
	return token, nil
}

// checkCurrentPassword runs check against the current password under one
// of the limiter's hashing slots, and returns its reason ("" for the right
// password) and the password's generation. A password that does not match
// is checked once more when Auth.CatchUp brings in a newer one: set a
// moment ago by `tradeledger passwd` beside serve.
func (h *loginHandler) checkCurrentPassword(ctx context.Context, password string, check func(password, hash string) (reason string, err error)) (reason string, generation int64, err error) {
	reason, generation, err = h.checkPasswordOnce(ctx, password, check)
	if err != nil || reason == "" || !h.auth.catchUp(ctx) {
		return reason, generation, err
	}
	if _, now := h.passwords.Current(); now == generation {
		return reason, generation, nil
	}
	return h.checkPasswordOnce(ctx, password, check)
}

// checkPasswordOnce runs check against the current password under one of
// the limiter's hashing slots.
func (h *loginHandler) checkPasswordOnce(ctx context.Context, password string, check func(password, hash string) (reason string, err error)) (reason string, generation int64, err error) {
	release, err := h.logins.acquire(ctx)
	if err != nil {
		return "", 0, domain.Errorf(domain.EUNAVAILABLE, "login cancelled")
	}
	defer release()
	hash, generation := h.passwords.Current()
	reason, err = check(password, hash)
	return reason, generation, err
}

// recordLogin appends a login's events to the auth stream through the
// command path (they depend on no state: no conflict is possible).
func (h *loginHandler) recordLogin(r *http.Request, events []domain.Event) error {
	_, err := eventstore.Run(r.Context(), h.cmds, eventstore.Command[struct{}]{
		Stream: domain.StreamAuth,
		Load:   eventstore.NoState,
		Decide: func(struct{}) ([]domain.Event, error) { return events, nil },
	})
	return err
}

// tooManyLogins returns nil when the client need not wait (wait ≤ 0), and
// else ETOOMANY (429), setting Retry-After (whole seconds, rounded up) on
// w.
func tooManyLogins(w http.ResponseWriter, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	secs := int64(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return domain.Errorf(domain.ETOOMANY, "too many failed logins; retry in %d seconds", secs)
}

// checkLogin returns "" when enc decrypts (with wallet) to the password of
// hash, or else the LoginReason (checkPassword).
func checkLogin(enc, wallet, hash string) (reason string, err error) {
	password, decryptErr := domain.DecryptLoginPassword(enc, wallet)
	return checkPassword(password, decryptErr, hash)
}

// checkPlainLogin is checkLogin for a password typed in clear (the
// dashboard's login).
func checkPlainLogin(password, hash string) (reason string, err error) {
	return checkPassword(password, nil, hash)
}

// checkPassword returns "" when password is the password of hash and
// undecryptable is nil, or else the LoginReason. It always runs one
// argon2id check, against a dummy hash when there is nothing real to check,
// so every refusal costs the same time: no timing oracle for the padding or
// for whether a password is registered. The error is only for a corrupt
// stored hash.
func checkPassword(password string, undecryptable error, hash string) (reason string, err error) {
	against := hash
	if against == "" {
		against = dummyHash()
	}
	ok, err := argon2id.Check(password, against)
	switch {
	case err != nil:
		return "", err
	case hash == "":
		return domain.LoginReasonUnregistered, nil
	case undecryptable != nil:
		return domain.ErrorMessage(undecryptable), nil
	case !ok:
		return domain.LoginReasonPassword, nil
	}
	return "", nil
}

type authStatusResponse struct {
	Code         int    `json:"code"`
	IsDemo       bool   `json:"isDemo"`
	IsRegistered bool   `json:"isRegistered"`
	IsTwoFA      bool   `json:"isTwoFA"`
	Metamask     bool   `json:"metamask"`
	Status       string `json:"status"`
	Message      string `json:"message"`
}

// handleAuthStatus answers GET /api/v1/auth/status (token required).
// isRegistered says whether a password exists; there is no demo mode, no
// TOTP and no MetaMask login, so those are false.
func (h *loginHandler) handleAuthStatus(w http.ResponseWriter, r *http.Request) error {
	if h.passwords == nil {
		return errNoAuth
	}
	writeJSON(w, http.StatusOK, authStatusResponse{
		Code:         http.StatusOK,
		IsRegistered: h.passwords.IsRegistered(),
		Status:       "success",
		Message:      "Authenticated",
	})
	return nil
}

type authScopeResponse struct {
	Scope domain.Scope `json:"scope"`
}

// handleAuthScope answers GET /api/v1/auth/scope (beyond the spec) with
// {scope}: what the asking token may do, read, trade or admin (a password
// login's token and a dashboard session are admin). Any token may ask,
// a read token included: a client that holds another's token (the
// dashboard's multi-bot page) refuses one that can change anything.
func handleAuthScope(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, authScopeResponse{Scope: tokenScope(r)})
	return nil
}

// requireToken lets a request through only with a valid bearer token (or
// the dashboard's session cookie, sessionAuth) whose scope allows its
// route, and puts its subject and scope in the context; any other request
// is answered with the error (401, 403; 503 without an Authenticator).
func (s *Server) requireToken(next http.Handler) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if s.Auth == nil {
			return errNoAuth
		}
		h := r.Header.Get("Authorization")
		if c, err := r.Cookie(SessionCookie); h == "" && err == nil && c.Value != "" {
			return s.sessionAuth(w, r, next, c.Value) // the dashboard (session.go)
		}
		scheme, token, ok := strings.Cut(h, " ")
		token = strings.TrimSpace(token)
		if h == "" {
			return domain.Errorf(domain.EUNAUTHORIZED, "missing Authorization header")
		} else if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return domain.Errorf(domain.EUNAUTHORIZED, "Authorization header must be \"Bearer <token>\"")
		}
		sub, scope, err := s.Auth.VerifyScoped(token)
		if err != nil {
			return err
		}
		if err := scopeAllows(r, scope); err != nil { // tokens.go
			return err
		}
		next.ServeHTTP(w, withScope(withSubject(r, sub), scope))
		return nil
	})
}

// remoteHost is the connection's peer IP address.
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// clientHost is the client's IP address: the connection's peer, unless
// that peer is one of s.TrustedProxies (a reverse proxy in front of the
// service); then it is the last address of X-Forwarded-For that is not a
// trusted proxy itself (the one the nearest trusted proxy saw; the ones
// before it are the client's word and could be anything). A malformed
// entry stops the walk there and the last trusted hop is taken.
func (s *Server) clientHost(r *http.Request) string {
	host := remoteHost(r)
	if len(s.TrustedProxies) == 0 || !trusted(s.TrustedProxies, host) {
		return host
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		host = ip.Unmap().String()
		if !trusted(s.TrustedProxies, host) {
			break
		}
	}
	return host
}

func trusted(proxies []netip.Prefix, host string) bool {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies reads --trusted-proxies: CIDRs or single addresses,
// comma-separated ("" is none).
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			ip, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR or an IP address", f)
			}
			out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR or an IP address", f)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// limiterKey is the key logins are throttled by: the client's IP address,
// or its /64 network for IPv6, since one IPv6 client usually holds a whole
// /64 and could otherwise rotate addresses.
func limiterKey(host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// Defaults of LoginLimiter.
const (
	DefaultMaxLoginFailures = 5
	DefaultLoginWindow      = 15 * time.Minute
	DefaultLoginLockout     = 5 * time.Minute
	DefaultMaxLoginClients  = 10_000
	DefaultLoginConcurrency = 2
)

// LoginLimiter throttles logins per client address: after MaxFailures
// failed logins within Window, the address must wait Lockout before it may
// try again (and then starts a fresh count). A success forgets the
// address's failures. It remembers at most MaxClients addresses; when full
// it forgets the one idle longest. It also bounds how many password hashes
// run at once (Concurrency), so a flood of logins cannot exhaust memory.
// Time is passed in by the caller (the server's clock). It is safe for
// concurrent use; set the exported fields before first use.
type LoginLimiter struct {
	MaxFailures int
	Window      time.Duration
	Lockout     time.Duration
	MaxClients  int
	Concurrency int

	once    sync.Once
	slots   chan struct{}
	mu      sync.Mutex
	clients map[string]*loginClient
	idle    loginHeap // clients by last failure, oldest first
}

type loginClient struct {
	addr     string
	failures int
	first    time.Time // first failure of the current count
	last     time.Time // last failure
	until    time.Time // locked out until
	index    int       // in idle
}

// NewLoginLimiter returns a LoginLimiter with the default settings.
func NewLoginLimiter() *LoginLimiter {
	return &LoginLimiter{
		MaxFailures: DefaultMaxLoginFailures,
		Window:      DefaultLoginWindow,
		Lockout:     DefaultLoginLockout,
		MaxClients:  DefaultMaxLoginClients,
		Concurrency: DefaultLoginConcurrency,
	}
}

func (l *LoginLimiter) init() {
	l.once.Do(func() {
		n := l.Concurrency
		if n <= 0 {
			n = DefaultLoginConcurrency
		}
		l.slots = make(chan struct{}, n)
		l.clients = map[string]*loginClient{}
	})
}

// Wait returns how long addr must wait before its next login attempt at
// time now; 0 means it may try.
func (l *LoginLimiter) Wait(addr string, now time.Time) time.Duration {
	l.init()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clients[addr]
	if c == nil || !now.Before(c.until) {
		return 0
	}
	return c.until.Sub(now)
}

// Reserve counts a login attempt by addr at time now before its password
// is checked. It returns 0 when the attempt may go ahead: it then counts
// as a failure (Failed need not be called) until Succeeded forgets addr, so
// that concurrent attempts from one address get exactly MaxFailures checks
// in all. Otherwise it returns how long addr must wait, and counts nothing.
func (l *LoginLimiter) Reserve(addr string, now time.Time) time.Duration {
	l.init()
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.clients[addr]; c != nil && now.Before(c.until) {
		return c.until.Sub(now)
	}
	l.failedLocked(addr, now)
	return 0
}

// Failed records a failed login by addr at time now.
func (l *LoginLimiter) Failed(addr string, now time.Time) {
	l.init()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failedLocked(addr, now)
}

func (l *LoginLimiter) failedLocked(addr string, now time.Time) {
	c := l.clients[addr]
	if c == nil {
		for len(l.clients) >= max(l.MaxClients, 1) {
			old := heap.Pop(&l.idle).(*loginClient)
			delete(l.clients, old.addr)
		}
		c = &loginClient{addr: addr, first: now, last: now}
		l.clients[addr] = c
		heap.Push(&l.idle, c)
	}
	if now.Sub(c.first) > l.Window || (!c.until.IsZero() && !now.Before(c.until)) {
		// The count's window has passed, or a lockout has been served.
		c.failures, c.first, c.until = 0, now, time.Time{}
	}
	c.failures++
	c.last = now
	heap.Fix(&l.idle, c.index)
	if c.failures >= l.MaxFailures {
		c.until = now.Add(l.Lockout)
	}
}

// Succeeded forgets addr's failures.
func (l *LoginLimiter) Succeeded(addr string) {
	l.init()
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.clients[addr]; c != nil {
		heap.Remove(&l.idle, c.index)
		delete(l.clients, addr)
	}
}

// Clients returns how many addresses the limiter remembers.
func (l *LoginLimiter) Clients() int {
	l.init()
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

// acquire waits for a hashing slot; release gives it back.
func (l *LoginLimiter) acquire(ctx context.Context) (release func(), err error) {
	l.init()
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loginHeap orders clients by their last failure, oldest first.
type loginHeap []*loginClient

func (h loginHeap) Len() int           { return len(h) }
func (h loginHeap) Less(i, j int) bool { return h[i].last.Before(h[j].last) }
func (h loginHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *loginHeap) Push(x any) {
	c := x.(*loginClient)
	c.index = len(*h)
	*h = append(*h, c)
}
func (h *loginHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}
