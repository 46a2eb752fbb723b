package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The API-wide error contract (docs/api.md, "Errors"): every error is JSON
// {"status":"error","message":…,"code":<status>} with Content-Type
// application/json, never an HTML page, a stack or a Go error string.

// checkContract fails unless resp is a JSON error body with the status.
func checkContract(t *testing.T, resp *http.Response, status int) errorResponse {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json; body %s", ct, body)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf("no X-Request-Id header")
	}
	for _, leak := range []string{"<html", "<!DOCTYPE", "goroutine ", ".go:", "tradeledger error:", "runtime error", "panic"} {
		if bytes.Contains(bytes.ToLower(body), []byte(strings.ToLower(leak))) {
			t.Fatalf("body leaks %q: %s", leak, body)
		}
	}
	var e errorResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("body %q is not the error JSON: %v", body, err)
	}
	if e.Status != "error" || e.Code != status || e.Message == "" {
		t.Fatalf("body = %+v, want status error, code %d, a message", e, status)
	}
	return e
}

func TestErrorContract(t *testing.T) {
	ts := newTestServer(t, func(ts *testServer) { ts.Server.MaxBodyBytes = 1024 })
	tests := []struct {
		name, method, path, body string
		token                    string
		status                   int
		message                  string // substring; "" for any
	}{
		{"unknown API route", "GET", "/api/v1/no-such-thing", "", ts.Token, 404, "no route for GET /api/v1/no-such-thing"},
		{"unknown API route without token", "GET", "/api/v1/no-such-thing", "", "", 404, ""},
		{"unknown route outside the API", "GET", "/index.html", "", "", 404, "no route for GET /index.html"},
		{"wrong method on the dashboard (GET / is the dashboard)", "POST", "/", "", "", 405, "method POST not allowed on /"},
		{"wrong method on login", "GET", "/api/v1/auth/login", "", "", 405, "method GET not allowed on /api/v1/auth/login"},
		{"wrong method on a protected route", "DELETE", "/api/v1/time", "", ts.Token, 405, "method DELETE not allowed"},
		{"wrong method on status", "POST", "/api/v1/auth/status", "{}", ts.Token, 405, ""},
		{"wrong method without a token", "PUT", "/api/v1/time", "", "", 405, ""},
		{"malformed JSON", "POST", "/api/v1/auth/login", `{"password": "ENC:abc"`, "", 400, "malformed JSON"},
		{"JSON syntax error names the offset", "POST", "/api/v1/auth/login", `{"password" "x"}`, "", 400, "at byte 13"},
		{"wrong JSON type names the field", "POST", "/api/v1/auth/login", `{"password": true}`, "", 400, `field "password" must be a string`},
		{"empty body", "POST", "/api/v1/auth/login", "", "", 400, "request body is empty"},
		{"body over the limit", "POST", "/api/v1/auth/login", `{"password":"` + strings.Repeat("A", 2048) + `"}`, "", 413, "larger than 1024 bytes"},
		{"no token", "GET", "/api/v1/time", "", "", 401, "missing Authorization header"},
		{"bad token", "GET", "/api/v1/time", "", "x.y.z", 401, "invalid or expired token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			resp := ts.request(tc.method, tc.path, body, map[string]string{"Authorization": bearer(tc.token)})
			allow := resp.Header.Values("Allow")
			e := checkContract(t, resp, tc.status)
			if tc.status == 405 && len(allow) == 0 {
				t.Fatalf("405 without an Allow header")
			}
			if !strings.Contains(e.Message, tc.message) {
				t.Fatalf("message = %q, want it to contain %q", e.Message, tc.message)
			}
		})
	}
}

// TestPanicRecovered serves a panicking handler through the server's own
// router and middleware: the client gets a 500 JSON body naming the request
// id and nothing of the panic; the log has the panic, its stack and the id.
func TestPanicRecovered(t *testing.T) {
	ts := newTestServer(t)
	root, api := ts.Server.newRouter()
	api.HandleFunc("/boom", func(http.ResponseWriter, *http.Request) {
		panic("boom: secret detail")
	})
	api.HandleFunc("/boom-error", func(http.ResponseWriter, *http.Request) {
		panic(errors.New("open /etc/secret: permission denied"))
	})
	srv := httptest.NewServer(root)
	defer srv.Close()

	for _, path := range []string{"/api/v1/boom", "/api/v1/boom-error"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		id := resp.Header.Get("X-Request-Id")
		e := checkContract(t, resp, 500)
		if e.Message != "internal error (request "+id+")" {
			t.Fatalf("message = %q, want the generic one with request id %s", e.Message, id)
		}
		if strings.Contains(e.Message, "secret") {
			t.Fatalf("message leaks the panic: %q", e.Message)
		}
		var panicLine, requestLine map[string]any
		for _, line := range strings.Split(strings.TrimSpace(ts.Logs()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("log line is not JSON: %q", line)
			}
			if m["request_id"] != id {
				continue
			}
			switch m["msg"] {
			case "panic":
				panicLine = m
			case "request":
				requestLine = m
			}
		}
		if panicLine == nil || !strings.Contains(panicLine["stack"].(string), "error_test.go") {
			t.Fatalf("no panic log line with a stack for request %s:\n%s", id, ts.Logs())
		}
		if requestLine == nil || requestLine["status"] != float64(500) || requestLine["path"] != path {
			t.Fatalf("request log line = %v", requestLine)
		}
	}
}
