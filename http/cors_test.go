package http

import (
	"net/http"
	"testing"
)

// TestCORS: with --cors-origins, a preflight from an allowed origin is 204
// with the allowed method and headers, a real request carries
// Access-Control-Allow-Origin; another origin gets no CORS header; without
// the setting nothing changes.
func TestCORS(t *testing.T) {
	const dash = "https://dash.example.com"
	ts := newTestServer(t, func(ts *testServer) { ts.Server.CORSOrigins = []string{dash} })
	preflight := func(origin string) *http.Response {
		resp := ts.request("OPTIONS", "/api/v1/trade/buy", nil, map[string]string{
			"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"})
		resp.Body.Close()
		return resp
	}
	resp := preflight(dash)
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != dash ||
		resp.Header.Get("Access-Control-Allow-Methods") != "POST" || resp.Header.Get("Access-Control-Allow-Headers") == "" ||
		resp.Header.Get("Access-Control-Max-Age") != "600" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("preflight from %s = %d %v", dash, resp.StatusCode, resp.Header)
	}
	if resp := preflight("https://evil.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from another origin allowed: %v", resp.Header)
	}
	resp = ts.request("GET", "/api/v1/time", nil, map[string]string{"Origin": dash, "Authorization": bearer(ts.Token)})
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != dash || resp.Header.Get("Access-Control-Expose-Headers") == "" {
		t.Fatalf("GET from %s = %d %v", dash, resp.StatusCode, resp.Header)
	}
	resp = ts.request("GET", "/api/v1/time", nil, map[string]string{"Origin": "https://evil.example", "Authorization": bearer(ts.Token)})
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("GET from another origin got %v", resp.Header)
	}

	plain := newTestServer(t)
	resp = plain.request("OPTIONS", "/api/v1/trade/buy", nil, map[string]string{"Origin": dash, "Access-Control-Request-Method": "POST"})
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS answered without --cors-origins: %v", resp.Header)
	}
}

func TestParseCORSOrigins(t *testing.T) {
	got, err := ParseCORSOrigins(" https://Dash.example.com , http://localhost:8080,")
	if err != nil || len(got) != 2 || got[0] != "https://dash.example.com" || got[1] != "http://localhost:8080" {
		t.Fatalf("= %v, %v", got, err)
	}
	for _, bad := range []string{"*", "dash.example.com", "https://dash.example.com/app", "ftp://x", "https://*.example.com"} {
		if _, err := ParseCORSOrigins(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
