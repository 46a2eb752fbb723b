package esdb

import (
	"sync/atomic"
	"time"
)

// AppendObserver is told how long each Append took (until acknowledged or
// failed), for metrics. It must be quick and safe for concurrent use.
type AppendObserver interface {
	ObserveAppend(d time.Duration)
}

// observer holds a Store's AppendObserver.
type observer struct {
	p atomic.Pointer[AppendObserver]
}

// SetObserver makes o receive the store's append latencies from now on
// (nil stops them). Safe to call while the store runs.
func (s *Store) SetObserver(o AppendObserver) {
	if o == nil {
		s.obs.p.Store(nil)
		return
	}
	s.obs.p.Store(&o)
}

func (s *Store) observeSince(start time.Time) {
	if p := s.obs.p.Load(); p != nil {
		(*p).ObserveAppend(time.Since(start))
	}
}
