package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/exchangetest"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// accountEnv is env with the simulator restored from the log and the
// accounts' read model, as serve wires them.
type accountEnv struct {
	*env
	book *projections.Accounts
}

func newAccountEnv(t testing.TB) *accountEnv {
	a := &accountEnv{env: closedEnv(t)}
	a.paperFromLog, a.wire = true, a.wireAccounts
	a.open()
	return a
}

// reopen opens the data dir as a new process would.
func (a *accountEnv) reopen() {
	a.close()
	a.open()
}

// wireAccounts registers the accounts' read model beside the engine's.
func (a *accountEnv) wireAccounts() {
	a.book = projections.NewAccounts()
	a.runner.Register(a.book)
	a.eng.Accounts.Book = a.book
	a.eng.Accounts.FindOrder = exchangetest.FindOrder(a.store)
}

// simulate records activity on the paper account as POST
// /api/v1/paper/activity does.
func (a *accountEnv) simulate(p domain.PaperActivity) {
	a.t.Helper()
	p.Exchange = "binance"
	res, err := eventstore.Run(context.Background(), eventstore.NewCommands(a.store, a.runner), eventstore.Command[struct{}]{
		Stream: domain.PaperStream("binance"),
		Load:   eventstore.NoState,
		Decide: func(struct{}) ([]domain.Event, error) { return a.sim.DecideActivity(a.clock, p) },
	})
	if err != nil || !res.Appended() {
		a.t.Fatalf("simulate %+v: %v", p, err)
	}
}

func (a *accountEnv) sync() {
	a.t.Helper()
	a.clock.Advance(engine.DefaultSyncInterval)
	a.setPrice("USDT-BTC", "60000")
	if err := a.eng.Accounts.Sync(context.Background(), "binance"); err != nil {
		a.t.Fatal(err)
	}
}

// accountTypes counts the account stream's events by type.
func (a *accountEnv) accountTypes() map[string]int {
	out := map[string]int{}
	for _, typ := range a.types(domain.AccountStream("binance")) {
		out[typ]++
	}
	return out
}

func dec(s string) decimal.Decimal { return decimal.MustDecimal(s) }

// TestPaperAccountReconciled: a paper account with orders of the service,
// a trade by hand, a deposit, a withdrawal with its fee, a dust
// conversion and a fill the exchange lists late reconciles to zero
// difference, every fact recorded once however often it is read; a
// balance changed with no history behind it is a discrepancy naming the
// asset and the amount, cleared when it goes.
func TestPaperAccountReconciled(t *testing.T) {
	a := newAccountEnv(t)
	ctx := context.Background()
	a.setPrice("USDT-BTC", "60000")
	a.eng.Accounts.Confirm = 2
	if _, err := a.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: dec("0.01"), Actor: "tester"}); err != nil {
		t.Fatal(err)
	}
	a.reconcile()
	start := a.clock.Now().UnixMilli()
	a.sync() // opens the account
	v, _ := a.book.View("binance")
	if !v.Opened {
		t.Fatal("the account is not opened")
	}

	// Outside the service.
	a.clock.Advance(time.Second)
	a.simulate(domain.PaperActivity{Kind: domain.PaperDeposit, Asset: "ETH", Amount: dec("2")})
	a.clock.Advance(time.Second)
	a.simulate(domain.PaperActivity{Kind: domain.PaperWithdrawal, Asset: "USDT", Amount: dec("100"), Fee: dec("1")})
	a.clock.Advance(time.Second)
	a.simulate(domain.PaperActivity{Kind: domain.PaperTrade, Pair: "USDT-ETH", Side: domain.Sell, Amount: dec("0.5"), Price: dec("3000"), Fee: dec("1.5")})
	a.clock.Advance(time.Second)
	a.simulate(domain.PaperActivity{Kind: domain.PaperConversion, Asset: "ETH", Amount: dec("0.001"), ToAsset: "BNB", ToAmount: dec("0.0049"), Fee: dec("0.0001")})
	// A fill of the service's the exchange lists late: its order fills
	// at once, its fill is not listed, and the engine's cursor passes
	// its time with the next order's fill.
	if err := a.sim.DelayFills("binance", 1); err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(time.Second)
	late, err := a.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: dec("0.002"), Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(time.Second)
	if _, err := a.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindMarket, Amount: dec("0.001"), Actor: "tester"}); err != nil {
		t.Fatal(err)
	}
	a.reconcile()
	want(t, a.types(domain.OrderStream(late)), domain.TypeOrderRequested, domain.TypeOrderAccepted)
	a.sync()
	a.sync()
	// Meanwhile the ledger lacks the fill: the exchange holds 0.002 BTC
	// more than the ledger implies, and the USDT it cost less.
	d := a.book.Discrepancies()
	if len(d) != 2 || d[0].Asset != "BTC" || d[0].Difference.Cmp(dec("0.002")) != 0 || d[1].Asset != "USDT" || !d[1].Difference.IsNeg() {
		t.Fatalf("discrepancies while a fill is not listed: %+v", d)
	}
	if err := a.sim.ReleaseFills("binance"); err != nil {
		t.Fatal(err)
	}
	a.reconcile()
	a.sync()
	a.sync()
	a.sync()
	want(t, a.types(domain.OrderStream(late)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled)
	if d := a.book.Discrepancies(); len(d) != 0 {
		t.Fatalf("discrepancies once the late fill is recorded: %+v", d)
	}
	got := a.accountTypes()
	for typ, n := range map[string]int{domain.TypeAccountOpened: 1, domain.TypeExternalFill: 1, domain.TypeDeposit: 1, domain.TypeWithdrawal: 1,
		domain.TypeConversion: 1, domain.TypeBalanceDiscrepancy: 2, domain.TypeBalanceDiscrepancyCleared: 2} {
		if got[typ] != n {
			t.Errorf("%d %s, want %d (%v)", got[typ], typ, n, got)
		}
	}

	r, err := a.eng.Accounts.Reconcile(ctx, "binance", start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != domain.ReconciledOK {
		t.Fatalf("status %s: %+v", r.Status, r.Assets)
	}
	for _, as := range r.Assets {
		if !decimal.Decimal(as.Difference).IsZero() {
			t.Errorf("%s differs: %+v", as.Asset, as)
		}
	}
	if r.Fills != (domain.FillReconciliation{Matched: 2, Missing: 1}) {
		t.Errorf("fills %+v, want 2 matched (the first buy, the sell) and 1 missing-then-recorded (the late buy)", r.Fills)
	}
	if r.Activity != (domain.ActivityCounts{Trades: 4, ExternalTrades: 1, Deposits: 1, Withdrawals: 1, Conversions: 1}) {
		t.Errorf("activity %+v", r.Activity)
	}
	again := a.accountTypes()
	t.Logf("account stream after the reconciliation: %v", again)
	if fmt.Sprint(again[domain.TypeExternalFill], again[domain.TypeDeposit], again[domain.TypeWithdrawal], again[domain.TypeConversion]) != "1 1 1 1" {
		t.Errorf("a reconciliation recorded facts again: %v", again)
	}

	// A balance changed with no history behind it.
	a.simulate(domain.PaperActivity{Kind: domain.PaperDrift, Asset: "BTC", Amount: dec("0.25")})
	a.sync()
	if n := a.accountTypes()[domain.TypeBalanceDiscrepancy]; n != 2 {
		t.Fatalf("a difference seen once is recorded (%d)", n)
	}
	a.sync()
	d = a.book.Discrepancies()
	if len(d) != 1 || d[0].Asset != "BTC" || d[0].Difference.Cmp(dec("0.25")) != 0 {
		t.Fatalf("discrepancies %+v, want BTC 0.25", d)
	}
	r, err = a.eng.Accounts.Reconcile(ctx, "binance", start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != domain.ReconciledDiscrepancy {
		t.Fatalf("status %s", r.Status)
	}
	for _, as := range r.Assets {
		if as.Asset == "BTC" && decimal.Decimal(as.Difference).Cmp(dec("0.25")) != 0 {
			t.Errorf("BTC differs by %s, want 0.25", as.Difference)
		}
	}
	a.simulate(domain.PaperActivity{Kind: domain.PaperDrift, Asset: "BTC", Amount: dec("-0.25")})
	a.sync()
	if d := a.book.Discrepancies(); len(d) != 0 {
		t.Fatalf("discrepancies after the drift went: %+v", d)
	}
	if n := a.accountTypes()[domain.TypeBalanceDiscrepancyCleared]; n != 3 {
		t.Fatalf("%d BalanceDiscrepancyCleared, want 3", n)
	}

	// A restart: the simulator rebuilt from the log lists the same
	// activity; reading it again records nothing.
	before := a.accountTypes()
	a.sim = paper.NewSimulator(a.clock)
	a.reopen()
	a.setPrice("USDT-BTC", "60000")
	a.sync()
	a.sync()
	if _, err := a.eng.Accounts.Reconcile(ctx, "binance", start, 0); err != nil {
		t.Fatal(err)
	}
	after := a.accountTypes()
	for _, typ := range []string{domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion, domain.TypeBalanceDiscrepancy} {
		if after[typ] != before[typ] {
			t.Errorf("after a restart %d %s, want %d", after[typ], typ, before[typ])
		}
	}
	if d := a.book.Discrepancies(); len(d) != 0 {
		t.Fatalf("discrepancies after a restart: %+v", d)
	}
}

// TestAccountActivityListed: the account's facts listed from the log
// newest first by exchange time (not by when they were recorded), inside
// the window only, a transfer once with its last status, an external
// trade marked, the limit kept with more said.
func TestAccountActivityListed(t *testing.T) {
	a := newAccountEnv(t)
	ctx := context.Background()
	t0 := a.clock.Now().UnixMilli()
	var evs []domain.Event
	add := func(es []domain.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, es...)
	}
	dep := domain.Transfer{Exchange: "binance", ID: "d1", Asset: "ETH", Amount: dec("1"), Address: "0x94df8b352de7f46f64b01d3666bf6e936e44ce60",
		Status: domain.TransferPending, Time: t0 + 3000}
	add(domain.DecideTransfer(a.clock, true, dep))
	// Backfilled after: older by exchange time.
	add(domain.DecideExternalFill(a.clock, domain.ExternalFill{Exchange: "binance", Pair: "USDT-BTC", TradeID: "7", OrderID: "70", Side: domain.Buy,
		Price: dec("60000"), Quantity: dec("0.001"), Fee: dec("0.000001"), FeeAsset: "BTC", Time: t0 + 1000}))
	add(domain.DecideConversion(a.clock, domain.Conversion{Exchange: "binance", ID: "c1", Kind: domain.ConversionDust, FromAsset: "ETH",
		FromAmount: dec("0.001"), ToAsset: "BNB", ToAmount: dec("0.004"), Time: t0 - 5000}))
	dep.Status = domain.TransferCredited
	add(domain.DecideTransfer(a.clock, true, dep))
	res, err := a.store.Append(ctx, domain.AccountStream("binance"), domain.Any, evs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.runner.WaitFor(ctx, res.LastPosition); err != nil {
		t.Fatal(err)
	}
	facts, more, err := engine.AccountActivity(ctx, a.store, a.book, "binance", t0, t0+10_000, 10)
	if err != nil {
		t.Fatal(err)
	}
	if more || len(facts) != 2 || facts[0].Kind != "deposit" || facts[1].Kind != "trade" || !facts[1].External || facts[0].External {
		t.Fatalf("facts %+v more %v, want the deposit then the external trade", facts, more)
	}
	var tr domain.Transfer
	if err := json.Unmarshal(facts[0].Fact, &tr); err != nil || tr.Status != domain.TransferCredited || tr.Address != "0x94…ce60" {
		t.Errorf("the deposit listed as %s (%v)", facts[0].Fact, err)
	}
	facts, more, err = engine.AccountActivity(ctx, a.store, a.book, "binance", t0-10_000, t0+10_000, 2)
	if err != nil || !more || len(facts) != 2 || facts[1].Kind != "trade" {
		t.Errorf("limit 2 over the three: %+v more %v (%v)", facts, more, err)
	}
}

// storeReads counts the order streams read through a store.
type storeReads struct {
	domain.EventStore
	orderStreams int
}

func (r *storeReads) ReadStream(ctx context.Context, stream string, from int64, max int) domain.EventIterator {
	if strings.HasPrefix(stream, "order-") {
		r.orderStreams++
	}
	return r.EventStore.ReadStream(ctx, stream, from, max)
}

// TestAccountSyncChecksATradeOnce: the sync after the one that checked the
// service's own trades against the log reads them again (its Lookback) but
// neither looks their orders up nor reads their streams again (before: a
// lookup and a stream read per trade and per sync), and records nothing.
func TestAccountSyncChecksATradeOnce(t *testing.T) {
	a := newAccountEnv(t)
	ctx := context.Background()
	a.setPrice("USDT-BTC", "60000")
	a.sync() // opens the account
	const orders = 5
	for i := 0; i < orders; i++ {
		a.clock.Advance(time.Second)
		if _, err := a.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: dec("0.001"), Actor: "tester"}); err != nil {
			t.Fatal(err)
		}
	}
	a.reconcile()
	a.sync() // checks the five trades
	head, err := a.store.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reads := &storeReads{EventStore: a.eng.Desk.Store}
	a.eng.Desk.Store = reads
	defer func() { a.eng.Desk.Store = reads.EventStore }()
	find, lookups := a.eng.Accounts.FindOrder, 0
	a.eng.Accounts.FindOrder = func(ctx context.Context, exchange, pair, client string) (int64, bool, error) {
		lookups++
		return find(ctx, exchange, pair, client)
	}
	a.sync()
	if reads.orderStreams != 0 || lookups != 0 {
		t.Errorf("the second sync read %d order streams and looked %d orders up, want none", reads.orderStreams, lookups)
	}
	if h, _ := a.store.Head(ctx); h != head {
		t.Errorf("the second sync appended %d events", h-head)
	}
}
