package loadgen

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestOpenLoopCallsEach makes every call once, spreads them over the
// clients, sorts the latencies and reports the first error.
func TestOpenLoopCallsEach(t *testing.T) {
	var calls atomic.Int64
	r := OpenLoop(4, 100, 10_000, func() error { calls.Add(1); return nil })
	if r.Err != nil || calls.Load() != 100 || len(r.Latencies) != 100 {
		t.Fatalf("calls %d, latencies %d, err %v", calls.Load(), len(r.Latencies), r.Err)
	}
	for i := 1; i < len(r.Latencies); i++ {
		if r.Latencies[i] < r.Latencies[i-1] {
			t.Fatalf("latencies not sorted at %d", i)
		}
	}
	if r.Rate <= 0 {
		t.Fatalf("rate %v", r.Rate)
	}
	boom := errors.New("boom")
	if r := OpenLoop(2, 10, 10_000, func() error { return boom }); !errors.Is(r.Err, boom) {
		t.Fatalf("err %v, want boom", r.Err)
	}
}

// TestOpenLoopCountsFromDue: a call held up delays the calls due behind it
// on the same client, and their latencies count the wait from their due
// times.
func TestOpenLoopCountsFromDue(t *testing.T) {
	var n atomic.Int64
	// One client, calls due every 1 ms; the first takes 50 ms.
	r := OpenLoop(1, 5, 1000, func() error {
		if n.Add(1) == 1 {
			time.Sleep(50 * time.Millisecond)
		}
		return nil
	})
	// The fifth call was due 4 ms after the first and answered after the
	// first's 50 ms: at least 46 ms late.
	if got := r.Latencies[len(r.Latencies)-2]; got < 46*time.Millisecond {
		t.Fatalf("second slowest latency %v: the wait behind the slow call is not counted", got)
	}
	// ByDue keeps the calls' order: the first call's (the slow one's)
	// latency first, and the same latencies.
	if len(r.ByDue) != 5 || r.ByDue[0] < 50*time.Millisecond {
		t.Fatalf("ByDue %v: the first call's latency first", r.ByDue)
	}
	if sorted := slices.Sorted(slices.Values(r.ByDue)); !slices.Equal(sorted, r.Latencies) {
		t.Fatalf("ByDue %v, Latencies %v: not the same latencies", r.ByDue, r.Latencies)
	}
}

func TestQuantile(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 51 * time.Millisecond}, {0.99, 100 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := Quantile(lat, c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}
