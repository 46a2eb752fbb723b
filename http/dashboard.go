package http

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// dashboardFS holds the dashboard: plain ES modules, a stylesheet and the
// vendored chart library, served as they are (no build step). The browser
// tests under dashboard/e2e are not part of it.
//
//go:embed dashboard/index.html dashboard/*.js dashboard/*.css dashboard/vendor
var dashboardFS embed.FS

// DashboardCSP is the Content-Security-Policy of every dashboard response
// of a server without CORS origins: scripts, styles and connections from
// this origin only (no inline script, no eval, no other host), and no
// framing.
const DashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// dashboardCSP is DashboardCSP with the server's CORSOrigins added to
// connect-src: the other Tradeledger instances the dashboard's multi-bot
// page may read (with a read token it keeps in the browser). Instances
// that show each other list each other in --cors-origins: the one read
// allows the reader's page, the reader's policy allows the connection.
// Scripts still come from this origin only.
func dashboardCSP(corsOrigins []string) string {
	if len(corsOrigins) == 0 {
		return DashboardCSP
	}
	return strings.Replace(DashboardCSP, "connect-src 'self'", "connect-src 'self' "+strings.Join(corsOrigins, " "), 1)
}

// dashboardAsset is one embedded file, ready to serve.
type dashboardAsset struct {
	ctype string
	raw   []byte
	gz    []byte // gzip of raw, or nil when it would not be smaller
	etag  string
}

var (
	dashboardOnce   sync.Once
	dashboardAssets map[string]*dashboardAsset // by URL path
)

// loadDashboard reads and compresses the embedded files once.
func loadDashboard() map[string]*dashboardAsset {
	dashboardOnce.Do(func() {
		dashboardAssets = map[string]*dashboardAsset{}
		fs.WalkDir(dashboardFS, "dashboard", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := dashboardFS.ReadFile(p)
			if err != nil {
				return err
			}
			a := &dashboardAsset{raw: raw, ctype: dashboardType(p)}
			sum := sha256.Sum256(raw)
			a.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
			zw.Write(raw)
			zw.Close()
			if b.Len() < len(raw) {
				a.gz = b.Bytes()
			}
			dashboardAssets["/"+p] = a
			return nil
		})
		dashboardAssets["/"] = dashboardAssets["/dashboard/index.html"]
	})
	return dashboardAssets
}

func dashboardType(p string) string {
	switch path.Ext(p) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case "":
		return "text/plain; charset=utf-8" // LICENSE, NOTICE
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// dashboardHandler serves the dashboard: GET / is its page, GET
// /dashboard/<file> its modules, under its Content-Security-Policy
// (dashboardCSP). No authentication: the files hold no data; the page logs
// in (session.go) and reads the API.
type dashboardHandler struct {
	csp string
}

func (h *dashboardHandler) register(r *mux.Router) {
	r.Handle("/", handlerFunc(h.handleDashboardFile))
	r.PathPrefix("/dashboard/").Handler(handlerFunc(h.handleDashboardFile))
}

// handleDashboardFile answers an embedded file with the dashboard's
// security headers, gzip when the client accepts it, and an ETag (the
// browser revalidates: Cache-Control no-cache). Unknown files are 404.
func (h *dashboardHandler) handleDashboardFile(w http.ResponseWriter, r *http.Request) error {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		writeError(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s", r.Method, r.URL.Path))
		return nil
	}
	a := loadDashboard()[r.URL.Path]
	if a == nil {
		return domain.Errorf(domain.ENOTFOUND, "no dashboard file %s", r.URL.Path)
	}
	hd.Set("Content-Type", a.ctype)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	hd.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	body := a.raw
	if a.gz != nil && acceptsGzip(r) {
		hd.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return nil
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") || strings.Contains(params, "q=0.")
		}
	}
	return false
}
