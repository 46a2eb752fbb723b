package exchangetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// need fails the case when the harness cannot inject the fault it needs:
// a case that does not apply must be listed in Harness.NotApplicable.
func need(t *testing.T, ok bool, fault string) {
	t.Helper()
	if !ok {
		t.Fatalf("the harness cannot inject %s: provide Faults.%s or list this case in Harness.NotApplicable with the reason", fault, fault)
	}
}

// countOpen counts the open orders carrying a client id.
func countOpen(t *testing.T, h Harness, clientID string) int {
	t.Helper()
	open, err := h.Exchange.OpenOrders(context.Background(), h.Pair)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range open {
		if o.ClientOrderID == clientID {
			n++
		}
	}
	return n
}

// fillsOf sums the quantity of the fills after cursor that carry a client
// id, and returns the last Seq seen.
func fillsOf(t *testing.T, h Harness, cursor uint64, clientID string) (decimal.Decimal, uint64) {
	t.Helper()
	fills, err := h.Exchange.FillsSince(context.Background(), cursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	var q decimal.Decimal
	last := cursor
	for i, f := range fills {
		if f.Seq <= cursor || (i > 0 && f.Seq <= fills[i-1].Seq) {
			t.Fatalf("fill seqs not increasing past the cursor %d: %+v", cursor, fills)
		}
		if f.ClientOrderID == clientID {
			q = q.Add(f.Quantity)
		}
		last = f.Seq
	}
	return q, last
}

func cursorNow(t *testing.T, h Harness) uint64 {
	t.Helper()
	_, last := fillsOf(t, h, 0, "")
	return last
}

func wantUnknownOutcome(t *testing.T, err error, what string) {
	t.Helper()
	if code(err) != domain.EUNAVAILABLE {
		t.Fatalf("%s: err=%v, want EUNAVAILABLE (an unknown outcome)", what, err)
	}
}

// testLostPlaced: the order was placed but the answer was lost. The
// outcome is unknown (EUNAVAILABLE); a look-up by client id finds the
// order, and placing the same client id again does not double it.
func testLostPlaced(t *testing.T, h Harness) {
	need(t, h.Faults.LoseNextPlacement != nil, "LoseNextPlacement")
	ctx := context.Background()
	req := farLimit(t, h, domain.Buy)
	h.Faults.LoseNextPlacement(true)
	_, err := h.Exchange.PlaceOrder(ctx, req)
	wantUnknownOutcome(t, err, "placement whose answer was lost")
	o, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID)
	if err != nil || o.ID == "" || o.Status != domain.StatusOpen {
		t.Fatalf("look-up after the lost answer: %+v, %v; want the open order", o, err)
	}
	again, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil || again.ID != o.ID {
		t.Fatalf("placing the client id again: %+v, %v; want the same order %s", again, err, o.ID)
	}
	if n := countOpen(t, h, req.ClientOrderID); n != 1 {
		t.Fatalf("%d open orders with the client id, want 1", n)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); err != nil {
		t.Fatal(err)
	}
}

// testLostNotPlaced: the request was lost before the matching engine. The
// look-up says not found (definite), and a re-send places it once.
func testLostNotPlaced(t *testing.T, h Harness) {
	need(t, h.Faults.LoseNextPlacement != nil, "LoseNextPlacement")
	ctx := context.Background()
	req := farLimit(t, h, domain.Buy)
	h.Faults.LoseNextPlacement(false)
	_, err := h.Exchange.PlaceOrder(ctx, req)
	wantUnknownOutcome(t, err, "lost placement")
	if _, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID); code(err) != domain.ENOTFOUND {
		t.Fatalf("look-up of a lost placement: err=%v, want ENOTFOUND", err)
	}
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil || o.Status != domain.StatusOpen {
		t.Fatalf("re-send after a definite not-found: %+v, %v", o, err)
	}
	if n := countOpen(t, h, req.ClientOrderID); n != 1 {
		t.Fatalf("%d open orders with the client id, want 1", n)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); err != nil {
		t.Fatal(err)
	}
}

// testServerError: a 5xx is an unknown outcome too (Binance: "the
// execution status is UNKNOWN"), never a rejection.
func testServerError(t *testing.T, h Harness) {
	need(t, h.Faults.ServerError != nil, "ServerError")
	ctx := context.Background()
	req := farLimit(t, h, domain.Sell)
	h.Faults.ServerError()
	_, err := h.Exchange.PlaceOrder(ctx, req)
	wantUnknownOutcome(t, err, "placement answered 5xx")
	if _, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID); code(err) != domain.ENOTFOUND {
		t.Fatalf("look-up after the 5xx: err=%v, want ENOTFOUND", err)
	}
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); err != nil {
		t.Fatal(err)
	}
}

// testDuplicateAfterFill: a client id whose order already filled is not
// placed again (Binance itself would accept it once the order is closed).
func testDuplicateAfterFill(t *testing.T, h Harness) {
	ctx := context.Background()
	cursor := cursorNow(t, h)
	req := domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: h.Pair, Side: domain.Buy, Kind: domain.KindMarket, Amount: h.Amount}
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil || o.Status != domain.StatusFilled {
		t.Fatalf("market buy: %+v, %v", o, err)
	}
	_, base, _ := domain.SplitPair(h.Pair)
	before := balances(t, h)[base]
	again, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil || again.ID != o.ID || again.Status != domain.StatusFilled {
		t.Fatalf("same client id after the fill: %+v, %v; want the filled order %s", again, err, o.ID)
	}
	if q, _ := fillsOf(t, h, cursor, req.ClientOrderID); q != h.Amount {
		t.Fatalf("fills of the client id sum to %v, want %v (one order)", q, h.Amount)
	}
	if after := balances(t, h)[base]; after != before {
		t.Fatalf("balance moved on the duplicate: %+v → %+v", before, after)
	}
	if _, err := h.Exchange.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: h.Pair, Side: domain.Sell, Kind: domain.KindMarket, Amount: h.Amount}); err != nil {
		t.Fatal(err)
	}
}

// testPartialFills: a resting order filled in two parts shows each part
// once, in the poll after it happened, and the order's filled amount
// follows.
func testPartialFills(t *testing.T, h Harness) {
	need(t, h.Faults.Fill != nil, "Fill")
	ctx := context.Background()
	req := farLimit(t, h, domain.Buy)
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	cursor := cursorNow(t, h)
	half := trunc8(h.Amount.DivInt(2))
	if err := h.Faults.Fill(req.ClientOrderID, half); err != nil {
		t.Fatal(err)
	}
	got, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID)
	if err != nil || got.Status != domain.StatusOpen || got.Filled != half {
		t.Fatalf("after the first part: %+v, %v; want open with %v filled", got, err, half)
	}
	q, cursor2 := fillsOf(t, h, cursor, req.ClientOrderID)
	if q != half {
		t.Fatalf("first poll: fills sum to %v, want %v", q, half)
	}
	if q, _ := fillsOf(t, h, cursor2, req.ClientOrderID); !q.IsZero() {
		t.Fatalf("a poll past the cursor repeats %v of fills", q)
	}
	if err := h.Faults.Fill(req.ClientOrderID, h.Amount.Sub(half)); err != nil {
		t.Fatal(err)
	}
	if q, _ := fillsOf(t, h, cursor2, req.ClientOrderID); q != h.Amount.Sub(half) {
		t.Fatalf("second poll: fills sum to %v, want %v", q, h.Amount.Sub(half))
	}
	got, err = h.Exchange.Order(ctx, h.Pair, req.ClientOrderID)
	if err != nil || got.ID != o.ID || got.Status != domain.StatusFilled || got.Filled != h.Amount {
		t.Fatalf("after the second part: %+v, %v; want filled", got, err)
	}
	if n := countOpen(t, h, req.ClientOrderID); n != 0 {
		t.Fatalf("a filled order is still listed open")
	}
}

// testCancelFilled: cancelling a filled order is ECONFLICT, and the order
// stays filled.
func testCancelFilled(t *testing.T, h Harness) {
	ctx := context.Background()
	req := domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: h.Pair, Side: domain.Buy, Kind: domain.KindMarket, Amount: h.Amount}
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil || o.Status != domain.StatusFilled {
		t.Fatalf("market buy: %+v, %v", o, err)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); code(err) != domain.ECONFLICT {
		t.Fatalf("cancel of a filled order: err=%v, want ECONFLICT", err)
	}
	got, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID)
	if err != nil || got.Status != domain.StatusFilled {
		t.Fatalf("after the refused cancel: %+v, %v; want filled", got, err)
	}
	if _, err := h.Exchange.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: ClientID(), Pair: h.Pair, Side: domain.Sell, Kind: domain.KindMarket, Amount: h.Amount}); err != nil {
		t.Fatal(err)
	}
}

// testRateLimit: a 429 with Retry-After is EUNAVAILABLE naming the rate
// limit, and the connector sends nothing until Retry-After has passed.
func testRateLimit(t *testing.T, h Harness) {
	need(t, h.Faults.RateLimit != nil, "RateLimit")
	need(t, h.Faults.Advance != nil, "Advance")
	ctx := context.Background()
	h.Faults.RateLimit(30 * time.Second)
	_, err := h.Exchange.Balances(ctx)
	if code(err) != domain.EUNAVAILABLE || !strings.Contains(domain.ErrorMessage(err), "rate limit") {
		t.Fatalf("answered 429: err=%v, want EUNAVAILABLE naming the rate limit", err)
	}
	// The exchange would answer now; the connector must still wait.
	if _, err := h.Exchange.Balances(ctx); code(err) != domain.EUNAVAILABLE || !strings.Contains(domain.ErrorMessage(err), "retry") {
		t.Fatalf("within Retry-After: err=%v, want EUNAVAILABLE saying when to retry", err)
	}
	h.Faults.Advance(31 * time.Second)
	if _, err := h.Exchange.Balances(ctx); err != nil {
		t.Fatalf("after Retry-After: %v", err)
	}
}

// testClockSkew: the exchange's clock runs ahead of ours; signed requests
// still pass (the connector measures the offset and applies it).
func testClockSkew(t *testing.T, h Harness) {
	need(t, h.Faults.ClockSkew != nil, "ClockSkew")
	ctx := context.Background()
	// A signed call first, so that a connector that measured the offset at
	// its start must notice the change.
	if _, err := h.Exchange.Balances(ctx); err != nil {
		t.Fatal(err)
	}
	h.Faults.ClockSkew(30 * time.Second)
	if _, err := h.Exchange.Balances(ctx); err != nil {
		t.Fatalf("balances with the exchange 30s ahead: %v", err)
	}
	req := farLimit(t, h, domain.Buy)
	o, err := h.Exchange.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatalf("placement with the exchange 30s ahead: %v", err)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); err != nil {
		t.Fatal(err)
	}
}

// testFilters: the pair's filters are published; a price off the tick and
// an amount off the step are rounded (never to a worse price: buys down,
// sells up; amounts down); an order below the minimum quantity or notional
// is refused with EINVALID naming the filter, and nothing reaches the
// exchange.
func testFilters(t *testing.T, h Harness) {
	ctx := context.Background()
	ms, err := h.Exchange.Markets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var f domain.MarketFilters
	for _, m := range ms {
		if m.Pair == h.Pair {
			f = m.Filters
		}
	}
	if f.TickSize.Cmp(satoshi) <= 0 || f.StepSize.Cmp(satoshi) <= 0 || f.MinQty.Sign() <= 0 || f.MinNotional.Sign() <= 0 {
		t.Fatalf("filters of %s: %+v; want tick and step above 1e-8, a minimum quantity and notional (or list this case as not applicable)", h.Pair, f)
	}
	refused := func(req domain.PlaceOrderRequest, filter string) {
		t.Helper()
		sent := 0
		if h.Placements != nil {
			sent = h.Placements()
		}
		_, err := h.Exchange.PlaceOrder(ctx, req)
		if code(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), filter) {
			t.Fatalf("%+v: err=%v, want EINVALID naming %s", req, err, filter)
		}
		if h.Placements != nil && h.Placements() != sent {
			t.Fatalf("%+v: refused, but %d placements reached the exchange", req, h.Placements()-sent)
		}
		if _, err := h.Exchange.Order(ctx, h.Pair, req.ClientOrderID); code(err) != domain.ENOTFOUND {
			t.Fatalf("a refused order reached the exchange: err=%v", err)
		}
	}
	small := farLimit(t, h, domain.Buy)
	small.Amount = f.MinQty.Sub(f.StepSize)
	if small.Amount.Sign() <= 0 {
		small.Amount = trunc8(f.MinQty.DivInt(2))
	}
	refused(small, "quantity")
	tiny := farLimit(t, h, domain.Buy)
	tiny.Amount = f.MinQty
	tiny.Price = floorTo(trunc8(f.MinNotional.Div(f.MinQty).DivInt(2)), f.TickSize)
	if tiny.Price.Sign() > 0 {
		refused(tiny, "notional")
	}

	buy := farLimit(t, h, domain.Buy)
	buy.Price = floorTo(buy.Price, f.TickSize).Add(trunc8(f.TickSize.DivInt(3)))
	buy.Amount = h.Amount.Add(trunc8(f.StepSize.DivInt(3)))
	o, err := h.Exchange.PlaceOrder(ctx, buy)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Price.Rem(f.TickSize).IsZero() || o.Price.Cmp(buy.Price) > 0 || buy.Price.Sub(o.Price).Cmp(f.TickSize) >= 0 {
		t.Fatalf("buy at %v placed at %v: want rounded down to the tick %v", buy.Price, o.Price, f.TickSize)
	}
	if o.Amount != h.Amount {
		t.Fatalf("amount %v placed as %v: want rounded down to the step (%v)", buy.Amount, o.Amount, h.Amount)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); err != nil {
		t.Fatal(err)
	}
	sell := farLimit(t, h, domain.Sell)
	sell.Price = floorTo(sell.Price, f.TickSize).Add(trunc8(f.TickSize.DivInt(3)))
	o, err = h.Exchange.PlaceOrder(ctx, sell)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Price.Rem(f.TickSize).IsZero() || o.Price.Cmp(sell.Price) < 0 || o.Price.Sub(sell.Price).Cmp(f.TickSize) >= 0 {
		t.Fatalf("sell at %v placed at %v: want rounded up to the tick %v", sell.Price, o.Price, f.TickSize)
	}
	if _, err := h.Exchange.CancelOrder(ctx, h.Pair, o.ID); err != nil {
		t.Fatal(err)
	}
}

// satoshi is 10^-8, the finest step the fixtures' markets quote.
var satoshi = decimal.NewDecimal(1, -8)

// floorTo rounds v (≥ 0) down to a multiple of step.
func floorTo(v, step decimal.Decimal) decimal.Decimal { return v.Sub(v.Rem(step)) }

// trunc8 cuts v (≥ 0) to 8 decimals.
func trunc8(v decimal.Decimal) decimal.Decimal { return floorTo(v, satoshi) }
