package projections_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

func smallSnapshotters() []projections.Snapshotter {
	var out []projections.Snapshotter
	for _, p := range smallModels() {
		out = append(out, p.(projections.Snapshotter))
	}
	return out
}

// checkAll rebuilds the small models from the log in one pass, checking
// each snapshot of the directory at its position, oldest first.
func checkAll(t *testing.T, l *snapLog) []projections.SnapshotCheck {
	t.Helper()
	ctx := context.Background()
	list, err := l.snaps.List()
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := smallSnapshotters()
	var projs []projections.Projection
	for _, p := range rebuilt {
		projs = append(projs, p)
	}
	paced := 0
	r := &projections.Rebuild{Store: l.store, Projections: projs, Pace: func() { paced++ }}
	var out []projections.SnapshotCheck
	for i := len(list) - 1; i >= 0; i-- {
		h, err := l.snaps.Header(list[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.To(ctx, h.Position); err != nil {
			t.Fatal(err)
		}
		c, err := l.snaps.Check(ctx, list[i].Path, rebuilt, r.Times(), smallSnapshotters, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if paced == 0 {
		t.Fatal("the rebuild never gave way (Pace)")
	}
	return out
}

// TestCheckSnapshot: snapshots the service wrote are the log's state at
// their positions; a snapshot holding a state the log does not imply (a
// balance the exchange never reported) is named by its projection and the
// first value that differs, with both values, even when it is signed (a
// bug of the writer, not a forgery); a forged one (bytes changed, CRCs
// recomputed) also fails its signature.
func TestCheckSnapshot(t *testing.T) {
	events := snaptest.RandomLog(rand.New(rand.NewPCG(8, 8)), snaptest.LogOptions{Events: 900})
	l := newSnapLog(t, filepath.Join(t.TempDir(), "snapshots"), events[:500])
	l.write()
	snaptest.Store(t, l.store, events[500:])
	l.write()
	for _, c := range checkAll(t, l) {
		if !c.OK() {
			t.Fatalf("%s: signed %v, diff %v", c.Path, c.Signed, c.Diff)
		}
	}

	// A state with a balance the log never observed, written and signed
	// at the head.
	projs := smallModels()
	runner := projections.NewRunner(l.store)
	for _, p := range projs {
		runner.Register(p)
	}
	if err := runner.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	balances := projs[4].(*projections.Balances)
	fake := domain.NewEvent(domain.NewManualClock(time.Unix(1, 0)), domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "zzz-exchange",
		Balances: []domain.AssetBalance{{Asset: "BTC", Available: domain.MustDecimal("1000")}}})
	fake.Stream = "balance-zzz-exchange"
	if err := balances.Apply(&fake); err != nil {
		t.Fatal(err)
	}
	f, err := runner.Freeze(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	file, err := l.snaps.Write(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	checks := checkAll(t, l)
	c := checks[len(checks)-1]
	if c.Path != file.Path || c.Signed != nil || c.Diff == nil || c.Diff.Projection != "balances" ||
		!strings.Contains(c.Diff.Value, "zzz-exchange") || c.Diff.Log != "absent" {
		t.Fatalf("check of a snapshot with a made-up balance: %s signed %v diff %+v", c.Path, c.Signed, c.Diff)
	}
	t.Logf("found: %s", c.Diff)

	// Forged: a byte of the config section changed, its CRC made right.
	forgeSection(t, file.Path, "config", func(payload []byte) { payload[len(payload)-1] ^= 0x01 })
	checks = checkAll(t, l)
	c = checks[len(checks)-1]
	if c.Signed == nil || c.Diff == nil || c.Diff.Projection != "config" {
		t.Fatalf("check of a forged snapshot: signed %v diff %+v", c.Signed, c.Diff)
	}
	t.Logf("found: %v; %s", c.Signed, c.Diff)
}
