package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// eventStreamFlushEvery bounds how many events of a long burst are written
// before the stream is flushed.
const eventStreamFlushEvery = 64

// eventStream writes one events/stream response as server-sent events
// (handleEventStream). Events are flushed once a burst is written (or
// every eventStreamFlushEvery events of a long one); every write must be
// taken within Audit.StreamWriteTimeout, so that a consumer that stops
// reading is dropped instead of pinning a goroutine for ever.
type eventStream struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	r         *http.Request
	a         *Audit
	buf       bytes.Buffer
	unflushed int // events written since the last flush
}

func newEventStream(w http.ResponseWriter, r *http.Request, a *Audit) *eventStream {
	return &eventStream{w: w, rc: http.NewResponseController(w), r: r, a: a}
}

// open sends the response header and the stream's first lines (the
// client's reconnection delay and where the stream starts).
func (st *eventStream) open(from uint64) error {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	st.w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprintf(st.w, "retry: 2000\n: streaming from position %d\n\n", from); err != nil {
		return err
	}
	return st.rc.Flush()
}

// pump sends the followed events until the follower ends, the client goes
// away, the server shuts down or a write fails.
func (st *eventStream) pump(ctx context.Context, events <-chan domain.Event, followErr <-chan error) {
	heartbeat := st.a.Heartbeat
	if heartbeat <= 0 {
		heartbeat = DefaultAuditHeartbeat
	}
	ticker := time.NewTicker(heartbeat)
	defer ticker.Stop()
	for {
		e, ok, end := st.wait(ctx, events, ticker.C)
		if end {
			return
		}
		if !ok {
			if err := <-followErr; err != nil && ctx.Err() == nil {
				logger(st.r).Warn("event stream ended: " + err.Error())
			}
			return
		}
		if st.send(e) != nil {
			return
		}
	}
}

// wait returns the next event to send (ok false: the follower ended).
// While none is ready it flushes the burst written so far and keeps the
// connection alive with heartbeats. end is true when the stream must end:
// the client went away, the server shuts down, or a write failed.
func (st *eventStream) wait(ctx context.Context, events <-chan domain.Event, tick <-chan time.Time) (e domain.Event, ok, end bool) {
	for {
		select {
		case e, ok = <-events:
			return e, ok, false
		case <-st.a.closing:
			return e, false, true
		default:
		}
		// Nothing ready: the burst is written, send it.
		if st.unflushed > 0 {
			st.deadline()
			if st.flush() != nil {
				return e, false, true
			}
		}
		select {
		case e, ok = <-events:
			return e, ok, false
		case <-tick:
			if st.heartbeat() != nil {
				return e, false, true
			}
		case <-ctx.Done():
			return e, false, true
		case <-st.a.closing:
			return e, false, true
		}
	}
}

// send writes one event:
//
//	id: <position>
//	data: <the event as in audit/events, on one line>
func (st *eventStream) send(e domain.Event) error {
	st.buf.Reset()
	st.buf.WriteString("id: ")
	st.buf.WriteString(strconv.FormatUint(e.Position, 10))
	st.buf.WriteString("\ndata: ")
	enc := json.NewEncoder(&st.buf) // one line: Encode adds the newline
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redact(e)); err != nil {
		return err
	}
	st.buf.WriteString("\n")
	st.deadline()
	if _, err := st.w.Write(st.buf.Bytes()); err != nil {
		return st.stalled(err)
	}
	if st.buf.Cap() > 64<<10 {
		st.buf = bytes.Buffer{} // a large event's buffer is not kept
	}
	if st.unflushed++; st.unflushed >= eventStreamFlushEvery {
		return st.flush()
	}
	return nil
}

// heartbeat writes a comment line that keeps an idle connection (and the
// proxies on its way) open.
func (st *eventStream) heartbeat() error {
	st.deadline()
	if _, err := io.WriteString(st.w, ": heartbeat\n\n"); err != nil {
		return st.stalled(err)
	}
	if err := st.rc.Flush(); err != nil {
		return st.stalled(err)
	}
	return nil
}

// flush sends what was written since the last flush.
func (st *eventStream) flush() error {
	if err := st.rc.Flush(); err != nil {
		return st.stalled(err)
	}
	st.unflushed = 0
	return nil
}

// deadline gives the next write StreamWriteTimeout to be taken.
func (st *eventStream) deadline() {
	if st.a.StreamWriteTimeout > 0 {
		_ = st.rc.SetWriteDeadline(time.Now().Add(st.a.StreamWriteTimeout))
	}
}

// stalled logs a write that failed because the consumer took nothing
// within the deadline, and returns err.
func (st *eventStream) stalled(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		logger(st.r).Info("event stream dropped: the consumer took no data for " + st.a.StreamWriteTimeout.String())
	}
	return err
}
