package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/argon2id"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// passwdRun runs `tradeledger passwd --data dir` with stdin.
func passwdRun(t *testing.T, dir, stdin string) (stdout string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = Run(context.Background(), []string{"passwd", "--data", dir}, strings.NewReader(stdin), &out, &errb)
	return out.String(), err
}

// passwordEvents returns the PasswordSet events of the data dir's log.
func passwordEvents(t *testing.T, dir string) []domain.Event {
	t.Helper()
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var out []domain.Event
	it := d.Store.ReadStream(context.Background(), domain.StreamCredentials, 0, 0)
	defer it.Close()
	for it.Next() {
		if e := it.Event(); e.Type == domain.TypePasswordSet {
			out = append(out, e)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPasswdSetsAndChangesThePassword(t *testing.T) {
	t.Setenv("TRADELEDGER_PASSWORD", "")
	dir := filepath.Join(t.TempDir(), "data")
	for i, pw := range []string{"first password", "second password\r\n", "  third, with spaces  \nignored second line"} {
		out, err := passwdRun(t, dir, pw)
		if err != nil {
			t.Fatalf("passwd %d: %v", i, err)
		}
		if want := "generation " + string(rune('1'+i)); !strings.Contains(out, want) {
			t.Fatalf("passwd %d said %q, want it to name %s", i, out, want)
		}
	}
	events := passwordEvents(t, dir)
	if len(events) != 3 {
		t.Fatalf("%d PasswordSet events, want 3", len(events))
	}
	for i, e := range events {
		var d domain.PasswordSet
		if err := e.Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.Generation != int64(i+1) || e.Actor != domain.ActorCLI {
			t.Fatalf("event %d: generation %d actor %q", i, d.Generation, e.Actor)
		}
		if strings.Contains(string(e.Data), "password") || strings.Contains(string(e.Data), "spaces") {
			t.Fatalf("event %d holds the password in clear: %s", i, e.Data)
		}
	}
	var last domain.PasswordSet
	events[2].Decode(&last)
	for pw, want := range map[string]bool{"  third, with spaces  ": true, "third, with spaces": false, "second password": false} {
		if ok, err := argon2id.Check(pw, last.Hash); err != nil || ok != want {
			t.Fatalf("CheckPassword(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
}

func TestPasswdRefusesBadInput(t *testing.T) {
	t.Setenv("TRADELEDGER_PASSWORD", "")
	dir := filepath.Join(t.TempDir(), "data")
	for stdin, want := range map[string]string{
		"":                        "no password on stdin",
		"\nsecond line":           "no password on stdin",
		"short\n":                 "at least 8 characters",
		strings.Repeat("x", 2000): "at most 1024 bytes",
	} {
		if _, err := passwdRun(t, dir, stdin); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("passwd with %d bytes: err = %v, want %q", len(stdin), err, want)
		}
	}
	if n := len(passwordEvents(t, dir)); n != 0 {
		t.Fatalf("%d PasswordSet events after refused input", n)
	}
}

func TestInitPasswordFromEnvironment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("TRADELEDGER_PASSWORD", "from the environment")
	for i := 0; i < 2; i++ { // the second open finds it and appends nothing
		passwordEvents(t, dir)
	}
	t.Setenv("TRADELEDGER_PASSWORD", "a different one") // ignored once a password exists
	events := passwordEvents(t, dir)
	if len(events) != 1 {
		t.Fatalf("%d PasswordSet events, want 1", len(events))
	}
	var d domain.PasswordSet
	events[0].Decode(&d)
	if ok, _ := argon2id.Check("from the environment", d.Hash); !ok || d.Generation != 1 || events[0].Actor != domain.ActorCLI {
		t.Fatalf("PasswordSet = %+v actor %q", d, events[0].Actor)
	}

	t.Setenv("TRADELEDGER_PASSWORD", "short")
	if _, err := OpenDataDir(context.Background(), filepath.Join(t.TempDir(), "fresh"), "", zap.NewNop()); err == nil ||
		!strings.Contains(err.Error(), "TRADELEDGER_PASSWORD") {
		t.Fatalf("a too-short TRADELEDGER_PASSWORD: err = %v", err)
	}
}

// startServe runs the serve command's Main on dir at 127.0.0.1:0.
func startServe(t *testing.T, dir string) *Main {
	t.Helper()
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
	m.Logger = zap.NewNop()
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	return m
}

// serveLogin logs in to a running Main and returns status and token.
func serveLogin(t *testing.T, m *Main, wallet, password string) (int, string) {
	t.Helper()
	enc, err := secrets.EncryptLoginPassword(password, wallet)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"password": enc})
	resp, err := http.Post(m.Server.URL()+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Token
}

func serveGet(t *testing.T, m *Main, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", m.Server.URL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeLoginAndPasswdRevokes is the whole path: first start with
// TRADELEDGER_WALLET and TRADELEDGER_PASSWORD, login with the encrypted
// password, status and time with the token; then `passwd` (server
// stopped), restart: the old token and password are refused, the new
// password logs in.
func TestServeLoginAndPasswdRevokes(t *testing.T) {
	const wallet = "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8"
	t.Setenv("TRADELEDGER_WALLET", wallet)
	t.Setenv("TRADELEDGER_PASSWORD", "first password")
	dir := filepath.Join(t.TempDir(), "data")

	m := startServe(t, dir)
	status, token := serveLogin(t, m, wallet, "first password")
	if status != 200 || token == "" {
		t.Fatalf("login = %d", status)
	}
	if status, body := serveGet(t, m, "/api/v1/auth/status", token); status != 200 || !strings.Contains(body, `"isRegistered":true`) {
		t.Fatalf("auth/status = %d %s", status, body)
	}
	if status, body := serveGet(t, m, "/api/v1/time", token); status != 200 || !strings.Contains(body, `"serverTime":`) {
		t.Fatalf("time = %d %s", status, body)
	}
	if status, _ := serveLogin(t, m, "0xffffffffffffffffffffffff", "first password"); status != 401 {
		t.Fatalf("login encrypted with another wallet = %d, want 401", status)
	}
	m.Close()

	if _, err := passwdRun(t, dir, "second password\n"); err != nil {
		t.Fatal(err)
	}

	m = startServe(t, dir)
	defer m.Close()
	if status, body := serveGet(t, m, "/api/v1/time", token); status != 401 || !strings.Contains(body, "revoked") {
		t.Fatalf("old token after passwd = %d %s, want 401 revoked", status, body)
	}
	if status, _ := serveLogin(t, m, wallet, "first password"); status != 401 {
		t.Fatalf("old password after passwd = %d, want 401", status)
	}
	status, token = serveLogin(t, m, wallet, "second password")
	if status != 200 {
		t.Fatalf("new password = %d", status)
	}
	if status, body := serveGet(t, m, "/api/v1/time", token); status != 200 {
		t.Fatalf("time with the new token = %d %s", status, body)
	}
}
