package transparency

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotLatestCheckpoint: the last checkpoint loaded from a snapshot
// at random positions of random logs, then fed the rest, is the last
// checkpoint of the whole log.
func TestSnapshotLatestCheckpoint(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 19))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2000})
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{&Log{}} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*Log).latest, restored[0].(*Log).latest
			if a == nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("latest checkpoint restored %+v, of the whole log %+v", b, a)
			}
		})
	}
}
