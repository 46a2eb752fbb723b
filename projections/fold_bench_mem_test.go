package projections

import "runtime"

// runtimeMem is a reading of the allocator's counters.
type runtimeMem struct{ mallocs uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.mallocs = s.Mallocs
}
