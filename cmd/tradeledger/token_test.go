package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

func tokenRun(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = Run(context.Background(), append([]string{"token"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

// TestTokenCommands: token create prints a token once and records only its
// id; serve accepts it with its scope (a read token reads, 403 on a
// change); token list shows it; token revoke refuses it after the restart
// (and at once on a live server, which the http tests show).
func TestTokenCommands(t *testing.T) {
	const wallet = "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8"
	t.Setenv("TRADELEDGER_WALLET", wallet)
	t.Setenv("TRADELEDGER_PASSWORD", "first password")
	dir := filepath.Join(t.TempDir(), "data")
	startServe(t, dir).Close() // initialise the data dir

	if _, _, err := tokenRun(t, "create", "--scope", "read", "--ttl", "30d", "--name", "grafana", "--data", dir); err != nil {
		t.Fatal(err)
	}
	out, _, err := tokenRun(t, "create", "--scope", "read", "--ttl", "30d", "--name", "auditor", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out)
	if strings.Count(token, ".") != 2 {
		t.Fatalf("create printed %q, want a JWT", out)
	}
	if _, _, err := tokenRun(t, "create", "--scope", "read", "--name", "auditor", "--data", dir); err == nil {
		t.Fatalf("a second active token named auditor was created")
	}
	for _, bad := range [][]string{{"--scope", "root", "--name", "x"}, {"--scope", "read", "--name", "a b"}, {"--scope", "read", "--name", "x", "--ttl", "-1d"}} {
		if _, _, err := tokenRun(t, append([]string{"create", "--data", dir}, bad...)...); err == nil {
			t.Errorf("create %v succeeded", bad)
		}
	}
	// Only the id is stored: no event holds the token or its signature.
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	it := d.Store.ReadAll(context.Background(), 0, 0)
	created := 0
	for it.Next() {
		e := it.Event()
		if strings.Contains(string(e.Data), strings.Split(token, ".")[2]) || strings.Contains(string(e.Data), token) {
			t.Errorf("the token is stored in clear in %s", e.Type)
		}
		if e.Type == domain.TypeTokenCreated && e.Stream == domain.StreamTokens {
			created++
		}
	}
	it.Close()
	d.Close()
	if created != 2 {
		t.Fatalf("%d TokenCreated events, want 2", created)
	}

	m := startServe(t, dir)
	if status, _ := serveGet(t, m, "/api/v1/time", token); status != 200 {
		t.Fatalf("read token GET time = %d", status)
	}
	req, _ := http.NewRequest("POST", m.Server.URL()+"/api/v1/system/start", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if status := resp.StatusCode; status != 403 {
		t.Fatalf("read token POST system/start = %d %s, want 403", status, body)
	}
	list, _, err := tokenRun(t, "list", "--data", dir)
	if err != nil || !strings.Contains(list, "auditor") || !strings.Contains(list, "grafana") || !strings.Contains(list, "active") {
		t.Fatalf("list = %q, %v", list, err)
	}
	m.Close()

	if _, _, err := tokenRun(t, "revoke", "auditor", "--data", dir); err != nil {
		t.Fatal(err)
	}
	list, _, _ = tokenRun(t, "list", "--data", dir)
	if !strings.Contains(list, "revoked") {
		t.Fatalf("list after revoke = %q", list)
	}
	m = startServe(t, dir)
	defer m.Close()
	if status, _ := serveGet(t, m, "/api/v1/time", token); status != 401 {
		t.Fatalf("revoked token = %d, want 401", status)
	}
	if _, _, err := tokenRun(t, "revoke", "nobody", "--data", dir); err == nil {
		t.Fatalf("revoking an unknown token succeeded")
	}
}

// TestServeAcceptsATokenCreatedBesideIt: a token created and a password
// set by commands run beside a live serve work at the very next request,
// not only after the store's next look at the file (every half second):
// an unknown signed token, and a login refused, catch the read models up
// with the log first.
func TestServeAcceptsATokenCreatedBesideIt(t *testing.T) {
	const wallet = "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8"
	t.Setenv("TRADELEDGER_WALLET", wallet)
	t.Setenv("TRADELEDGER_PASSWORD", "first password")
	dir := filepath.Join(t.TempDir(), "data")
	m := startServe(t, dir)
	defer m.Close()

	for i, name := range []string{"script", "probe", "dashboard"} {
		out, _, err := tokenRun(t, "create", "--scope", "read", "--name", name, "--data", dir)
		if err != nil {
			t.Fatal(err)
		}
		if status, body := serveGet(t, m, "/api/v1/time", strings.TrimSpace(out)); status != 200 {
			t.Fatalf("token %d, used at once: %d %s", i, status, body)
		}
	}
	// A token of this log's secret that no TokenCreated names stays
	// refused, after one catch-up.
	forged, _, _, err := m.Server.Auth.IssueScoped("never-created", domain.ScopeRead, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if status, body := serveGet(t, m, "/api/v1/time", forged); status != 401 || !strings.Contains(body, "revoked or is unknown") {
			t.Fatalf("unrecorded token = %d %s, want 401", status, body)
		}
	}

	if _, err := passwdRun(t, dir, "second password\n"); err != nil {
		t.Fatal(err)
	}
	if status, _ := serveLogin(t, m, wallet, "second password"); status != 200 {
		t.Fatalf("login with the password just set = %d, want 200", status)
	}
}

// TestTokenErrorsSayWhichFlag: a token command missing what it needs says
// which flag to give, in plain words, before it touches the data dir; a
// refused value names its flag; main prints a domain error's message, not
// its code.
func TestTokenErrorsSayWhichFlag(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--scope", "read"}, "token create: --name is required"},
		{[]string{"create", "--name", "grafana"}, "token create: --scope is required: read"},
		{[]string{"revoke"}, "token revoke: name the token to revoke"},
		{[]string{"create", "--name", "a b", "--scope", "read"}, `--name: token name "a b"`},
	} {
		dir := missing
		if tt.want[0] == '-' { // a value refused once the data dir is open
			dir = filepath.Join(t.TempDir(), "data")
			t.Setenv("TRADELEDGER_PASSWORD", "first password")
			startServe(t, dir).Close()
		}
		_, _, err := tokenRun(t, append(tt.args, "--data", dir)...)
		if err == nil {
			t.Fatalf("token %v succeeded", tt.args)
		}
		line := errorLine(err)
		if !strings.HasPrefix(line, "tradeledger: "+tt.want) || strings.Contains(line, "code=") {
			t.Errorf("token %v prints %q, want it to start with %q, without the error code", tt.args, line, "tradeledger: "+tt.want)
		}
	}
	wrapped := fmt.Errorf("open: %w", domain.Errorf(domain.EINVALID, "bad thing; use --x"))
	if got, want := errorLine(wrapped), "tradeledger: open: bad thing; use --x"; got != want {
		t.Errorf("errorLine = %q, want %q", got, want)
	}
}
