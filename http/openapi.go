package http

import (
	_ "embed"
	"net/http"
)

// OpenAPIDocument is the OpenAPI 3.1 document of the whole API (every
// route, its parameters, request and response schemas, the error body and
// the bearer authentication), kept in http/openapi.json and served at
// /api/v1/openapi.json without a token. A test checks it against the live
// router and the HTTP tests validate real responses against it: a route
// added or changed is documented there in the same commit.
//
//go:embed openapi.json
var OpenAPIDocument []byte

// handleOpenAPI answers GET /api/v1/openapi.json with OpenAPIDocument.
func handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(OpenAPIDocument)
}
