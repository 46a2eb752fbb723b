// Package exchangetest is the conformance suite for domain.Exchange
// connectors: one table of cases every connector (the paper exchange, and
// real ones against a sandbox account) must pass. A connector's tests call
// Run with a function that opens a fresh account.
//
// Cases that need the market to move (resting orders filling, fills
// appearing) run only when the Harness can drive prices (SetPrice); real
// connectors skip them and say so.
//
// The failure cases (unknown outcomes, 5xx, rate limits, clock skew,
// partial fills, filters) need a way to inject the fault: a real
// connector's test drives its fixture server, the paper exchange its
// simulator (Faults). A case whose fault the harness cannot inject must be
// named in Harness.NotApplicable with the reason; otherwise it fails. No
// case is ever skipped silently.
//
// Run places every order through the engine's placement guard
// (engine.Guard), as the engine does. RunAccount (account.go) is the account
// suite: a connector's account, with what happened on it outside the
// service, synced by the engine's AccountSync over an SQLite log and
// reconciled to zero difference.
package exchangetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/engine"
)

// Harness is one freshly opened connector and what the suite needs to know
// about it.
type Harness struct {
	Exchange domain.Exchange
	// Pair is a listed pair the account can trade in both directions.
	Pair string
	// Amount is a small base quantity the account can afford to buy and
	// sell at market, and to rest as a limit order.
	Amount decimal.Decimal
	// SetPrice, if not nil, moves the pair's price at once (simulators).
	SetPrice func(pair string, price decimal.Decimal) error
	// Faults injects failures for the failure cases.
	Faults Faults
	// Placements, if not nil, counts the placement requests the exchange
	// has received (a fixture's count): FiltersAppliedBeforeSending then
	// also checks that a refused order sent none.
	Placements func() int
	// NotApplicable names the failure cases that do not apply to this
	// connector, with the reason (printed when the case skips).
	NotApplicable map[string]string
}

// LiveTestnet is NotApplicable for a connector run against an exchange's
// live testnet: every case that injects a fault, drives the counterparties
// or moves the clock.
func LiveTestnet() map[string]string {
	const noFaults = "faults cannot be injected into the live testnet"
	return map[string]string{
		"PlacementLostAfterPlacing":  noFaults,
		"PlacementLostBeforePlacing": noFaults,
		"ServerErrorOnPlacement":     noFaults,
		"PartialFillsAcrossPolls":    "the live testnet's counterparties cannot be driven",
		"RateLimitHonoured":          noFaults,
		"ClockSkewCorrected":         "the testnet's clock cannot be moved",
	}
}

// Faults are the failures a harness can inject. A nil field is a fault the
// harness cannot inject: every case that needs it must be listed in
// Harness.NotApplicable.
type Faults struct {
	// LoseNextPlacement makes the next PlaceOrder lose its answer (a
	// timeout or a dropped connection). With placed the exchange places
	// the order before the answer is lost; without, the request never
	// reaches the matching engine.
	LoseNextPlacement func(placed bool)
	// ServerError makes the next PlaceOrder answer a 5xx without placing
	// anything.
	ServerError func()
	// RateLimit makes the next request answer 429 with Retry-After.
	RateLimit func(retryAfter time.Duration)
	// Advance moves the connector's clock forward (Retry-After expiring).
	Advance func(d time.Duration)
	// ClockSkew makes the exchange's clock run d ahead of the connector's.
	ClockSkew func(d time.Duration)
	// Fill makes the exchange fill qty of the resting order with the
	// client order id, at its limit price.
	Fill func(clientOrderID string, qty decimal.Decimal) error
}

// OpenFunc opens a fresh account; the suite does not close it.
type OpenFunc func(t *testing.T) Harness

var seq atomic.Int64

// ClientID returns a client order id unique within the process.
func ClientID() string {
	return fmt.Sprintf("tltest%d%d", time.Now().UnixNano()%1_000_000, seq.Add(1))
}

// Run runs every conformance case against connectors from open, each as
// the engine uses it: behind the engine's placement guard (engine.Guard),
// which keeps placing one client order id twice from making two orders
// whatever the exchange accepts.
func Run(t *testing.T, open OpenFunc) {
	cases := []struct {
		name   string
		driven bool
		fn     func(t *testing.T, h Harness)
	}{
		{"PlacementLostAfterPlacing", false, testLostPlaced},
		{"PlacementLostBeforePlacing", false, testLostNotPlaced},
		{"ServerErrorOnPlacement", false, testServerError},
		{"DuplicateClientIDAfterFill", false, testDuplicateAfterFill},
		{"PartialFillsAcrossPolls", false, testPartialFills},
		{"CancelOfFilledOrder", false, testCancelFilled},
		{"RateLimitHonoured", false, testRateLimit},
		{"ClockSkewCorrected", false, testClockSkew},
		{"FiltersAppliedBeforeSending", false, testFilters},
		{"Markets", false, testMarkets},
		{"TickerAndBook", false, testTickerAndBook},
		{"Candles", false, testCandles},
		{"UnknownPairAndOrder", false, testUnknown},
		{"PlaceIsIdempotentPerClientID", false, testIdempotentPlace},
		{"RestingLimitAndCancel", false, testRestAndCancel},
		{"InsufficientFundsRefused", false, testInsufficientFunds},
		{"MarketOrderFills", false, testMarketFills},
		{"RestingLimitFillsWhenCrossed", true, testRestingFills},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := open(t)
			h.Exchange = engine.Guard(h.Exchange)
			if c.driven && h.SetPrice == nil {
				t.Skip("the connector cannot drive prices; this case runs against simulators only")
			}
			if reason, ok := h.NotApplicable[c.name]; ok {
				if reason == "" {
					t.Fatalf("%s is marked not applicable without a reason", c.name)
				}
				t.Skipf("not applicable to this connector: %s", reason)
			}
			c.fn(t, h)
		})
	}
}

func code(err error) string { return domain.ErrorCode(err) }

func testMarkets(t *testing.T, h Harness) {
	ms, err := h.Exchange.Markets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range ms {
		quote, base, err := domain.SplitPair(m.Pair)
		if err != nil || quote != m.Quote || base != m.Base {
			t.Fatalf("market %+v: pair does not match quote/base", m)
		}
		if m.Last.Sign() <= 0 || m.Low24h.Cmp(m.Last) > 0 || m.High24h.Cmp(m.Last) < 0 || m.Volume24h.Sign() < 0 {
			t.Fatalf("market %s: inconsistent 24h stats %+v", m.Pair, m)
		}
		found = found || m.Pair == h.Pair
	}
	if !found {
		t.Fatalf("pair %s not among the markets", h.Pair)
	}
}

func testTickerAndBook(t *testing.T, h Harness) {
	ctx := context.Background()
	tk, err := h.Exchange.Ticker(ctx, h.Pair)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Bid.Sign() <= 0 || tk.Bid.Cmp(tk.Ask) > 0 {
		t.Fatalf("ticker %+v: want 0 < bid ≤ ask", tk)
	}
	b, err := h.Exchange.OrderBook(ctx, h.Pair, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Bids) == 0 || len(b.Asks) == 0 || len(b.Bids) > 5 || len(b.Asks) > 5 {
		t.Fatalf("book with %d bids, %d asks: want 1..5 each", len(b.Bids), len(b.Asks))
	}
	for i := 1; i < len(b.Bids); i++ {
		if b.Bids[i].Price.Cmp(b.Bids[i-1].Price) >= 0 {
			t.Fatalf("bids not descending: %v", b.Bids)
		}
	}
	for i := 1; i < len(b.Asks); i++ {
		if b.Asks[i].Price.Cmp(b.Asks[i-1].Price) <= 0 {
			t.Fatalf("asks not ascending: %v", b.Asks)
		}
	}
	if b.Bids[0].Price.Cmp(b.Asks[0].Price) >= 0 {
		t.Fatalf("crossed book: best bid %v, best ask %v", b.Bids[0].Price, b.Asks[0].Price)
	}
}

func testCandles(t *testing.T, h Harness) {
	cs, err := h.Exchange.Candles(context.Background(), h.Pair, 5*time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 || len(cs) > 10 {
		t.Fatalf("%d candles, want 1..10", len(cs))
	}
	for i, c := range cs {
		if c.Low.Cmp(c.High) > 0 || c.Open.Cmp(c.High) > 0 || c.Close.Cmp(c.Low) < 0 {
			t.Fatalf("candle %d inconsistent: %+v", i, c)
		}
		if i > 0 && c.Time <= cs[i-1].Time {
			t.Fatalf("candles not oldest first at %d", i)
		}
	}
}

func testUnknown(t *testing.T, h Harness) {
	ctx := context.Background()
	if _, err := h.Exchange.Ticker(ctx, "NOPE-NOPE"); code(err) != domain.ENOTFOUND {
		t.Fatalf("ticker of unknown pair: err=%v, want ENOTFOUND", err)
	}
	if _, err := h.Exchange.Order(ctx, h.Pair, ClientID()); code(err) != domain.ENOTFOUND {
		t.Fatalf("unknown client id: err=%v, want ENOTFOUND", err)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, "no-such-order"); code(err) != domain.ENOTFOUND {
		t.Fatalf("cancel unknown: err=%v, want ENOTFOUND", err)
	}
	if _, err := h.Exchange.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: "NOPE-NOPE", Side: domain.Buy, Kind: domain.KindMarket, Amount: h.Amount}); code(err) != domain.ENOTFOUND {
		t.Fatalf("place on unknown pair: err=%v, want ENOTFOUND", err)
	}
}

// farLimit returns a limit request far from the market so that it rests.
func farLimit(t *testing.T, h Harness, side domain.Side) domain.PlaceOrderRequest {
	tk, err := h.Exchange.Ticker(context.Background(), h.Pair)
	if err != nil {
		t.Fatal(err)
	}
	price := tk.Bid.Mul(decimal.MustDecimal("0.8"))
	if side == domain.Sell {
		price = tk.Ask.Mul(decimal.MustDecimal("1.25"))
	}
	return domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: h.Pair, Side: side, Kind: domain.KindLimit, Amount: h.Amount, Price: price}
}

func testIdempotentPlace(t *testing.T, h Harness) {
	ctx := context.Background()
	req := farLimit(t, h, domain.Buy)
	a, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.ID != b.ID {
		t.Fatalf("second placement id %q, want the first %q", b.ID, a.ID)
	}
	open, err := h.Exchange.OpenOrders(ctx, h.Pair)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range open {
		if o.ClientOrderID == req.ClientOrderID {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d open orders with the client id, want 1", n)
	}
}

func testRestAndCancel(t *testing.T, h Harness) {
	ctx := context.Background()
	before := balances(t, h)
	req := farLimit(t, h, domain.Sell)
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != domain.StatusOpen || !o.Filled.IsZero() {
		t.Fatalf("far limit: %+v, want open and unfilled", o)
	}
	got, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID)
	if err != nil || got.ID != o.ID {
		t.Fatalf("Order by client id: %+v, %v", got, err)
	}
	_, base, _ := domain.SplitPair(h.Pair)
	during := balances(t, h)[base]
	if got, want := during.OnOrder.Sub(before[base].OnOrder), h.Amount; got != want {
		t.Fatalf("on order grew by %v, want %v", got, want)
	}
	c, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != domain.StatusCancelled {
		t.Fatalf("cancelled status %q", c.Status)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); code(err) != domain.ECONFLICT {
		t.Fatalf("cancel twice: err=%v, want ECONFLICT", err)
	}
	after := balances(t, h)[base]
	if after != before[base] {
		t.Fatalf("balance after cancel %+v, want %+v", after, before[base])
	}
}

func testInsufficientFunds(t *testing.T, h Harness) {
	ctx := context.Background()
	req := farLimit(t, h, domain.Sell)
	req.Amount = decimal.DecimalFromInt(1_000_000_000)
	_, err := h.Exchange.PlaceOrder(ctx, req)
	var de *domain.Error
	if code(err) != domain.EINVALID || !errors.As(err, &de) || de.Message == "" {
		t.Fatalf("oversized sell: err=%v, want EINVALID with a reason", err)
	}
	if _, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID); code(err) != domain.ENOTFOUND {
		t.Fatalf("a refused order must not exist: err=%v", err)
	}
}

func testMarketFills(t *testing.T, h Harness) {
	ctx := context.Background()
	fills, err := h.Exchange.FillsSince(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cursor uint64
	if n := len(fills); n > 0 {
		cursor = fills[n-1].Seq
	}
	req := domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: h.Pair, Side: domain.Buy, Kind: domain.KindMarket, Amount: h.Amount}
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != domain.StatusFilled || o.Filled != h.Amount {
		t.Fatalf("market buy: %+v, want filled %v", o, h.Amount)
	}
	fills, err = h.Exchange.FillsSince(ctx, cursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	var q decimal.Decimal
	for i, f := range fills {
		if f.Seq <= cursor || (i > 0 && f.Seq <= fills[i-1].Seq) {
			t.Fatalf("fill seqs not increasing past the cursor: %v", fills)
		}
		if f.ClientOrderID == req.ClientOrderID {
			q = q.Add(f.Quantity)
			if f.Fee.Sign() < 0 || f.FeeAsset == "" {
				t.Fatalf("fill without fee asset: %+v", f)
			}
		}
	}
	if q != h.Amount {
		t.Fatalf("fills sum to %v, want %v", q, h.Amount)
	}
	// Sell it back, so the account ends where it started (less fees).
	if _, err := h.Exchange.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: h.Pair, Side: domain.Sell, Kind: domain.KindMarket, Amount: h.Amount}); err != nil {
		t.Fatal(err)
	}
}

func testRestingFills(t *testing.T, h Harness) {
	ctx := context.Background()
	req := farLimit(t, h, domain.Buy)
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SetPrice(h.Pair, req.Price.Mul(decimal.MustDecimal("0.999"))); err != nil {
		t.Fatal(err)
	}
	got, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != o.ID || got.Status != domain.StatusFilled || got.Filled != h.Amount {
		t.Fatalf("after the price crossed: %+v, want filled", got)
	}
	fills, err := h.Exchange.FillsSince(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var q decimal.Decimal
	for _, f := range fills {
		if f.ClientOrderID == req.ClientOrderID {
			if f.Price != req.Price {
				t.Fatalf("resting fill at %v, want its limit %v", f.Price, req.Price)
			}
			q = q.Add(f.Quantity)
		}
	}
	if q != h.Amount {
		t.Fatalf("fills sum to %v, want %v", q, h.Amount)
	}
}

func balances(t *testing.T, h Harness) map[string]domain.AssetBalance {
	t.Helper()
	bs, err := h.Exchange.Balances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]domain.AssetBalance)
	for _, b := range bs {
		m[b.Asset] = b
	}
	return m
}
