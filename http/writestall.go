package http

import (
	"net/http"
	"time"
)

// DefaultWriteStallTimeout drops a response whose client has taken none of
// it for that long (Server.WriteStallTimeout).
const DefaultWriteStallTimeout = 30 * time.Second

// stallWriter gives every write of a response a deadline: a client that
// stops reading an answer it asked for (an export, a page of the log, a
// tile, a file) blocks the server's write once the connection's buffers
// are full, and without a deadline that write, the handler and the
// connection's slot (Server.MaxConns) would wait for ever. Each write may
// take stall from the last one that went through; past it the connection
// is dropped. A handler that sets its write deadlines itself (the event
// stream, through http.ResponseController) keeps them: from its first
// SetWriteDeadline on, stallWriter sets none.
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	until time.Time // the deadline last set
	own   bool      // the handler sets its deadlines
}

// newStallWriter wraps w (stall ≤ 0: no deadlines). A kept-alive
// connection carries its previous response's deadline: cleared, so that
// the time this request's handler takes before it writes is not bounded
// by it.
func newStallWriter(w http.ResponseWriter, stall time.Duration) *stallWriter {
	sw := &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w), stall: stall}
	if stall > 0 {
		_ = sw.rc.SetWriteDeadline(time.Time{})
	}
	return sw
}

// stallSlack is how much of stall may pass before the deadline is moved:
// moving it resets a timer, once a second at most rather than at every
// small write.
const stallSlack = time.Second

// extend gives the next write stall from now.
func (w *stallWriter) extend() {
	if w.stall <= 0 || w.own {
		return
	}
	now := time.Now()
	if w.until.Sub(now) < w.stall-min(stallSlack, w.stall/2) {
		w.until = now.Add(w.stall)
		_ = w.rc.SetWriteDeadline(w.until)
	}
}

func (w *stallWriter) Write(b []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher for the writers above it.
func (w *stallWriter) Flush() {
	w.extend()
	_ = w.rc.Flush()
}

// SetWriteDeadline is http.ResponseController's: the handler sets its
// deadlines from now on.
func (w *stallWriter) SetWriteDeadline(t time.Time) error {
	w.own = true
	return w.rc.SetWriteDeadline(t)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// done bounds the write of what the server still holds of the response
// once the handler returned (its last buffer) by stall.
func (w *stallWriter) done() {
	if w.stall > 0 && !w.own {
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.stall))
	}
}
