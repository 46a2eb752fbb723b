package http

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// The dashboard's login: a person types the password alone (no wallet, no
// ENC: encryption) and gets a session cookie, which requireToken accepts
// like a bearer token. API clients keep the ENC login of auth.go.
//
//	POST /api/v1/dashboard/login   {password} → cookies SessionCookie + CSRFCookie
//	POST /api/v1/dashboard/logout  clears them (a cookie-authenticated write)
//
// Why this shape (docs/dashboard.md): the session value is an ordinary API
// token (same signature, expiry and password-generation revocation) kept in
// an HttpOnly, SameSite=Strict cookie (Secure under TLS), so no script can
// read it and other sites' pages cannot make the browser send it. Writes
// authenticated by the cookie must also carry CSRFHeader equal to the
// CSRFCookie, whose value is an HMAC of the session under the token secret
// (a signed double submit: a page that could plant a cookie still cannot
// forge the pair), and an Origin, when the browser sends one, naming this
// host.
const (
	SessionCookie = "tl_session"
	CSRFCookie    = "tl_csrf"
	CSRFHeader    = "X-CSRF-Token"
)

// registerSession serves the dashboard's login (no token) and logout
// (behind requireToken).
func (h *loginHandler) registerSession(r *mux.Router, requireToken mux.MiddlewareFunc) {
	r.Handle("/dashboard/login", handlerFunc(h.handleDashboardLogin)).Methods("POST")
	r.Handle("/dashboard/logout", requireToken(handlerFunc(h.handleDashboardLogout))).Methods("POST")
}

type dashboardLoginResponse struct {
	Status string `json:"status"`
	// ExpiresAt is when the session ends (ms), so the page can say so.
	ExpiresAt int64 `json:"expiresAt"`
}

// handleDashboardLogin checks the plain password against the registered
// hash with the same limiter, hashing slots, refusal message and events as
// the API login (handleLogin): 401 "invalid password" and LoginFailed on
// any refusal, 429 with Retry-After when the address is locked out, and on
// success LoginSucceeded and the two cookies.
func (h *loginHandler) handleDashboardLogin(w http.ResponseWriter, r *http.Request) error {
	if !sameOrigin(r) {
		return domain.Errorf(domain.EFORBIDDEN, "cross-origin login refused")
	}
	token, err := h.passwordLogin(w, r, "dashboard login", checkPlainLogin)
	if err != nil {
		return err
	}
	ttl := h.auth.TokenTTL
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	setSessionCookies(w, r, h.auth.Secret, token, ttl)
	writeJSON(w, http.StatusOK, dashboardLoginResponse{Status: "success", ExpiresAt: h.clock.Now().Add(ttl).UnixMilli()})
	return nil
}

// handleDashboardLogout clears the cookies. The token itself stays valid
// until it expires (tokens are stateless); a password change revokes it.
func (h *loginHandler) handleDashboardLogout(w http.ResponseWriter, r *http.Request) error {
	setSessionCookies(w, r, nil, "", -1)
	writeJSON(w, http.StatusOK, dashboardLogoutResponse{Status: "success"})
	return nil
}

type dashboardLogoutResponse struct {
	Status string `json:"status"`
}

// setSessionCookies sets (ttl > 0) or clears (ttl < 0) the session and CSRF
// cookies; the CSRF value is signed with secret (the token secret).
func setSessionCookies(w http.ResponseWriter, r *http.Request, secret []byte, token string, ttl time.Duration) {
	maxAge := int(ttl / time.Second)
	csrf := ""
	if ttl > 0 {
		csrf = csrfFor(secret, token)
	} else {
		maxAge = -1
	}
	secure := r.TLS != nil
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode})
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: csrf, Path: "/", MaxAge: maxAge,
		Secure: secure, SameSite: http.SameSiteStrictMode})
}

// csrfToken is the CSRF value that goes with a session token of this
// server's Authenticator.
func (s *Server) csrfToken(session string) string { return csrfFor(s.Auth.Secret, session) }

// csrfFor is the CSRF value that goes with a session token signed with
// secret: an HMAC of the session under it.
func csrfFor(secret []byte, session string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("tradeledger csrf\x00"))
	m.Write([]byte(session))
	return hex.EncodeToString(m.Sum(nil))
}

// sessionAuth is requireToken for a request that carries the session
// cookie instead of an Authorization header: the cookie's token is checked
// like a bearer token, and a request that may change something (any method
// but GET, HEAD, OPTIONS) must also pass the CSRF check, or gets 403.
func (s *Server) sessionAuth(w http.ResponseWriter, r *http.Request, next http.Handler, token string) error {
	sub, err := s.Auth.Verify(token)
	if err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		got := r.Header.Get(CSRFHeader)
		if got == "" || !hmac.Equal([]byte(got), []byte(s.csrfToken(token))) {
			return domain.Errorf(domain.EFORBIDDEN, "missing or wrong "+CSRFHeader+" header (a cookie-authenticated write needs the value of the "+CSRFCookie+" cookie)")
		}
		if !sameOrigin(r) {
			return domain.Errorf(domain.EFORBIDDEN, "cross-origin request refused")
		}
	}
	next.ServeHTTP(w, withScope(withSubject(r, sub), domain.ScopeAdmin))
	return nil
}

// sameOrigin reports whether r's Origin header, when there is one, names
// the host r was sent to. Browsers send Origin on every POST; its absence
// means a client that is not a browser, which cookies do not concern.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host != "" && u.Host == r.Host
}
