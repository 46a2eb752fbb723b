package http

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// readBody reads r's body whole, within MaxBodyBytes and BodyTimeout, and
// puts it back as r.Body, so that no handler ever waits on a client that
// trickles its body. It answers and returns false when the body is too
// large (413) or too slow (408, and the connection is closed: the rest of
// the body is never read). Requests without a body pass untouched.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true
	}
	rc := http.NewResponseController(w)
	timed := s.BodyTimeout > 0 && rc.SetReadDeadline(time.Now().Add(s.BodyTimeout)) == nil
	var body io.Reader = r.Body
	if s.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(w, r.Body, s.MaxBodyBytes)
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 && (s.MaxBodyBytes <= 0 || r.ContentLength <= s.MaxBodyBytes) {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(body)
	if timed && err == nil {
		// The body is in: a long handler must not be cut by this
		// deadline. (After a failure it stays, so that the server does
		// not wait for the rest of the body either.)
		_ = rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
	case errors.As(err, &tooLarge):
		w.Header().Set("Connection", "close")
		writeError(w, r, http.StatusRequestEntityTooLarge, "request body is larger than "+strconv.FormatInt(tooLarge.Limit, 10)+" bytes")
		return false
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeError(w, r, http.StatusRequestTimeout, "request body not received within "+s.BodyTimeout.String()+"; send it at once")
		return false
	default:
		// The client went away or broke the framing: nobody to answer.
		w.Header().Set("Connection", "close")
		writeError(w, r, http.StatusBadRequest, "cannot read request body")
		return false
	}
	r.Body = io.NopCloser(&buf)
	return true
}
