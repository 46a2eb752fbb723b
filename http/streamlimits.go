package http

import (
	"context"
	"crypto/sha256"
	"net/http"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Defaults for the limits of events/stream (Audit settings).
const (
	// DefaultStreamWriteTimeout drops a consumer that has not taken a
	// write (an event or a heartbeat) for that long: it stalled.
	DefaultStreamWriteTimeout = 30 * time.Second
	// DefaultMaxStreamsPerToken bounds the live streams one token (or
	// dashboard session) holds; beyond it, 429.
	DefaultMaxStreamsPerToken = 8
	// DefaultStreamBufferBytes bounds the event data a stream holds while
	// it catches up (one page of the log): however large the log, a slow
	// consumer costs about this much.
	DefaultStreamBufferBytes = 256 << 10
)

// streamPageEvents bounds a catching-up stream's page (and how far behind
// the head a live stream may fall before it pages again).
const streamPageEvents = 64

// credentialKey identifies the credential a request came with (bearer
// token or session cookie) without keeping it.
func credentialKey(r *http.Request) [32]byte {
	cred := r.Header.Get("Authorization")
	if cred == "" {
		if c, err := r.Cookie(SessionCookie); err == nil {
			cred = "cookie " + c.Value
		}
	}
	return sha256.Sum256([]byte(cred))
}

// acquireStream counts a new stream for credential key, or returns
// ETOOMANY when it holds MaxStreamsPerToken already. release undoes it.
func (a *Audit) acquireStream(key [32]byte) (release func(), err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	max := a.MaxStreamsPerToken
	if max > 0 && a.perToken[key] >= max {
		return nil, domain.Errorf(domain.ETOOMANY, "too many event streams for this token (at most %d at once); close one first", max)
	}
	if a.perToken == nil {
		a.perToken = map[[32]byte]int{}
	}
	a.perToken[key]++
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.perToken[key]--; a.perToken[key] <= 0 {
			delete(a.perToken, key)
		}
	}, nil
}

// follow sends to out, in order, every event from position from on that
// filter matches, until ctx ends or a read fails. Far behind the head it
// reads the log in pages of at most streamPageEvents events and about half
// of StreamBufferBytes, and holds only the page it is sending: a stalled
// consumer pins that much, not the log. Near the head it follows a
// subscription, and goes back to pages whenever it falls
// streamPageEvents behind.
func (a *Audit) follow(ctx context.Context, store LogReader, from uint64, filter eventFilter, out chan<- domain.Event) error {
	budget := a.StreamBufferBytes
	if budget <= 0 {
		budget = DefaultStreamBufferBytes
	}
	page := 1 // doubled while pages are small, halved when they are large
	for {
		head, err := store.Head(ctx)
		if err != nil {
			return err
		}
		if from > head || head-from < streamPageEvents {
			if from, err = followLive(ctx, store, from, filter, out); err != nil {
				return err
			}
			continue
		}
		it := store.ReadAll(ctx, from, page)
		n, size := 0, 0
		for it.Next() {
			e := it.Event()
			n++
			size += len(e.Data) + 256 // the envelope's strings and hashes
			from = e.Position + 1
			if !filter.match(&e) {
				continue
			}
			if err := sendEvent(ctx, out, e); err != nil {
				it.Close()
				return err
			}
		}
		err = it.Err()
		it.Close()
		if err != nil {
			return err
		}
		if n == 0 {
			from = head + 1 // nothing stored up to the head: follow live
		}
		switch {
		case size > budget/2 && page > 1:
			page /= 2
		case size < budget/8 && page < streamPageEvents:
			page *= 2
		}
	}
}

// sendEvent delivers e on out, or returns ctx's error when ctx ends
// first.
func sendEvent(ctx context.Context, out chan<- domain.Event, e domain.Event) error {
	select {
	case out <- e:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// followLive sends events from a subscription until the stream falls
// streamPageEvents behind the head (then it returns the next position to
// read, for paging), ctx ends or the subscription fails. Checking the lag
// before each Next keeps the subscription's own read batch about that small.
func followLive(ctx context.Context, store LogReader, from uint64, filter eventFilter, out chan<- domain.Event) (uint64, error) {
	sub := store.Subscribe(ctx, from)
	defer sub.Close()
	for {
		head, err := store.Head(ctx)
		if err != nil {
			return from, err
		}
		if head >= from && head-from >= streamPageEvents {
			return from, nil
		}
		if !sub.Next() {
			return from, sub.Err()
		}
		e := sub.Event()
		from = e.Position + 1
		if !filter.match(&e) {
			continue
		}
		if err := sendEvent(ctx, out, e); err != nil {
			return from, err
		}
	}
}
