package exchangetest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/projections"
)

// The account suite (RunAccount): every connector's account, with what
// happened on it outside the service — a trade by hand, a deposit, a
// withdrawal and its network fee, a dust conversion, a fill of the
// service's that the exchange lists late —, synced by the engine's
// AccountSync (DESIGN §18) and reconciled to zero difference; a balance
// changed with no history behind it reported as a discrepancy naming the
// asset and the amount; a backfill stopped in the middle and run again
// recording nothing twice.

// AccountHarness is one freshly opened account and the ways to act on it
// outside the service. Every Outside hook is required.
type AccountHarness struct {
	// Exchange opens the connector (again, after a restart: a new process
	// on the same account).
	Exchange func() domain.Exchange
	// Pair is a listed pair the account can buy and sell at market, in
	// Amount (base).
	Pair   string
	Amount decimal.Decimal
	// Clock is the engine's clock; the suite moves it forward by the
	// sync interval between syncs.
	Clock *domain.ManualClock
	// Projections, when set, returns more read models to feed, asked
	// after each Exchange (the paper simulator of the new process).
	Projections func() []projections.Projection
	// Before, when set, runs before each sync (the paper exchange sets
	// its price, which also catches its market up with the clock).
	Before func()
	// Outside acts on the account outside the service.
	Outside Outside
	// Secrets are strings no event may hold: the account's API key and
	// secret, the addresses and tags its transfers use in clear.
	Secrets []string
}

// Outside is what happens on an account without the service.
type Outside struct {
	HandTrade func(t *testing.T, env *AccountEnv)
	Deposit   func(t *testing.T, env *AccountEnv)
	Withdraw  func(t *testing.T, env *AccountEnv)
	Dust      func(t *testing.T, env *AccountEnv)
	// Drift changes a balance with no history behind it and returns the
	// asset and by how much.
	Drift func(t *testing.T, env *AccountEnv) (asset string, amount decimal.Decimal)
	// DelayFills holds the next n fills out of the exchange's lists until
	// ReleaseFills lists them, with their own times.
	DelayFills   func(t *testing.T, n int)
	ReleaseFills func(t *testing.T)
	// FailHistoryAfter makes the account's history fail (a 5xx, a
	// network error) once n more of its calls were answered (0: not any
	// more).
	FailHistoryAfter func(t *testing.T, n int)
}

// AccountEnv is the service around the account: an SQLite log in a temp
// dir, the runner and its read models, the engine, the accounts' read
// model.
type AccountEnv struct {
	T      testing.TB
	Dir    string
	H      AccountHarness
	Store  *sqlite.Store
	Runner *projections.Runner
	Engine *engine.Engine
	Book   *projections.Accounts
	x      domain.Exchange
}

type cyclingAll struct{}

func (cyclingAll) IsCycling(string) bool { return true }

// NewAccountEnv opens the service on h's account.
func NewAccountEnv(t testing.TB, h AccountHarness) *AccountEnv {
	e := &AccountEnv{T: t, Dir: t.TempDir(), H: h}
	e.Open()
	return e
}

// Open (re)opens the service on the data dir, as a new process does: a
// new connector, the log replayed into new read models.
func (e *AccountEnv) Open() {
	e.Close()
	e.x = e.H.Exchange()
	e.Store = sqlite.NewStore(filepath.Join(e.Dir, "events.db"))
	if err := e.Store.Open(); err != nil {
		e.T.Fatal(err)
	}
	e.Runner = projections.NewRunner(e.Store)
	if e.H.Projections != nil {
		for _, p := range e.H.Projections() {
			e.Runner.Register(p)
		}
	}
	name := e.x.Name()
	e.Engine = engine.New(e.Store, func(n string) (domain.Exchange, error) {
		if n != name {
			return nil, domain.Errorf(domain.ENOTFOUND, "no exchange %q", n)
		}
		return engine.Guard(e.x), nil
	}, nil, projections.NewBalances(), e.H.Clock)
	e.Engine.Trader.Activity = cyclingAll{}
	e.Engine.Desk.Wait = e.Runner.WaitFor
	for _, p := range e.Engine.Projections() {
		e.Runner.Register(p)
	}
	e.Book = projections.NewAccounts()
	e.Runner.Register(e.Book)
	e.Engine.Accounts.Book = e.Book
	e.Engine.Accounts.FindOrder = FindOrder(e.Store)
	if err := e.Runner.Start(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(e.Close)
}

// Close stops the runner and closes the log.
func (e *AccountEnv) Close() {
	if e.Runner != nil {
		e.Runner.Close()
		e.Store.Close()
		e.Runner = nil
	}
}

// Name is the exchange's name.
func (e *AccountEnv) Name() string { return e.x.Name() }

// FindOrder is AccountSync's FindOrder read from the whole of log: the
// order this log requested on exchange with the client order id (serve
// looks it up in its order index instead).
func FindOrder(log domain.EventStore) func(ctx context.Context, exchange, pair, client string) (int64, bool, error) {
	return func(ctx context.Context, exchange, pair, client string) (int64, bool, error) {
		it := log.ReadAll(ctx, 1, 0)
		defer it.Close()
		for it.Next() {
			ev := it.Event()
			if ev.Type != domain.TypeOrderRequested {
				continue
			}
			var p domain.OrderRequested
			if err := ev.Decode(&p); err != nil {
				return 0, false, err
			}
			if p.ClientOrderID == client && p.Exchange == exchange {
				return p.OrderID, true, nil
			}
		}
		return 0, false, it.Err()
	}
}

// Buy places a market buy of the harness's amount and records its fills.
func (e *AccountEnv) Buy() int64 {
	e.T.Helper()
	return e.order(domain.Buy)
}

// Sell places a market sell of the harness's amount.
func (e *AccountEnv) Sell() int64 {
	e.T.Helper()
	return e.order(domain.Sell)
}

func (e *AccountEnv) order(side domain.Side) int64 {
	e.T.Helper()
	if e.H.Before != nil {
		e.H.Before()
	}
	id, err := e.Engine.Trader.Submit(context.Background(), domain.OrderRequest{Exchange: e.Name(), Pair: e.H.Pair, Side: side, Kind: domain.KindMarket,
		Amount: e.H.Amount, Actor: "suite"})
	if err != nil {
		e.T.Fatalf("%s %s: %v", side, e.H.Pair, err)
	}
	e.reconcile()
	return id
}

func (e *AccountEnv) reconcile() {
	e.T.Helper()
	if err := e.Engine.Reconciler.Reconcile(context.Background(), e.Name()); err != nil {
		e.T.Fatal(err)
	}
}

// Sync runs the cycle's sync once more (the clock moved by its interval).
func (e *AccountEnv) Sync() {
	e.T.Helper()
	e.H.Clock.Advance(engine.DefaultSyncInterval)
	if e.H.Before != nil {
		e.H.Before()
	}
	e.reconcile()
	if err := e.Engine.Accounts.Sync(context.Background(), e.Name()); err != nil {
		e.T.Fatal(err)
	}
}

// Types counts a stream's events by type.
func (e *AccountEnv) Types(stream string) map[string]int {
	out := map[string]int{}
	it := e.Store.ReadStream(context.Background(), stream, 0, 0)
	defer it.Close()
	for it.Next() {
		out[it.Event().Type]++
	}
	if err := it.Err(); err != nil {
		e.T.Fatal(err)
	}
	return out
}

// ids returns the exchange's ids of the account stream's facts of a type,
// with how many events carry each.
func (e *AccountEnv) ids(typ string) map[string]int {
	out := map[string]int{}
	it := e.Store.ReadStream(context.Background(), domain.AccountStream(e.Name()), 0, 0)
	defer it.Close()
	for it.Next() {
		ev := it.Event()
		if ev.Type != typ {
			continue
		}
		var p struct {
			TradeID string `json:"tradeId"`
			ID      string `json:"id"`
			Status  string `json:"status"`
		}
		if err := ev.Decode(&p); err != nil {
			e.T.Fatal(err)
		}
		out[p.TradeID+p.ID+"/"+p.Status]++
	}
	return out
}

// RunAccount runs the account suite against the account open gives.
func RunAccount(t *testing.T, open func(t *testing.T) AccountHarness) {
	t.Run("ReconciledToZero", func(t *testing.T) { testReconciled(t, open(t)) })
	t.Run("BackfillStoppedAndResumed", func(t *testing.T) { testBackfillResumed(t, open(t)) })
}

func testReconciled(t *testing.T, h AccountHarness) {
	ctx := context.Background()
	e := NewAccountEnv(t, h)
	e.H.Clock.Advance(time.Second)
	start := e.H.Clock.Now().UnixMilli()
	e.Buy()
	e.Sync() // opens the account
	if v, _ := e.Book.View(e.Name()); !v.Opened {
		t.Fatal("the account is not opened")
	}
	// What happens from now on is after the opening (at the next
	// millisecond or later: one at the opening's is in its balances).
	e.H.Clock.Advance(time.Second)
	h.Outside.HandTrade(t, e)
	h.Outside.Deposit(t, e)
	h.Outside.Withdraw(t, e)
	h.Outside.Dust(t, e)
	// A fill the exchange lists late, after the engine's cursor passed
	// its time with the next order's fill.
	h.Outside.DelayFills(t, 1)
	late := e.Buy()
	e.Sell()
	if n := e.Types(domain.OrderStream(late))[domain.TypeOrderFilled]; n != 0 {
		t.Fatalf("the delayed fill is in the log already (%d)", n)
	}
	e.Sync()
	h.Outside.ReleaseFills(t)
	for range 3 {
		e.Sync()
	}
	if n := e.Types(domain.OrderStream(late))[domain.TypeOrderFilled]; n != 1 {
		t.Fatalf("the late fill recorded %d times, want once", n)
	}
	if d := e.Book.Discrepancies(); len(d) != 0 {
		t.Fatalf("discrepancies: %+v (the account's events: %v)", d, e.Types(domain.AccountStream(e.Name())))
	}
	r, err := e.Engine.Accounts.Reconcile(ctx, e.Name(), start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != domain.ReconciledOK {
		t.Fatalf("status %s: %+v", r.Status, r.Assets)
	}
	for _, a := range r.Assets {
		if !decimal.Decimal(a.Difference).IsZero() {
			t.Errorf("%s differs by %s", a.Asset, a.Difference)
		}
	}
	if r.Fills.Missing < 1 || r.Fills.Matched < 2 || r.Fills.Extra != 0 || r.Fills.Mismatched != 0 {
		t.Errorf("fills %+v, want the late one missing-then-recorded, the others matched", r.Fills)
	}
	if a := r.Activity; a.ExternalTrades != 1 || a.Deposits != 1 || a.Withdrawals != 1 || a.Conversions < 1 || a.Trades != a.ExternalTrades+3 {
		t.Errorf("activity %+v", a)
	}
	for _, typ := range []string{domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion} {
		for id, n := range e.ids(typ) {
			if n != 1 {
				t.Errorf("%s %s recorded %d times", typ, id, n)
			}
		}
	}

	// The activity as the log holds it: the hand trade marked external,
	// each transfer once with its last status, addresses masked.
	facts, more, err := engine.AccountActivity(ctx, e.Store, e.Book, e.Name(), start, e.H.Clock.Now().UnixMilli()+1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, f := range facts {
		kinds[f.Kind]++
		if f.External != (f.Kind == "trade") || f.InOpening {
			t.Errorf("fact %s %s: external %v, in the opening %v", f.Kind, f.Fact, f.External, f.InOpening)
		}
		var tr domain.Transfer
		if f.Kind == "deposit" || f.Kind == "withdrawal" {
			if err := json.Unmarshal(f.Fact, &tr); err != nil {
				t.Fatal(err)
			}
			if tr.Address != domain.MaskAddress(tr.Address) || tr.AddressTag != domain.MaskAddress(tr.AddressTag) {
				t.Errorf("%s address in clear: %s", f.Kind, f.Fact)
			}
			if !tr.Status.Final() {
				t.Errorf("%s listed with a status not its last: %s", f.Kind, f.Fact)
			}
		}
	}
	if more || kinds["trade"] != 1 || kinds["deposit"] != 1 || kinds["withdrawal"] != 1 || kinds["conversion"] != r.Activity.Conversions {
		t.Errorf("activity listed %v (more %v), want the counts %+v", kinds, more, r.Activity)
	}

	// No key, secret or address in clear anywhere in the log.
	it := e.Store.ReadAll(ctx, 0, 0)
	for it.Next() {
		ev := it.Event()
		for _, secret := range h.Secrets {
			if strings.Contains(string(ev.Data), secret) {
				t.Errorf("%s at %d holds %q: %s", ev.Type, ev.Position, secret, ev.Data)
			}
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}

	asset, amount := h.Outside.Drift(t, e)
	e.Sync()
	e.Sync()
	d := e.Book.Discrepancies()
	if len(d) != 1 || d[0].Asset != asset || d[0].Difference.Cmp(amount) != 0 {
		t.Fatalf("discrepancies %+v, want %s by %s", d, asset, amount)
	}
	r, err = e.Engine.Accounts.Reconcile(ctx, e.Name(), start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != domain.ReconciledDiscrepancy {
		t.Fatalf("status %s after a drift", r.Status)
	}
	for _, a := range r.Assets {
		differs := !decimal.Decimal(a.Difference).IsZero()
		if differs != (a.Asset == asset) || (differs && decimal.Decimal(a.Difference).Cmp(amount) != 0) {
			t.Errorf("%s differs by %s; want only %s, by %s", a.Asset, a.Difference, asset, amount)
		}
	}
}

func testBackfillResumed(t *testing.T, h AccountHarness) {
	ctx := context.Background()
	since := h.Clock.Now().Add(-time.Hour)
	e := NewAccountEnv(t, h)
	h.Outside.HandTrade(t, e)
	h.Outside.Deposit(t, e)
	h.Outside.Withdraw(t, e)
	h.Outside.Dust(t, e)
	h.Outside.HandTrade(t, e)
	e.Buy()
	h.Clock.Advance(time.Second)
	if e.H.Before != nil {
		e.H.Before()
	}
	h.Outside.FailHistoryAfter(t, 2)
	if _, err := e.Engine.Accounts.Backfill(ctx, e.Name(), since, nil); err == nil {
		t.Fatal("the backfill did not stop at the failure")
	}
	partial := e.Types(domain.AccountStream(e.Name()))
	// A new process.
	e.Open()
	h.Outside.FailHistoryAfter(t, 0)
	var reached []domain.ActivityKind
	st, err := e.Engine.Accounts.Backfill(ctx, e.Name(), since, func(p engine.SyncProgress) { reached = append(reached, p.Kind) })
	if err != nil {
		t.Fatal(err)
	}
	if len(reached) == 0 {
		t.Error("no progress told")
	}
	full := e.Types(domain.AccountStream(e.Name()))
	if full[domain.TypeExternalFill] != 2 || full[domain.TypeDeposit] != 1 || full[domain.TypeWithdrawal] != 1 || full[domain.TypeConversion] < 1 {
		t.Fatalf("after the resumed backfill %v (partial %v, stats %+v)", full, partial, st)
	}
	for _, typ := range []string{domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion} {
		for id, n := range e.ids(typ) {
			if n != 1 {
				t.Errorf("%s %s recorded %d times", typ, id, n)
			}
		}
	}
	// Once more from the start: nothing new.
	if _, err := e.Engine.Accounts.Backfill(ctx, e.Name(), since, nil); err != nil {
		t.Fatal(err)
	}
	again := e.Types(domain.AccountStream(e.Name()))
	for _, typ := range []string{domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion} {
		if again[typ] != full[typ] {
			t.Errorf("a second backfill recorded %d %s, want %d", again[typ], typ, full[typ])
		}
	}
}
