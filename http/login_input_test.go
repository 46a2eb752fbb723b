package http

import (
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/argon2id"
)

// loginBurst sends n concurrent logins with password enc (and headers) and
// returns how many answers had each status.
func loginBurst(ts *testServer, n int, enc string, headers map[string]string) map[int]int {
	ts.t.Helper()
	counts := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp := ts.request("POST", "/api/v1/auth/login", map[string]string{"password": enc}, headers)
			resp.Body.Close()
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return counts
}

// A burst of concurrent wrong logins from one address gets exactly
// MaxFailures password checks (401, each recorded as LoginFailed); every
// other attempt is 429 without a check. The password is hashed with the
// production argon2id cost, so the burst is waiting while hashes run, as
// it would against a real server. The figure is printed.
func TestLoginBurstAdmitsExactlyMaxFailures(t *testing.T) {
	const burst = 50
	ts := newTestServer(t, func(ts *testServer) {
		hash, err := argon2id.DefaultParams.Hash(testPassword)
		if err != nil {
			t.Fatal(err)
		}
		ts.appendEvent(domain.StreamCredentials, domain.NewEvent(ts.Clock, domain.TypePasswordSet, domain.PasswordSet{Hash: hash, Generation: 2}))
	})
	counts := loginBurst(ts, burst, encrypt(t, "not the password"), nil)
	failed := len(eventsOfType[domain.LoginFailed](ts, domain.TypeLoginFailed))
	t.Logf("concurrent-burst login guesses admitted: %d of %d concurrent wrong logins checked (401), %d refused with 429 (limit %d, %d hashes at once)", counts[401], burst, counts[429], DefaultMaxLoginFailures, DefaultLoginConcurrency)
	if counts[401] != DefaultMaxLoginFailures || counts[429] != burst-DefaultMaxLoginFailures || failed != DefaultMaxLoginFailures {
		t.Fatalf("statuses %v, %d LoginFailed events; want exactly %d checks (401) and %d × 429", counts, failed, DefaultMaxLoginFailures, burst-DefaultMaxLoginFailures)
	}
	if status, body := ts.login(encrypt(t, testPassword)); status != 429 {
		t.Fatalf("right password while locked out: %d %s, want 429", status, body)
	}
}

// The right password among the first MaxFailures attempts still logs in:
// a reservation is forgotten by the success.
func TestLoginReservationForgottenOnSuccess(t *testing.T) {
	ts := newTestServer(t)
	for i := 0; i < DefaultMaxLoginFailures-1; i++ {
		status, body := ts.login(encrypt(t, "wrong"))
		wantError(t, status, body, 401, "invalid password")
	}
	if status, body := ts.login(encrypt(t, testPassword)); status != 200 {
		t.Fatalf("last allowed attempt with the right password: %d %s", status, body)
	}
	if n := ts.Server.Logins.Clients(); n != 0 {
		t.Fatalf("limiter remembers %d clients after a success", n)
	}
}

// Behind a trusted reverse proxy, logins are throttled (and recorded) per
// X-Forwarded-For client; from any other peer the header is ignored, and
// addresses a client prepends itself do not count.
func TestLoginTrustedProxies(t *testing.T) {
	wrong := "not the password"
	// The test client connects from 127.0.0.1: trusted as a proxy here.
	ts := newTestServer(t, func(ts *testServer) {
		ts.Server.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	a := map[string]string{"X-Forwarded-For": "198.51.100.7, 203.0.113.1"}
	counts := loginBurst(ts, 10, encrypt(t, wrong), a)
	if counts[401] != DefaultMaxLoginFailures {
		t.Fatalf("client A: %v, want %d × 401", counts, DefaultMaxLoginFailures)
	}
	// Another client behind the same proxy is not locked out by A…
	status, _ := ts.do2("203.0.113.2", encrypt(t, testPassword))
	if status != 200 {
		t.Fatalf("client B behind the proxy: %d, want 200", status)
	}
	// …and A cannot escape by forging a different first hop.
	if status, _ := ts.do2("10.9.9.9, 203.0.113.1", encrypt(t, testPassword)); status != 429 {
		t.Fatalf("client A with a forged first hop: %d, want 429", status)
	}
	got := eventsOfType[domain.LoginFailed](ts, domain.TypeLoginFailed)
	if len(got) == 0 || got[0].RemoteAddr != "203.0.113.1" {
		t.Fatalf("LoginFailed remote = %+v, want the forwarded client 203.0.113.1", got)
	}

	// Without trusted proxies the header is ignored: one key for everyone.
	plain := newTestServer(t)
	loginBurst(plain, DefaultMaxLoginFailures, encrypt(t, wrong), a)
	if status, _ := plain.do2("203.0.113.2", encrypt(t, testPassword)); status != 429 {
		t.Fatalf("untrusted peer's X-Forwarded-For was believed: %d, want 429", status)
	}
}

// do2 logs in with an X-Forwarded-For header.
func (ts *testServer) do2(xff, enc string) (int, string) {
	ts.t.Helper()
	resp := ts.request("POST", "/api/v1/auth/login", map[string]string{"password": enc}, map[string]string{"X-Forwarded-For": xff})
	resp.Body.Close()
	return resp.StatusCode, resp.Status
}

func TestClientHost(t *testing.T) {
	s := &Server{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}}
	for _, c := range []struct {
		remote string
		xff    []string
		want   string
	}{
		{"192.0.2.1:5", []string{"203.0.113.1"}, "192.0.2.1"},                     // untrusted peer: header ignored
		{"10.0.0.1:5", nil, "10.0.0.1"},                                           // trusted, no header
		{"10.0.0.1:5", []string{"203.0.113.1"}, "203.0.113.1"},                    // one hop
		{"10.0.0.1:5", []string{"1.1.1.1, 203.0.113.1, 10.0.0.2"}, "203.0.113.1"}, // chain of proxies
		{"10.0.0.1:5", []string{"1.1.1.1", "203.0.113.1"}, "203.0.113.1"},         // several header lines
		{"10.0.0.1:5", []string{"garbage, 203.0.113.1"}, "203.0.113.1"},
		{"10.0.0.1:5", []string{"203.0.113.1, garbage"}, "10.0.0.1"}, // malformed last hop: the proxy itself
		{"[2001:db8::1]:5", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"[::ffff:10.1.1.1]:5", []string{"198.51.100.2"}, "198.51.100.2"},
	} {
		r := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := s.clientHost(r); got != c.want {
			t.Errorf("clientHost(%s, %q) = %q, want %q", c.remote, c.xff, got, c.want)
		}
	}
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,::ffff:172.16.0.0/108,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32", "172.16.0.0/12"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.1/8/2"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
	if p, err := ParseTrustedProxies(""); err != nil || len(p) != 0 {
		t.Fatalf("empty list: %v %v", p, err)
	}
}
