package paper_test

import (
	"context"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/paper"
)

func feeAccount(t *testing.T, set paper.ExchangeSettings) (*paper.Simulator, *paper.Account) {
	t.Helper()
	sim := paper.NewSimulator(domain.NewManualClock(start))
	sim.Settings = func(string) (paper.ExchangeSettings, bool) { return set, true }
	x, err := sim.Account("binance")
	if err != nil {
		t.Fatal(err)
	}
	return sim, x
}

func balancesOf(t *testing.T, x *paper.Account) map[string]decimal.Decimal {
	t.Helper()
	bs, err := x.Balances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]decimal.Decimal{}
	for _, b := range bs {
		m[b.Asset] = b.Available.Add(b.OnOrder)
	}
	return m
}

// restingFill rests a limit order at price and moves the market through it:
// one fill at price.
func restingFill(t *testing.T, x *paper.Account, id string, side domain.Side, qty, price, through string) domain.Fill {
	t.Helper()
	ctx := context.Background()
	if _, err := x.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: id, Pair: "USDT-BTC", Side: side, Kind: domain.KindLimit,
		Amount: decimal.MustDecimal(qty), Price: decimal.MustDecimal(price)}); err != nil {
		t.Fatal(err)
	}
	if err := x.SetPrice("USDT-BTC", decimal.MustDecimal(through)); err != nil {
		t.Fatal(err)
	}
	fills, _ := x.FillsSince(ctx, 0, 0)
	f := fills[len(fills)-1]
	if f.ClientOrderID != id || f.Quantity != decimal.MustDecimal(qty) {
		t.Fatalf("fill %+v, want all of %s", f, id)
	}
	return f
}

// FeeAsset "received": a buy pays its fee in the base it receives (as
// Binance without BNB), a sell in the quote; selling all that the buy
// received leaves the base balance where it started (no dust).
//
//	buy 0.01 @ 50000: notional 500, fee 0.01 × 0.001 = 0.00001 BTC; BTC +0.00999, USDT −500
//	sell 0.00999 @ 51000: notional 509.49, fee 0.50949 USDT; BTC −0.00999, USDT +508.98051
func TestFeeInReceivedAsset(t *testing.T) {
	_, x := feeAccount(t, paper.ExchangeSettings{FeeAsset: paper.FeeInReceived})
	if err := x.SetPrice("USDT-BTC", decimal.MustDecimal("50001")); err != nil {
		t.Fatal(err)
	}
	before := balancesOf(t, x)
	f := restingFill(t, x, "b", domain.Buy, "0.01", "50000", "49990")
	if f.FeeAsset != "BTC" || f.Fee != decimal.MustDecimal("0.00001") {
		t.Fatalf("buy fee %s %s, want 0.00001 BTC", f.Fee, f.FeeAsset)
	}
	mid := balancesOf(t, x)
	if got := mid["BTC"].Sub(before["BTC"]); got != decimal.MustDecimal("0.00999") {
		t.Errorf("BTC after the buy +%s, want +0.00999", got)
	}
	if got := before["USDT"].Sub(mid["USDT"]); got != decimal.MustDecimal("500") {
		t.Errorf("USDT after the buy −%s, want −500", got)
	}
	f = restingFill(t, x, "s", domain.Sell, "0.00999", "51000", "51010")
	if f.FeeAsset != "USDT" || f.Fee != decimal.MustDecimal("0.50949") {
		t.Fatalf("sell fee %s %s, want 0.50949 USDT", f.Fee, f.FeeAsset)
	}
	after := balancesOf(t, x)
	if after["BTC"] != before["BTC"] {
		t.Errorf("BTC after selling all that was received = %s, want %s (no dust)", after["BTC"], before["BTC"])
	}
	if got := after["USDT"].Sub(before["USDT"]); got != decimal.MustDecimal("8.98051") {
		t.Errorf("USDT over the round trip %s, want 8.98051 (508.98051 − 500)", got)
	}
}

// FeeAsset "BNB": the fee's value in BNB at the simulated USDT-BNB price,
// from the BNB balance (10 to start); with too little BNB, in the quote.
//
//	buy 0.01 @ 50000 with BNB at 500: fee 500 × 0.001 ÷ 500 = 0.001 BNB; USDT −500, BTC +0.01
func TestFeeInBNB(t *testing.T) {
	_, x := feeAccount(t, paper.ExchangeSettings{FeeAsset: "BNB"})
	ms, _ := x.Markets(context.Background())
	listed := false
	for _, m := range ms {
		listed = listed || m.Pair == "USDT-BNB"
	}
	if !listed {
		t.Fatalf("markets %v: want USDT-BNB added for the fee asset", ms)
	}
	if err := x.SetPrice("USDT-BNB", decimal.MustDecimal("500")); err != nil {
		t.Fatal(err)
	}
	if err := x.SetPrice("USDT-BTC", decimal.MustDecimal("50001")); err != nil {
		t.Fatal(err)
	}
	before := balancesOf(t, x)
	if before["BNB"] != paper.DefaultFeeAssetBalance {
		t.Fatalf("BNB to start %s, want %s", before["BNB"], paper.DefaultFeeAssetBalance)
	}
	f := restingFill(t, x, "b", domain.Buy, "0.01", "50000", "49990")
	if f.FeeAsset != "BNB" || f.Fee != decimal.MustDecimal("0.001") {
		t.Fatalf("fee %s %s, want 0.001 BNB", f.Fee, f.FeeAsset)
	}
	after := balancesOf(t, x)
	if before["BNB"].Sub(after["BNB"]) != decimal.MustDecimal("0.001") || before["USDT"].Sub(after["USDT"]) != decimal.MustDecimal("500") ||
		after["BTC"].Sub(before["BTC"]) != decimal.MustDecimal("0.01") {
		t.Errorf("balances %v → %v: want BNB −0.001, USDT −500, BTC +0.01", before, after)
	}

	// Without BNB the fee is in the quote.
	_, y := feeAccount(t, paper.ExchangeSettings{FeeAsset: "BNB", Balances: map[string]decimal.Decimal{"USDT": decimal.MustDecimal("1000"), "BNB": decimal.Zero}})
	if err := y.SetPrice("USDT-BTC", decimal.MustDecimal("50001")); err != nil {
		t.Fatal(err)
	}
	if f := restingFill(t, y, "b", domain.Buy, "0.01", "50000", "49990"); f.FeeAsset != "USDT" || f.Fee != decimal.MustDecimal("0.5") {
		t.Errorf("fee without BNB %s %s, want 0.5 USDT", f.Fee, f.FeeAsset)
	}
}

// A restart rebuilds the balances from the log's paper fills, fees in the
// base and in BNB included.
func TestRestoreFeesInOtherAssets(t *testing.T) {
	clock := domain.NewManualClock(start)
	sim := paper.NewSimulator(clock)
	sim.Settings = func(string) (paper.ExchangeSettings, bool) { return paper.ExchangeSettings{FeeAsset: "BNB"}, true }
	apply := func(stream string, version int64, typ string, data any) {
		t.Helper()
		e := domain.NewEvent(clock, typ, data)
		e.Stream, e.Version = stream, version
		if err := sim.Apply(&e); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range []domain.OrderFilled{
		{FillID: "binance-1", Seq: 1, Price: decimal.MustDecimal("50000"), Quantity: decimal.MustDecimal("0.01"), Fee: decimal.MustDecimal("0.00001"), FeeAsset: "BTC"},
		{FillID: "binance-2", Seq: 2, Price: decimal.MustDecimal("50000"), Quantity: decimal.MustDecimal("0.01"), Fee: decimal.MustDecimal("0.001"), FeeAsset: "BNB"},
	} {
		id := int64(i + 1)
		stream := domain.OrderStream(id)
		apply(stream, 0, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "USDT-BTC",
			Side: domain.Buy, Kind: domain.KindLimit, Amount: f.Quantity, Price: f.Price, ClientOrderID: "c" + f.FillID})
		apply(stream, 1, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: f.FillID})
		apply(stream, 2, domain.TypeOrderFilled, f)
	}
	x, err := sim.Account("binance")
	if err != nil {
		t.Fatal(err)
	}
	b := balancesOf(t, x)
	// BTC 0.5 + 0.00999 + 0.01; USDT 10000 − 500 − 500; BNB 10 − 0.001
	if b["BTC"] != decimal.MustDecimal("0.51999") || b["USDT"] != decimal.MustDecimal("9000") || b["BNB"] != decimal.MustDecimal("9.999") {
		t.Errorf("restored balances %v, want BTC 0.51999, USDT 9000, BNB 9.999", b)
	}
}
