package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// statusByCode maps domain error codes to HTTP status codes.
var statusByCode = map[string]int{
	domain.EINVALID:      http.StatusBadRequest,
	domain.EUNAUTHORIZED: http.StatusUnauthorized,
	domain.EFORBIDDEN:    http.StatusForbidden,
	domain.ENOTFOUND:     http.StatusNotFound,
	domain.ECONFLICT:     http.StatusConflict,
	domain.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	domain.ETOOMANY:      http.StatusTooManyRequests,
	domain.EMEDIATYPE:    http.StatusUnsupportedMediaType,
	domain.EUNAVAILABLE:  http.StatusServiceUnavailable,
	domain.EINTERNAL:     http.StatusInternalServerError,
}

// errorResponse is the body of every error: {"status":"error","message":…,"code":…}.
type errorResponse struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Code    int    `json:"code"`
}

// Error writes err as the JSON error body with the status its code maps to;
// an error that says when to retry (a RetryAfter method: projections'
// BusyError) adds Retry-After to a 503 or 429.
// Internal errors are logged with the request id and shown to the client as
// "internal error (request <id>)"; other messages are the domain message.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	code := domain.ErrorCode(err)
	status, ok := statusByCode[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	msg := domain.ErrorMessage(err)
	if status == http.StatusInternalServerError {
		logger(r).Error("internal error", zap.Error(err))
		msg = "internal error (request " + requestID(r) + ")"
	} else if status == http.StatusServiceUnavailable {
		logger(r).Warn("unavailable", zap.Error(err))
	}
	var busy interface{ RetryAfter() time.Duration }
	if errors.As(err, &busy) && (status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests) {
		// Whole seconds, rounded up (RFC 9110 §10.2.3).
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(busy.RetryAfter().Seconds())), 10))
	}
	writeError(w, r, status, msg)
}

func writeError(w http.ResponseWriter, _ *http.Request, status int, msg string) {
	writeJSON(w, status, errorResponse{Status: "error", Message: msg, Code: status})
}

// logger returns the server's logger naming r's request id (a no-op
// logger outside requestBasics).
func logger(r *http.Request) *zap.Logger {
	if info, ok := r.Context().Value(ctxRequest).(*requestInfo); ok && info.logger != nil {
		return info.logger.With(zap.String("request_id", info.id))
	}
	return zap.NewNop()
}

// writeJSON writes v as JSON with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// A response type that cannot be encoded is a bug; the client
		// gets the error envelope, not half a body.
		status = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(errorResponse{Status: "error", Message: "internal error: the response could not be encoded", Code: status})
	}
	writeBody(w, status, buf.Bytes())
}

// writeBody sends a complete JSON body with its Content-Length, so that it
// goes out in one piece rather than in chunks.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decodeJSON reads the request body into v under the rules every JSON
// write shares (readJSONBody, then jsonscan.CheckJSON): a declared
// Content-Type other than JSON is EMEDIATYPE (415; none at all is read as
// JSON), a body over the limit is ETOOLARGE, an empty body is EINVALID
// unless allowEmpty; malformed JSON names the problem and its offset, a
// wrong type names the field; invalid UTF-8, a key repeated at any depth
// (named) and data after the value are EINVALID.
func decodeJSON(r *http.Request, v any, allowEmpty bool) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return domain.Errorf(domain.EINVALID, "request body is empty; a JSON object is required")
	}
	if err := unmarshalBody(body, v); err != nil {
		return err
	}
	return checkBody(body)
}

// readJSONBody checks the declared Content-Type and reads the body
// (ETOOLARGE past the server's limit).
func readJSONBody(r *http.Request) ([]byte, error) {
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	if b, ok := r.Body.(*bufferedBody); ok { // read whole by requestBasics
		return b.rest(), nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, domain.Errorf(domain.ETOOLARGE, "request body is larger than %d bytes", tooLarge.Limit)
		}
		return nil, domain.Errorf(domain.EINVALID, "cannot read request body")
	}
	return body, nil
}

// checkContentType accepts no Content-Type (read as JSON: curl and many
// clients send none), application/json and application/<x>+json, with any
// parameters; anything else (text/plain, forms, multipart, XML) is
// EMEDIATYPE.
func checkContentType(ct string) error {
	if strings.TrimSpace(ct) == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))) {
		return nil
	}
	return domain.Errorf(domain.EMEDIATYPE, "Content-Type must be application/json, not %q", truncate(ct, 64))
}

// checkBody is jsonscan.CheckJSON on a request body: what encoding/json let
// through (invalid UTF-8, repeated keys) is refused here, before anything
// is written.
func checkBody(body []byte) error {
	if err := jsonscan.CheckJSON(body); err != nil {
		return domain.Errorf(domain.EINVALID, "request body: %s", domain.ErrorMessage(err))
	}
	return nil
}

// truncate cuts s to at most n bytes (on a rune boundary), marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// unmarshalBody is decodeJSON's parser, with messages a client can act on.
func unmarshalBody(body []byte, v any) error {
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return domain.Errorf(domain.EINVALID, "malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return domain.Errorf(domain.EINVALID, "request body must be %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)
		}
		return domain.Errorf(domain.EINVALID, "field %q must be %s, not %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	}
	if de, ok := domain.AsError(err); ok {
		return de
	}
	return domain.Errorf(domain.EINVALID, "invalid JSON body: %s", err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "float64", "float32", "int", "int64", "int32", "uint64":
		return "a number"
	}
	return fmt.Sprintf("a %s", goKind)
}
