package projections_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// asofLog appends to a store a log recorded live, one event a minute from
// t0: orders on binance/USDT-BTC filling at rising prices, a balance
// snapshot after each fill.
type asofLog struct {
	t     *testing.T
	store *sqlite.Store
	t0    time.Time
}

func newAsofLog(t *testing.T) *asofLog {
	store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return &asofLog{t: t, store: store, t0: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
}

func (g *asofLog) at(min int) time.Time { return g.t0.Add(time.Duration(min) * time.Minute) }

func (g *asofLog) append(stream, typ string, at time.Time, data any) {
	g.t.Helper()
	e := domain.NewEvent(domain.NewManualClock(at), typ, data)
	if _, err := g.store.Append(context.Background(), stream, domain.Any, e); err != nil {
		g.t.Fatal(err)
	}
}

// order requests and fills order id at minute min; exchangeTime, when not
// 0, is the fill's trade time (ms).
func (g *asofLog) order(id int64, side domain.Side, price, qty string, min int, exchangeTime int64) {
	g.append(domain.OrderStream(id), domain.TypeOrderRequested, g.at(min), domain.OrderRequested{OrderID: id, Exchange: "binance",
		Pair: "USDT-BTC", Side: side, Kind: domain.KindLimit, Amount: decimal.MustDecimal(qty), Price: decimal.MustDecimal(price), ClientOrderID: "c"})
	g.append(domain.OrderStream(id), domain.TypeOrderFilled, g.at(min), domain.OrderFilled{FillID: "f", Price: decimal.MustDecimal(price),
		Quantity: decimal.MustDecimal(qty), Fee: decimal.MustDecimal("0.1"), FeeAsset: "USDT", ExchangeTime: exchangeTime})
	g.append("balance-binance", domain.TypeBalancesObserved, g.at(min), domain.BalancesObserved{Exchange: "binance",
		Balances: []domain.AssetBalance{{Asset: "USDT", Available: decimal.DecimalFromInt(int64(1000 - id))}}})
}

// fill of 20 orders, buys and sells alternating, one a minute.
func (g *asofLog) fill20() {
	for i := int64(1); i <= 20; i++ {
		side := domain.Buy
		if i%2 == 0 {
			side = domain.Sell
		}
		g.order(i, side, decimal.DecimalFromInt(100+i).String(), "1", int(i), 0)
	}
}

func overviewJSON(t *testing.T, l *projections.Ledger, now time.Time) string {
	t.Helper()
	o, err := l.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(o)
	return string(b)
}

// A state at T is the Ledger of the events up to T: the same overview and
// balances as a Ledger fed only those events, whatever came after.
func TestBuildStateIsTheLogUpToT(t *testing.T) {
	g := newAsofLog(t)
	g.fill20()
	ctx := context.Background()
	T := g.at(9).Add(30 * time.Second).UnixMilli() // after #9, before #10
	st, err := projections.BuildState(ctx, g.store, projections.AsOf(T), domain.FIFO, projections.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := projections.NewLedger(domain.FIFO)
	it := g.store.ReadAll(ctx, 0, 0)
	for it.Next() {
		e := it.Event()
		if e.Time <= T {
			if err := want.Apply(&e); err != nil {
				t.Fatal(err)
			}
		}
	}
	it.Close()
	now := time.UnixMilli(T)
	if got, w := overviewJSON(t, st.Ledger, now), overviewJSON(t, want, now); got != w {
		t.Errorf("as-of overview\n%s\nwant\n%s", got, w)
	}
	if n := st.Ledger.RecordCount(); n != 9 {
		t.Errorf("%d records, want 9", n)
	}
	bal := st.Balances.Balances()
	if len(bal) != 1 || bal[0].Balances[0].Available != decimal.DecimalFromInt(991) {
		t.Errorf("balances %+v, want USDT 991 (after #9)", bal)
	}
	if r := st.Result(); r.Later == 0 || r.Position == 0 {
		t.Errorf("result %+v", r)
	}
}

// A kept state catches up with the events appended after it was built
// that fall within its cut (a fill reported late with a trade time before
// T, in a new order), and not with the others (later times, and a stream
// the cut ended); it then answers as a state built afresh.
func TestStatesCatchUpAndKeep(t *testing.T) {
	g := newAsofLog(t)
	g.fill20()
	ctx := context.Background()
	T := g.at(9).Add(30 * time.Second).UnixMilli()
	ss := projections.NewStates(g.store)
	st, err := ss.Get(ctx, projections.AsOf(T), domain.LOFO)
	if err != nil {
		t.Fatal(err)
	}
	// An order requested before T (appended late, stamped minute 8) and
	// its fill recorded at minute 30, traded at minute 9: within the cut.
	// Order #12's stream was ended by the cut (its events are all past T):
	// a fill appended to it with an early trade time stays out, as a fresh
	// replay leaves it out; so does order #23, requested after T.
	g.append(domain.OrderStream(22), domain.TypeOrderRequested, g.at(8), domain.OrderRequested{OrderID: 22, Exchange: "binance",
		Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("2"), Price: decimal.MustDecimal("90"), ClientOrderID: "c"})
	g.append(domain.OrderStream(22), domain.TypeOrderFilled, g.at(30), domain.OrderFilled{FillID: "f", Price: decimal.MustDecimal("90"),
		Quantity: decimal.MustDecimal("2"), ExchangeTime: g.at(9).UnixMilli()})
	g.order(23, domain.Buy, "90", "2", 32, g.at(5).UnixMilli())
	g.append(domain.OrderStream(12), domain.TypeOrderFilled, g.at(31), domain.OrderFilled{FillID: "g", Price: decimal.MustDecimal("1"),
		Quantity: decimal.MustDecimal("1"), ExchangeTime: g.at(2).UnixMilli()})
	again, err := ss.Get(ctx, projections.AsOf(T), domain.LOFO)
	if err != nil {
		t.Fatal(err)
	}
	if again != st || ss.Builds() != 1 {
		t.Fatalf("a second read built again (%d builds)", ss.Builds())
	}
	if n := st.Ledger.RecordCount(); n != 10 {
		t.Errorf("%d records after the catch-up, want 10 (9 + the late fill)", n)
	}
	fresh, err := projections.BuildState(ctx, g.store, projections.AsOf(T), domain.LOFO, projections.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(T)
	if got, w := overviewJSON(t, st.Ledger, now), overviewJSON(t, fresh.Ledger, now); got != w {
		t.Errorf("caught-up state\n%s\nfresh\n%s", got, w)
	}
	// Another method is another state; past MaxStates the least recently
	// read goes.
	ss.MaxStates = 2
	for _, m := range []domain.PnlMethod{domain.FIFO, domain.HIFO} {
		if _, err := ss.Get(ctx, projections.AsOf(T), m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ss.Get(ctx, projections.AsOf(T), domain.LOFO); err != nil {
		t.Fatal(err)
	}
	if ss.Builds() != 4 {
		t.Errorf("%d builds, want 4: LOFO was dropped for HIFO and built again", ss.Builds())
	}
}

// Concurrent reads of a state not yet kept build it once.
func TestStatesBuildOnce(t *testing.T) {
	g := newAsofLog(t)
	g.fill20()
	ss := projections.NewStates(g.store)
	var wg sync.WaitGroup
	got := make([]*projections.State, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := ss.Get(context.Background(), projections.AsOf(g.at(15).UnixMilli()), domain.FIFO)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		}()
	}
	wg.Wait()
	if ss.Builds() != 1 {
		t.Errorf("%d builds, want 1", ss.Builds())
	}
	for _, s := range got {
		if s != got[0] {
			t.Fatal("readers got different states")
		}
	}
}
