package http

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// safetyNet bounds every blocking read of these tests, so that a server
// that never answers fails the test instead of hanging it. No assertion
// depends on it being short.
const safetyNet = 20 * time.Second

// dialRaw opens a plain TCP connection to the test server.
func dialRaw(t *testing.T, ts *testServer) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readResponse reads one response from c (the whole body), within d.
func readResponse(t *testing.T, c net.Conn, br *bufio.Reader, d time.Duration) (*http.Response, string, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// A body trickled slower than BodyTimeout is answered 408 with the JSON
// error envelope, and the connection is closed (today the handler waits
// for the body as long as the client likes).
func TestSlowBodyAnswered408(t *testing.T) {
	ts := newTestServer(t, func(ts *testServer) { ts.Server.BodyTimeout = 200 * time.Millisecond })
	c := dialRaw(t, ts)
	head := "POST /api/v1/config/update HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Authorization: Bearer " + ts.Token + "\r\nContent-Length: 100\r\n\r\n"
	if _, err := io.WriteString(c, head+`{"data":`); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, body, err := readResponse(t, c, br, safetyNet)
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status=%d, want 408: %s", resp.StatusCode, body)
	}
	e := decodeBody[errorResponse](t, []byte(body))
	if e.Status != "error" || e.Code != 408 || !strings.Contains(e.Message, "body") {
		t.Fatalf("error body %+v", e)
	}
	c.SetReadDeadline(time.Now().Add(safetyNet))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("connection after 408: %v, want closed (EOF)", err)
	}
	if n := len(ts.events()); n != 1 { // the fixture's PasswordSet only
		t.Fatalf("%d events in the log, want 1: nothing written", n)
	}
}

// A keep-alive connection that sends no further request is closed after
// IdleTimeout (today it stays open for ever).
func TestIdleConnectionClosed(t *testing.T) {
	ts := newTestServer(t, func(ts *testServer) { ts.Server.IdleTimeout = 100 * time.Millisecond })
	c := dialRaw(t, ts)
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	if resp, body, err := readResponse(t, c, br, safetyNet); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v %s", resp, err, body)
	}
	c.SetReadDeadline(time.Now().Add(safetyNet))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: %v, want closed by the server (EOF)", err)
	}
}

// With MaxConns 1, a second connection is not served while the first is
// open, and is served once it closes.
func TestMaxConnsPerListener(t *testing.T) {
	ts := newTestServer(t, func(ts *testServer) { ts.Server.MaxConns = 1 })
	a := dialRaw(t, ts)
	io.WriteString(a, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body, err := readResponse(t, a, bufio.NewReader(a), safetyNet); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first connection: %v %v %s", resp, err, body)
	}
	b := dialRaw(t, ts)
	io.WriteString(b, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	bb := bufio.NewReader(b)
	// Not served while a holds the only slot. (Without a cap the answer
	// comes at once; with it, none can come, whatever the wait.)
	if _, _, err := readResponse(t, b, bb, 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("second connection served beside the first: %v, want no answer", err)
	}
	a.Close()
	if resp, body, err := readResponse(t, b, bb, safetyNet); err != nil || resp.StatusCode != 200 {
		t.Fatalf("second connection once the first closed: %v %v %s", resp, err, body)
	}
}
