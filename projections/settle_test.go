package projections_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSettleAPairAtATime: Settle, which folds one dirty pair again under
// the lock at a time, leaves the Ledger as a read's settle does (every
// dirty pair under one hold of the lock), over random logs with late fills,
// fees in a third asset and figures in other currencies.
func TestSettleAPairAtATime(t *testing.T) {
	unsettled := 0
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 43))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 4000})
		for _, cut := range snaptest.Cuts(rng, len(events), 3) {
			a, b := projections.NewLedger(domain.LOFO), projections.NewLedger(domain.LOFO)
			snaptest.Apply([]projections.Snapshotter{a}, events[:cut])
			snaptest.Apply([]projections.Snapshotter{b}, events[:cut])
			if projections.Unsettled(b) {
				unsettled++
			}
			projections.SettleAtOnce(a)
			b.Settle()
			if projections.Unsettled(b) {
				t.Fatalf("seed %d, %d events: unsettled after Settle", seed, cut)
			}
			if d := projections.LedgerDiff(a, b); len(d) > 0 {
				t.Fatalf("seed %d, %d events: settled a pair at a time, %v differ from a settle at once", seed, cut, d)
			}
		}
	}
	if unsettled == 0 {
		t.Fatal("no log left the Ledger unsettled: the test compared nothing")
	}
}
