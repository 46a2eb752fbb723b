package http

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"

	"github.com/tradeledger/tradeledger/domain"
)

// corsMaxAge is how long (seconds) a browser may cache a preflight answer.
const corsMaxAge = 600

// withCORS lets pages served from CORSOrigins call the API from a browser
// (github.com/rs/cors): a preflight (OPTIONS with
// Access-Control-Request-Method) from an allowed origin is answered 204
// with the allowed methods and headers; other requests from it get
// Access-Control-Allow-Origin. Credentials (cookies) are not allowed
// cross-origin: such pages send a bearer token. Without CORSOrigins the
// handler is unchanged and browsers keep to the same origin.
func (s *Server) withCORS(h http.Handler) http.Handler {
	if len(s.CORSOrigins) == 0 {
		return h
	}
	return cors.New(cors.Options{
		AllowedOrigins:   s.CORSOrigins,
		AllowedMethods:   []string{http.MethodGet, http.MethodPost, http.MethodHead},
		AllowedHeaders:   []string{"Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"},
		ExposedHeaders:   []string{"X-Request-Id", "Retry-After"},
		AllowCredentials: false,
		MaxAge:           corsMaxAge,
	}).Handler(h)
}

// ParseCORSOrigins reads --cors-origins: comma-separated origins
// (https://dash.example.com, http://localhost:8080). Each must be a bare
// scheme://host[:port] (no path, no wildcard): an EINVALID error names the
// first that is not. Empty means none.
func ParseCORSOrigins(list string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.Contains(o, "*") {
			return nil, domain.Errorf(domain.EINVALID, "origin %q: use scheme://host[:port], e.g. https://dash.example.com", o)
		}
		out = append(out, strings.ToLower(o))
	}
	return out, nil
}
