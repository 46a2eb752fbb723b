package projections_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotSmallModels: password, tokens, configuration, files and
// balances loaded from a snapshot at random positions of random logs, then
// fed the rest, equal the same models fed the whole log, field for field.
func TestSnapshotSmallModels(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 1500})
		newProjs := func() []projections.Snapshotter {
			return []projections.Snapshotter{projections.NewPassword(), projections.NewTokens(), projections.NewConfig(),
				projections.NewFiles(nil), projections.NewBalances()}
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

// TestRandomLogHasEveryType: the property tests' logs hold every event
// type the domain defines.
func TestRandomLogHasEveryType(t *testing.T) {
	events := snaptest.RandomLog(rand.New(rand.NewPCG(1, 7)), snaptest.LogOptions{Events: 5000})
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.Type] = true
	}
	types := eventTypes(t)
	if len(types) < 30 {
		t.Fatalf("found %d event types in domain/events.go", len(types))
	}
	for _, typ := range types {
		if !seen[typ] {
			t.Errorf("no %s in a random log", typ)
		}
	}
}

// eventTypes reads the event types (the Type… constants) from
// domain/events.go, so that a type added there without the random logs
// making it fails here.
func eventTypes(t *testing.T) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "../domain/events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(n.Name, "Type") && lit.Kind == token.STRING {
					types = append(types, strings.Trim(lit.Value, `"`))
				}
			}
		}
	}
	return types
}

// TestSnapshotOrderList: the order index loaded from a snapshot at random
// positions of random logs (late requests, imports far in the past), then
// fed the rest, equals the index fed the whole log, field for field and
// page for page.
func TestSnapshotOrderList(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		size := 3000
		if seed == 4 {
			size = 60_000 // orders over several chunks: the frozen ones shared
		}
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: size})
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{projections.NewOrderList()} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 5), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*projections.OrderList), restored[0].(*projections.OrderList)
			if diff := projections.OrderListDiff(a, b); len(diff) > 0 {
				t.Fatalf("orderlist: restored ≠ full replay in %v", diff)
			}
			for _, f := range []projections.OrderFilter{{}, {Side: "sell"}, {States: []domain.OrderState{domain.OrderStateAccepted}}} {
				if !reflect.DeepEqual(a.Page(f, 0, 1000), b.Page(f, 0, 1000)) {
					t.Fatalf("page of %+v: restored ≠ full replay", f)
				}
			}
		})
	}
}

// TestSnapshotLedger: the Ledger (order records, pages, PNL, days, lots,
// rates, assets, fees in three assets) loaded from a snapshot at random
// positions of random logs, then fed the rest, equals the Ledger fed the
// whole log, field for field and in what it answers.
func TestSnapshotLedger(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 19))
		size := 3000
		if seed == 4 {
			size = 40_000 // records over several chunks, late fills into frozen ones
		}
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: size})
		method := []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.HIFO}[seed-1]
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{projections.NewLedger(method)} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 5), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*projections.Ledger), restored[0].(*projections.Ledger)
			if diff := projections.LedgerDiff(a, b); len(diff) > 0 {
				t.Fatalf("ledger: restored ≠ full replay in %v", diff)
			}
			for _, key := range a.FilledKeys() {
				pa, na, _ := a.AppendPageJSON(nil, key, 0, 10_000)
				pb, nb, _ := b.AppendPageJSON(nil, key, 0, 10_000)
				if !bytes.Equal(pa, pb) || na != nb {
					t.Fatalf("%s: the order records differ", key)
				}
			}
			q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC,
				Now: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
			oa, ea := a.Overview(q)
			ob, eb := b.Overview(q)
			if !reflect.DeepEqual(oa, ob) || (ea == nil) != (eb == nil) {
				t.Fatal("the PNL overview differs")
			}
		})
	}
}

// TestSnapshotLedgerOtherMethod: a Ledger refuses the snapshot of one that
// matches lots another way.
func TestSnapshotLedgerOtherMethod(t *testing.T) {
	events := snaptest.RandomLog(rand.New(rand.NewPCG(1, 1)), snaptest.LogOptions{Events: 300})
	l := projections.NewLedger(domain.LOFO)
	snaptest.Apply([]projections.Snapshotter{l}, events)
	b := snaptest.Encode(t, l)
	d := snap.NewDecoder(bytes.NewReader(b), int64(len(b)))
	if _, err := projections.NewLedger(domain.FIFO).Load(d); err == nil || !strings.Contains(err.Error(), "matching lots") {
		t.Fatalf("err %v, want a refusal naming the method", err)
	}
}

// TestSnapshotLedgerAccounts: the same with the accounts' activity in the
// log (trades placed by hand, transfers in their statuses, some matched
// across accounts, conversions): the flows read back are placed and
// folded again as the Ledger fed the whole log folded them.
func TestSnapshotLedgerAccounts(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 38))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 3000, Extra: randomAccountEvents})
		method := []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.HIFO}[seed-1]
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{projections.NewLedger(method)} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 5), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*projections.Ledger), restored[0].(*projections.Ledger)
			for _, key := range a.FilledKeys() {
				pa, _, _ := a.AppendPageJSON(nil, key, 0, 10_000)
				pb, _, _ := b.AppendPageJSON(nil, key, 0, 10_000)
				if !bytes.Equal(pa, pb) {
					t.Fatalf("%s: the order records differ", key)
				}
			}
			for _, sc := range []domain.CostBasisScope{domain.ScopeAccount, domain.ScopeUniversal} {
				q := books.Query{Method: method, Scope: sc}
				sa, _ := books.StatementReport(a, q)
				sb, _ := books.StatementReport(b, q)
				if !reflect.DeepEqual(sa, sb) {
					t.Fatalf("the %s statement differs", sc)
				}
				if !reflect.DeepEqual(a.BookFlows(a.BookSnapshot()), b.BookFlows(b.BookSnapshot())) {
					t.Fatal("the flows differ")
				}
			}
		})
	}
}

// TestSnapshotLedgerFrozenWhileReadsSettle: a Ledger frozen, then fed
// more events with a read after each (which settles: late fills fold
// their pairs again and sum their quotes' series again), encodes as it
// was when frozen — the series it shares with the frozen copy until their
// next change are copied before that change, whichever path changes them.
func TestSnapshotLedgerFrozenWhileReadsSettle(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 41))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 4000})
		for _, cut := range snaptest.Cuts(rng, len(events), 4) {
			l := projections.NewLedger(domain.LOFO)
			snaptest.Apply([]projections.Snapshotter{l}, events[:cut])
			frozen := l.Freeze()
			want := snaptest.Encode(t, l) // a second freeze: its copy shares the same series
			for i := cut; i < len(events); i++ {
				snaptest.Apply([]projections.Snapshotter{l}, events[i:i+1])
				l.Settle()
			}
			var buf bytes.Buffer
			e := snap.NewEncoder(&buf)
			frozen(e)
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("seed %d: the state frozen after %d events encodes differently once more were applied and read", seed, cut)
			}
		}
	}
}
