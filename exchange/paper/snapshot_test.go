package paper

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotSimulator: the simulator's fold of the log loaded from a
// snapshot at random positions of random logs, then fed the rest, equals
// the fold of the whole log, and an exchange first used after either
// starts with the same balances and resting orders.
func TestSnapshotSimulator(t *testing.T) {
	clock := domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2000})
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{NewSimulator(clock)} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*Simulator), restored[0].(*Simulator)
			if (a.restore == nil) != (b.restore == nil) {
				t.Fatalf("fold made %v, restored %v", a.restore != nil, b.restore != nil)
			}
			if a.restore != nil {
				for _, r := range []*restoreState{a.restore, b.restore} { // a recycled order's empty fill ids are nil's
					r.orders.Each(func(_ int64, _ string, o *domain.Order) {
						if len(o.FillIDs) == 0 {
							o.FillIDs = nil
						}
					})
				}
				for _, c := range []struct {
					what string
					x, y any
				}{{"orders", a.restore.orders, b.restore.orders}, {"deltas", a.restore.deltas, b.restore.deltas},
					{"maxSeq", a.restore.maxSeq, b.restore.maxSeq}, {"maxID", a.restore.maxID, b.restore.maxID}} {
					if !reflect.DeepEqual(c.x, c.y) {
						t.Fatalf("%s: restored ≠ full replay", c.what)
					}
				}
			}
			for _, x := range []string{"binance", "kraken"} {
				aa, _ := a.Account(x)
				ba, _ := b.Account(x)
				ab, _ := aa.Balances(context.Background())
				bb, _ := ba.Balances(context.Background())
				ao, _ := aa.OpenOrders(context.Background(), "")
				bo, _ := ba.OpenOrders(context.Background(), "")
				if !reflect.DeepEqual(ab, bb) || !reflect.DeepEqual(ao, bo) {
					t.Fatalf("%s started from the restored fold: balances %v orders %v, from the full one %v %v", x, bb, bo, ab, ao)
				}
			}
		})
	}
}
