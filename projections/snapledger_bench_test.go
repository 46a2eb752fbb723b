package projections

import (
	"bytes"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/snap"
)

// BenchmarkLedgerSnapshot: the Ledger of 1M orders frozen, encoded and
// loaded back (its section of a read-model snapshot): the freeze's pause,
// the encoding's and the load's CPU time, and the bytes per order.
func BenchmarkLedgerSnapshot(b *testing.B) {
	l, _, _ := buildBenchLedger(b, benchOrders)
	for range b.N {
		t0 := time.Now()
		enc := l.Freeze()
		freeze := time.Since(t0)
		var buf bytes.Buffer
		e := snap.NewEncoder(&buf)
		c1 := processCPUTime()
		enc(e)
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		c2 := processCPUTime()
		n := NewLedger(l.Method)
		d := snap.NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		install, err := n.Load(d)
		if err != nil {
			b.Fatal(err)
		}
		install()
		c3 := processCPUTime()
		b.ReportMetric(float64(freeze.Microseconds())/1000, "freeze-ms")
		b.ReportMetric(float64((c2 - c1).Milliseconds()), "encode-cpu-ms")
		b.ReportMetric(float64((c3 - c2).Milliseconds()), "load-cpu-ms")
		b.ReportMetric(float64(buf.Len())/benchOrders, "B/order")
	}
}
