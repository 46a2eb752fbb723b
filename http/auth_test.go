package http

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/projections"
)

// encrypt returns the ENC: form of password under the test wallet.
func encrypt(t *testing.T, password string) string {
	t.Helper()
	enc, err := secrets.EncryptLoginPassword(password, testWallet)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// login posts an encrypted password and returns status and body.
func (ts *testServer) login(enc string) (int, []byte) {
	ts.t.Helper()
	return ts.do("POST", "/api/v1/auth/login", map[string]string{"password": enc}, "")
}

// wantError checks an error response: status, the JSON error shape, and the
// message (when want is not empty).
func wantError(t *testing.T, status int, body []byte, wantStatus int, wantMessage string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status = %d, want %d; body %s", status, wantStatus, body)
	}
	var e struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %q is not {status,message,code}: %v", body, err)
	}
	if e.Status != "error" || e.Code != wantStatus || e.Message == "" {
		t.Fatalf("error body = %s, want status \"error\", code %d and a message", body, wantStatus)
	}
	if wantMessage != "" && e.Message != wantMessage {
		t.Fatalf("message = %q, want %q", e.Message, wantMessage)
	}
}

// eventsOfType returns the payloads of the log's events of type typ.
func eventsOfType[T any](ts *testServer, typ string) []T {
	ts.t.Helper()
	var out []T
	for _, e := range ts.events() {
		if e.Type == typ {
			var v T
			if err := e.Decode(&v); err != nil {
				ts.t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

func TestLoginSucceeds(t *testing.T) {
	ts := newTestServer(t)
	// The example clients send a bearer header on login; even a garbage
	// one is ignored.
	resp := ts.request("POST", "/api/v1/auth/login", map[string]string{"password": encrypt(t, testPassword)},
		map[string]string{"Authorization": "Bearer not-a-token"})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("login status = %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	token, _ := got["token"].(string)
	if got["status"] != "success" || token == "" || len(got) != 2 {
		t.Fatalf("login body = %v, want {status:success, token}", got)
	}

	status, body := ts.do("GET", "/api/v1/auth/status", nil, token)
	if status != 200 {
		t.Fatalf("auth/status = %d %s", status, body)
	}
	if want := `{"code":200,"isDemo":false,"isRegistered":true,"isTwoFA":false,"metamask":false,"status":"success","message":"Authenticated"}` + "\n"; string(body) != want {
		t.Fatalf("auth/status body = %s, want %s", body, want)
	}
	status, body = ts.do("GET", "/api/v1/time", nil, token)
	if tm := decodeBody[map[string]int64](t, body); status != 200 || tm["serverTime"] != testEpoch.UnixMilli() {
		t.Fatalf("time = %d %s", status, body)
	}

	var claims tokenClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err != nil {
		t.Fatal(err)
	}
	if claims.Subject != LoginSubject || claims.Generation != 1 || claims.ID == "" ||
		!claims.IssuedAt.Equal(testEpoch) || !claims.ExpiresAt.Equal(testEpoch.Add(time.Hour)) {
		t.Fatalf("claims = %+v", claims)
	}

	var succeeded []domain.Event
	for _, e := range ts.events() {
		if e.Type == domain.TypeLoginSucceeded {
			succeeded = append(succeeded, e)
		}
	}
	if len(succeeded) != 1 {
		t.Fatalf("%d LoginSucceeded events, want 1", len(succeeded))
	}
	var d domain.LoginSucceeded
	if err := succeeded[0].Decode(&d); err != nil {
		t.Fatal(err)
	}
	if e := succeeded[0]; e.Stream != domain.StreamAuth || e.Actor != LoginSubject || e.Correlation != resp.Header.Get("X-Request-Id") ||
		d.Subject != LoginSubject || d.RemoteAddr != "127.0.0.1" {
		t.Fatalf("LoginSucceeded = %+v %+v", e, d)
	}
	if ok, failed := ts.Passwords.Logins(); ok != 1 || failed != 0 {
		t.Fatalf("Logins() = %d, %d", ok, failed)
	}
}

func TestLoginOnFilesListener(t *testing.T) {
	ts := newTestServer(t)
	files := httptest.NewServer(ts.Server.FilesHandler())
	defer files.Close()
	resp, err := http.Post(files.URL+"/api/v1/auth/login", "application/json",
		strings.NewReader(`{"password":"`+encrypt(t, testPassword)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("login on the files listener = %d", resp.StatusCode)
	}
}

func TestLoginFailures(t *testing.T) {
	key := []byte(testWallet[:16])
	tests := []struct {
		name   string
		setup  func(ts *testServer)
		enc    func(t *testing.T) string
		reason string
	}{
		{"wrong password", nil, func(t *testing.T) string { return encrypt(t, "correct horse batterY") }, secrets.LoginReasonPassword},
		{"empty password", nil, func(t *testing.T) string { return encrypt(t, "") }, secrets.LoginReasonPassword},
		{"clear password", nil, func(*testing.T) string { return testPassword }, secrets.LoginReasonFormat},
		{"no ENC: prefix", nil, func(t *testing.T) string { return strings.TrimPrefix(encrypt(t, testPassword), "ENC:") }, secrets.LoginReasonFormat},
		{"bad base64", nil, func(*testing.T) string { return "ENC:%%%not-base64%%%" }, secrets.LoginReasonFormat},
		{"bad padding", nil, func(t *testing.T) string { return encryptRaw(t, key, []byte("0123456789abcde\x07")) }, secrets.LoginReasonPadding},
		{"encrypted with another wallet", nil, func(t *testing.T) string {
			enc, _ := secrets.EncryptLoginPassword(testPassword, "0xffffffffffffffffffffffff")
			return enc
		}, secrets.LoginReasonPadding},
		{"wallet shorter than 16 bytes", func(ts *testServer) { ts.Server.Wallet = func() string { return "0x7f3a9c2b" } },
			func(t *testing.T) string { return encrypt(t, testPassword) }, secrets.LoginReasonWallet},
		{"no wallet configured yet", func(ts *testServer) { ts.Server.Wallet = func() string { return "" } },
			func(t *testing.T) string { return encrypt(t, testPassword) }, secrets.LoginReasonWallet},
		{"no password registered", func(ts *testServer) { ts.Server.Passwords = projections.NewPassword() },
			func(t *testing.T) string { return encrypt(t, testPassword) }, secrets.LoginReasonUnregistered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var setups []func(*testServer)
			if tc.setup != nil {
				setups = append(setups, tc.setup)
			}
			ts := newTestServer(t, setups...)
			enc := tc.enc(t)
			status, body := ts.login(enc)
			wantError(t, status, body, 401, "invalid password")
			failed := eventsOfType[domain.LoginFailed](ts, domain.TypeLoginFailed)
			if len(failed) != 1 || failed[0] != (domain.LoginFailed{RemoteAddr: "127.0.0.1", Reason: tc.reason}) {
				t.Fatalf("LoginFailed events = %+v, want one with reason %q", failed, tc.reason)
			}
			if n := len(eventsOfType[domain.LoginSucceeded](ts, domain.TypeLoginSucceeded)); n != 0 {
				t.Fatalf("%d LoginSucceeded events", n)
			}
			if _, failedCount := ts.Passwords.Logins(); failedCount != 1 {
				t.Fatalf("projection counted %d failures", failedCount)
			}
		})
	}
}

// encryptRaw encrypts already padded plaintext with AES-128-CBC (key = IV),
// to craft bad paddings.
func encryptRaw(t *testing.T, key, pt []byte) string {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	ct := make([]byte, len(pt))
	cipher.NewCBCEncrypter(block, key).CryptBlocks(ct, pt)
	return secrets.LoginPrefix + base64.StdEncoding.EncodeToString(ct)
}

func TestLoginBadRequests(t *testing.T) {
	ts := newTestServer(t)
	tests := []struct {
		name, body, message string
	}{
		{"empty body", ``, "request body is empty; a JSON object is required"},
		{"truncated JSON", `{"password":`, ""},
		{"not an object", `["ENC:abc"]`, ""},
		{"password not a string", `{"password":5}`, `field "password" must be a string, not number`},
		{"password missing", `{"pass":"ENC:abc"}`, `field "password" is required`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ts.do("POST", "/api/v1/auth/login", tc.body, "")
			wantError(t, status, body, 400, tc.message)
		})
	}
	// Bad requests are not login attempts: nothing recorded, no lockout.
	if n := len(eventsOfType[domain.LoginFailed](ts, domain.TypeLoginFailed)); n != 0 {
		t.Fatalf("%d LoginFailed events after bad requests", n)
	}
}

func TestLoginRateLimit(t *testing.T) {
	ts := newTestServer(t)
	wrong := encrypt(t, "not the password")
	for i := 0; i < DefaultMaxLoginFailures; i++ {
		status, body := ts.login(wrong)
		wantError(t, status, body, 401, "invalid password")
		ts.Clock.Advance(time.Second)
	}
	// Locked out: even the right password is refused with 429, and not
	// checked or recorded.
	resp := ts.request("POST", "/api/v1/auth/login", map[string]string{"password": encrypt(t, testPassword)}, nil)
	var e errorResponse
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	wantRetry := DefaultLoginLockout - time.Second
	if resp.StatusCode != 429 || e.Code != 429 || e.Status != "error" ||
		resp.Header.Get("Retry-After") != fmt.Sprint(int(wantRetry.Seconds())) {
		t.Fatalf("locked-out login = %d %+v Retry-After %q, want 429 and %v", resp.StatusCode, e, resp.Header.Get("Retry-After"), wantRetry)
	}
	if n := len(eventsOfType[domain.LoginFailed](ts, domain.TypeLoginFailed)); n != DefaultMaxLoginFailures {
		t.Fatalf("%d LoginFailed events, want %d (429s are not recorded)", n, DefaultMaxLoginFailures)
	}

	ts.Clock.Advance(wantRetry - 500*time.Millisecond)
	resp = ts.request("POST", "/api/v1/auth/login", map[string]string{"password": encrypt(t, testPassword)}, nil)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("half a second before the end: %d, Retry-After %q; want 429, 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	ts.Clock.Advance(500 * time.Millisecond)
	if status, body := ts.login(encrypt(t, testPassword)); status != 200 {
		t.Fatalf("after the lockout, login = %d %s", status, body)
	}
	// A success forgets the failures: a fresh budget.
	for i := 0; i < DefaultMaxLoginFailures-1; i++ {
		status, body := ts.login(wrong)
		wantError(t, status, body, 401, "invalid password")
	}
	if status, _ := ts.login(encrypt(t, testPassword)); status != 200 {
		t.Fatalf("login after %d failures = %d", DefaultMaxLoginFailures-1, status)
	}
}

func TestLoginLimiter(t *testing.T) {
	l := &LoginLimiter{MaxFailures: 3, Window: time.Minute, Lockout: 10 * time.Second, MaxClients: 3}
	t0 := testEpoch
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	// Failures spread wider than the window never lock.
	l.Failed("a", at(0))
	l.Failed("a", at(30))
	l.Failed("a", at(61)) // window from 0 passed: count restarts at 1
	l.Failed("a", at(70))
	if w := l.Wait("a", at(70)); w != 0 {
		t.Fatalf("a locked after 2 failures in the window: %v", w)
	}
	l.Failed("a", at(80))
	if w := l.Wait("a", at(80)); w != 10*time.Second {
		t.Fatalf("a wait = %v, want 10s", w)
	}
	if w := l.Wait("b", at(80)); w != 0 {
		t.Fatalf("b (never failed) must wait %v", w)
	}
	if w := l.Wait("a", at(90)); w != 0 {
		t.Fatalf("a after the lockout: %v", w)
	}
	// After a lockout the count starts over.
	l.Failed("a", at(90))
	if w := l.Wait("a", at(90)); w != 0 {
		t.Fatalf("a locked again after one failure: %v", w)
	}

	// Bounded memory: a fourth address evicts the one idle longest.
	l.Failed("b", at(91))
	l.Failed("c", at(92))
	l.Failed("d", at(93))
	if n := l.Clients(); n != 3 {
		t.Fatalf("Clients = %d, want 3", n)
	}
	for i := 0; i < 1000; i++ {
		l.Failed(fmt.Sprintf("10.0.%d.%d", i/256, i%256), at(100+i))
	}
	if n := l.Clients(); n != 3 {
		t.Fatalf("Clients after 1000 addresses = %d, want 3", n)
	}
	l.Succeeded("10.0.3.231")
	if n := l.Clients(); n != 2 {
		t.Fatalf("Clients after a success = %d, want 2", n)
	}
}

func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"127.0.0.1:5555":                "127.0.0.1",
		"[::ffff:10.1.2.3]:80":          "10.1.2.3",
		"[2001:db8:1:2:3:4:5:6]:443":    "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443":    "2001:db8:1:2::/64",
		"not an address":                "not an address",
		"[fe80::1%eth0]:1":              "fe80::/64",
		"192.168.0.1:1":                 "192.168.0.1",
		"[2001:db8:1:3:3:4:5:6]:443":    "2001:db8:1:3::/64",
		"[::1]:8080":                    "::/64",
		"203.0.113.9:65535":             "203.0.113.9",
		"[2001:db8::]:1":                "2001:db8::/64",
		"[2001:db8:ffff:ffff::9]:65535": "2001:db8:ffff:ffff::/64",
	} {
		r := &http.Request{RemoteAddr: remote}
		if got := limiterKey((&Server{}).clientHost(r)); got != want {
			t.Errorf("limiterKey(clientHost(%q)) = %q, want %q", remote, got, want)
		}
	}
}

// signToken signs header and claims with HMAC-SHA256 whatever the header
// says, as an attacker would.
func signToken(t *testing.T, header, claims map[string]any, key []byte) string {
	t.Helper()
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	if key == nil {
		return signing + "."
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestTokens(t *testing.T) {
	ts := newTestServer(t)
	secret := ts.Server.Auth.Secret
	now := ts.Clock.Now()
	claims := func(mod func(map[string]any)) map[string]any {
		c := map[string]any{"sub": LoginSubject, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "x", "gen": 1}
		if mod != nil {
			mod(c)
		}
		return c
	}
	hs256 := map[string]any{"alg": "HS256", "typ": "JWT"}
	other := &Authenticator{Secret: bytes.Repeat([]byte{8}, 32), TokenTTL: time.Hour, Clock: ts.Clock, Generation: func() int64 { return 1 }}
	otherToken, err := other.IssueToken(LoginSubject)
	if err != nil {
		t.Fatal(err)
	}
	hs384, err := jwt.NewWithClaims(jwt.SigningMethodHS384, jwt.MapClaims(claims(nil))).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims(claims(nil))).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	const invalid = "invalid or expired token"
	tests := []struct {
		name, header string
		status       int
		message      string
	}{
		{"valid", "Bearer " + ts.Token, 200, ""},
		{"valid, lower-case scheme", "bearer " + ts.Token, 200, ""},
		{"hand-signed HS256 (the test's signer is right)", "Bearer " + signToken(t, hs256, claims(nil), secret), 200, ""},
		{"missing header", "", 401, "missing Authorization header"},
		{"wrong scheme", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:pw")), 401, `Authorization header must be "Bearer <token>"`},
		{"token without scheme", ts.Token, 401, `Authorization header must be "Bearer <token>"`},
		{"scheme without token", "Bearer ", 401, `Authorization header must be "Bearer <token>"`},
		{"malformed token", "Bearer not.a.jwt", 401, invalid},
		{"garbage", "Bearer %%%", 401, invalid},
		{"truncated signature", "Bearer " + ts.Token[:len(ts.Token)-4], 401, invalid},
		{"signed with another secret", "Bearer " + otherToken, 401, invalid},
		{"alg none (library)", "Bearer " + none, 401, invalid},
		{"alg none (hand-made)", "Bearer " + signToken(t, map[string]any{"alg": "none"}, claims(nil), nil), 401, invalid},
		{"alg NONE", "Bearer " + signToken(t, map[string]any{"alg": "NONE"}, claims(nil), nil), 401, invalid},
		{"HS384 with our secret", "Bearer " + hs384, 401, invalid},
		{"RS256 header, HMAC signature (key confusion)", "Bearer " + signToken(t, map[string]any{"alg": "RS256", "typ": "JWT"}, claims(nil), secret), 401, invalid},
		{"ES256 header, HMAC signature", "Bearer " + signToken(t, map[string]any{"alg": "ES256"}, claims(nil), secret), 401, invalid},
		{"no exp", "Bearer " + signToken(t, hs256, claims(func(c map[string]any) { delete(c, "exp") }), secret), 401, invalid},
		{"expired", "Bearer " + signToken(t, hs256, claims(func(c map[string]any) { c["exp"] = now.Add(-time.Second).Unix() }), secret), 401, invalid},
		{"issued in the future", "Bearer " + signToken(t, hs256, claims(func(c map[string]any) { c["iat"] = now.Add(time.Hour).Unix() }), secret), 401, invalid},
		{"no subject", "Bearer " + signToken(t, hs256, claims(func(c map[string]any) { delete(c, "sub") }), secret), 401, invalid},
		{"older generation", "Bearer " + signToken(t, hs256, claims(func(c map[string]any) { c["gen"] = 0 }), secret), 401, "token was revoked by a password change"},
		{"newer generation", "Bearer " + signToken(t, hs256, claims(func(c map[string]any) { c["gen"] = 2 }), secret), 401, "token was revoked by a password change"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/auth/status", "/api/v1/time"} {
				resp := ts.request("GET", path, nil, map[string]string{"Authorization": tc.header})
				var body bytes.Buffer
				body.ReadFrom(resp.Body)
				resp.Body.Close()
				if tc.status == 200 {
					if resp.StatusCode != 200 {
						t.Fatalf("%s = %d %s", path, resp.StatusCode, body.Bytes())
					}
					continue
				}
				wantError(t, resp.StatusCode, body.Bytes(), tc.status, tc.message)
			}
		})
	}
}

func TestTokenExpires(t *testing.T) {
	ts := newTestServer(t)
	ts.Clock.Advance(time.Hour - time.Second)
	if status, body := ts.do("GET", "/api/v1/time", nil, ts.Token); status != 200 {
		t.Fatalf("a second before expiry: %d %s", status, body)
	}
	ts.Clock.Advance(time.Second)
	status, body := ts.do("GET", "/api/v1/time", nil, ts.Token)
	wantError(t, status, body, 401, "invalid or expired token")
}

func TestPasswordChangeRevokesTokens(t *testing.T) {
	ts := newTestServer(t)
	status, body := ts.login(encrypt(t, testPassword))
	if status != 200 {
		t.Fatalf("login = %d %s", status, body)
	}
	loggedIn := decodeBody[loginResponse](t, body).Token
	// Both in use first: the Authenticator remembers them as verified,
	// and the password change must still revoke them.
	for _, token := range []string{ts.Token, loggedIn} {
		if status, body := ts.do("GET", "/api/v1/auth/status", nil, token); status != 200 {
			t.Fatalf("before the password change: %d %s", status, body)
		}
	}

	// What `tradeledger passwd` appends.
	hash, err := cheapArgon2.Hash("a new password")
	if err != nil {
		t.Fatal(err)
	}
	ts.appendEvent(domain.StreamCredentials, domain.NewEvent(ts.Clock, domain.TypePasswordSet, domain.PasswordSet{Hash: hash, Generation: 2}))

	for _, token := range []string{ts.Token, loggedIn} {
		status, body := ts.do("GET", "/api/v1/auth/status", nil, token)
		wantError(t, status, body, 401, "token was revoked by a password change")
	}
	status, body = ts.login(encrypt(t, testPassword))
	wantError(t, status, body, 401, "invalid password")
	status, body = ts.login(encrypt(t, "a new password"))
	if status != 200 {
		t.Fatalf("login with the new password = %d %s", status, body)
	}
	if status, body := ts.do("GET", "/api/v1/auth/status", nil, decodeBody[loginResponse](t, body).Token); status != 200 {
		t.Fatalf("new token: %d %s", status, body)
	}
}

func TestAuthNotConfigured(t *testing.T) {
	ts := newTestServer(t, func(ts *testServer) { ts.Server.Passwords = nil })
	status, body := ts.login(encrypt(t, testPassword))
	wantError(t, status, body, 503, "authentication is not configured")
}

// TestNoSecretsInLogsOrEvents drives logins and token use, then searches
// every log line and event for the password (clear and encrypted), the
// tokens and the hash.
func TestNoSecretsInLogsOrEvents(t *testing.T) {
	ts := newTestServer(t)
	wrongPassword := "hunter2-wrong-guess"
	status, body := ts.login(encrypt(t, testPassword))
	if status != 200 {
		t.Fatal(status)
	}
	token := decodeBody[loginResponse](t, body).Token
	ts.login(encrypt(t, wrongPassword))
	ts.login(wrongPassword)
	ts.do("POST", "/api/v1/auth/login", `{"password":"`+testPassword+`"`, "") // malformed, echoing nothing
	ts.do("GET", "/api/v1/auth/status", nil, token)
	ts.do("GET", "/api/v1/time?token="+token, nil, token)
	ts.do("GET", "/api/v1/time", nil, token+"x")
	ts.do("GET", "/api/v1/no-such-route", nil, token)
	// Hide nothing by accident: the log did record the traffic.
	logs := ts.Logs()
	for _, want := range []string{`"msg":"login"`, `"msg":"login refused"`, `"reason":"password"`, `"status":401`, `"path":"/api/v1/auth/login"`} {
		if !strings.Contains(logs, want) {
			t.Fatalf("logs lack %s:\n%s", want, logs)
		}
	}

	hash, _ := ts.Passwords.Current()
	secrets := map[string]string{
		"password":           testPassword,
		"encrypted password": encrypt(t, testPassword),
		"wrong password":     wrongPassword,
		"encrypted wrong":    encrypt(t, wrongPassword),
		"login token":        token,
		"test token":         ts.Token,
		"token signature":    token[strings.LastIndex(token, ".")+1:],
		"hash":               hash,
		"hash digest":        hash[strings.LastIndex(hash, "$")+1:],
	}
	for name, secret := range secrets {
		if strings.Contains(logs, secret) {
			t.Errorf("the %s appears in the logs", name)
		}
	}
	for _, e := range ts.events() {
		raw, _ := json.Marshal(e)
		for name, secret := range secrets {
			if e.Type == domain.TypePasswordSet && strings.HasPrefix(name, "hash") {
				continue // the one place the hash belongs
			}
			if strings.Contains(string(raw), secret) {
				t.Errorf("the %s appears in event %s/%d (%s)", name, e.Stream, e.Version, e.Type)
			}
		}
	}
}
