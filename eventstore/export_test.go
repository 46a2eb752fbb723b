package eventstore

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
