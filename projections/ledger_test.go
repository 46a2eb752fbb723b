package projections

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// log builds a fixed event sequence with increasing positions.
type testLog struct {
	t      *testing.T
	events []domain.Event
}

func (g *testLog) add(stream, typ string, at time.Time, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		g.t.Fatal(err)
	}
	g.events = append(g.events, domain.Event{Stream: stream, Type: typ, Time: at.UnixMilli(),
		Position: uint64(len(g.events) + 1), Data: b})
}

func (g *testLog) order(id int64, exchange, pair string, side domain.Side, amount string, at time.Time) {
	g.add(domain.OrderStream(id), domain.TypeOrderRequested, at, domain.OrderRequested{OrderID: id, Exchange: exchange,
		Pair: pair, Side: side, Kind: domain.KindLimit, Amount: dec(amount), Price: dec("1"), ClientOrderID: "c"})
}

func (g *testLog) fill(id int64, price, qty, fee, feeAsset string, at time.Time) {
	g.add(domain.OrderStream(id), domain.TypeOrderFilled, at, domain.OrderFilled{FillID: "f", Price: dec(price),
		Quantity: dec(qty), Fee: dec(fee), FeeAsset: feeAsset})
}

func dec(s string) decimal.Decimal { return decimal.MustDecimal(s) }

// day0 is D = 2024-03-10 (UTC). Asia/Kathmandu is UTC+05:45.
var day0 = time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)

func at(day int, hh, mm int) time.Time {
	return day0.AddDate(0, 0, day).Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
}

// goldenLog is the fixed sequence (UTC times; Kathmandu local in brackets):
//
//	binance/USDT-BTC
//	 #1 buy 1 @ 100 fee 0.1 USDT        D 10:00   [D 15:45]
//	 #2 buy 1 @ 90 fee 0.09 USDT        D 18:10   [D 23:55]
//	 #3 sell 1.5 in two fills:
//	    1 @ 110 fee 0.11 USDT           D 18:20   [D+1 00:05]
//	    0.5 @ 110 fee 0.055 USDT        D 23:55   [D+1 05:40]
//	 #4 sell 1 @ 80 fee 0.08 (0.5 has no lot)  D+1 00:10 [D+1 05:55]
//	 #9 buy 2, filled 0.5 @ 95 fee 0.0475, still open  D+1 02:00
//	binance/USDT-ETH
//	 #5 buy 2 @ 10 fee 0.002 ETH (= 0.02 USDT): receives 1.998  D 12:00
//	 #6 sell 1.998 @ 12 fee 0.023976 USDT   D+1 12:00
//	kraken/BTC-ETH (quote BTC)
//	 #7 sell 1 @ 0.05 fee 0.00005 BTC, no lot  D 12:00
//	 #8 buy 1 @ 0.04 fee 0.00004 BTC    D+1 01:00
func goldenLog(t *testing.T) []domain.Event {
	g := &testLog{t: t}
	g.add(domain.StreamConfig, domain.TypePairAdded, at(0, 0, 0), domain.PairAdded{Exchange: "binance", Pair: "USDT-BTC", Strategy: "gain", Enabled: true})
	g.order(1, "binance", "USDT-BTC", domain.Buy, "1", at(0, 10, 0))
	g.fill(1, "100", "1", "0.1", "USDT", at(0, 10, 0))
	g.order(5, "binance", "USDT-ETH", domain.Buy, "2", at(0, 12, 0))
	g.fill(5, "10", "2", "0.002", "ETH", at(0, 12, 0))
	g.order(7, "kraken", "BTC-ETH", domain.Sell, "1", at(0, 12, 0))
	g.fill(7, "0.05", "1", "0.00005", "BTC", at(0, 12, 0))
	g.order(2, "binance", "USDT-BTC", domain.Buy, "1", at(0, 18, 10))
	g.fill(2, "90", "1", "0.09", "USDT", at(0, 18, 10))
	g.order(3, "binance", "USDT-BTC", domain.Sell, "1.5", at(0, 18, 20))
	g.fill(3, "110", "1", "0.11", "USDT", at(0, 18, 20))
	g.fill(3, "110", "0.5", "0.055", "USDT", at(0, 23, 55))
	g.order(4, "binance", "USDT-BTC", domain.Sell, "1", at(1, 0, 10))
	g.fill(4, "80", "1", "0.08", "USDT", at(1, 0, 10))
	g.order(8, "kraken", "BTC-ETH", domain.Buy, "1", at(1, 1, 0))
	g.fill(8, "0.04", "1", "0.00004", "BTC", at(1, 1, 0))
	g.order(9, "binance", "USDT-BTC", domain.Buy, "2", at(1, 2, 0))
	g.fill(9, "95", "0.5", "0.0475", "USDT", at(1, 2, 0))
	g.order(6, "binance", "USDT-ETH", domain.Sell, "1.998", at(1, 12, 0))
	g.fill(6, "12", "1.998", "0.023976", "USDT", at(1, 12, 0)) // sells all #5 received
	return g.events
}

func replay(t testing.TB, m domain.PnlMethod, events []domain.Event) *Ledger {
	l := NewLedger(m)
	for i := range events {
		if err := l.Apply(&events[i]); err != nil {
			t.Fatalf("apply %d (%s): %v", i, events[i].Type, err)
		}
	}
	return l
}

// rec is the expected record (newest first), fields as strings.
type rec struct {
	id                                                          int64
	typ                                                         domain.Side
	rate, amount, cost, fees, baseValue, costProceed, avg       string
	pnlPrice, balance, baseBalance, invCost, abp, pnl, unmatchd string
	toCancel                                                    bool
}

func TestGoldenOrderRecords(t *testing.T) {
	// Shared arithmetic (all methods):
	//  #1 cost 100, baseValue 100+0.1 = 100.1, costProceed −100.1, baseBalance −100.1
	//  #2 baseValue 90.09; baseBalance −100.1−90.09 = −190.19
	//  #3a baseValue 110−0.11 = 109.89; baseBalance −80.3
	//  #3b baseValue 55−0.055 = 54.945; baseBalance −25.355
	//  #4 baseValue 80−0.08 = 79.92; baseBalance 54.565; balance 0.5−1 = −0.5;
	//     unmatched 0.5 → unmatchedBaseValue 80×0.5 = 40
	//  #9 cost 0.5×95 = 47.5, baseValue 47.5475; baseBalance 7.0175; lot {0.5, 47.5475}
	//     ABP 95.095, still open → toCancel
	tests := []struct {
		m    domain.PnlMethod
		recs []rec
	}{
		{domain.LOFO, []rec{
			{9, domain.Buy, "95", "0.5", "47.5", "0.0475", "47.5475", "-47.5475", "95", "95.095", "0", "7.0175", "47.5475", "95.095", "0", "0", true},
			// #4: 0.5 of A {0.5, 50.05}: pnl = 40 − 0.04 − 50.05 = −10.09
			{4, domain.Sell, "80", "1", "80", "0.08", "79.92", "79.92", "80", "100.1", "-0.5", "54.565", "0", "0", "-10.09", "40", false},
			// #3b: 0.5 of A {1, 100.1} = 50.05: pnl = 55 − 0.055 − 50.05 = 4.895
			{3, domain.Sell, "110", "0.5", "55", "0.055", "54.945", "54.945", "110", "100.1", "0.5", "-25.355", "50.05", "100.1", "4.895", "0", false},
			// #3a: LOFO takes B {1, 90.09}: pnl = 110 − 0.11 − 90.09 = 19.8
			{3, domain.Sell, "110", "1", "110", "0.11", "109.89", "109.89", "110", "90.09", "1", "-80.3", "100.1", "100.1", "19.8", "0", false},
			{2, domain.Buy, "90", "1", "90", "0.09", "90.09", "-90.09", "90", "90.09", "2", "-190.19", "190.19", "95.095", "0", "0", false},
			{1, domain.Buy, "100", "1", "100", "0.1", "100.1", "-100.1", "100", "100.1", "1", "-100.1", "100.1", "100.1", "0", "0", false},
		}},
		{domain.FIFO, []rec{
			{9, domain.Buy, "95", "0.5", "47.5", "0.0475", "47.5475", "-47.5475", "95", "95.095", "0", "7.0175", "47.5475", "95.095", "0", "0", true},
			// #4: 0.5 of B {0.5, 45.045}: pnl = 40 − 0.04 − 45.045 = −5.085
			{4, domain.Sell, "80", "1", "80", "0.08", "79.92", "79.92", "80", "90.09", "-0.5", "54.565", "0", "0", "-5.085", "40", false},
			// #3b: 0.5 of B = 45.045: pnl = 55 − 0.055 − 45.045 = 9.9
			{3, domain.Sell, "110", "0.5", "55", "0.055", "54.945", "54.945", "110", "90.09", "0.5", "-25.355", "45.045", "90.09", "9.9", "0", false},
			// #3a: FIFO takes A {1, 100.1}: pnl = 110 − 0.11 − 100.1 = 9.79
			{3, domain.Sell, "110", "1", "110", "0.11", "109.89", "109.89", "110", "100.1", "1", "-80.3", "90.09", "90.09", "9.79", "0", false},
			{2, domain.Buy, "90", "1", "90", "0.09", "90.09", "-90.09", "90", "90.09", "2", "-190.19", "190.19", "95.095", "0", "0", false},
			{1, domain.Buy, "100", "1", "100", "0.1", "100.1", "-100.1", "100", "100.1", "1", "-100.1", "100.1", "100.1", "0", "0", false},
		}},
		{domain.Average, []rec{
			{9, domain.Buy, "95", "0.5", "47.5", "0.0475", "47.5475", "-47.5475", "95", "95.095", "0", "7.0175", "47.5475", "95.095", "0", "0", true},
			// #4: pool {0.5, 47.5475}: pnl = 40 − 0.04 − 47.5475 = −7.5875
			{4, domain.Sell, "80", "1", "80", "0.08", "79.92", "79.92", "80", "95.095", "-0.5", "54.565", "0", "0", "-7.5875", "40", false},
			// #3b: 0.5 of {1, 95.095} = 47.5475: pnl = 54.945 − 47.5475 = 7.3975
			{3, domain.Sell, "110", "0.5", "55", "0.055", "54.945", "54.945", "110", "95.095", "0.5", "-25.355", "47.5475", "95.095", "7.3975", "0", false},
			// #3a: 1 of {2, 190.19} = 95.095: pnl = 109.89 − 95.095 = 14.795
			{3, domain.Sell, "110", "1", "110", "0.11", "109.89", "109.89", "110", "95.095", "1", "-80.3", "95.095", "95.095", "14.795", "0", false},
			{2, domain.Buy, "90", "1", "90", "0.09", "90.09", "-90.09", "90", "90.09", "2", "-190.19", "190.19", "95.095", "0", "0", false},
			{1, domain.Buy, "100", "1", "100", "0.1", "100.1", "-100.1", "100", "100.1", "1", "-100.1", "100.1", "100.1", "0", "0", false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			l := replay(t, tt.m, goldenLog(t))
			got := l.Orders("binance/USDT-BTC")
			if len(got) != len(tt.recs) {
				t.Fatalf("%d records, want %d", len(got), len(tt.recs))
			}
			for i, w := range tt.recs {
				g := got[i]
				check := func(name string, gv decimal.Decimal, wv string) {
					if gv != dec(wv) {
						t.Errorf("record %d (order %d) %s = %s, want %s", i, w.id, name, gv, wv)
					}
				}
				if g.ID != w.id || g.Type != w.typ || g.ToCancel != w.toCancel || g.Pair != "USDT-BTC" {
					t.Errorf("record %d = order %d %s toCancel %v, want %d %s %v", i, g.ID, g.Type, g.ToCancel, w.id, w.typ, w.toCancel)
				}
				check("rate", g.Rate, w.rate)
				check("amount", g.Amount, w.amount)
				check("cost", g.Cost, w.cost)
				check("fees", g.Fees, w.fees)
				check("baseValue", g.BaseValue, w.baseValue)
				check("costProceed", g.CostProceed, w.costProceed)
				check("averagePrice", g.AveragePrice, w.avg)
				check("pnlPrice", g.PnlPrice, w.pnlPrice)
				check("balance", g.Balance, w.balance)
				check("baseBalance", g.BaseBalance, w.baseBalance)
				check("inventory_cost", g.InventoryCost, w.invCost)
				check("ABP", g.ABP, w.abp)
				check("pnl", g.Pnl, w.pnl)
				check("unmatchedBaseValue", g.UnmatchedBaseValue, w.unmatchd)
			}
		})
	}
}

// The record JSON has every spec field, numbers as numbers, toCancel only
// when true.
func TestOrderRecordJSON(t *testing.T) {
	l := replay(t, domain.LOFO, goldenLog(t))
	recs := l.Orders("binance/USDT-BTC")
	var m map[string]any
	if err := json.Unmarshal(recs[0].AppendJSON(nil), &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"time", "rate", "amount", "id", "cost", "fees", "baseValue", "costProceed", "averagePrice",
		"pnlPrice", "balance", "baseBalance", "inventory_cost", "ABP", "pnl"} {
		if _, ok := m[f].(float64); !ok {
			t.Errorf("field %s = %#v, want a number", f, m[f])
		}
	}
	if m["toCancel"] != true || m["pair"] != "USDT-BTC" || m["type"] != "buy" || m["ABP"] != 95.095 {
		t.Errorf("record = %v", m)
	}
	m = nil
	if err := json.Unmarshal(recs[1].AppendJSON(nil), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["toCancel"]; ok {
		t.Errorf("closed order has toCancel: %v", m)
	}
}

func TestGoldenDaily(t *testing.T) {
	ktm, err := LoadZone("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	type day struct{ date, pnl string }
	tests := []struct {
		m    domain.PnlMethod
		loc  *time.Location
		want []day
	}{
		// UTC: D has #3a and #3b, D+1 has #4.
		{domain.LOFO, time.UTC, []day{{"2024-03-10", "24.695"}, {"2024-03-11", "-10.09"}}},      // 19.8+4.895; −10.09
		{domain.FIFO, time.UTC, []day{{"2024-03-10", "19.69"}, {"2024-03-11", "-5.085"}}},       // 9.79+9.9; −5.085
		{domain.Average, time.UTC, []day{{"2024-03-10", "22.1925"}, {"2024-03-11", "-7.5875"}}}, // 14.795+7.3975
		// Kathmandu: #3a (00:05), #3b and #4 all fall on D+1: 24.695 − 10.09 = 14.605
		{domain.LOFO, ktm, []day{{"2024-03-10", "0"}, {"2024-03-11", "14.605"}}},
		{domain.FIFO, ktm, []day{{"2024-03-10", "0"}, {"2024-03-11", "14.605"}}},
		{domain.Average, ktm, []day{{"2024-03-10", "0"}, {"2024-03-11", "14.605"}}},
	}
	for _, tt := range tests {
		l := replay(t, tt.m, goldenLog(t))
		days, unm, unit, err := l.Daily(DailyQuery{Scope: PnlScope{Keys: []string{"binance/USDT-BTC"}}, Loc: tt.loc})
		if err != nil {
			t.Fatal(err)
		}
		if unit != "USDT" || unm != dec("40") {
			t.Errorf("%s %s: unit %s unmatched %s, want USDT 40", tt.m, tt.loc, unit, unm)
		}
		if len(days) != len(tt.want) {
			t.Fatalf("%s %s: %d days, want %d", tt.m, tt.loc, len(days), len(tt.want))
		}
		var sum decimal.Decimal
		for i, w := range tt.want {
			if days[i].Date != w.date || decimal.Decimal(days[i].Pnl) != dec(w.pnl) {
				t.Errorf("%s %s: day %d = %s %s, want %s %s", tt.m, tt.loc, i, days[i].Date, decimal.Decimal(days[i].Pnl), w.date, w.pnl)
			}
			sum = sum.Add(decimal.Decimal(days[i].Pnl))
		}
		tot, _ := l.Total("binance/USDT-BTC")
		// Invariant: Σ daily pnl = total pnl (14.605 under every method: all lots consumed)
		if sum != decimal.Decimal(tot.Pnl) || sum != dec("14.605") {
			t.Errorf("%s %s: Σ daily = %s, total = %s, want 14.605", tt.m, tt.loc, sum, decimal.Decimal(tot.Pnl))
		}
	}
}

func TestGoldenOverview(t *testing.T) {
	l := replay(t, domain.LOFO, goldenLog(t))
	now := at(1, 20, 0)
	// Mixed quotes are answered in the reporting currency (USDT: 8 fills
	// against 2 BTC fills; pnlconv_test.go has the conversion's figures).
	mixed, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: now})
	if err != nil || mixed.Unit != "USDT" || len(mixed.PerQuote) != 2 {
		t.Fatalf("All over USDT and BTC: %+v, %v", mixed, err)
	}
	o, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}, Quote: "USDT"}, Loc: time.UTC, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	num := func(name string, got decimal.Number, want string) {
		t.Helper()
		if decimal.Decimal(got) != dec(want) {
			t.Errorf("%s = %s, want %s", name, decimal.Decimal(got), want)
		}
	}
	if o.Unit != "USDT" {
		t.Errorf("unit = %q", o.Unit)
	}
	// #5 buys 2 ETH @ 10 with a fee of 0.002 ETH: it receives 1.998, lot
	// {1.998, 20} (the fee is in the unit cost), baseValue 20.
	// today D+1: #4 −10.09 + #6 (sells the 1.998: 23.976 − 0.023976 − 20 =
	// 3.952024) = −6.137976
	num("today", o.Today.Pnl, "-6.137976")
	num("today BTC", o.Today.PerPair["binance/USDT-BTC"], "-10.09")
	num("yesterday", o.Yesterday.Pnl, "24.695")
	num("weekAgo", o.WeekAgo.Pnl, "18.557024") // 14.605 + 3.952024
	num("monthAgo", o.MonthAgo.Pnl, "18.557024")
	num("yearAgo", o.YearAgo.Pnl, "18.557024")
	num("lastYear", o.LastYear.Pnl, "0")
	tot := o.Total
	num("total.pnl", tot.Pnl, "18.557024")
	// 4 buys (#1 #2 #9 #5) + 4 sells (#3a #3b #4 #6)
	if tot.NumberOfTrades != 8 || tot.BuyCount != 4 || tot.SellCount != 4 || tot.Winning != 3 || tot.Losing != 1 || tot.Breakeven != 0 {
		t.Errorf("counts = %+v", tot)
	}
	if tot.WinRate != "75.00" { // 3/4
		t.Errorf("winRate = %s", tot.WinRate)
	}
	num("hero", tot.HeroTrade.Pnl, "19.8")
	if tot.HeroTrade.Time != at(0, 18, 20).UnixMilli() || tot.FuckupTrade.Time != at(1, 0, 10).UnixMilli() {
		t.Errorf("hero/fuckup times = %d/%d", tot.HeroTrade.Time, tot.FuckupTrade.Time)
	}
	num("fuckup", tot.FuckupTrade.Pnl, "-10.09")
	num("averagePnl", tot.AveragePnl, "4.639256") // 18.557024 / 4
	num("buyPnl", tot.BuyPnl, "-0.0475")          // lot {0.5, 47.5475} at 95: 47.5 − 47.5475
	num("sellPnl", tot.SellPnl, "18.557024")
	num("buyBaseValue", tot.BuyBaseValue, "257.7375")     // 100.1 + 90.09 + 47.5475 + 20
	num("sellBaseValue", tot.SellBaseValue, "268.707024") // 109.89 + 54.945 + 79.92 + 23.952024
	if len(o.DailyHistory) != 2 {
		t.Fatalf("dailyHistory = %+v", o.DailyHistory)
	}
	d0, d1 := o.DailyHistory[0], o.DailyHistory[1]
	// D: #1 #5 #2 #3a #3b: volume 100+20+90+110+55 = 375; invested 90.09+50.05 = 140.14
	if d0.Date != "2024-03-10" || d0.NumberOfTrades != 5 || d1.NumberOfTrades != 3 {
		t.Errorf("days = %+v", o.DailyHistory)
	}
	num("d0.volume", d0.TotalVolume, "375")
	num("d0.cumPct", d0.CumulativePnlPercent, "17.621664050235") // 24.695/140.14×100
	// D+1: #4 #9 #6: volume 80 + 47.5 + 23.976 = 151.476; cum 18.557024 over
	// 140.14+50.05+20 = 210.19: 18.557024/210.19×100
	num("d1.volume", d1.TotalVolume, "151.476")
	num("d1.cum", d1.CumulativePnl, "18.557024")
	num("d1.cumPct", d1.CumulativePnlPercent, "8.828690232647")
	if len(o.DetailedPerPair) != 2 || o.DetailedPerPair[0].Key != "binance/USDT-BTC" {
		t.Fatalf("detailed = %+v", o.DetailedPerPair)
	}
	p := o.DetailedPerPair[0]
	if p.Strategy != "gain" || p.ProfitCount != 2 || p.LossCount != 1 || p.UniqueProfitCount != 1 || p.UniqueLossCount != 1 ||
		p.BuyCount != 3 || p.SellCount != 3 || p.UniqueBuyCount != 3 || p.UniqueSellCount != 2 {
		t.Errorf("detail = %+v", p)
	}
	num("cumulative_pnl", p.CumulativePnl, "14.605")
	num("cumulative_profit", p.CumulativeProfit, "24.695")
	num("cumulative_loss", p.CumulativeLoss, "-10.09")
	num("cumulative_fees", p.CumulativeFees, "0.4825")                         // .1+.09+.11+.055+.08+.0475
	num("cumulative_costproceed_wins", p.CumulativeCostProceedWins, "164.835") // 109.89+54.945
	num("cumulative_costproceed_losses", p.CumulativeCostProceedLoss, "79.92")
	num("cumulative_buy_value", p.CumulativeBuyValue, "237.7375")  // 100.1+90.09+47.5475
	num("cumulative_sell_value", p.CumulativeSellValue, "244.755") // 109.89+54.945+79.92
	num("unrealized_pnl", p.UnrealizedPnl, "-0.0475")
	// 2 days, invested 90.09 + 50.05 + 50.05 = 190.19: 14.605×1000/(190.19×2)
	if p.DailyPnlPerThousand != "38.39581471" {
		t.Errorf("daily_pnl_per_thousand = %s", p.DailyPnlPerThousand)
	}
	if e := o.DetailedPerPair[1]; e.DailyPnlPerThousand != "98.80060000" { // 3.952024×1000/(20×2)
		t.Errorf("ETH daily_pnl_per_thousand = %s", e.DailyPnlPerThousand)
	}

	// Kathmandu: now is D+2 01:45 local; D+1 local has 14.605 + 3.952024.
	ktm, _ := LoadZone("Asia/Kathmandu")
	o, err = l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}, Quote: "USDT"}, Loc: ktm, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	num("ktm today", o.Today.Pnl, "0")
	num("ktm yesterday", o.Yesterday.Pnl, "18.557024")

	// The BTC-quoted pair: a sell with no lot realizes nothing.
	tb, _ := l.Total("kraken/BTC-ETH")
	if !decimal.Decimal(tb.Pnl).IsZero() || decimal.Decimal(tb.UnmatchedBaseValue) != dec("0.05") || tb.Unit != "BTC" || decimal.Decimal(tb.ABP) != dec("0.04004") {
		t.Errorf("kraken total = %+v", tb)
	}
}

// Invariant: the overview of ["All"] equals the sum of the overviews of its
// pairs, under every method.
func TestOverviewAllIsSumOfPairs(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average} {
		l := replay(t, m, goldenLog(t))
		q := OverviewQuery{Scope: PnlScope{Keys: []string{"All"}, Quote: "USDT"}, Loc: time.UTC, Now: at(1, 20, 0)}
		all, err := l.Overview(q)
		if err != nil {
			t.Fatal(err)
		}
		var pnl, today, buyVal decimal.Decimal
		var trades int64
		for _, k := range []string{"binance/USDT-BTC", "binance/USDT-ETH"} {
			q.Scope = PnlScope{Keys: []string{k}}
			o, err := l.Overview(q)
			if err != nil {
				t.Fatal(err)
			}
			pnl = pnl.Add(decimal.Decimal(o.Total.Pnl))
			today = today.Add(decimal.Decimal(o.Today.Pnl))
			buyVal = buyVal.Add(decimal.Decimal(o.Total.BuyBaseValue))
			trades += o.Total.NumberOfTrades
		}
		if decimal.Decimal(all.Total.Pnl) != pnl || decimal.Decimal(all.Today.Pnl) != today ||
			decimal.Decimal(all.Total.BuyBaseValue) != buyVal || all.Total.NumberOfTrades != trades {
			t.Errorf("%s: All = %+v; Σ pairs pnl %s today %s buy %s trades %d", m, all.Total, pnl, today, buyVal, trades)
		}
		// Explicit keys of every USDT pair give the All figures too.
		q.Scope = PnlScope{Keys: []string{"binance/USDT-ETH", "binance/USDT-BTC"}}
		two, err := l.Overview(q)
		if err != nil {
			t.Fatal(err)
		}
		if two.Total != all.Total {
			t.Errorf("%s: keys total %+v != All %+v", m, two.Total, all.Total)
		}
	}
}

func TestGoldenDayOrdersAndMarks(t *testing.T) {
	l := replay(t, domain.LOFO, goldenLog(t))
	ktm, _ := LoadZone("Asia/Kathmandu")
	start := time.Date(2024, 3, 11, 0, 0, 0, 0, ktm)
	days, orders, closes := l.Day([]string{"binance/USDT-BTC"}, "2024-03-11", start.UnixMilli(), start.AddDate(0, 0, 1).UnixMilli())
	// Kathmandu D+1: #3a #3b #4 #9
	if len(orders) != 4 || len(closes) != 3 || days[0].NumberOfTrades != 4 || decimal.Decimal(days[0].Pnl) != dec("14.605") {
		t.Errorf("day = %+v, %d orders, %d closes", days, len(orders), len(closes))
	}
	marks := l.Marks("binance", "USDT-BTC", at(0, 18, 0).Unix(), at(0, 18, 20).Unix())
	if len(marks) != 2 || marks[0].Label != "▲" || marks[1].Label != "▼" || marks[1].Time != at(0, 18, 20).Unix() {
		t.Fatalf("marks = %+v", marks)
	}
	if got := marks[1].Tooltip; len(got) != 4 || got[0] != "SELL" || got[1] != "Amount: 1 BTC" || got[2] != "Price: 110 USDT" || got[3] != "Total: 110 USDT" {
		t.Errorf("tooltip = %q", got)
	}
}

// TestGoldenDayCounts: orders/day's counts. In Europe/Moscow (UTC+3) the
// golden log's day D holds #1, #7, #2 and #3's first fill (21:20); D+1
// holds #3's second fill (02:55), #4, #8 and #9. #3 closes on both days
// (an order filled across midnight counts on each), #4 closes with its
// matched half, #7 sold with no lot and closes nothing; two fills of one
// order on one day count once.
func TestGoldenDayCounts(t *testing.T) {
	l := replay(t, domain.LOFO, goldenLog(t))
	msk, _ := LoadZone("Europe/Moscow")
	d := time.Date(2024, 3, 10, 0, 0, 0, 0, msk)
	bounds := []int64{d.AddDate(0, 0, -1).UnixMilli(), d.UnixMilli(), d.AddDate(0, 0, 1).UnixMilli(), d.AddDate(0, 0, 2).UnixMilli()}
	orders, closes := l.DayCounts([]string{"binance/USDT-BTC", "kraken/BTC-ETH", "binance/USDT-BTC"}, bounds)
	if want := []int{0, 4, 4}; !equalInts(orders, want) {
		t.Errorf("orders = %v, want %v", orders, want)
	}
	if want := []int{0, 1, 2}; !equalInts(closes, want) {
		t.Errorf("closes = %v, want %v", closes, want)
	}
	// UTC: D has #1, #7, #2, #3 (both fills): 4, of which #3 closes.
	orders, closes = l.DayCounts([]string{"binance/USDT-BTC", "kraken/BTC-ETH"}, []int64{at(0, 0, 0).UnixMilli(), at(1, 0, 0).UnixMilli()})
	if !equalInts(orders, []int{4}) || !equalInts(closes, []int{1}) {
		t.Errorf("UTC D: orders %v closes %v, want [4] [1]", orders, closes)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAssetHistory(t *testing.T) {
	events := goldenLog(t)
	g := &testLog{t: t, events: events}
	// D+1 03:00: 1 BTC, 100 USDT, 2 ETH on binance. Last prices: BTC 95 (#9), ETH 10 (#5).
	g.add(domain.BalanceStream("binance"), domain.TypeBalancesObserved, at(1, 3, 0), domain.BalancesObserved{Exchange: "binance",
		Balances: []domain.AssetBalance{{Asset: "BTC", Available: dec("0.5"), OnOrder: dec("0.5")}, {Asset: "USDT", Available: dec("100")},
			{Asset: "ETH", Available: dec("2")}, {Asset: "XYZ", Available: dec("7")}}})
	g.add(domain.BalanceStream("binance"), domain.TypeBalancesObserved, at(1, 13, 0), domain.BalancesObserved{Exchange: "binance",
		Balances: []domain.AssetBalance{{Asset: "USDT", Available: dec("50")}, {Asset: "ETH", Available: dec("1")}}})
	l := replay(t, domain.LOFO, g.events)
	pts := l.AssetHistory("binance", "USDT", at(1, 0, 0).UnixMilli(), at(2, 0, 0).UnixMilli())
	// 1×95 + 100 + 2×10 = 215 (XYZ has no price); then 50 + 1×12 (#6) = 62
	if len(pts) != 2 || decimal.Decimal(pts[0].Amount) != dec("215") || decimal.Decimal(pts[1].Amount) != dec("62") ||
		pts[0].BaseKey != "binance/USDT" || pts[1].ID != 2 {
		t.Fatalf("points = %+v", pts)
	}
	// What the sum leaves out is named, not silently dropped.
	if fmt.Sprint(pts[0].Unpriced) != "[XYZ]" || pts[1].Unpriced != nil {
		t.Fatalf("unpriced = %v and %v, want [XYZ] and none", pts[0].Unpriced, pts[1].Unpriced)
	}
	// Valued in BTC: ETH via USDT is not a direct pair; USDT via USDT-BTC is 1/95.
	pts = l.AssetHistory("binance", "BTC", at(1, 0, 0).UnixMilli(), at(1, 4, 0).UnixMilli())
	// 1 + 100/95 (1/95 = 0.010526315789 → ×100 = 1.0526315789)
	if len(pts) != 1 || decimal.Decimal(pts[0].Amount) != dec("2.0526315789") || fmt.Sprint(pts[0].Unpriced) != "[ETH XYZ]" {
		t.Fatalf("points in BTC = %+v", pts)
	}
}

// Every balance snapshot is a point, however close the next one: ten
// fills in a minute move the value ten times (a point per 15-minute slot
// showed them as one).
func TestAssetHistoryHasAPointPerSnapshot(t *testing.T) {
	events := goldenLog(t)
	g := &testLog{t: t, events: events}
	for i, usdt := range []string{"100", "90", "80"} {
		g.add(domain.BalanceStream("binance"), domain.TypeBalancesObserved, at(1, 3, i), domain.BalancesObserved{Exchange: "binance",
			Balances: []domain.AssetBalance{{Asset: "USDT", Available: dec(usdt)}}})
	}
	l := replay(t, domain.LOFO, g.events)
	pts := l.AssetHistory("binance", "USDT", at(1, 0, 0).UnixMilli(), at(2, 0, 0).UnixMilli())
	if len(pts) != 3 {
		t.Fatalf("%d points for 3 snapshots within a minute: %+v", len(pts), pts)
	}
	for i, want := range []string{"100", "90", "80"} {
		if decimal.Decimal(pts[i].Amount) != dec(want) || pts[i].Timestamp != at(1, 3, i).UnixMilli() || pts[i].ID != int64(i+1) {
			t.Errorf("point %d = %+v, want %s at %d", i, pts[i], want, at(1, 3, i).UnixMilli())
		}
	}
}

func TestLoadZone(t *testing.T) {
	for _, z := range []string{"", "Local", "Mars/Olympus", "../etc/passwd"} {
		if _, err := LoadZone(z); domain.ErrorCode(err) != domain.EINVALID {
			t.Errorf("LoadZone(%q) err = %v, want EINVALID", z, err)
		}
	}
	for _, z := range []string{"UTC", "Asia/Kathmandu", "Australia/Eucla", "Asia/Kolkata"} {
		if _, err := LoadZone(z); err != nil {
			t.Errorf("LoadZone(%q): %v", z, err)
		}
	}
}

// TestFillOnlyInItsOwnOrderStream: an order's id is read from its stream
// name exactly as domain.OrderStream writes it, so "order-007" is not
// order 7: its fill is refused and order 7 keeps no record of it.
func TestFillOnlyInItsOwnOrderStream(t *testing.T) {
	g := &testLog{t: t}
	g.order(7, "binance", "USDT-BTC", domain.Buy, "1", at(0, 10, 0))
	l := replay(t, domain.LOFO, g.events)
	f := domain.OrderFilled{FillID: "f", Price: dec("100"), Quantity: dec("1"), Fee: dec("0"), FeeAsset: "USDT"}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	e := domain.Event{Stream: "order-007", Type: domain.TypeOrderFilled, Time: at(0, 10, 0).UnixMilli(), Position: 2, Data: b}
	if err := l.Apply(&e); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("fill on %q: err = %v, want EINVALID", e.Stream, err)
	}
	if recs := l.Orders("binance/USDT-BTC"); len(recs) != 0 {
		t.Errorf("order 7 has %d records after a fill on %q, want none", len(recs), e.Stream)
	}
}
