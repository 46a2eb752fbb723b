package engine

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// BenchmarkOrdersFreezeImported is the engine's order state over an
// import's 200,000 finished orders (ids from domain.ImportedOrderIDs, a
// word of the finished set each) and 10,000 of the Trader's: the pause of
// a snapshot's Freeze while the engine's applies wait (ns/op, B/op), and
// the first finish of an imported order after it (first-write-ns: where
// one map of the set's sparse words is copied, if they are shared).
func BenchmarkOrdersFreezeImported(b *testing.B) {
	s := NewOrders(nil)
	for i := range int64(200_000) {
		s.state.finished.add(domain.ImportedOrderIDs + 64*i)
	}
	for i := range int64(10_000) {
		s.state.finished.add(i + 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Freeze()
	}
	b.StopTimer()
	var write time.Duration
	const writes = 20
	for i := range int64(writes) {
		s.Freeze()
		start := time.Now()
		s.mu.Lock()
		s.state.finished.add(domain.ImportedOrderIDs + 64*i + 1)
		s.mu.Unlock()
		write += time.Since(start)
	}
	b.ReportMetric(float64(write.Nanoseconds())/writes, "first-write-ns")
}
