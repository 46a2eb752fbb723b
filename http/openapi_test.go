package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gorilla/mux"
)

// openAPI is the document loaded and validated once, with a router that
// finds an operation for a request.
var openAPI struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

func loadOpenAPI(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	openAPI.once.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(OpenAPIDocument)
		if err != nil {
			openAPI.err = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			openAPI.err = err
			return
		}
		openAPI.doc = doc
		openAPI.router, openAPI.err = gorillamux.NewRouter(doc)
	})
	if openAPI.err != nil {
		t.Fatalf("openapi.json: %v", openAPI.err)
	}
	return openAPI.doc, openAPI.router
}

// validateResponse checks a response of the test server against the
// document: the status's (or default) response, its content type and
// schema. Requests the document has no operation for (deliberately wrong
// paths and methods) and event streams (they do not end) are left out.
// The body is put back for the caller.
func validateResponse(t testing.TB, req *http.Request, resp *http.Response) {
	t.Helper()
	if err := checkResponse(t, req, resp); err != nil {
		t.Errorf("%v", err)
	}
}

func checkResponse(t testing.TB, req *http.Request, resp *http.Response) error {
	_, router := loadOpenAPI(t)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return nil
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil // the caller sees the short body
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		return fmt.Errorf("%s %s → %d does not match openapi.json: %v\nbody: %.300s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	return nil
}

// TestOpenAPIValidationCatchesMismatches: the response check the HTTP
// tests run refuses a body of the wrong shape, an error body without its
// fields and an undocumented content type.
func TestOpenAPIValidationCatchesMismatches(t *testing.T) {
	for _, c := range []struct {
		method, path, ctype, body string
		status                    int
		ok                        bool
	}{
		{"GET", "/api/v1/time", "application/json", `{"serverTime":1767323045000}`, 200, true},
		{"GET", "/api/v1/time", "application/json", `{"serverTime":"soon"}`, 200, false},
		{"GET", "/api/v1/time", "application/json", `{"status":"error","message":"no","code":401}`, 401, true},
		{"GET", "/api/v1/time", "application/json", `{"error":"no"}`, 401, false},
		{"GET", "/api/v1/time", "text/html", `<h1>no</h1>`, 500, false},
		{"POST", "/api/v1/trade/buy", "application/json", `{"status":"success","message":"Order sent","id":3}`, 200, true},
		{"POST", "/api/v1/trade/buy", "application/json", `{"status":"success"}`, 200, false},
	} {
		req, _ := http.NewRequest(c.method, "http://127.0.0.1:1"+c.path, nil)
		resp := &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {c.ctype}}, Body: io.NopCloser(strings.NewReader(c.body))}
		if err := checkResponse(t, req, resp); (err == nil) != c.ok {
			t.Errorf("%s %s %d %s: err=%v, want ok=%v", c.method, c.path, c.status, c.body, err, c.ok)
		}
	}
}

// routeVarPattern matches a route variable with a pattern ({name:regexp}).
var routeVarPattern = regexp.MustCompile(`\{(\w+):[^}]*\}`)

// TestOpenAPIDocumentsEveryRoute walks the live routers (main and files
// listeners) and fails on a route the document lacks or a documented
// operation no router serves.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	s := NewServer()
	s.Metrics = http.NotFoundHandler() // so that /metrics is routed
	served := map[string]bool{}
	for _, h := range []http.Handler{s.Handler(), s.FilesHandler()} {
		err := h.(*mux.Router).Walk(func(r *mux.Route, _ *mux.Router, _ []*mux.Route) error {
			path, err := r.GetPathTemplate()
			if err != nil {
				return nil
			}
			path = routeVarPattern.ReplaceAllString(path, "{$1}") // {tile:.+} is {tile} in the document
			methods, err := r.GetMethods()
			if err != nil {
				return nil // a subrouter's prefix, not a route
			}
			for _, m := range methods {
				served[m+" "+path] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var missing, stale []string
	for k := range served {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if !served[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("routes not in openapi.json:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("openapi.json documents routes no router serves:\n  %s", strings.Join(stale, "\n  "))
	}
	if len(served) < 60 {
		t.Fatalf("walked only %d routes", len(served))
	}
	// Every operation answers errors with the error body, and every
	// protected one says it needs the bearer token.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Default() == nil {
				t.Errorf("%s %s: no default (error) response", method, path)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if want := slices.Contains([]string{"/healthz", "/readyz", "/api/v1/auth/login", "/api/v1/dashboard/login", "/api/v1/openapi.json"}, path); public != want {
				t.Errorf("%s %s: public=%v, want %v", method, path, public, want)
			}
		}
	}
}

// TestOpenAPIServed: the document is served without a token and is the
// embedded one.
func TestOpenAPIServed(t *testing.T) {
	ts := newTestServer(t)
	status, body := ts.do("GET", "/api/v1/openapi.json", nil, "")
	if status != 200 {
		t.Fatalf("openapi.json = %d", status)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json: %v %v", err, doc["openapi"])
	}
}
