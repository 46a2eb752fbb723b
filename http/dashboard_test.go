package http

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestDashboardServesEmbeddedFilesWithCSP(t *testing.T) {
	ts := newTestServer(t)
	var paths []string
	fs.WalkDir(dashboardFS, "dashboard", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, "/"+p)
		}
		return err
	})
	if len(paths) < 5 {
		t.Fatalf("embedded files = %v", paths)
	}
	for _, p := range append([]string{"/"}, paths...) {
		if strings.Contains(p, "/e2e/") {
			t.Fatalf("browser tests embedded: %s", p)
		}
		resp := ts.request("GET", p, nil, map[string]string{"Accept-Encoding": "gzip"})
		body := readBody(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", p, resp.StatusCode)
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != DashboardCSP {
			t.Fatalf("GET %s: CSP = %q", p, got)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("GET %s: headers %v", p, resp.Header)
		}
		want, _ := dashboardFS.ReadFile(strings.TrimPrefix(p, "/"))
		if p == "/" {
			want, _ = dashboardFS.ReadFile("dashboard/index.html")
		}
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(zr)
		} else if len(want) > 4096 {
			t.Fatalf("GET %s: %d bytes sent uncompressed", p, len(want))
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("GET %s: body differs from the embedded file", p)
		}
	}
	for p, ctype := range map[string]string{"/": "text/html", "/dashboard/app.js": "text/javascript", "/dashboard/style.css": "text/css",
		"/dashboard/vendor/lightweight-charts/lightweight-charts.mjs": "text/javascript"} {
		resp := ts.request("GET", p, nil, nil)
		resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) {
			t.Fatalf("GET %s: Content-Type %q, want %s", p, resp.Header.Get("Content-Type"), ctype)
		}
		resp = ts.request("GET", p, nil, map[string]string{"If-None-Match": resp.Header.Get("ETag")})
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Fatalf("GET %s with its ETag: %d, want 304", p, resp.StatusCode)
		}
	}
	for _, p := range []string{"/dashboard/e2e/package.json", "/dashboard/nope.js", "/dashboard/"} {
		resp := ts.request("GET", p, nil, nil)
		body := readBody(t, resp)
		wantError(t, resp.StatusCode, body, http.StatusNotFound, "")
		if resp.Header.Get("Content-Security-Policy") != DashboardCSP {
			t.Fatalf("GET %s: a dashboard 404 without the CSP", p)
		}
	}
	// A client that refuses gzip (q=0) or does not ask for it gets the
	// file as is.
	for _, ae := range []string{"", "gzip;q=0", "br", "identity"} {
		resp := ts.request("GET", "/dashboard/vendor/lightweight-charts/lightweight-charts.mjs", nil, map[string]string{"Accept-Encoding": ae})
		body := readBody(t, resp)
		want, _ := dashboardFS.ReadFile("dashboard/vendor/lightweight-charts/lightweight-charts.mjs")
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q, %d bytes (want %d as is)", ae, resp.Header.Get("Content-Encoding"), len(body), len(want))
		}
	}
}

// With --cors-origins, the dashboard may connect to those origins (other
// instances its multi-bot page reads), and only to them: scripts still
// come from its own origin.
func TestDashboardCSPConnectsToCORSOrigins(t *testing.T) {
	ts := newTestServer(t, func(ts *testServer) {
		ts.Server.CORSOrigins = []string{"http://127.0.0.1:4001", "https://bot2.example"}
	})
	resp := ts.request("GET", "/", nil, nil)
	readBody(t, resp)
	want := "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self' http://127.0.0.1:4001 https://bot2.example; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	if got := resp.Header.Get("Content-Security-Policy"); got != want {
		t.Fatalf("CSP = %q\nwant %q", got, want)
	}
}

// The dashboard's scripts never build markup from strings (server data
// reaches the page as text nodes), never eval, and keep no session token in
// storage a script could read. (The Bots page keeps other instances' tokens
// in localStorage, by design and of scope read only: bots.js refuses any
// other, and the browser tests check that it does.)
func TestDashboardScriptsAvoidUnsafeSinks(t *testing.T) {
	bad := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*'on|(local|session)Storage\.setItem\([^)]*(token|session)`)
	files, _ := filepath.Glob("dashboard/*.js")
	if len(files) == 0 {
		t.Fatal("no dashboard scripts")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := bad.Find(b); m != nil {
			t.Fatalf("%s uses %q", f, m)
		}
	}
}

// The vendored chart library is the version e2e/package.json pins (make
// dashboard-vendor copies it from node_modules), with its license and
// notice.
func TestVendoredChartsMatchPinnedVersion(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile("dashboard/e2e/package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	pinned := pkg.Dependencies["lightweight-charts"]
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(pinned) {
		t.Fatalf("lightweight-charts is pinned as %q, want an exact version", pinned)
	}
	dir := "dashboard/vendor/lightweight-charts"
	lib, err := os.ReadFile(filepath.Join(dir, "lightweight-charts.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Lightweight Charts™ v(\S+)`).FindSubmatch(lib[:min(len(lib), 300)])
	if m == nil || string(m[1]) != pinned {
		t.Fatalf("vendored lightweight-charts is %q, package.json pins %s: run make dashboard-vendor", m, pinned)
	}
	notice, err := os.ReadFile(filepath.Join(dir, "NOTICE"))
	if err != nil || !bytes.Contains(notice, []byte("v"+pinned)) || !bytes.Contains(notice, []byte("TradingView")) {
		t.Fatalf("NOTICE = %q (%v), want the attribution of v%s", notice, err, pinned)
	}
	if license, err := os.ReadFile(filepath.Join(dir, "LICENSE")); err != nil || !bytes.Contains(license, []byte("Apache License")) {
		t.Fatalf("LICENSE missing or not Apache-2.0: %v", err)
	}
	// With the npm packages installed (make e2e-deps), the copy must be
	// byte for byte the package's file.
	npm, err := os.ReadFile("dashboard/e2e/node_modules/lightweight-charts/dist/lightweight-charts.standalone.production.mjs")
	if err == nil && !bytes.Equal(npm, lib) {
		t.Fatal("vendored lightweight-charts differs from node_modules: run make dashboard-vendor")
	}
}
