package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/binance/fixture"
)

// records returns key's order records, newest first, as orders answers.
func (e *tradingE2E) records(key string) []map[string]any {
	e.t.Helper()
	status, out := e.get("orders?key=" + url.QueryEscape(key))
	if status != 200 {
		e.t.Fatalf("orders = %d %v", status, out)
	}
	var recs []map[string]any
	for _, r := range out["data"].([]any) {
		recs = append(recs, r.(map[string]any))
	}
	return recs
}

// total returns pnl/total of key.
func (e *tradingE2E) total(key string) map[string]any {
	e.t.Helper()
	status, out := e.get("pnl/total?key=" + url.QueryEscape(key))
	if status != 200 {
		e.t.Fatalf("pnl/total = %d %v", status, out)
	}
	return out
}

func decOf(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	s := fmt.Sprint(v)
	if f, ok := v.(float64); ok {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	d, err := decimal.ParseDecimal(s)
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return d
}

// TestBaseFeeAgreesWithBinanceBalances: on Binance without BNB a buy's fee
// is taken from the coins bought. The Ledger's balance and inventory hold
// what the account received, as the exchange reports it; selling that all
// leaves nothing on either side (no phantom dust).
//
//	market buy 0.01 BTC at the ask 60001: fee 0.01 × 0.001 = 0.00001 BTC → received 0.00999
//	market sell 0.00999 at the bid 60000
func TestBaseFeeAgreesWithBinanceBalances(t *testing.T) {
	fx := fixture.New("e2e-key", "e2e-secret")
	defer fx.Close()
	fx.FeeInReceived = true
	e := startBinanceE2E(t, fx, filepath.Join(t.TempDir(), "data"))
	e.goLive()
	e.startManualPair("binance", "USDT-BTC")
	e.cycle()
	const key = "binance/USDT-BTC"
	btc0, _ := fx.Balance("BTC")
	e.order("trade/buy/market", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01})
	e.cycle()
	btc1, _ := fx.Balance("BTC")
	if got := btc1.Sub(btc0); got != decimal.MustDecimal("0.00999") {
		t.Fatalf("Binance BTC after the buy +%s, want +0.00999", got)
	}
	recs := e.records(key)
	if len(recs) != 1 || recs[0]["feeAsset"] != "BTC" || decOf(t, recs[0]["feeAmount"]) != decimal.MustDecimal("0.00001") ||
		decOf(t, recs[0]["balance"]) != btc1.Sub(btc0) {
		t.Fatalf("buy record %v: want feeAsset BTC, feeAmount 0.00001, balance 0.00999 (as Binance)", recs)
	}
	tot := e.total(key)
	held := decOf(t, tot["balance"])
	if held != btc1.Sub(btc0) {
		t.Fatalf("ledger balance %s, Binance received %s", held, btc1.Sub(btc0))
	}
	// Sell all the ledger holds.
	e.order("trade/sell/market", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": held.Float64()})
	e.cycle()
	btc2, _ := fx.Balance("BTC")
	tot = e.total(key)
	if btc2 != btc0 || !decOf(t, tot["balance"]).IsZero() || !decOf(t, tot["inventory_cost"]).IsZero() || !decOf(t, tot["ABP"]).IsZero() {
		t.Fatalf("after selling all: Binance BTC %s (start %s), ledger balance %v inventory_cost %v ABP %v; want the start and zeros",
			btc2, btc0, tot["balance"], tot["inventory_cost"], tot["ABP"])
	}
}

// TestPaperFeesInBNB: a simulated exchange configured with feeAsset BNB
// charges its fees in BNB at the simulated BNB price; the core records
// BNB's rate as it cycles, so the fill's fee is valued at the rate of its
// time, and the paper balances, the record and pnl/total agree.
//
//	BNB = 500 USDT; market buy 0.01 BTC at p: fee 0.01 × p × 0.001 ÷ 500 BNB, worth 0.01 × p × 0.001 USDT
func TestPaperFeesInBNB(t *testing.T) {
	e := startTradingE2E(t)
	status, cur := e.get("config/full")
	if status != 200 {
		t.Fatalf("config = %d %v", status, cur)
	}
	cfg := cur["config"].(map[string]any)
	exchanges, _ := cfg["exchanges"].(map[string]any)
	if exchanges == nil {
		exchanges = map[string]any{}
		cfg["exchanges"] = exchanges
	}
	entry, _ := exchanges["binance"].(map[string]any)
	if entry == nil {
		entry = map[string]any{}
		exchanges["binance"] = entry
	}
	entry["simulator"] = map[string]any{"feeAsset": "BNB", "feeAssetPrice": 500}
	if status, out := e.post("config/update", map[string]any{"data": cfg}, ""); status != 200 {
		t.Fatalf("config/update = %d %v", status, out)
	}
	e.startManualPair("binance", "USDT-BTC")
	if err := e.m.Simulator.SetPrice("binance", "USDT-BNB", decimal.MustDecimal("500")); err != nil {
		t.Fatal(err)
	}
	e.cycle("60000") // records USDT-BTC's rate and BNB's
	x, err := e.m.Simulator.Account("binance")
	if err != nil {
		t.Fatal(err)
	}
	bnb := func() decimal.Decimal {
		bs, _ := x.Balances(t.Context())
		for _, b := range bs {
			if b.Asset == "BNB" {
				return b.Available.Add(b.OnOrder)
			}
		}
		return decimal.Zero
	}
	bnb0 := bnb()
	e.order("trade/buy/market", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01})
	e.cycle("60000")
	recs := e.records("binance/USDT-BTC")
	if len(recs) == 0 {
		t.Fatal("no record of the buy")
	}
	r := recs[len(recs)-1]
	cost := decOf(t, r["cost"])
	wantQuote := cost.Mul(decimal.MustDecimal("0.001"))
	wantBNB := wantQuote.Div(decimal.MustDecimal("500"))
	if r["feeAsset"] != "BNB" || decOf(t, r["feeAmount"]) != wantBNB || decOf(t, r["feeQuote"]) != wantQuote ||
		decOf(t, r["fees"]) != wantQuote || decOf(t, r["feeRate"]) != decimal.MustDecimal("500") {
		t.Fatalf("record %v: want %s BNB valued %s USDT at 500", r, wantBNB, wantQuote)
	}
	if _, ok := r["unconvertedFees"]; ok {
		t.Fatalf("record %v lists an unconverted fee: the core's BNB rate was not found", r)
	}
	if got := bnb0.Sub(bnb()); got != wantBNB {
		t.Fatalf("paper BNB balance −%s, want −%s", got, wantBNB)
	}
	if tot := e.total("binance/USDT-BTC"); decOf(t, tot["fees"]) != wantQuote || tot["unconvertedFees"] != nil {
		t.Fatalf("pnl/total %v: want fees %s, nothing unconverted", tot, wantQuote)
	}
}
