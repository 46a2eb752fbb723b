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
	data, err := readAllOf(body, r.ContentLength, s.MaxBodyBytes)
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
	r.Body = &bufferedBody{data: data}
	return true
}

// readAllOf reads body to its end. A declared length within the limit is
// read into a slice of exactly that size (bytes.Buffer's ReadFrom would
// grow a small body's buffer twice, to over 1 KiB, before it sees EOF);
// an unknown length (chunked) or one past the limit takes a Buffer, and
// the limit's reader answers past it.
func readAllOf(body io.Reader, declared, limit int64) ([]byte, error) {
	if declared > 0 && (limit <= 0 || declared <= limit) {
		data := make([]byte, declared)
		if _, err := io.ReadFull(body, data); err != nil {
			return nil, err
		}
		// The declared length is the whole body: the server's reader
		// reports EOF here, or an error if the framing broke.
		var one [1]byte
		switch n, err := body.Read(one[:]); {
		case n > 0:
			return nil, errors.New("request body is longer than its Content-Length")
		case err != nil && err != io.EOF:
			return nil, err
		}
		return data, nil
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(body)
	return buf.Bytes(), err
}

// bufferedBody is a request body readBody has read whole: it reads as the
// body did, and readJSONBody takes its bytes without copying them.
type bufferedBody struct {
	data []byte
	off  int
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

func (b *bufferedBody) Close() error { return nil }

// rest returns the unread bytes and marks them read.
func (b *bufferedBody) rest() []byte {
	rest := b.data[b.off:]
	b.off = len(b.data)
	return rest
}
