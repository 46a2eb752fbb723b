package projections_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// batchProjection is a projection the replay feeds a batch at a time.
type batchProjection interface {
	projections.Snapshotter
	projections.BatchApplier
}

// TestApplyBatchIsApply: a projection fed a random log in batches of random
// sizes (ApplyBatch, as the start-up replay feeds it) ends in the state
// Apply on each event gives, byte for byte in its snapshot encoding, and
// reports the same events as refused, with the same errors.
func TestApplyBatchIsApply(t *testing.T) {
	newProjs := func() []batchProjection {
		return []batchProjection{projections.NewLedger(domain.LOFO), projections.NewOrderList(), projections.NewAccounts()}
	}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 43))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 3000})
		one, batched := newProjs(), newProjs()
		for k := range one {
			var wantErrs, gotErrs []string
			for i := range events {
				e := events[i]
				if err := one[k].Apply(&e); err != nil {
					wantErrs = append(wantErrs, e.ID+": "+err.Error())
				}
			}
			for rest := slices.Clone(events); len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(300))
				batched[k].ApplyBatch(rest[:n], func(e *domain.Event, err error) {
					gotErrs = append(gotErrs, e.ID+": "+err.Error())
				})
				rest = rest[n:]
			}
			name := one[k].Name()
			if !slices.Equal(gotErrs, wantErrs) {
				t.Errorf("seed %d, %s: ApplyBatch refused %d events (%.3q), Apply %d (%.3q)", seed, name, len(gotErrs), gotErrs, len(wantErrs), wantErrs)
			}
			if !bytes.Equal(snaptest.Encode(t, batched[k]), snaptest.Encode(t, one[k])) {
				t.Errorf("seed %d, %s: the state after ApplyBatch encodes differently from the state after Apply", seed, name)
			}
		}
	}
}
