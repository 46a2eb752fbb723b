package engine

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/snap"
)

// benchKeys is how many Idempotency-Keys BenchmarkOrdersKeys records.
const benchKeys = 1_000_000

// benchKey is the i-th key of the benchmark, shaped like the core's.
func benchKey(i int) string { return fmt.Sprintf("core:binance:USDT-BTC:%d:0", 1_700_000_000_000+i) }

// keyedOrders returns an order state that answered n keys, and the heap
// the keys cost it.
func keyedOrders(b *testing.B, n int) (*Orders, float64) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = benchKey(i)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := NewOrders(nil)
	for i, k := range keys {
		s.recordKey(k, keyRecord{orderID: int64(i + 1), fp: uint64(i)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keys)
	return s, float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// BenchmarkOrdersKeys is the order state with a million Idempotency-Keys
// answered: the runner's pause while Freeze copies it for a snapshot
// (freeze-ms), its encoding beside the runner (encode-ms), a key's lookup on the placement path, found and not
// (hit-ns, miss-ns: with its SHA-256, as the engine asks; id-hit-ns,
// id-miss-ns: the index alone), and the heap a key costs (B/key).
func BenchmarkOrdersKeys(b *testing.B) {
	s, perKey := keyedOrders(b, benchKeys)
	hits := make([]string, 4096)
	misses := make([]string, 4096)
	hitIDs := make([]keyID, len(hits))
	missIDs := make([]keyID, len(misses))
	for i := range hits {
		hits[i] = benchKey(i * (benchKeys / len(hits)))
		misses[i] = benchKey(benchKeys + i)
		hitIDs[i], missIDs[i] = keyIDOf(hits[i]), keyIDOf(misses[i])
	}
	b.ResetTimer()
	var freeze time.Duration
	for range b.N {
		start := time.Now()
		s.Freeze()
		freeze += time.Since(start)
		b.StopTimer()
		// A snapshot's worth of new keys between freezes, as serve's
		// writer sees them.
		for j := range 1000 {
			s.recordKey(benchKey(2*benchKeys+j), keyRecord{orderID: 1})
		}
		b.StartTimer()
	}
	b.StopTimer()
	timeLookups := func(keys []string) float64 {
		const rounds = 200
		start := time.Now()
		for range rounds {
			for _, k := range keys {
				if _, ok := s.key(k); ok != (&keys[0] == &hits[0]) {
					b.Fatalf("key %q: found %v", k, ok)
				}
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(rounds*len(keys))
	}
	timeIDs := func(ids []keyID, want bool) float64 {
		const rounds = 200
		start := time.Now()
		for range rounds {
			for _, k := range ids {
				if lookupKeyID(s, k) != want {
					b.Fatalf("key %v: found %v", k, !want)
				}
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(rounds*len(ids))
	}
	start := time.Now()
	e := snap.NewEncoder(io.Discard)
	s.Freeze()(e)
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	encode := time.Since(start)
	b.ReportMetric(float64(freeze.Nanoseconds())/float64(b.N)/1e6, "freeze-ms")
	b.ReportMetric(float64(encode.Nanoseconds())/1e6, "encode-ms")
	b.ReportMetric(timeLookups(hits), "hit-ns")
	b.ReportMetric(timeLookups(misses), "miss-ns")
	b.ReportMetric(timeIDs(hitIDs, true), "id-hit-ns")
	b.ReportMetric(timeIDs(missIDs, false), "id-miss-ns")
	b.ReportMetric(perKey, "B/key")
}

// lookupKeyID looks a key's id up in the index alone.
func lookupKeyID(s *Orders, k keyID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.state.keys.get(k)
	return ok
}

// BenchmarkKeyShardGrow is the growth of one shard of the key index as
// big as it is at 10M keys, at its load of 3/4: the longest one key's
// recording takes on the placement path there (grow-us).
func BenchmarkKeyShardGrow(b *testing.B) {
	per := 10_000_000 / keyShards
	slots := 8
	for slots*3/4 < per {
		slots *= 2
	}
	var x keyIndex
	x.shards = make([]keyShard, keyShards)
	sh := &x.shards[0]
	x.grow(sh, slots)
	for i := range slots * 3 / 4 {
		k := keyID{a: uint64(i) * 0x9E3779B97F4A7C15 >> (64 - keyShardShift), b: uint64(i)}
		x.add(k, keyRecord{orderID: int64(i + 1)})
	}
	if len(sh.slots) != slots {
		b.Fatalf("%d slots, want %d", len(sh.slots), slots)
	}
	full := sh.slots
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		sh.slots = full
		x.grow(sh, 2*slots)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/1e3, "grow-us")
	b.ReportMetric(float64(slots*3/4), "keys")
}
