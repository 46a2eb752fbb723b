package eventstore

import (
	"context"
	"sync"
)

// StreamLocks runs the commands that share it one at a time per stream:
// a command holds its stream from Load to the end of its wait for the
// projections, so commands of one process never decide against a state
// another is about to change, and never lose a version race to each other.
// Only writers outside the process (another process on the same store)
// still make an append conflict, which Run answers by deciding again.
//
// Streams are independent: commands on different streams run at once. A
// command waiting for its stream gives up when its context ends; so would
// a command run on the same stream from another's Load, Decide or Check,
// which must not be done (it would wait for itself). The zero value is
// ready to use; it must not be copied after first use.
type StreamLocks struct {
	mu    sync.Mutex
	locks map[string]*streamLock

	// waiting, when set (tests), is called when a command starts waiting
	// for a stream another command holds.
	waiting func(stream string)
}

// streamLock is one stream's lock: a token in a channel of one, so that a
// wait can end with its context; refs counts the holder and the waiters,
// and the entry goes when it drops to zero.
type streamLock struct {
	token chan struct{}
	refs  int
}

// lock takes stream's lock, waiting for the command that holds it, and
// returns the function that releases it; or ctx's error when ctx ends
// first (nothing is held then).
func (l *StreamLocks) lock(ctx context.Context, stream string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*streamLock{}
	}
	sl := l.locks[stream]
	if sl == nil {
		sl = &streamLock{token: make(chan struct{}, 1)}
		l.locks[stream] = sl
	}
	sl.refs++
	contended := sl.refs > 1
	waiting := l.waiting
	l.mu.Unlock()
	if contended && waiting != nil {
		waiting(stream)
	}
	select {
	case sl.token <- struct{}{}:
		return func() { <-sl.token; l.release(stream, sl) }, nil
	case <-ctx.Done():
		l.release(stream, sl)
		return nil, ctx.Err()
	}
}

// release drops one reference to stream's lock.
func (l *StreamLocks) release(stream string, sl *streamLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sl.refs--; sl.refs == 0 {
		delete(l.locks, stream)
	}
}
