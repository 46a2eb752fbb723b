package http

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// readBody reads a body of a declared length, and one of unknown length
// (chunked), whole; a body past the limit is 413 either way, and one
// shorter than its declared length is 400. Handlers read the same bytes
// back once, through r.Body or readJSONBody.
func TestReadBody(t *testing.T) {
	const limit = 16
	full := strings.Repeat("x", limit)
	for _, c := range []struct {
		name     string
		body     string
		reader   func(io.Reader) io.Reader // nil: as is
		declared int64                     // -1: unknown (chunked)
		status   int                       // 0: read
	}{
		{"declared", `{"a":1}`, nil, 7, 0},
		{"declared at the limit", full, nil, limit, 0},
		{"declared, arriving byte by byte", `{"a":1}`, iotest.OneByteReader, 7, 0},
		{"chunked", `{"a":1}`, nil, -1, 0},
		{"chunked at the limit", full, nil, -1, 0},
		{"declared past the limit", full + "x", nil, limit + 1, 413},
		{"chunked past the limit", full + "x", nil, -1, 413},
		{"shorter than declared", `{"a":1}`, nil, 9, 400},
		{"broken", `{"a":1}`, func(io.Reader) io.Reader { return iotest.ErrReader(errors.New("reset")) }, 7, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(c.body)
			if c.reader != nil {
				body = c.reader(body)
			}
			// Content-Length framing: the server's reader ends the body
			// at the declared length, and reports a short one.
			if c.declared >= 0 {
				body = &declaredReader{r: body, n: c.declared}
			}
			s := &Server{MaxBodyBytes: limit}
			r := httptest.NewRequest("POST", "/", nil)
			r.Body, r.ContentLength = io.NopCloser(body), c.declared
			w := httptest.NewRecorder()
			ok := s.readBody(w, r)
			if c.status != 0 {
				if ok || w.Code != c.status {
					t.Fatalf("read=%v status=%d, want %d", ok, w.Code, c.status)
				}
				return
			}
			if !ok {
				t.Fatalf("refused: %d %s", w.Code, w.Body)
			}
			if c.name == "chunked" { // through r.Body
				got, err := io.ReadAll(r.Body)
				if err != nil || string(got) != c.body {
					t.Fatalf("r.Body = %q, %v; want %q", got, err, c.body)
				}
			} else {
				got, err := readJSONBody(r)
				if err != nil || string(got) != c.body {
					t.Fatalf("readJSONBody = %q, %v; want %q", got, err, c.body)
				}
			}
			if rest, err := readJSONBody(r); err != nil || len(rest) != 0 {
				t.Fatalf("read again: %q, %v; want nothing", rest, err)
			}
		})
	}
}

// declaredReader ends a body at its declared length as net/http's does: EOF
// there, io.ErrUnexpectedEOF when the data ends sooner.
type declaredReader struct {
	r io.Reader
	n int64
}

func (d *declaredReader) Read(p []byte) (int, error) {
	if d.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > d.n {
		p = p[:d.n]
	}
	n, err := d.r.Read(p)
	d.n -= int64(n)
	if err == io.EOF && d.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
