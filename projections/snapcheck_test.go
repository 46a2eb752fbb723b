package projections_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
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
		Balances: []domain.AssetBalance{{Asset: "BTC", Available: decimal.MustDecimal("1000")}}})
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

// TestReplaceFromLog: a runner started from a snapshot that holds a
// balance the log never observed, and following the log since, is
// switched in place to the state rebuilt from the log (Runner.Replace of
// the projections the check found differing): its models then encode as a
// replay of the whole log.
func TestReplaceFromLog(t *testing.T) {
	ctx := context.Background()
	events := snaptest.RandomLog(rand.New(rand.NewPCG(9, 9)), snaptest.LogOptions{Events: 900})
	l := newSnapLog(t, filepath.Join(t.TempDir(), "snapshots"), events[:500])
	// The bad snapshot, signed.
	projs := smallModels()
	runner := projections.NewRunner(l.store)
	for _, p := range projs {
		runner.Register(p)
	}
	if err := runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	fake := domain.NewEvent(domain.NewManualClock(time.Unix(1, 0)), domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "zzz-exchange",
		Balances: []domain.AssetBalance{{Asset: "BTC", Available: decimal.MustDecimal("1000")}}})
	fake.Stream = "balance-zzz-exchange"
	if err := projs[4].Apply(&fake); err != nil {
		t.Fatal(err)
	}
	f, err := runner.Freeze(ctx)
	if err != nil {
		t.Fatal(err)
	}
	file, err := l.snaps.Write(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	runner.Close()

	// Started from it, the live models follow the rest of the log.
	live := smallModels()
	r, info, ok, _ := l.start(live)
	if !ok || info.Path != file.Path {
		t.Fatalf("started from %v %s, want %s", ok, info.Path, file.Path)
	}
	snaptest.Store(t, l.store, events[500:700])
	head, _ := l.store.Head(ctx)
	if err := r.WaitFor(ctx, head); err != nil {
		t.Fatal(err)
	}

	rebuilt := smallSnapshotters()
	var rprojs []projections.Projection
	for _, p := range rebuilt {
		rprojs = append(rprojs, p)
	}
	rb := &projections.Rebuild{Store: l.store, Projections: rprojs}
	if err := rb.To(ctx, info.Position); err != nil {
		t.Fatal(err)
	}
	c, err := l.snaps.Check(ctx, info.Path, rebuilt, rb.Times(), smallSnapshotters, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Differing) != 1 || c.Differing[0] != "balances" {
		t.Fatalf("differing %v, want [balances]", c.Differing)
	}
	snaptest.Store(t, l.store, events[700:800]) // the log goes on meanwhile
	if err := r.Replace(ctx, rb, rebuilt, c.Differing); err != nil {
		t.Fatal(err)
	}
	snaptest.Store(t, l.store, events[800:])
	head, _ = l.store.Head(ctx)
	if err := r.WaitFor(ctx, head); err != nil {
		t.Fatal(err)
	}
	sameAsFull(t, l.store, live)

	// A projection that cannot be replaced in place is refused by name.
	r2 := projections.NewRunner(l.store)
	r2.Register(noReplace{projections.NewTokens()})
	if err := r2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	other := projections.NewTokens()
	rb2 := &projections.Rebuild{Store: l.store, Projections: []projections.Projection{other}}
	if err := r2.Replace(ctx, rb2, []projections.Snapshotter{other}, []string{"tokens"}); err == nil || !strings.Contains(err.Error(), "tokens") {
		t.Fatalf("replace of a projection that is no StateReplacer: %v", err)
	}
}

// noReplace is a projection whose state cannot be replaced in place.
type noReplace struct{ projections.Snapshotter }

// TestReplaceState: each StateReplacer of this package, fed part of a log,
// takes the state of one fed more of it, in place: it then encodes as
// that one does, and the Ledger serves its order pages from the new
// state, not from its cache of the old one.
func TestReplaceState(t *testing.T) {
	events := snaptest.RandomLog(rand.New(rand.NewPCG(10, 10)), snaptest.LogOptions{Events: 1500})
	newAll := func() []projections.Snapshotter {
		l := projections.NewLedger(domain.LOFO)
		return []projections.Snapshotter{l, projections.NewOrderList(), projections.NewPassword(), projections.NewTokens(),
			projections.NewConfig(), projections.NewFiles(l), projections.NewBalances()}
	}
	old, want := newAll(), newAll()
	snaptest.Apply(old, events[:400])
	snaptest.Apply(want, events)
	page := func(l *projections.Ledger) string {
		var b strings.Builder
		for _, k := range l.FilledKeys() {
			p, _, err := l.AppendPageJSON(nil, k, 0, 500)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(p)
		}
		return b.String()
	}
	before := page(old[0].(*projections.Ledger)) // fills the page cache
	for i, p := range old {
		b := snaptest.Encode(t, want[i])
		d := snap.NewDecoder(bytes.NewReader(b), int64(len(b)))
		install, err := p.(projections.StateReplacer).ReplaceState(d)
		if err == nil {
			err = d.Done()
		}
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		install()
		if !bytes.Equal(snaptest.Encode(t, p), b) {
			t.Fatalf("%s: the replaced state encodes otherwise than the one it took", p.Name())
		}
	}
	if got, w := page(old[0].(*projections.Ledger)), page(want[0].(*projections.Ledger)); got != w || got == before {
		t.Fatal("the ledger's pages after the replace are not the new state's")
	}
}

// TestRebuildSeesOtherHandles: a rebuild reading the log through a handle
// of its own reaches a position appended through another (serve's check
// reads its own store beside the serving one's).
func TestRebuildSeesOtherHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	open := func() *sqlite.Store {
		s := sqlite.NewStore(path)
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	writer := open()
	events := snaptest.RandomLog(rand.New(rand.NewPCG(11, 11)), snaptest.LogOptions{Events: 300})
	snaptest.Store(t, writer, events[:100])
	reader := open()
	rebuilt := smallSnapshotters()
	var projs []projections.Projection
	for _, p := range rebuilt {
		projs = append(projs, p)
	}
	rb := &projections.Rebuild{Store: reader, Projections: projs}
	head, _ := writer.Head(ctx)
	if err := rb.To(ctx, head); err != nil {
		t.Fatal(err)
	}
	snaptest.Store(t, writer, events[100:])
	head, _ = writer.Head(ctx)
	if err := rb.To(ctx, head); err != nil {
		t.Fatalf("to the head appended through the other handle: %v", err)
	}
}
