package engine

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotSystemAttention: the system's state and the orders needing
// attention loaded from a snapshot at random positions of random logs,
// then fed the rest, equal the same projections fed the whole log.
func TestSnapshotSystemAttention(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2000})
		newProjs := func() []projections.Snapshotter {
			return []projections.Snapshotter{&System{}, &Attention{}}
		}
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			for i := range full {
				if !reflect.DeepEqual(full[i], restored[i]) {
					t.Fatalf("%s: restored ≠ full replay", full[i].Name())
				}
			}
		})
	}
}
