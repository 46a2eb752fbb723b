package witnesses_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/eventstore/transparency/witnesses"
)

// BenchmarkQuorumOfThree: the time from a new checkpoint (signed and
// recorded) to its quorum with 3 witnesses (our own, each over loopback
// HTTP with its database synced): the three asked at once, each
// cosignature verified and recorded in the checkpoints stream. Each
// iteration grows the log by 20 events first.
func BenchmarkQuorumOfThree(b *testing.B) {
	e := newEnvTB(b, "")
	var ws []witnesses.Witness
	for _, name := range []string{"witness.test/one", "witness.test/two", "witness.test/three"} {
		_, w, _ := ourWitness(b, name, e.key.VerifierKey())
		ws = append(ws, w)
	}
	c := witnesses.New(e.log, ws, e.cmds, e.clock)
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e.grow(20, "q")
		e.checkpoint()
		b.StartTimer()
		start := time.Now()
		c.Tick(e.ctx)
		if c.Status().Missing != 0 {
			b.Fatalf("no quorum: %+v", c.Status())
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-to-quorum-p50")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "ms-to-quorum-p99")
}
