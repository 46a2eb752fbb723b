package eventstore

import (
	"context"
	"time"
)

// OnBackoff makes c call f with each wait after a lost race instead of
// sleeping.
func OnBackoff(c *Commands, f func(ctx context.Context, d time.Duration) error) { c.wait = f }

// OnLockWait sets the function told when a command starts waiting for a
// stream that another command holds.
func OnLockWait(l *StreamLocks, f func(stream string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting = f
}

// LockedStreams is how many streams l holds an entry for (held or waited
// for).
func LockedStreams(l *StreamLocks) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}
