// Package loadgen drives a service at a fixed arrival rate (an open loop),
// for the benchmarks that measure the latency users feel: `make bench-ab`
// (cmd/benchab) and BenchmarkPlacementOpenLoop. Standard library only.
package loadgen

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what an open-loop run measured.
type Result struct {
	// Latencies are each call's, from its due time to its answer, sorted.
	Latencies []time.Duration
	// ByDue are the same latencies in the calls' order (call i due at
	// start + i/rate): whether the slow ones cluster in time.
	ByDue []time.Duration
	// Rate is the calls per second achieved (n ÷ the run's time).
	Rate float64
	// Err is the first error a call returned (that client stopped).
	Err error
}

// OpenLoop makes n calls of do with clients clients at rate calls/s in all:
// call i is due at start + i/rate and client i%clients makes it then, or as
// soon as that client's previous call is answered, if later. Each latency
// runs from the call's due time, not from its send, so that a slow answer
// also counts against the calls queued behind it (no coordinated
// omission).
func OpenLoop(clients, n, rate int, do func() error) Result {
	interval := time.Second / time.Duration(rate)
	lat := make([]time.Duration, n)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now().Add(10 * time.Millisecond)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += clients {
				due := start.Add(time.Duration(i) * interval)
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				if err := do(); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				lat[i] = time.Since(due)
			}
		}()
	}
	wg.Wait()
	r := Result{Latencies: lat, ByDue: slices.Clone(lat), Rate: float64(n) / time.Since(start).Seconds()}
	if err := failed.Load(); err != nil {
		r.Err = *err
	}
	slices.Sort(r.Latencies)
	return r
}

// Quantile is the q-quantile (0 ≤ q ≤ 1) of sorted latencies: the one at
// index ⌊q·n⌋, the largest for q = 1.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}
