package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/binance/fixture"
)

// babydoge is a sub-cent token as Binance-like exchanges list it: prices
// with 10 decimals, whole-unit quantities.
var babydoge = fixture.Symbol{Name: "BABYDOGEUSDT", Base: "BABYDOGE", Quote: "USDT",
	Bid: domain.MustDecimal("0.0000000011"), Ask: domain.MustDecimal("0.0000000012"),
	Tick: domain.MustDecimal("0.0000000001"), Step: domain.MustDecimal("1"), MinQty: domain.MustDecimal("1"), Min: domain.MustDecimal("1")}

// namedDecimal is a figure, its value and the value it must have.
type namedDecimal struct {
	name      string
	got, want domain.Decimal
}

// sameDecimals reports every figure that is not exactly what it must be.
func sameDecimals(t *testing.T, figures []namedDecimal) {
	t.Helper()
	for _, c := range figures {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
}

// cycleOnce moves the clock past the pair's delay and runs one core cycle
// of the one pair cycling.
func (e *tradingE2E) cycleOnce() {
	e.t.Helper()
	e.clock.Advance(time.Second)
	if n := e.m.Engine.Scheduler.Cycle(context.Background()); n != 1 {
		e.t.Fatalf("cycled %d pairs, want 1", n)
	}
}

// startNumbersE2E runs serve live on the Binance fixture with pair cycling.
func startNumbersE2E(t *testing.T, fx *fixture.Server, pair string) *binanceE2E {
	t.Helper()
	e := startBinanceE2E(t, fx, filepath.Join(t.TempDir(), "data"))
	e.goLive()
	e.startManualPair("binance", pair)
	e.cycle()
	return e
}

// TestBinanceSubCentFillExact: 1,000,000,000,000 BABYDOGE bought at
// 0.0000000012 USDT (a 1,200 USDT position), half sold at 0.0000000013,
// through HTTP, the Binance connector and its fixture, the engine and the
// projections: the order records, the balances and the PNL hold every digit.
// (The 8-decimal type could hold neither the quantity nor the price: the
// connector read them as 0.)
func TestBinanceSubCentFillExact(t *testing.T) {
	fx := fixture.New("e2e-key", "e2e-secret")
	defer fx.Close()
	fx.AddSymbol(babydoge)
	e := startNumbersE2E(t, fx, "USDT-BABYDOGE")
	// At the ask: the fixture fills it at once.
	e.order("trade/buy", map[string]any{"exch": "binance", "pair": "USDT-BABYDOGE", "amt": 1000000000000, "price": 0.0000000012})
	e.cycle()
	sell := e.order("trade/sell", map[string]any{"exch": "binance", "pair": "USDT-BABYDOGE", "amt": 500000000000, "price": 0.0000000013})
	so, _ := e.m.Engine.Orders.Order(sell)
	if err := fx.Fill(so.ClientOrderID, domain.MustDecimal("500000000000")); err != nil {
		t.Fatal(err)
	}
	e.cycle()

	recs := e.m.models.ledger.Orders("binance/USDT-BABYDOGE")
	if len(recs) != 2 {
		t.Fatalf("records %+v, want the buy and the sell", recs)
	}
	s, b := recs[0], recs[1] // newest first
	d := domain.MustDecimal
	sameDecimals(t, []namedDecimal{
		{"buy amount", b.Amount, d("1000000000000")},
		{"buy rate", b.Rate, d("0.0000000012")},
		{"buy cost", b.Cost, d("1200")},
		{"buy fee (0.1%)", b.Fees, d("1.2")},
		{"buy balance", b.Balance, d("1000000000000")},
		{"sell amount", s.Amount, d("500000000000")},
		{"sell rate", s.Rate, d("0.0000000013")},
		{"sell cost", s.Cost, d("650")},
		{"sell fee", s.Fees, d("0.65")},
		// 650 − 0.65 − half the lot's 1201.2
		{"sell pnl", s.Pnl, d("48.75")},
		{"sell balance", s.Balance, d("500000000000")},
		{"inventory cost", s.InventoryCost, d("600.6")},
	})
	sum, err := e.m.models.ledger.Sum(domain.PnlScope{Keys: []string{"binance/USDT-BABYDOGE"}}, 0, 0)
	if err != nil || sum.Pnl != d("48.75") || sum.Invested != d("600.6") {
		t.Fatalf("pnl sum %+v %v, want pnl 48.75 on 600.6 invested", sum, err)
	}
	// The balances the connector observed: 10^12 bought, half sold.
	var babyBal domain.Decimal
	found := false
	for _, ob := range e.m.Engine.Trader.Balances() {
		for _, ab := range ob.Balances {
			if ab.Asset == "BABYDOGE" {
				babyBal, found = ab.Available, true
			}
		}
	}
	if free, _ := fx.Balance("BABYDOGE"); !found || babyBal != d("500000000000") || free != babyBal {
		t.Fatalf("BABYDOGE balance observed %s (found %v), fixture %s; want 500000000000", babyBal, found, free)
	}
	if status, out := e.post("balances", nil, ""); status != 200 || !strings.Contains(fmt.Sprint(out), "500000000000") {
		t.Fatalf("balances = %d %v", status, out)
	}
}

// TestBinanceNumberTooWideNeedsAttention: a fill whose quantity has 13
// decimals, and one whose price is 10^30, are never recorded (as 0 or
// rounded): each order gets OrderNeedsAttention with the exchange's text,
// /healthz is degraded naming it, new orders on the pair are refused with
// 409 saying why, and clearing the orders resumes trading. (The 8-decimal
// connector recorded such a fill with quantity 0.)
func TestBinanceNumberTooWideNeedsAttention(t *testing.T) {
	for _, c := range []struct{ field, raw string }{
		{"qty", "0.0012000000001"},
		{"price", "1000000000000000000000000000000"},
	} {
		t.Run(c.field, func(t *testing.T) {
			fx := fixture.New("e2e-key", "e2e-secret")
			defer fx.Close()
			e := startNumbersE2E(t, fx, "USDT-BTC")
			id := e.order("trade/buy", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.0012, "price": 50000})
			o, _ := e.m.Engine.Orders.Order(id)
			fx.TradeText(c.field, c.raw)
			if err := fx.Fill(o.ClientOrderID, domain.MustDecimal("0.0012")); err != nil {
				t.Fatal(err)
			}
			e.cycle()

			stream := domain.OrderStream(id)
			var types []string
			for _, ev := range e.orderEvents() {
				if s, typ, _ := strings.Cut(ev, " "); s == stream {
					types = append(types, typ)
				}
			}
			if got := strings.Join(types, ","); got != "OrderRequested,OrderAccepted,OrderNeedsAttention" {
				t.Fatalf("order events %s, want the fill as OrderNeedsAttention", got)
			}
			if recs := e.m.models.ledger.Orders("binance/USDT-BTC"); len(recs) != 0 {
				t.Fatalf("records %+v, want none (never a 0)", recs)
			}
			h := e.health()
			if h["status"] != "degraded" || !strings.Contains(fmt.Sprint(h["reason"]), c.raw) {
				t.Fatalf("healthz %v, want degraded naming %s", h, c.raw)
			}
			status, out := e.post("trade/buy", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 50000}}, "")
			if msg := fmt.Sprint(out["message"]); status != 409 || !strings.Contains(msg, "paused") || !strings.Contains(msg, c.raw) {
				t.Fatalf("a new order on the paused pair = %d %v, want 409 saying why", status, out)
			}
			// The operator deals with it and clears it: the pair trades again.
			if err := e.m.Engine.Trader.ClearAttention(context.Background(), id, "booked by hand"); err != nil {
				t.Fatal(err)
			}
			if h := e.health(); h["status"] != "ok" {
				t.Fatalf("healthz after clearing %v, want ok", h)
			}
			e.order("trade/buy", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 50000})
		})
	}
}

// `tradeledger attention show|clear` on a data dir: show says why the
// order needs attention, clear appends OrderAttentionCleared with the note,
// and a second clear is refused (nothing to clear).
func TestAttentionCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	clock := domain.SystemClock{}
	stream := domain.OrderStream(7)
	if _, err := d.Store.Append(context.Background(), stream, domain.NoStream,
		domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: 7, Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy,
			Kind: domain.KindLimit, Amount: domain.MustDecimal("1"), Price: domain.MustDecimal("1"), ClientOrderID: "c7"}),
		domain.NewEvent(clock, domain.TypeOrderNeedsAttention, domain.OrderNeedsAttention{Exchange: "binance", Pair: "USDT-BTC", FillID: "f1",
			Field: "qty", Raw: "1e30", Reason: "not a decimal"})); err != nil {
		t.Fatal(err)
	}
	d.Close()
	run := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := Run(context.Background(), append([]string{"attention"}, append(args, "--data", dir, "--order", "7")...), strings.NewReader(""), &out, &errb)
		return out.String(), err
	}
	if out, err := run("show"); err != nil || !strings.Contains(out, `qty "1e30": not a decimal`) {
		t.Fatalf("show = %q, %v", out, err)
	}
	if out, err := run("clear", "--note", "booked by hand"); err != nil || !strings.Contains(out, "cleared") {
		t.Fatalf("clear = %q, %v", out, err)
	}
	if _, err := run("clear"); err == nil || !strings.Contains(err.Error(), "needs no attention") {
		t.Fatalf("second clear: %v, want refused", err)
	}
	d, err = OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	it := d.Store.ReadStream(context.Background(), stream, 0, 0)
	defer it.Close()
	var last domain.Event
	for it.Next() {
		last = it.Event()
	}
	var p domain.OrderAttentionCleared
	if last.Type != domain.TypeOrderAttentionCleared || last.Decode(&p) != nil || p.Note != "booked by hand" || p.Pair != "USDT-BTC" {
		t.Fatalf("last event %s %s", last.Type, last.Data)
	}
}
