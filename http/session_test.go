package http

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// dashboardLogin posts a plain password to the dashboard login with the
// given extra headers.
func (ts *testServer) dashboardLogin(password string, headers map[string]string) *http.Response {
	ts.t.Helper()
	return ts.request("POST", "/api/v1/dashboard/login", map[string]string{"password": password}, headers)
}

func cookieNamed(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// session logs in through the dashboard and returns its two cookies.
func (ts *testServer) session() (session, csrf *http.Cookie) {
	ts.t.Helper()
	resp := ts.dashboardLogin(testPassword, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		ts.t.Fatalf("dashboard login: status %d", resp.StatusCode)
	}
	return cookieNamed(resp, SessionCookie), cookieNamed(resp, CSRFCookie)
}

func TestDashboardLoginSetsSessionCookies(t *testing.T) {
	ts := newTestServer(t)
	resp := ts.dashboardLogin(testPassword, map[string]string{"Origin": ts.URL})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	s, c := cookieNamed(resp, SessionCookie), cookieNamed(resp, CSRFCookie)
	if s == nil || c == nil {
		t.Fatalf("cookies = %v, want %s and %s", resp.Cookies(), SessionCookie, CSRFCookie)
	}
	if !s.HttpOnly || s.SameSite != http.SameSiteStrictMode || s.Path != "/" || s.MaxAge != 3600 || s.Secure {
		t.Fatalf("session cookie = %+v, want HttpOnly, SameSite=Strict, Path=/, Max-Age=3600 (the token TTL), not Secure without TLS", s)
	}
	if c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Value == "" {
		t.Fatalf("csrf cookie = %+v, want readable by the page, SameSite=Strict", c)
	}
	if sub, err := ts.Server.Auth.Verify(s.Value); err != nil || sub != LoginSubject {
		t.Fatalf("session cookie holds no valid token: %v", err)
	}
	if got := eventsOfType[domain.LoginSucceeded](ts, domain.TypeLoginSucceeded); len(got) != 1 {
		t.Fatalf("LoginSucceeded events = %d, want 1", len(got))
	}
	// The cookie alone authenticates reads.
	status, body := ts.cookieRequest("GET", "/api/v1/auth/status", nil, s, nil)
	if status != http.StatusOK {
		t.Fatalf("auth/status with the session cookie: %d %s", status, body)
	}
	status, body = ts.cookieRequest("GET", "/api/v1/auth/scope", nil, s, nil)
	if got := decodeBody[authScopeResponse](t, body).Scope; status != http.StatusOK || got != domain.ScopeAdmin {
		t.Fatalf("a session's scope = %d %s, want admin", status, body)
	}
}

func TestDashboardLoginRefused(t *testing.T) {
	ts := newTestServer(t)
	resp := ts.dashboardLogin("not the password", nil)
	body := readBody(t, resp)
	wantError(t, resp.StatusCode, body, http.StatusUnauthorized, loginRefused)
	if len(resp.Cookies()) != 0 {
		t.Fatalf("a refused login set cookies: %v", resp.Cookies())
	}
	failed := eventsOfType[domain.LoginFailed](ts, domain.TypeLoginFailed)
	if len(failed) != 1 || failed[0].Reason != secrets.LoginReasonPassword {
		t.Fatalf("LoginFailed events = %+v, want one with reason %q", failed, secrets.LoginReasonPassword)
	}
	if strings.Contains(ts.Logs(), "not the password") {
		t.Fatal("the attempted password reached the log")
	}

	status, body := ts.do("POST", "/api/v1/dashboard/login", `{}`, "")
	wantError(t, status, body, http.StatusBadRequest, `field "password" is required`)

	resp = ts.dashboardLogin(testPassword, map[string]string{"Origin": "http://evil.example"})
	wantError(t, resp.StatusCode, readBody(t, resp), http.StatusForbidden, "")
}

// The dashboard login and the API login count failures together: guessing
// through one does not reset or dodge the other's lockout.
func TestDashboardLoginSharesRateLimit(t *testing.T) {
	ts := newTestServer(t)
	for i := 0; i < DefaultMaxLoginFailures; i++ {
		resp := ts.dashboardLogin("wrong", nil)
		resp.Body.Close()
	}
	status, body := ts.login(encrypt(t, testPassword))
	wantError(t, status, body, http.StatusTooManyRequests, "")
	resp := ts.dashboardLogin(testPassword, nil)
	if resp.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After on a locked-out dashboard login")
	}
	wantError(t, resp.StatusCode, readBody(t, resp), http.StatusTooManyRequests, "")
}

func TestSessionWritesNeedCSRF(t *testing.T) {
	ts := newTestServer(t)
	s, c := ts.session()
	for _, tc := range []struct {
		name    string
		headers map[string]string
	}{
		{"no token", nil},
		{"wrong token", map[string]string{CSRFHeader: strings.Repeat("0", len(c.Value))}},
		{"token of another session", map[string]string{CSRFHeader: ts.Server.csrfToken(ts.Token)}},
		{"other origin", map[string]string{CSRFHeader: c.Value, "Origin": "http://evil.example"}},
	} {
		status, body := ts.cookieRequest("POST", "/api/v1/dashboard/logout", nil, s, tc.headers)
		if status != http.StatusForbidden {
			t.Fatalf("%s: status = %d (%s), want 403", tc.name, status, body)
		}
	}
	// A bearer token needs no CSRF token (no cookie, no ambient authority).
	if status, body := ts.do("POST", "/api/v1/dashboard/logout", nil, ts.Token); status != http.StatusOK {
		t.Fatalf("logout with a bearer token: %d %s", status, body)
	}
	resp := ts.request("POST", "/api/v1/dashboard/logout", nil, map[string]string{
		"Cookie": s.Name + "=" + s.Value, CSRFHeader: c.Value, "Origin": ts.URL})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logout with the CSRF token: %d", resp.StatusCode)
	}
	if got := cookieNamed(resp, SessionCookie); got == nil || got.MaxAge >= 0 || got.Value != "" {
		t.Fatalf("logout left the session cookie: %+v", got)
	}
}

func TestSessionRevokedByPasswordChange(t *testing.T) {
	ts := newTestServer(t)
	s, _ := ts.session()
	hash, err := cheapArgon2.Hash("a new password")
	if err != nil {
		t.Fatal(err)
	}
	ts.appendEvent(domain.StreamCredentials, domain.NewEvent(ts.Clock, domain.TypePasswordSet, domain.PasswordSet{Hash: hash, Generation: 2}))
	status, body := ts.cookieRequest("GET", "/api/v1/auth/status", nil, s, nil)
	wantError(t, status, body, http.StatusUnauthorized, "")
}

// cookieRequest sends a request authenticated by the session cookie alone.
func (ts *testServer) cookieRequest(method, path string, body any, session *http.Cookie, headers map[string]string) (int, []byte) {
	ts.t.Helper()
	h := map[string]string{"Cookie": session.Name + "=" + session.Value}
	for k, v := range headers {
		h[k] = v
	}
	resp := ts.request(method, path, body, h)
	return resp.StatusCode, readBody(ts.t, resp)
}

func readBody(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
