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

// TestSnapshotOrders: the engine's order state loaded from a snapshot at
// random positions of random logs (orders of every kind and state, OCOs,
// Idempotency-Keys, late fills, imports), then fed the rest, equals the
// order state fed the whole log: its encoding, every index, and what the
// engine reads of it.
func TestSnapshotOrders(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2500})
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{NewOrders(nil)} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 5), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*Orders), restored[0].(*Orders)
			sa, sb := a.state, b.state
			sa.spare, sb.spare = nil, nil // a recycled entry, not state
			for _, st := range []*orderState{&sa, &sb} {
				for _, entry := range st.orders {
					entry.shared = false
					if len(entry.o.FillIDs) == 0 {
						entry.o.FillIDs = nil // a recycled entry's empty slice: the same state
					}
				}
			}
			if !reflect.DeepEqual(sa, sb) {
				t.Fatal("order state: restored ≠ full replay")
			}
			if !reflect.DeepEqual(a.Unfinished(), b.Unfinished()) {
				t.Fatal("unfinished orders: restored ≠ full replay")
			}
			for _, ex := range []string{"binance", "paper", "kraken"} {
				if !reflect.DeepEqual(a.OpenOrderList(ex, ""), b.OpenOrderList(ex, "")) || a.cursor(ex) != b.cursor(ex) {
					t.Fatalf("%s: open orders or fill cursor: restored ≠ full replay", ex)
				}
			}
		})
	}
}
