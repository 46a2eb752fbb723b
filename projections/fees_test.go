package projections

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// filled logs order id (limit, amount qty) and its one fill of qty at
// price, both at when: testLog's order and fill (ledger_test.go) for an
// order filled whole at once.
func (g *testLog) filled(id int64, exchange, pair string, side domain.Side, price, qty, fee, feeAsset string, when time.Time) {
	g.order(id, exchange, pair, side, qty, when)
	g.fill(id, price, qty, fee, feeAsset, when)
}

// rateAt appends a RateObserved: 1 base = rate quote at t.
func (g *testLog) rateAt(quote, base, rate string, t time.Time) {
	g.add(domain.RateStream("binance"), domain.TypeRateObserved, t, domain.RateObserved{Exchange: "binance", Base: base, Quote: quote, Rate: dec(rate)})
}

// recordJSON returns the newest-first records of key as the API's JSON
// objects.
func recordJSON(t *testing.T, l *Ledger, key string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range l.Orders(key) {
		var m map[string]any
		if err := json.Unmarshal(r.AppendJSON(nil), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func wantFields(t *testing.T, what string, m map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s: %s = %#v, want %#v", what, k, got, v)
		}
	}
}

// A fee in BNB on a USDT-ETH pair is valued at the BNB rate of the fill's
// time, is part of the lot's cost and comes off the sell's pnl.
//
//	09:30 BNB = 500 USDT (RateObserved); 10:10 BNB = 600
//	#1 10:00 buy 2 @ 1000 fee 0.001 BNB → 0.001 × 500 = 0.5: lot {2, 2000.5}
//	#2 10:20 sell 2 @ 1100 fee 0.0011 BNB → 0.0011 × 600 = 0.66
//	   pnl = 2200 − 0.66 − 2000.5 = 198.84 (the fees counted as 0: 200)
func TestFeeInThirdAssetValued(t *testing.T) {
	g := &testLog{t: t}
	g.rateAt("USDT", "BNB", "500", at(0, 9, 30))
	g.filled(1, "binance", "USDT-ETH", domain.Buy, "1000", "2", "0.001", "BNB", at(0, 10, 0))
	g.rateAt("USDT", "BNB", "600", at(0, 10, 10))
	g.filled(2, "binance", "USDT-ETH", domain.Sell, "1100", "2", "0.0011", "BNB", at(0, 10, 20))
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average} {
		l := replay(t, m, g.events)
		tot, err := l.Total("binance/USDT-ETH")
		if err != nil {
			t.Fatal(err)
		}
		if got := decimal.Decimal(tot.Pnl); got != dec("198.84") {
			t.Errorf("%s: pnl = %s, want 198.84", m, got)
		}
		if got := decimal.Decimal(tot.Fees); got != dec("1.16") { // 0.5 + 0.66
			t.Errorf("%s: fees = %s, want 1.16", m, got)
		}
		if tot.UnconvertedFees != nil {
			t.Errorf("%s: unconvertedFees = %v, want none", m, tot.UnconvertedFees)
		}
		recs := recordJSON(t, l, "binance/USDT-ETH")
		wantFields(t, "sell", recs[0], map[string]any{"fees": 0.66, "feeAsset": "BNB", "feeAmount": 0.0011, "feeQuote": 0.66,
			"feeRate": 600.0, "feeRateTime": float64(at(0, 10, 10).UnixMilli()), "baseValue": 2199.34, "pnl": 198.84})
		wantFields(t, "buy", recs[1], map[string]any{"fees": 0.5, "feeAsset": "BNB", "feeAmount": 0.001, "feeQuote": 0.5,
			"feeRate": 500.0, "feeRateTime": float64(at(0, 9, 30).UnixMilli()), "baseValue": 2000.5, "inventory_cost": 2000.5})
		if _, ok := recs[0]["unconvertedFees"]; ok {
			t.Errorf("a valued fee lists unconvertedFees: %v", recs[0])
		}
	}
}

// A fee in an asset without a rate is not counted as 0 silently: the
// record, pnl/total, pnl/sum and pnl/overview list it under
// unconvertedFees, in its own asset.
//
//	#1 buy 1 @ 100 fee 0.2 KCS (no KCS rate) → fees 0, lot {1, 100}
//	#2 sell 1 @ 110 fee 0.1 USDT → pnl 110 − 0.1 − 100 = 9.9
func TestFeeWithoutRateIsListed(t *testing.T) {
	g := &testLog{t: t}
	g.filled(1, "binance", "USDT-SOL", domain.Buy, "100", "1", "0.2", "KCS", at(0, 10, 0))
	g.filled(2, "binance", "USDT-SOL", domain.Sell, "110", "1", "0.1", "USDT", at(0, 11, 0))
	l := replay(t, domain.LOFO, g.events)
	recs := recordJSON(t, l, "binance/USDT-SOL")
	wantFields(t, "buy", recs[1], map[string]any{"fees": 0.0, "feeAsset": "KCS", "feeAmount": 0.2})
	if u, _ := recs[1]["unconvertedFees"].(map[string]any); u["KCS"] != 0.2 {
		t.Errorf("buy record: unconvertedFees = %v, want {KCS: 0.2}", recs[1]["unconvertedFees"])
	}
	for _, k := range []string{"feeQuote", "feeRate", "feeRateTime"} {
		if _, ok := recs[1][k]; ok {
			t.Errorf("unconverted fee has %s: %v", k, recs[1])
		}
	}
	wantFields(t, "sell", recs[0], map[string]any{"fees": 0.1, "feeAsset": "USDT", "feeQuote": 0.1, "feeRate": 1.0})
	tot, _ := l.Total("binance/USDT-SOL")
	if decimal.Decimal(tot.Pnl) != dec("9.9") || decimal.Decimal(tot.UnconvertedFees["KCS"]) != dec("0.2") || len(tot.UnconvertedFees) != 1 {
		t.Errorf("total: pnl %s unconvertedFees %v, want 9.9 and {KCS: 0.2}", decimal.Decimal(tot.Pnl), tot.UnconvertedFees)
	}
	s, err := l.Sum(PnlScope{Exchange: "binance"}, 0, 0)
	if err != nil || decimal.Decimal(s.UnconvertedFees["KCS"]) != dec("0.2") {
		t.Errorf("sum: %+v, %v", s, err)
	}
	// A range that leaves #1 out leaves its fee out.
	s, _ = l.Sum(PnlScope{Exchange: "binance"}, at(0, 10, 30).UnixMilli(), 0)
	if s.UnconvertedFees != nil {
		t.Errorf("sum after #1: unconvertedFees %v, want none", s.UnconvertedFees)
	}
	o, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: at(0, 12, 0)})
	if err != nil || decimal.Decimal(o.UnconvertedFees["KCS"]) != dec("0.2") {
		t.Errorf("overview: unconvertedFees %v, %v", o.UnconvertedFees, err)
	}
	b, _ := json.Marshal(o)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if u, _ := m["unconvertedFees"].(map[string]any); u["KCS"] != 0.2 {
		t.Errorf("overview JSON: unconvertedFees = %v", m["unconvertedFees"])
	}
}

// bot.FEE_RATE_MAX_AGE bounds the age of the rate: with the default hour a
// rate 90 minutes old leaves the fee unconverted; with 7200 s it values it.
func TestFeeRateMaxAge(t *testing.T) {
	build := func(maxAge any) []domain.Event {
		g := &testLog{t: t}
		bot := map[string]any{}
		if maxAge != nil {
			bot["FEE_RATE_MAX_AGE"] = maxAge
		}
		g.add(domain.StreamConfig, domain.TypeConfigReplaced, at(0, 0, 0), map[string]any{"config": map[string]any{"bot": bot, "pairs": map[string]any{}}})
		g.rateAt("USDT", "BNB", "500", at(0, 8, 30))
		g.filled(1, "binance", "USDT-ETH", domain.Buy, "1000", "1", "0.001", "BNB", at(0, 10, 0))
		return g.events
	}
	for _, c := range []struct {
		maxAge  any
		fees    string
		unconv  bool
		comment string
	}{
		{nil, "0", true, "default: one hour"},
		{7200, "0.5", false, "two hours: 0.001 × 500"},
		{"7200", "0.5", false, "as a string"},
		{3600, "0", true, "one hour, set"},
	} {
		l := replay(t, domain.LOFO, build(c.maxAge))
		tot, _ := l.Total("binance/USDT-ETH")
		if decimal.Decimal(tot.Fees) != dec(c.fees) || (tot.UnconvertedFees != nil) != c.unconv {
			t.Errorf("%s: fees %s, unconvertedFees %v", c.comment, decimal.Decimal(tot.Fees), tot.UnconvertedFees)
		}
	}
}

// The valuation is in trade time: a rate recorded after the fill with an
// older time than the fill's (a backfilled rate, an import) values it from
// then on, live and replayed alike — the figure the log implies, whatever
// order it arrived in.
//
//	09:00 BNB = 500; #1 10:00 fee 0.001 BNB → 0.5 while the log holds no later rate
//	then, recorded later, BNB = 600 at 09:59: #1 → 0.6; #2 10:05 fee 0.001 BNB → 0.6
func TestFeeValuationIsInTradeTime(t *testing.T) {
	g := &testLog{t: t}
	g.rateAt("USDT", "BNB", "500", at(0, 9, 0))
	g.filled(1, "binance", "USDT-ETH", domain.Buy, "1000", "1", "0.001", "BNB", at(0, 10, 0))
	g.rateAt("USDT", "BNB", "600", at(0, 9, 59))
	g.filled(2, "binance", "USDT-ETH", domain.Buy, "1000", "1", "0.001", "BNB", at(0, 10, 5))
	live := NewLedger(domain.LOFO)
	for i := range g.events {
		if err := live.Apply(&g.events[i]); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			wantFields(t, "#1 live", recordJSON(t, live, "binance/USDT-ETH")[0], map[string]any{"fees": 0.5})
		}
	}
	at959 := float64(at(0, 9, 59).UnixMilli())
	for name, l := range map[string]*Ledger{"live": live, "replay": replay(t, domain.LOFO, g.events)} {
		recs := recordJSON(t, l, "binance/USDT-ETH")
		wantFields(t, name+" #1", recs[1], map[string]any{"fees": 0.6, "feeRate": 600.0, "feeRateTime": at959})
		wantFields(t, name+" #2", recs[0], map[string]any{"fees": 0.6, "feeRate": 600.0, "feeRateTime": at959})
		if tot, _ := l.Total("binance/USDT-ETH"); decimal.Decimal(tot.Fees) != dec("1.2") {
			t.Errorf("%s: fees %s, want 1.2", name, decimal.Decimal(tot.Fees))
		}
	}
}

// A fee in BNB on a BTC-quoted pair with no BTC-BNB rate goes through the
// shortest chain of rates: BNB → USDT → BTC.
//
//	USDT-BNB 500 (09:00), USDT-BTC 50000 (09:00, a fill)
//	#2 BTC-ETH buy 1 @ 0.05 fee 0.01 BNB 10:00 → 0.01 × 500 = 5 USDT ÷ 50000 = 0.0001 BTC
//	   feeRate 500 ÷ 50000 = 0.01, feeRateTime 09:00
func TestFeeThroughTwoRates(t *testing.T) {
	g := &testLog{t: t}
	g.rateAt("USDT", "BNB", "500", at(0, 9, 0))
	g.filled(1, "binance", "USDT-BTC", domain.Buy, "50000", "0.1", "5", "USDT", at(0, 9, 0))
	g.filled(2, "binance", "BTC-ETH", domain.Buy, "0.05", "1", "0.01", "BNB", at(0, 10, 0))
	l := replay(t, domain.FIFO, g.events)
	recs := recordJSON(t, l, "binance/BTC-ETH")
	wantFields(t, "BTC-ETH buy", recs[0], map[string]any{"fees": 0.0001, "feeQuote": 0.0001, "feeRate": 0.01,
		"feeRateTime": float64(at(0, 9, 0).UnixMilli()), "inventory_cost": 0.0501})
}

// A fee in the base on a buy: the lot, the balance and the inventory hold
// the quantity received, so selling all of it leaves nothing (no dust),
// as the exchange's balance says.
//
//	#1 buy 2 @ 1000 fee 0.002 ETH → received 1.998, lot {1.998, 2000},
//	   fees 2 (0.002 × 1000), baseValue 2000, pnlPrice 2000 ÷ 1.998
//	#2 sell 1.998 @ 1100 fee 2.1978 USDT → pnl 2197.8 − 2.1978 − 2000 = 195.6022
func TestBaseFeeOnBuyReducesTheLot(t *testing.T) {
	g := &testLog{t: t}
	g.filled(1, "binance", "USDT-ETH", domain.Buy, "1000", "2", "0.002", "ETH", at(0, 10, 0))
	g.filled(2, "binance", "USDT-ETH", domain.Sell, "1100", "1.998", "2.1978", "USDT", at(0, 11, 0))
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average} {
		l := replay(t, m, g.events)
		recs := recordJSON(t, l, "binance/USDT-ETH")
		wantFields(t, "buy", recs[1], map[string]any{"amount": 2.0, "fees": 2.0, "feeAsset": "ETH", "feeAmount": 0.002,
			"feeQuote": 2.0, "feeRate": 1000.0, "baseValue": 2000.0, "balance": 1.998, "inventory_cost": 2000.0})
		wantFields(t, "sell", recs[0], map[string]any{"balance": 0.0, "inventory_cost": 0.0, "ABP": 0.0, "pnl": 195.6022, "unmatchedBaseValue": 0.0})
		tot, _ := l.Total("binance/USDT-ETH")
		if !decimal.Decimal(tot.Balance).IsZero() || !decimal.Decimal(tot.InventoryCost).IsZero() || decimal.Decimal(tot.Pnl) != dec("195.6022") {
			t.Errorf("%s: total %+v, want balance 0, inventory 0, pnl 195.6022", m, tot)
		}
	}
}

// All over USDT and EUR pairs with no EUR-USDT rate converts through BTC
// (two hops), at the rates of each fill's time.
//
//	USDT-BTC #1 buy 0.1 @ 50000 (10:00): BTC = 50000 USDT
//	EUR-BTC  #2 buy 0.1 @ 40000 (10:10): BTC = 40000 EUR
//	EUR-SOL  #3 buy 10 @ 100 (10:20); #4 sell 10 @ 120 (10:30): pnl 200 EUR
//	   in USDT: 200 ÷ 40000 × 50000 = 250; invested 1000 EUR → 1250 USDT
//	Reporting currency: USDT and EUR have 1 and 3 fills → EUR, unless
//	configured: REPORTING_CURRENCY USDT.
func TestAllConvertsThroughTwoRates(t *testing.T) {
	g := &testLog{t: t}
	g.add(domain.StreamConfig, domain.TypeConfigReplaced, at(0, 0, 0), map[string]any{"config": map[string]any{
		"bot": map[string]any{"REPORTING_CURRENCY": "USDT"}, "pairs": map[string]any{}}})
	g.filled(1, "binance", "USDT-BTC", domain.Buy, "50000", "0.1", "0", "USDT", at(0, 10, 0))
	g.filled(2, "binance", "EUR-BTC", domain.Buy, "40000", "0.1", "0", "EUR", at(0, 10, 10))
	g.filled(3, "binance", "EUR-SOL", domain.Buy, "100", "10", "0", "EUR", at(0, 10, 20))
	g.filled(4, "binance", "EUR-SOL", domain.Sell, "120", "10", "0", "EUR", at(0, 10, 30))
	l := replay(t, domain.LOFO, g.events)
	o, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: at(0, 12, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Unit != "USDT" || decimal.Decimal(o.Total.Pnl) != dec("250") || len(o.Unconverted) != 0 {
		t.Errorf("overview in %s: pnl %s, unconverted %+v; want USDT 250, none", o.Unit, decimal.Decimal(o.Total.Pnl), o.Unconverted)
	}
	s, err := l.Sum(PnlScope{Keys: []string{"All"}}, 0, 0)
	if err != nil || s.Pnl != dec("250") || s.Invested != dec("1250") {
		t.Errorf("sum: %+v, %v; want pnl 250 invested 1250", s, err)
	}
}
