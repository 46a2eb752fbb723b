package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

// cycling is a tiny Activity: the exchanges whose core is cycling.
type cycling map[string]bool

func (c cycling) IsCycling(exchange string) bool { return c[exchange] }

type env struct {
	t      testing.TB
	dir    string
	store  *sqlite.Store
	runner *projections.Runner
	clock  *domain.ManualClock
	sim    *paper.Simulator
	eng    *engine.Engine
	tr     *engine.Trader
	active cycling
	// paperFromLog registers the simulator as a projection, as serve does,
	// so that a restart restores its balances and resting orders.
	paperFromLog bool
	// wire, when set, wires more of the service in each open, before the
	// runner starts (accountEnv: the accounts' read model).
	wire func()
}

func newEnv(t testing.TB) *env {
	e := closedEnv(t)
	e.open()
	return e
}

// newPaperEnv is newEnv with the simulator restored from the log, as
// serve wires it (paperFromLog).
func newPaperEnv(t testing.TB) *env {
	e := closedEnv(t)
	e.paperFromLog = true
	e.open()
	return e
}

// closedEnv is an env on a new data dir, not opened yet.
func closedEnv(t testing.TB) *env {
	e := &env{t: t, dir: t.TempDir(), clock: domain.NewManualClock(time.Date(2026, 5, 6, 7, 8, 0, 0, time.UTC)), active: cycling{"binance": true}}
	e.sim = paper.NewSimulator(e.clock)
	return e
}

// open (re)opens the store, a fresh Trader and the runner over the data
// dir, as a restart of the process would.
func (e *env) open() {
	e.store = sqlite.NewStore(filepath.Join(e.dir, "events.db"))
	if err := e.store.Open(); err != nil {
		e.t.Fatal(err)
	}
	e.runner = projections.NewRunner(e.store)
	if e.paperFromLog {
		e.runner.Register(e.sim)
	}
	e.eng = engine.New(e.store, e.sim.Exchange, nil, projections.NewBalances(), e.clock)
	e.tr = e.eng.Trader
	e.tr.Activity = e.active
	e.eng.Desk.Wait = e.runner.WaitFor
	for _, p := range e.eng.Projections() {
		e.runner.Register(p)
	}
	if e.wire != nil {
		e.wire()
	}
	if err := e.runner.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(e.close)
}

func (e *env) close() {
	if e.runner != nil {
		e.runner.Close()
		e.store.Close()
		e.runner = nil
	}
}

// types returns the event types of a stream, in order.
func (e *env) types(stream string) []string {
	it := e.store.ReadStream(context.Background(), stream, 0, 0)
	defer it.Close()
	var out []string
	for it.Next() {
		out = append(out, it.Event().Type)
	}
	if err := it.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) head() uint64 {
	h, err := e.store.Head(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *env) setPrice(pair, price string) {
	if err := e.sim.SetPrice("binance", pair, decimal.MustDecimal(price)); err != nil {
		e.t.Fatal(err)
	}
}

// tick feeds the exchange's current ticker to the Trader, as the core does.
func (e *env) tick(pair string) {
	x, _ := e.sim.Exchange("binance")
	tk, err := x.Ticker(context.Background(), pair)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.eng.Emulator.OnTicker(context.Background(), "binance", tk); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) reconcile() {
	if err := e.eng.Reconciler.Reconcile(context.Background(), "binance"); err != nil {
		e.t.Fatal(err)
	}
}

func limit(side domain.Side, amount, price string) domain.OrderRequest {
	return domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: side, Kind: domain.KindLimit, Amount: decimal.MustDecimal(amount), Price: decimal.MustDecimal(price), Actor: "tester"}
}

func want(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestIdempotencyKeyPlacesOneOrder(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	req := limit(domain.Buy, "0.01", "50000")
	req.IdempotencyKey = "key-1"
	var wg sync.WaitGroup
	ids := make([]int64, 4)
	errs := make([]error, 4)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ids[i], errs[i] = e.tr.Submit(ctx, req)
		}(i)
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("retry %d: id %d err %v, want id %d", i, ids[i], errs[i], ids[0])
		}
	}
	x, _ := e.sim.Exchange("binance")
	open, _ := x.OpenOrders(ctx, "USDT-BTC")
	if len(open) != 1 {
		t.Fatalf("%d open orders on the exchange, want 1", len(open))
	}
	want(t, e.types(domain.OrderStream(ids[0])), domain.TypeOrderRequested, domain.TypeOrderAccepted)
	if _, ok := e.eng.Orders.Order(ids[0] + 1); ok {
		t.Fatal("a second order exists")
	}
	// After a restart the key is recovered from the log.
	e.close()
	e.open()
	head := e.head()
	id, err := e.tr.Submit(ctx, req)
	if err != nil || id != ids[0] || e.head() != head {
		t.Fatalf("retry after restart: id %d err %v, head %d→%d; want the same order, nothing appended", id, err, head, e.head())
	}
	// A new request gets the next id.
	req.IdempotencyKey = "key-2"
	if id, err := e.tr.Submit(ctx, req); err != nil || id != ids[0]+1 {
		t.Fatalf("new key: id %d err %v, want %d", id, err, ids[0]+1)
	}
}

func TestRefusalsAppendNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cases := []struct {
		name, field string
		req         domain.OrderRequest
	}{
		{"unknown pair", "pair", domain.OrderRequest{Exchange: "binance", Pair: "USDT-NOPE", Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("1"), Price: decimal.MustDecimal("1")}},
		{"zero amount", "amt", limit(domain.Buy, "0", "100")},
		{"negative price", "price", limit(domain.Buy, "1", "-1")},
		{"stop-limit without limit", "limitPrice", domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindStopLimit, Amount: decimal.MustDecimal("1"), StopPrice: decimal.MustDecimal("1")}},
		{"not cycling", "no pair on kraken is cycling", domain.OrderRequest{Exchange: "kraken", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("0.01")}},
	}
	head := e.head()
	for _, c := range cases {
		_, err := e.tr.Submit(ctx, c.req)
		if domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), c.field) {
			t.Errorf("%s: err=%v, want EINVALID naming %q", c.name, err, c.field)
		}
	}
	if e.head() != head {
		t.Fatalf("refusals appended events: head %d→%d", head, e.head())
	}
	e.active["kraken"] = true
	if _, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "kraken", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("0.01")}); err != nil {
		t.Fatalf("cycling exchange: %v", err)
	}
}

func TestInsufficientFundsIsRejected(t *testing.T) {
	e := newEnv(t)
	id, err := e.tr.Submit(context.Background(), limit(domain.Buy, "10", "50000"))
	if domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), "insufficient funds") {
		t.Fatalf("err=%v, want EINVALID insufficient funds", err)
	}
	want(t, e.types(domain.OrderStream(id)), domain.TypeOrderRequested, domain.TypeOrderRejected)
	// A held stop order is refused in its own terms: the whole order, what
	// it needs, what there is (10000 USDT, 0.5 BTC: paper.DefaultBalances),
	// in the market's precision at its price (BTC with 5 decimals, USDT
	// with 2), grouped by thousands.
	for _, c := range []struct {
		req  domain.OrderRequest
		want string
	}{
		{domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindStopLimit, Amount: decimal.MustDecimal("1"), StopPrice: decimal.MustDecimal("61000"), LimitPrice: decimal.MustDecimal("61100")},
			"insufficient funds: buying 1.00000 BTC at up to 61,100.00 USDT needs 61,100.00 USDT; 10,000.00 USDT available"},
		{domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindStopLimit, Amount: decimal.MustDecimal("2"), StopPrice: decimal.MustDecimal("50000"), LimitPrice: decimal.MustDecimal("49900")},
			"insufficient funds: selling 2.00000 BTC needs 2.00000 BTC; 0.50000 BTC available"},
	} {
		_, err := e.tr.Submit(context.Background(), c.req)
		if domain.ErrorCode(err) != domain.EINVALID || !strings.HasSuffix(domain.ErrorMessage(err), c.want) {
			t.Errorf("%s %s: err=%v, want EINVALID ending %q", c.req.Side, c.req.Kind, err, c.want)
		}
	}
}

// openWith counts the exchange's open orders with a client order id.
func (e *env) openWith(clientID string) int {
	x, _ := e.sim.Exchange("binance")
	open, err := x.OpenOrders(context.Background(), "USDT-BTC")
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, o := range open {
		if o.ClientOrderID == clientID {
			n++
		}
	}
	return n
}

func (e *env) clientID(id int64) string {
	o, ok := e.eng.Orders.Order(id)
	if !ok {
		e.t.Fatalf("order %d unknown", id)
	}
	return o.ClientOrderID
}

// An unknown outcome (no answer) is recorded and resolved by client order
// id: a placed order is found at once; a lost one is re-sent once after a
// definite not-found. Never two orders on the exchange.
func TestUnknownOutcomeResolvedByClientID(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// The request is lost: pending, then one re-send after the not-found.
	_ = e.sim.FailPlacements("binance", 1, false)
	id, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if domain.ErrorCode(err) != domain.EUNAVAILABLE || id == 0 {
		t.Fatalf("lost request: id %d err %v, want EUNAVAILABLE with an order id", id, err)
	}
	want(t, e.types(domain.OrderStream(id)), domain.TypeOrderRequested, domain.TypeOrderOutcomeUnknown)
	e.reconcile()
	want(t, e.types(domain.OrderStream(id)), domain.TypeOrderRequested, domain.TypeOrderOutcomeUnknown, domain.TypeOrderResent, domain.TypeOrderAccepted)
	if n := e.openWith(e.clientID(id)); n != 1 {
		t.Fatalf("%d open orders with the client id, want 1", n)
	}
	e.clock.Advance(time.Minute)
	e.reconcile() // accepted: nothing more
	want(t, e.types(domain.OrderStream(id)), domain.TypeOrderRequested, domain.TypeOrderOutcomeUnknown, domain.TypeOrderResent, domain.TypeOrderAccepted)

	// The answer is lost but the order was placed: the look-up finds it.
	_ = e.sim.FailPlacements("binance", 1, true)
	id, err = e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if err != nil {
		t.Fatalf("lost answer: %v", err)
	}
	want(t, e.types(domain.OrderStream(id)), domain.TypeOrderRequested, domain.TypeOrderOutcomeUnknown, domain.TypeOrderAccepted)
	if n := e.openWith(e.clientID(id)); n != 1 {
		t.Fatalf("%d open orders with the client id, want exactly 1 (never duplicated)", n)
	}
}

// The re-send happens once: when it is lost too, later not-founds only
// count, with backoff, and the third ends the order as expired.
func TestResentNeverTwice(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_ = e.sim.FailPlacements("binance", 2, false)
	id, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("lost request: %v", err)
	}
	e.reconcile() // not found: re-sent, and lost again
	lost := []string{domain.TypeOrderRequested, domain.TypeOrderOutcomeUnknown, domain.TypeOrderResent, domain.TypeOrderOutcomeUnknown}
	want(t, e.types(domain.OrderStream(id)), lost...)
	e.reconcile() // within the backoff: no look-up at all
	want(t, e.types(domain.OrderStream(id)), lost...)
	e.clock.Advance(time.Second)
	e.reconcile() // second not-found: counted, never re-sent
	want(t, e.types(domain.OrderStream(id)), lost...)
	e.clock.Advance(2 * time.Second)
	e.reconcile() // third: given up
	want(t, e.types(domain.OrderStream(id)), append(lost, domain.TypeOrderExpired)...)
	if n := e.openWith(e.clientID(id)); n != 0 {
		t.Fatalf("%d orders with the client id on the exchange, want 0", n)
	}
	if got := e.eng.Orders.OpenOrders("binance"); got != 0 {
		t.Fatalf("%d open orders in the log, want 0", got)
	}
}

func TestOrderIDsIncreaseAcrossRestart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	e.close()
	e.open()
	c, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if err != nil || !(a < b && b < c) {
		t.Fatalf("ids %d, %d, %d (err %v): want increasing across a restart", a, b, c, err)
	}
}

func TestLifecycleThroughTheSimulatedMarket(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "60000")

	// Market buy: filled at once.
	mkt, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("0.01")})
	if err != nil {
		t.Fatal(err)
	}
	want(t, e.types(domain.OrderStream(mkt)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled)

	// Limit buy below the price fills when the price drops through it.
	lb, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "59000"))
	if err != nil {
		t.Fatal(err)
	}
	e.setPrice("USDT-BTC", "58900")
	e.reconcile()
	want(t, e.types(domain.OrderStream(lb)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled)

	// Limit sell far above: cancelled; cancelling again is a conflict;
	// cancelling a filled order is a conflict; an unknown id not found.
	ls, err := e.tr.Submit(ctx, limit(domain.Sell, "0.01", "70000"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", ls, "tester", ""); err != nil {
		t.Fatal(err)
	}
	want(t, e.types(domain.OrderStream(ls)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled)
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", ls, "tester", ""); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("cancel twice: %v, want ECONFLICT", err)
	}
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", lb, "tester", ""); domain.ErrorCode(err) != domain.ECONFLICT || !strings.Contains(domain.ErrorMessage(err), "already filled") {
		t.Fatalf("cancel filled: %v, want ECONFLICT already filled", err)
	}
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", 999, "tester", ""); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("cancel unknown: %v, want ENOTFOUND", err)
	}

	// Stop-limit sell: stop 58000, limit 57900; the price falls to 57950.
	sl, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindStopLimit, Amount: decimal.MustDecimal("0.01"), StopPrice: decimal.MustDecimal("58000"), LimitPrice: decimal.MustDecimal("57900")})
	if err != nil {
		t.Fatal(err)
	}
	e.tick("USDT-BTC") // 58900: nothing
	e.setPrice("USDT-BTC", "57950")
	e.tick("USDT-BTC")
	e.reconcile()
	want(t, e.types(domain.OrderStream(sl)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeStopTriggered, domain.TypeOrderAccepted, domain.TypeOrderFilled)

	// Trailing buy: reference 57950, stop 58500; the price drops to 57000
	// (the stop follows to 57550), then recovers to 57600: it fires.
	tb, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindTrailingStop, Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("57950"), StopPrice: decimal.MustDecimal("58500")})
	if err != nil {
		t.Fatal(err)
	}
	e.setPrice("USDT-BTC", "57000")
	e.tick("USDT-BTC")
	o, _ := e.eng.Orders.Order(tb)
	if o.StopPrice != decimal.MustDecimal("57550") {
		t.Fatalf("trailing stop at %v, want 57550", o.StopPrice)
	}
	e.setPrice("USDT-BTC", "57600")
	e.tick("USDT-BTC")
	e.reconcile()
	want(t, e.types(domain.OrderStream(tb)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeTrailingStopMoved, domain.TypeStopTriggered, domain.TypeOrderAccepted, domain.TypeOrderFilled)

	// OCO sell: limit 60000 above, stop 57000 / limit 56900 below. The
	// price falls: the stop leg fires, the limit leg is cancelled.
	ocoID, err := e.tr.SubmitOCO(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("60000"), StopPrice: decimal.MustDecimal("57000"), LimitPrice: decimal.MustDecimal("56900")})
	if err != nil {
		t.Fatal(err)
	}
	want(t, e.types(domain.OcoStream(ocoID)), domain.TypeOcoPlaced)
	stopLeg, limitLeg := ocoID+1, ocoID+2
	e.setPrice("USDT-BTC", "56950")
	e.tick("USDT-BTC")
	e.reconcile()
	want(t, e.types(domain.OcoStream(ocoID)), domain.TypeOcoPlaced, domain.TypeOcoLegCancelled)
	want(t, e.types(domain.OrderStream(limitLeg)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled)
	want(t, e.types(domain.OrderStream(stopLeg)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeStopTriggered, domain.TypeOrderAccepted, domain.TypeOrderFilled)

	// Balances observed once, and again only when they change.
	n := len(e.types(domain.BalanceStream("binance")))
	e.reconcile()
	if got := len(e.types(domain.BalanceStream("binance"))); got != n || n == 0 {
		t.Fatalf("BalancesObserved: %d then %d, want ≥1 and unchanged without trading", n, got)
	}
	if len(e.tr.Balances()) != 1 {
		t.Fatalf("Balances()=%v, want binance's", e.tr.Balances())
	}
}

func TestOcoLimitLegFillCancelsStopLeg(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "60000")
	// OCO buy: limit 59000 below, stop 61000 / limit 61100 above.
	ocoID, err := e.tr.SubmitOCO(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("59000"), StopPrice: decimal.MustDecimal("61000"), LimitPrice: decimal.MustDecimal("61100")})
	if err != nil {
		t.Fatal(err)
	}
	e.setPrice("USDT-BTC", "58990")
	e.reconcile()
	want(t, e.types(domain.OcoStream(ocoID)), domain.TypeOcoPlaced, domain.TypeOcoLegCancelled)
	want(t, e.types(domain.OrderStream(ocoID+1)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled)
	// The cancelled stop leg never fires.
	e.setPrice("USDT-BTC", "62000")
	e.tick("USDT-BTC")
	want(t, e.types(domain.OrderStream(ocoID+1)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled)
}

// TestFinishedOrdersLeaveMemory: a finished order leaves the Trader's
// indexes (OpenOrders) and is not revived when the runner delivers its
// events again; its state is still answered from the log (Order, Cancel,
// an Idempotency-Key retry), before and after a restart.
func TestFinishedOrdersLeaveMemory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "60000")
	mreq := domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("0.01"), IdempotencyKey: "market-1"}
	mkt, err := e.tr.Submit(ctx, mreq)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindStopLimit, Amount: decimal.MustDecimal("0.01"), StopPrice: decimal.MustDecimal("55000"), LimitPrice: decimal.MustDecimal("54900")})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if err := e.runner.WaitFor(ctx, e.head()); err != nil {
			t.Fatal(err)
		}
		if got := e.eng.Orders.OpenOrders("binance"); got != 2 {
			t.Fatalf("%s: %d open orders, want 2 (the resting limit and the stop)", when, got)
		}
		o, ok := e.eng.Orders.Order(mkt)
		if !ok || o.State != domain.OrderStateFilled || o.Filled != decimal.MustDecimal("0.01") {
			t.Fatalf("%s: market order %+v ok=%v, want filled from the log", when, o, ok)
		}
		if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", mkt, "tester", ""); domain.ErrorCode(err) != domain.ECONFLICT || !strings.Contains(domain.ErrorMessage(err), "already filled") {
			t.Fatalf("%s: cancel of the filled order: %v, want ECONFLICT already filled", when, err)
		}
		head := e.head()
		if id, err := e.tr.Submit(ctx, mreq); err != nil || id != mkt || e.head() != head {
			t.Fatalf("%s: retry of the filled order: id %d err %v head %d→%d; want %d, nothing appended", when, id, err, head, e.head(), mkt)
		}
		e.reconcile()
		want(t, e.types(domain.OrderStream(mkt)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled)
	}
	check("live")
	e.close()
	e.open()
	check("after a restart")
	// Cancelling and firing take the others out of the index too.
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", rest, "tester", ""); err != nil {
		t.Fatal(err)
	}
	e.setPrice("USDT-BTC", "54950")
	e.tick("USDT-BTC")
	e.reconcile()
	want(t, e.types(domain.OrderStream(stop)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeStopTriggered, domain.TypeOrderAccepted, domain.TypeOrderFilled)
	if got := e.eng.Orders.OpenOrders("binance"); got != 0 {
		t.Fatalf("%d open orders after cancel and fill, want 0", got)
	}
	if _, ok := e.eng.Orders.Order(stop + 1); ok {
		t.Fatal("an order that never existed was found")
	}
}

// TestIdempotencyKeyScope: the same key with a different request is
// ECONFLICT and appends nothing, before and after a restart (the
// fingerprint is in OrderRequested); the same request gets the first
// answer, even once the precondition no longer holds.
func TestIdempotencyKeyScope(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	req := limit(domain.Buy, "0.01", "50000")
	req.IdempotencyKey = "scoped"
	id, err := e.tr.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	variants := map[string]func(r *domain.OrderRequest){
		"amount": func(r *domain.OrderRequest) { r.Amount = decimal.MustDecimal("0.02") },
		"price":  func(r *domain.OrderRequest) { r.Price = decimal.MustDecimal("50001") },
		"pair":   func(r *domain.OrderRequest) { r.Pair = "USDT-ETH" },
		"side":   func(r *domain.OrderRequest) { r.Side = domain.Sell },
		"kind":   func(r *domain.OrderRequest) { r.Kind = domain.KindMarket },
	}
	check := func(when string) {
		t.Helper()
		head := e.head()
		for name, change := range variants {
			r := req
			change(&r)
			if _, err := e.tr.Submit(ctx, r); domain.ErrorCode(err) != domain.ECONFLICT || domain.ErrorMessage(err) != "Idempotency-Key reused with a different request" {
				t.Fatalf("%s: other %s: %v, want ECONFLICT", when, name, err)
			}
		}
		if _, err := e.tr.SubmitOCO(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Amount: req.Amount, Price: req.Price, StopPrice: decimal.MustDecimal("61000"), LimitPrice: decimal.MustDecimal("61100"), IdempotencyKey: req.IdempotencyKey}); domain.ErrorCode(err) != domain.ECONFLICT {
			t.Fatalf("%s: the key on an OCO: %v, want ECONFLICT", when, err)
		}
		if _, err := e.tr.ClosePosition(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Kind: domain.KindMarket, IdempotencyKey: req.IdempotencyKey}); domain.ErrorCode(err) != domain.ECONFLICT {
			t.Fatalf("%s: the key on a close: %v, want ECONFLICT", when, err)
		}
		if got, err := e.tr.Submit(ctx, req); err != nil || got != id {
			t.Fatalf("%s: same request: %d %v, want %d", when, got, err, id)
		}
		if e.head() != head {
			t.Fatalf("%s: appended events: head %d→%d", when, head, e.head())
		}
	}
	check("live")
	e.close()
	e.open()
	check("after a restart")
	e.active["binance"] = false
	if got, err := e.tr.Submit(ctx, req); err != nil || got != id {
		t.Fatalf("retry while not cycling: %d %v, want the first answer %d", got, err, id)
	}
	if _, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000")); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("a new order while not cycling: %v, want EINVALID", err)
	}
}

// An order the log holds open but the exchange no longer knows ends as
// expired after three look-ups that found nothing, instead of staying open
// forever.
func TestOrdersTheExchangeForgotExpire(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "60000")
	resting, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if err != nil {
		t.Fatal(err)
	}
	e.reconcile() // the exchange knows it: nothing changes
	want(t, e.types(domain.OrderStream(resting)), domain.TypeOrderRequested, domain.TypeOrderAccepted)

	e.close()
	e.sim = paper.NewSimulator(e.clock) // a restart: the paper book is gone
	e.open()
	e.setPrice("USDT-BTC", "60000")
	if got := e.eng.Orders.OpenOrders("binance"); got != 1 {
		t.Fatalf("after restart, before reconcile: %d open orders, want 1", got)
	}
	for i := 0; i < 2; i++ { // not found twice: not given up yet
		e.reconcile()
		e.clock.Advance(time.Minute)
	}
	want(t, e.types(domain.OrderStream(resting)), domain.TypeOrderRequested, domain.TypeOrderAccepted)
	e.reconcile()
	want(t, e.types(domain.OrderStream(resting)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderExpired)
	if got := e.eng.Orders.OpenOrders("binance"); got != 0 {
		t.Fatalf("after reconcile: %d open orders, want 0", got)
	}
	e.reconcile() // checked once per process: nothing more
	want(t, e.types(domain.OrderStream(resting)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderExpired)
}

// TestTrailingStopsAsTheSDKDocuments drives the Gunbot SDK's own trailing
// stop examples through the paper exchange with a price path (domain.Trail
// defines the rule): a buy with price 50000 and stopPrice 49900 waits for
// the drop to 49900, trails 100 above the low and buys on the recovery; a
// sell with price 52500 and stopPrice 52550 waits for the rise to 52550,
// trails 50 below the high and sells on the decline.
func TestTrailingStopsAsTheSDKDocuments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "50000")
	trailing := func(side domain.Side, price, stop string) int64 {
		t.Helper()
		id, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: side, Kind: domain.KindTrailingStop,
			Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal(price), StopPrice: decimal.MustDecimal(stop)})
		if err != nil {
			t.Fatalf("%s trailing stop %s/%s: %v", side, price, stop, err)
		}
		return id
	}
	state := func(id int64) domain.Order {
		t.Helper()
		o, ok := e.eng.Orders.Order(id)
		if !ok {
			t.Fatalf("order %d not found", id)
		}
		return o
	}
	type step struct{ price, stop, extreme string }
	// walk moves the price along path, the order accepted with the stop and
	// extreme of each step, then to trigger, which fills it.
	walk := func(id int64, path []step, trigger string) {
		t.Helper()
		for _, p := range path {
			e.setPrice("USDT-BTC", p.price)
			e.tick("USDT-BTC")
			o := state(id)
			if o.State != domain.OrderStateAccepted || o.StopPrice != decimal.MustDecimal(p.stop) || o.Extreme != decimal.MustDecimal(p.extreme) {
				t.Fatalf("%s at %s: state %s stop %v extreme %v, want accepted, stop %s, extreme %s", o.Side, p.price, o.State, o.StopPrice, o.Extreme, p.stop, p.extreme)
			}
		}
		e.setPrice("USDT-BTC", trigger)
		e.tick("USDT-BTC")
		e.reconcile()
		want(t, e.types(domain.OrderStream(id)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeTrailingStopMoved,
			domain.TypeTrailingStopMoved, domain.TypeStopTriggered, domain.TypeOrderAccepted, domain.TypeOrderFilled)
		if o := state(id); o.State != domain.OrderStateFilled {
			t.Fatalf("%s: state %s, want filled", o.Side, o.State)
		}
	}
	buy := trailing(domain.Buy, "50000", "49900")
	walk(buy, []step{
		{"50000", "49900", "0"},     // waiting for the drop
		{"49950", "49900", "0"},     // still above the activation price
		{"49900", "50000", "49900"}, // armed: stop = low + 100
		{"49700", "49800", "49700"}, // the stop follows the low
		{"49750", "49800", "49700"}, // a bounce short of the stop
	}, "49800") // the recovery reaches the stop

	e.setPrice("USDT-BTC", "52500")
	sell := trailing(domain.Sell, "52500", "52550")
	walk(sell, []step{
		{"52500", "52550", "0"},     // waiting for the rise
		{"52600", "52550", "52600"}, // armed: stop = high − 50
		{"52700", "52650", "52700"}, // the stop follows the high
		{"52660", "52650", "52700"}, // a dip short of the stop
	}, "52640") // the decline passes the stop

	// Equal prices leave no trailing distance: refused, nothing written.
	head := e.head()
	_, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindTrailingStop,
		Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("50000"), StopPrice: decimal.MustDecimal("50000")})
	if domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), "stopPrice") || e.head() != head {
		t.Fatalf("equal prices: %v (head %d→%d), want EINVALID naming stopPrice, nothing appended", err, head, e.head())
	}
}

// TestCancelOcoByItsID: the id SubmitOCO answers cancels both legs; each
// leg stays cancellable by its own id; OpenOrderList shows the legs (with
// their OCO) until they finish.
func TestCancelOcoByItsID(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "60000")
	oco := func() int64 {
		t.Helper()
		id, err := e.tr.SubmitOCO(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Amount: decimal.MustDecimal("0.01"),
			Price: decimal.MustDecimal("62000"), StopPrice: decimal.MustDecimal("57000"), LimitPrice: decimal.MustDecimal("56900")})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := oco()
	stopLeg, limitLeg := first+1, first+2
	open := e.eng.Orders.OpenOrderList("binance", "USDT-BTC")
	if len(open) != 2 || open[0].ID != stopLeg || open[1].ID != limitLeg || open[0].OcoID != first || open[0].Type != domain.KindStopLimit ||
		open[1].Type != domain.KindLimit || open[1].Rate != decimal.Number(decimal.MustDecimal("62000")) || open[0].Rate != decimal.Number(decimal.MustDecimal("56900")) {
		t.Fatalf("open orders %+v, want the stop leg %d and the limit leg %d of OCO %d", open, stopLeg, limitLeg, first)
	}
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", first, "tester", ""); err != nil {
		t.Fatalf("cancel the OCO by its id: %v", err)
	}
	want(t, e.types(domain.OrderStream(limitLeg)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled)
	want(t, e.types(domain.OrderStream(stopLeg)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled)
	if got := e.eng.Orders.OpenOrderList("binance", ""); len(got) != 0 {
		t.Fatalf("open orders after the cancel: %+v, want none", got)
	}
	x, _ := e.sim.Exchange("binance")
	if onEx, _ := x.OpenOrders(ctx, "USDT-BTC"); len(onEx) != 0 {
		t.Fatalf("%d orders still open on the exchange, want 0", len(onEx))
	}
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", first, "tester", ""); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("cancel the finished OCO again: %v, want ECONFLICT", err)
	}
	if err := e.tr.Cancel(ctx, "binance", "USDT-ETH", first, "tester", ""); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("the OCO on another pair: %v, want ENOTFOUND", err)
	}

	// A leg by its own id: that leg alone.
	second := oco()
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", second+2, "tester", ""); err != nil {
		t.Fatal(err)
	}
	open = e.eng.Orders.OpenOrderList("binance", "USDT-BTC")
	if len(open) != 1 || open[0].ID != second+1 {
		t.Fatalf("after cancelling the limit leg: %+v, want the stop leg %d alone", open, second+1)
	}
	// After a restart the OCO is still found by its id.
	e.close()
	e.open()
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", second, "tester", ""); err != nil {
		t.Fatalf("cancel the OCO after a restart: %v", err)
	}
	want(t, e.types(domain.OrderStream(second+1)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled)
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", first, "tester", ""); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("the finished OCO after a restart: %v, want ECONFLICT", err)
	}
}

// The paper exchange keeps its state across a restart: balances moved by
// its fills and its resting orders come back from the log, so nothing
// expires, a resting order still fills and can be cancelled.
func TestPaperStateSurvivesRestart(t *testing.T) {
	e := newPaperEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "60000")
	if _, err := e.tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("0.02"), Actor: "tester"}); err != nil {
		t.Fatal(err)
	}
	rest, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.tr.Submit(ctx, limit(domain.Sell, "0.01", "70000"))
	if err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	x, _ := e.sim.Exchange("binance")
	before, _ := x.Balances(ctx)
	openBefore, _ := x.OpenOrders(ctx, "")

	e.close()
	e.sim = paper.NewSimulator(e.clock) // a new process
	e.open()
	e.setPrice("USDT-BTC", "60000")
	x, _ = e.sim.Exchange("binance")
	after, _ := x.Balances(ctx)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("balances after restart %v, want %v", after, before)
	}
	openAfter, _ := x.OpenOrders(ctx, "")
	if fmt.Sprint(openAfter) != fmt.Sprint(openBefore) || len(openAfter) != 2 {
		t.Fatalf("open orders after restart %+v, want %+v", openAfter, openBefore)
	}
	for i := 0; i < 4; i++ {
		e.reconcile()
		e.clock.Advance(time.Minute)
		e.setPrice("USDT-BTC", "60000")
	}
	want(t, e.types(domain.OrderStream(rest)), domain.TypeOrderRequested, domain.TypeOrderAccepted)
	if err := e.tr.Cancel(ctx, "binance", "USDT-BTC", other, "tester", ""); err != nil {
		t.Fatal(err)
	}
	e.setPrice("USDT-BTC", "49000") // crosses the restored buy
	e.reconcile()
	want(t, e.types(domain.OrderStream(rest)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled)
}

// After a restart, the first order does not go out before the exchange's
// open orders were looked up and its fills since the cursor recorded.
func TestFirstOrderAfterRestartWaitsForReconcile(t *testing.T) {
	e := newPaperEnv(t)
	ctx := context.Background()
	e.setPrice("USDT-BTC", "60000")
	rest, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "50000"))
	if err != nil {
		t.Fatal(err)
	}
	e.close()
	e.sim = paper.NewSimulator(e.clock)
	e.open()
	x, _ := e.sim.Account("binance")
	if err := x.FillOrder(e.clientID(rest), decimal.MustDecimal("0.01")); err != nil { // filled while we were down
		t.Fatal(err)
	}
	if _, err := e.tr.Submit(ctx, limit(domain.Buy, "0.01", "40000")); err != nil {
		t.Fatal(err)
	}
	want(t, e.types(domain.OrderStream(rest)), domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled)
}

// heldPlacement is a connector whose first PlaceOrder runs during before
// the exchange hears of the order: the placing request is then between its
// OrderRequested and the exchange's answer.
type heldPlacement struct {
	domain.Exchange
	once   *sync.Once
	during func()
}

func (h heldPlacement) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	h.once.Do(h.during)
	return h.Exchange.PlaceOrder(ctx, req)
}

// parkedContext reports when its holder first waits on it (Done): a retry
// waiting for the first request's answer.
type parkedContext struct {
	context.Context
	once   sync.Once
	parked chan struct{}
}

func (c *parkedContext) Done() <-chan struct{} {
	c.once.Do(func() { close(c.parked) })
	return c.Context.Done()
}

// A retry with the same Idempotency-Key that arrives while the first
// request is still placing waits for the first request's answer; it is
// never answered from the order's "requested" state (which says the
// exchange did not answer) while the exchange is still being asked.
func TestIdempotencyKeyRetryWaitsForThePlacement(t *testing.T) {
	e := newEnv(t)
	req := limit(domain.Buy, "0.01", "50000")
	req.IdempotencyKey = "key-in-flight"
	type answer struct {
		id  int64
		err error
	}
	retry := make(chan answer, 1)
	during := func() {
		ctx := &parkedContext{Context: context.Background(), parked: make(chan struct{})}
		go func() {
			id, err := e.tr.Submit(ctx, req)
			retry <- answer{id, err}
		}()
		select {
		case <-ctx.parked: // the retry waits for this placement
		case a := <-retry:
			retry <- a // answered while the exchange was still being asked
		}
	}
	once := &sync.Once{}
	e.eng.Desk.Exchange = func(name string) (domain.Exchange, error) {
		x, err := e.sim.Exchange(name)
		if err != nil {
			return nil, err
		}
		return heldPlacement{Exchange: x, once: once, during: during}, nil
	}
	id, err := e.tr.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a := <-retry; a.err != nil || a.id != id {
		t.Fatalf("retry during the placement: id %d err %v, want id %d and no error", a.id, a.err, id)
	}
	if n := e.openWith(e.clientID(id)); n != 1 {
		t.Fatalf("%d open orders with the client id, want 1", n)
	}
}
