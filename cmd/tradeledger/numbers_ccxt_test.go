//go:build ccxt

package main

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/ccxt/krakenfixture"
)

// startKrakenE2E runs serve live on a Kraken fixture through the ccxt connector
// (exchange "kraken", connector ccxt), its pair cycling.
func startKrakenE2E(t *testing.T, fx *krakenfixture.Server, secret, pair string) *tradingE2E {
	t.Helper()
	e := startConnectorE2E(t, map[string]string{"ccxt": fx.URL}, filepath.Join(t.TempDir(), "data"))
	e.goLiveOn("kraken", map[string]any{"connector": "ccxt", "key": fx.Key, "secret": secret, "isEncrypted": false})
	e.startManualPair("kraken", pair)
	e.cycleOnce()
	return e
}

// TestCCXTSubCentFillExact: the same BABYDOGE position as on Binance,
// through the ccxt connector and the Kraken fixture (a market listed with
// 10 price decimals and whole-unit volumes): the order goes out with the
// exact decimal text (not ccxt's float), the fills are read from the
// exchange's own text, and the records, balances and PNL are exact. (The
// float path rounded every number to 8 decimals: the price became 0.)
func TestCCXTSubCentFillExact(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString([]byte("cmd-kraken-secret"))
	fx := krakenfixture.NewMarket("cmd-key", secret, krakenfixture.Market{ID: "BABYDOGEUSDT", WSName: "BABYDOGE/USDT",
		Base: "BABYDOGE", BaseAlt: "BABYDOGE", Quote: "USDT", Bid: domain.MustDecimal("0.0000000011"), Ask: domain.MustDecimal("0.0000000012"),
		PairDecimals: 10, LotDecimals: 0, OrderMin: domain.MustDecimal("1"), CostMin: domain.MustDecimal("0.5"),
		Balances: map[string]domain.Decimal{"USDT": domain.MustDecimal("100000")}})
	defer fx.Close()
	e := startKrakenE2E(t, fx, secret, "USDT-BABYDOGE")
	buy := e.order("trade/buy", map[string]any{"exch": "kraken", "pair": "USDT-BABYDOGE", "amt": 1000000000000, "price": 0.0000000012})
	bo, _ := e.m.Engine.Orders.Order(buy)
	if err := fx.Fill(bo.ClientOrderID, domain.MustDecimal("1000000000000")); err != nil {
		t.Fatal(err)
	}
	e.cycleOnce()
	sell := e.order("trade/sell", map[string]any{"exch": "kraken", "pair": "USDT-BABYDOGE", "amt": 500000000000, "price": 0.0000000013})
	so, _ := e.m.Engine.Orders.Order(sell)
	if err := fx.Fill(so.ClientOrderID, domain.MustDecimal("500000000000")); err != nil {
		t.Fatal(err)
	}
	e.cycleOnce()

	recs := e.m.models.ledger.Orders("kraken/USDT-BABYDOGE")
	if len(recs) != 2 {
		t.Fatalf("records %+v, want the buy and the sell", recs)
	}
	s, b := recs[0], recs[1]
	d := domain.MustDecimal
	sameDecimals(t, []namedDecimal{
		{"buy amount", b.Amount, d("1000000000000")},
		{"buy rate", b.Rate, d("0.0000000012")},
		{"buy cost", b.Cost, d("1200")},
		{"buy fee (0.26%)", b.Fees, d("3.12")},
		{"sell amount", s.Amount, d("500000000000")},
		{"sell rate", s.Rate, d("0.0000000013")},
		{"sell fee", s.Fees, d("1.69")},
		// 650 − 1.69 − half the lot's 1203.12
		{"sell pnl", s.Pnl, d("46.75")},
		{"sell balance", s.Balance, d("500000000000")},
	})
	sum, err := e.m.models.ledger.Sum(domain.PnlScope{Keys: []string{"kraken/USDT-BABYDOGE"}}, 0, 0)
	if err != nil || sum.Pnl != d("46.75") {
		t.Fatalf("pnl sum %+v %v, want 46.75", sum, err)
	}
	found := false
	for _, ob := range e.m.Engine.Trader.Balances() {
		for _, ab := range ob.Balances {
			if ab.Asset == "BABYDOGE" {
				found = ab.Available == d("500000000000")
			}
		}
	}
	if !found {
		t.Fatalf("balances %+v, want 500000000000 BABYDOGE", e.m.Engine.Trader.Balances())
	}
}

// TestCCXTNumberTooWideNeedsAttention: a Kraken trade whose volume has 13
// decimals is never recorded (as 0 or rounded): OrderNeedsAttention, the
// pair paused (409), /healthz degraded.
func TestCCXTNumberTooWideNeedsAttention(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString([]byte("cmd-kraken-secret"))
	fx := krakenfixture.New("cmd-key", secret)
	defer fx.Close()
	e := startKrakenE2E(t, fx, secret, "USDT-BTC")
	id := e.order("trade/buy", map[string]any{"exch": "kraken", "pair": "USDT-BTC", "amt": 0.01, "price": 20000})
	o, _ := e.m.Engine.Orders.Order(id)
	fx.TradeText("vol", "0.0100000000001")
	if err := fx.Fill(o.ClientOrderID, domain.MustDecimal("0.01")); err != nil {
		t.Fatal(err)
	}
	e.cycleOnce()
	var types []string
	for _, ev := range e.orderEvents() {
		if s, typ, _ := strings.Cut(ev, " "); s == domain.OrderStream(id) {
			types = append(types, typ)
		}
	}
	if got := strings.Join(types, ","); !strings.HasSuffix(got, "OrderNeedsAttention") || strings.Contains(got, "OrderFilled") {
		t.Fatalf("order events %s, want the fill as OrderNeedsAttention", got)
	}
	if recs := e.m.models.ledger.Orders("kraken/USDT-BTC"); len(recs) != 0 {
		t.Fatalf("records %+v, want none", recs)
	}
	status, out := e.post("trade/buy", map[string]any{"data": map[string]any{"exch": "kraken", "pair": "USDT-BTC", "amt": 0.01, "price": 20000}}, "")
	if status != 409 || !strings.Contains(fmt.Sprint(out["message"]), "0.0100000000001") {
		t.Fatalf("new order on the paused pair = %d %v", status, out)
	}
}
