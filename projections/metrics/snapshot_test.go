package metrics

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotMetrics: the counts taken from the log loaded from a snapshot
// at random positions of random logs, then fed the rest, equal the counts
// of the whole log, as /metrics shows them.
func TestSnapshotMetrics(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2000})
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{New()} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := logMetrics(t, full[0].(*Metrics)), logMetrics(t, restored[0].(*Metrics))
			if len(a) < 3 || !reflect.DeepEqual(a, b) {
				t.Fatalf("metrics restored\n%v\nof the whole log\n%v", b, a)
			}
			if !reflect.DeepEqual(full[0].(*Metrics).needs, restored[0].(*Metrics).needs) {
				t.Fatal("orders needing attention differ")
			}
		})
	}
}

// logMetrics returns the families counted from the log, as text.
func logMetrics(t *testing.T, m *Metrics) []string {
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fams {
		switch strings.TrimPrefix(f.GetName(), Namespace+"_") {
		case "orders_total", "login_failures_total", "orders_needing_attention":
			for _, m := range f.GetMetric() {
				line := f.GetName()
				for _, l := range m.GetLabel() {
					line += " " + l.GetName() + "=" + l.GetValue()
				}
				out = append(out, fmt.Sprintf("%s %v %v", line, m.GetCounter().GetValue(), m.GetGauge().GetValue()))
			}
		}
	}
	return out
}
