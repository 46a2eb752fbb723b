package sqlite

import (
	"sync/atomic"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Observer is told what the write pipeline does, for metrics. Its methods
// are called from the appending goroutine (ObserveAppend), the writer
// (ObserveBatch) and the syncer (ObserveSync): they must be quick and safe
// for concurrent use.
type Observer interface {
	// ObserveAppend reports how long an Append took until durable (or
	// failed).
	ObserveAppend(d time.Duration)
	// ObserveBatch reports one committed transaction: how many events it
	// wrote.
	ObserveBatch(events int)
	// ObserveSync reports how long one fdatasync of the WAL took.
	ObserveSync(d time.Duration)
}

// observer holds a Store's Observer; set at any time with SetObserver.
type observer struct{ p atomic.Pointer[Observer] }

func (o *observer) get() Observer {
	if p := o.p.Load(); p != nil {
		return *p
	}
	return nil
}

// SetObserver makes o receive the store's write metrics from now on (nil
// stops them). Safe to call while the store runs.
func (s *Store) SetObserver(o Observer) {
	if o == nil {
		s.obs.p.Store(nil)
		return
	}
	s.obs.p.Store(&o)
}

// Writable returns nil when the store accepts writes now: it is open, no
// WAL sync has failed and its integrity check has passed. While the check
// has not run or is running, and after a failed sync, it is EUNAVAILABLE;
// after a failed check, the check's EINTERNAL error. It never waits.
func (s *Store) Writable() error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	}
	if err := s.broken.Load(); err != nil {
		return err
	}
	c := &s.integrity
	if !c.mu.TryLock() {
		return domain.Errorf(domain.EUNAVAILABLE, "event store integrity check is running")
	}
	defer c.mu.Unlock()
	if !c.done {
		return domain.Errorf(domain.EUNAVAILABLE, "event store integrity check has not run yet")
	}
	return c.err
}
