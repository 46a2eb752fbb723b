package books

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// goldenSource is the realized report's hand-computed case: the lots of
// domain's TestLotsMethodsGolden, dated so that holding periods differ,
// on binance/USDT-SOL (UTC):
//
//	#11 2023-01-10 12:00 buy 1 @ 10 → A {1, 10}
//	#12 2023-06-01 12:00 buy 2 @ 30 → B {2, 60}
//	#13 2024-01-09 12:00 buy 1 @ 20 → C {1, 20}
//	#14 2024-01-10 12:00 buy 1 @ 40 → D {1, 40}
//	#15 2024-01-11 10:00 sell 2 @ 35, fee 0.2 USDT
//
// Holding days to 2024-01-11: A 366 (long: > 365), B 224, C 2, D 1.
// Rates USDT→EUR: 0.9 from 2023-01-01, 0.8 from 2023-06-01, 0.5 from
// 2024-01-01.
//
// And binance/BTC-ETH (no rate from BTC to EUR), #21 buy 1 @ 0.05 on
// 2024-01-02, #22 sell 1.5 @ 0.06 on 2024-01-03 with a fee of 1 BNB that
// no rate values: 1 matched against the lot, 0.5 unmatched.
func goldenSource() *memSource {
	m := newMemSource()
	sol := m.pair("binance", "USDT", "SOL")
	eth := m.pair("binance", "BTC", "ETH")
	m.fill(sol, buy(11, day(2023, 1, 10, 12), "10", "1", quoteFee("USDT", "0", 0)))
	m.fill(sol, buy(12, day(2023, 6, 1, 12), "30", "2", quoteFee("USDT", "0", 0)))
	m.fill(sol, buy(13, day(2024, 1, 9, 12), "20", "1", quoteFee("USDT", "0", 0)))
	m.fill(sol, buy(14, day(2024, 1, 10, 12), "40", "1", quoteFee("USDT", "0", 0)))
	m.fill(sol, sell(15, day(2024, 1, 11, 10), "35", "2", quoteFee("USDT", "0.2", day(2024, 1, 11, 10))))
	m.fill(eth, buy(21, day(2024, 1, 2, 0), "0.05", "1", quoteFee("BTC", "0", 0)))
	m.fill(eth, sell(22, day(2024, 1, 3, 0), "0.06", "1.5", Fee{Asset: "BNB", Amount: decimal.MustDecimal("1")}))
	m.rate("USDT", "EUR", day(2023, 1, 1, 0), "0.9")
	m.rate("USDT", "EUR", day(2023, 6, 1, 0), "0.8")
	m.rate("USDT", "EUR", day(2024, 1, 1, 0), "0.5")
	return m
}

func d(s string) decimal.Decimal { return decimal.MustDecimal(s) }

func eqN(t *testing.T, what string, got decimal.Number, want string) {
	t.Helper()
	if decimal.Decimal(got) != d(want) {
		t.Errorf("%s = %s, want %s", what, decimal.Decimal(got), want)
	}
}

// The #15 disposal under each method, lot by lot. The sell's proceeds are
// 2 × 35 = 70 and its fee 0.2, split over its two lots: 35 and 0.1 each.
// gain = 35 − 0.1 − cost of the lot used.
func TestRealizedGoldenPerMethod(t *testing.T) {
	type use struct {
		buy        int64
		qty, cost  string
		gain, term string
		days       int64
	}
	tests := []struct {
		m                 domain.PnlMethod
		uses              []use
		gain, short, long string
	}{
		// A: 35 − 0.1 − 10 = 24.9 (366 days: long); 1 of B: 35 − 0.1 − 30 = 4.9
		{domain.FIFO, []use{{11, "1", "10", "24.9", "long", 366}, {12, "1", "30", "4.9", "short", 224}}, "29.8", "4.9", "24.9"},
		// D: 35 − 0.1 − 40 = −5.1; C: 35 − 0.1 − 20 = 14.9
		{domain.LIFO, []use{{14, "1", "40", "-5.1", "short", 1}, {13, "1", "20", "14.9", "short", 2}}, "9.8", "9.8", "0"},
		// D (dearest) −5.1, then 1 of B 4.9
		{domain.HIFO, []use{{14, "1", "40", "-5.1", "short", 1}, {12, "1", "30", "4.9", "short", 224}}, "-0.2", "-0.2", "0"},
		// A 24.9 long, C 14.9
		{domain.LOFO, []use{{11, "1", "10", "24.9", "long", 366}, {13, "1", "20", "14.9", "short", 2}}, "39.8", "14.9", "24.9"},
		// the pool's 52 for the oldest quantities A and 1 of B, 26 each:
		// 35 − 0.1 − 26 = 8.9 each
		{domain.Average, []use{{11, "1", "26", "8.9", "long", 366}, {12, "1", "26", "8.9", "short", 224}}, "17.8", "8.9", "8.9"},
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			r, err := RealizedReport(goldenSource(), Query{From: day(2024, 1, 1, 0), To: day(2025, 1, 1, 0), Method: tt.m,
				Keys: []string{"binance/USDT-SOL"}}, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if r.Disposals != 1 || len(r.Rows) != 1 || len(r.Totals) != 1 {
				t.Fatalf("report %+v", r)
			}
			dd := r.Rows[0]
			eqN(t, "proceeds", dd.Proceeds, "70")
			eqN(t, "matched fee", dd.MatchedFee, "0.2")
			eqN(t, "gain", dd.Gain, tt.gain)
			if len(dd.Lots) != len(tt.uses) {
				t.Fatalf("lots %+v", dd.Lots)
			}
			for i, w := range tt.uses {
				u := dd.Lots[i]
				if u.BuyOrderID != w.buy || u.Term != w.term || u.HoldingDays != w.days {
					t.Errorf("lot %d: buy #%d %s %d days, want #%d %s %d", i, u.BuyOrderID, u.Term, u.HoldingDays, w.buy, w.term, w.days)
				}
				eqN(t, "lot quantity", u.Quantity, w.qty)
				eqN(t, "lot cost basis", u.CostBasis, w.cost)
				eqN(t, "lot proceeds", u.Proceeds, "35")
				eqN(t, "lot fee", u.Fee, "0.1")
				eqN(t, "lot gain", u.Gain, w.gain)
			}
			tot := r.Totals[0]
			if tot.Asset != "SOL" || tot.Quote != "USDT" || tot.Disposals != 1 || tot.Lots != 2 {
				t.Errorf("totals %+v", tot)
			}
			eqN(t, "total gain", tot.Gain, tt.gain)
			eqN(t, "short-term gain", tot.ShortTermGain, tt.short)
			eqN(t, "long-term gain", tot.LongTermGain, tt.long)
			eqN(t, "total proceeds", tot.Proceeds, "70")
			eqN(t, "total fees", tot.Fees, "0.2")
		})
	}
}

// In EUR (FIFO): A's cost 10 at 0.9 (2023-01-10) = 9, B's 30 at 0.8
// (2023-06-01 12:00, the rate of that midnight) = 24; each lot's proceeds
// 35 and fee 0.1 at 0.5 (2024-01-11) = 17.5 and 0.05. Gains: A 17.5 − 0.05
// − 9 = 8.45 (long), B 17.5 − 0.05 − 24 = −6.55 (short); 1.9 in all.
//
// BTC-ETH has no rate to EUR: its lot use (1 ETH: proceeds 0.06, cost
// 0.05, gain 0.01 BTC; the BNB fee unvalued) is listed as unconverted, and
// its BNB fee as an unconverted fee; 0.5 ETH sold without a lot is
// unmatched (proceeds 0.03 BTC).
func TestRealizedInReportingCurrency(t *testing.T) {
	r, err := RealizedReport(goldenSource(), Query{From: day(2024, 1, 1, 0), Method: domain.FIFO, Currency: "EUR"}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r.Disposals != 2 || len(r.Rows) != 2 || r.InCurrency == nil {
		t.Fatalf("report %+v", r)
	}
	// rows in time order: #22 (2024-01-03) then #15
	eth, sol := r.Rows[0], r.Rows[1]
	if eth.OrderID != 22 || sol.OrderID != 15 {
		t.Fatalf("rows %d, %d; want #22 then #15", eth.OrderID, sol.OrderID)
	}
	a, b := sol.Lots[0].InCurrency, sol.Lots[1].InCurrency
	if a == nil || b == nil || sol.InCurrency == nil {
		t.Fatalf("SOL lots not converted: %+v", sol.Lots)
	}
	eqN(t, "A cost in EUR", a.CostBasis, "9")
	eqN(t, "A proceeds in EUR", a.Proceeds, "17.5")
	eqN(t, "A fee in EUR", a.Fee, "0.05")
	eqN(t, "A gain in EUR", a.Gain, "8.45")
	eqN(t, "B cost in EUR", b.CostBasis, "24")
	eqN(t, "B gain in EUR", b.Gain, "-6.55")
	eqN(t, "disposal gain in EUR", sol.InCurrency.Gain, "1.9")
	c := r.InCurrency
	eqN(t, "EUR total gain", c.Total.Gain, "1.9")
	eqN(t, "EUR long-term", c.Total.LongTermGain, "8.45")
	eqN(t, "EUR short-term", c.Total.ShortTermGain, "-6.55")
	if len(c.Assets) != 1 || c.Assets[0].Asset != "SOL" {
		t.Errorf("EUR assets %+v", c.Assets)
	}
	if len(c.Unconverted) != 1 || c.Unconverted[0].Asset != "ETH" || c.Unconverted[0].Quote != "BTC" {
		t.Fatalf("unconverted %+v", c.Unconverted)
	}
	eqN(t, "unconverted ETH gain (BTC)", c.Unconverted[0].Gain, "0.01")
	if eth.InCurrency != nil || eth.Lots[0].InCurrency != nil {
		t.Errorf("ETH converted without a rate: %+v", eth)
	}
	if eth.Fee.Valued || eth.Fee.Asset != "BNB" {
		t.Errorf("ETH fee %+v, want BNB not valued", eth.Fee)
	}
	eqN(t, "ETH gain (fee unvalued: 0 in the gain)", eth.Gain, "0.01")
	eqN(t, "ETH unmatched", eth.Unmatched.Quantity, "0.5")
	eqN(t, "ETH unmatched proceeds", eth.Unmatched.Proceeds, "0.03")
	var ethTot *AssetTotals
	for i := range r.Totals {
		if r.Totals[i].Asset == "ETH" {
			ethTot = &r.Totals[i]
		}
	}
	if ethTot == nil || len(ethTot.UnconvertedFees) != 1 || ethTot.UnconvertedFees[0].Asset != "BNB" {
		t.Fatalf("ETH totals %+v", ethTot)
	}
	eqN(t, "unconverted BNB fees", ethTot.UnconvertedFees[0].Amount, "1")
	eqN(t, "ETH unmatched total", ethTot.Unmatched.Quantity, "0.5")
}

// Holding days count calendar days in the query's zone: a lot bought on
// 2024-01-10 23:30 UTC and sold 2024-01-11 00:30 UTC is held 1 day in UTC
// and 0 in Asia/Tokyo (both local times on 2024-01-11).
func TestRealizedHoldingDaysInZone(t *testing.T) {
	m := newMemSource()
	k := m.pair("x", "USDT", "BTC")
	t0 := time.Date(2024, 1, 10, 23, 30, 0, 0, time.UTC).UnixMilli()
	m.fill(k, buy(1, t0, "1", "1", quoteFee("USDT", "0", 0)))
	m.fill(k, sell(2, t0+3600_000, "2", "1", quoteFee("USDT", "0", 0)))
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	for _, c := range []struct {
		loc  *time.Location
		days int64
	}{{time.UTC, 1}, {tokyo, 0}} {
		r, err := RealizedReport(m, Query{Loc: c.loc, Method: domain.FIFO}, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Rows[0].Lots[0].HoldingDays; got != c.days {
			t.Errorf("%s: %d holding days, want %d", c.loc, got, c.days)
		}
	}
	// The holding period is a parameter: 0 days held is not more than 0.
	r, _ := RealizedReport(m, Query{Loc: tokyo, Method: domain.FIFO, HoldingPeriodDays: 1}, 0, 1)
	if r.Rows[0].Lots[0].Term != "short" || r.HoldingPeriodDays != 1 {
		t.Errorf("term %s with 1 day", r.Rows[0].Lots[0].Term)
	}
}

// Pages cut the same list: every disposal once, in order.
func TestRealizedPages(t *testing.T) {
	m := newMemSource()
	k := m.pair("x", "USDT", "BTC")
	for i := int64(0); i < 10; i++ {
		m.fill(k, buy(2*i, day(2024, 1, 1, 0)+i*1000, "1", "1", quoteFee("USDT", "0", 0)))
		m.fill(k, sell(2*i+1, day(2024, 1, 1, 0)+i*1000+500, "2", "1", quoteFee("USDT", "0", 0)))
	}
	var ids []int64
	for page := 0; page < 4; page++ {
		r, err := RealizedReport(m, Query{Method: domain.FIFO}, page, 3)
		if err != nil {
			t.Fatal(err)
		}
		if r.Disposals != 10 {
			t.Fatalf("disposals %d", r.Disposals)
		}
		for _, row := range r.Rows {
			ids = append(ids, row.OrderID)
		}
	}
	want := []int64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}
	if len(ids) != len(want) {
		t.Fatalf("ids %v", ids)
	}
	for i := range ids {
		if ids[i] != want[i] {
			t.Fatalf("ids %v, want %v", ids, want)
		}
	}
	// The JSON of an empty page is an empty list, not null.
	r, _ := RealizedReport(m, Query{Method: domain.FIFO}, 9, 3)
	b, _ := json.Marshal(r)
	var back map[string]any
	json.Unmarshal(b, &back)
	if rows, ok := back["rows"].([]any); !ok || len(rows) != 0 {
		t.Errorf("rows of an empty page: %v", back["rows"])
	}
}

// A fill recorded after the source's snapshot is not read: a report sees
// the source as it was when it started.
func TestRealizedSnapshot(t *testing.T) {
	m := goldenSource()
	snap := m.BookSnapshot()
	m.fill("binance/USDT-SOL", sell(16, day(2024, 1, 11, 11), "35", "1", quoteFee("USDT", "0", 0)))
	var got []Fill
	got, _ = m.BookFills(snap, "binance/USDT-SOL", Cursor{}, 100, got)
	if len(got) != 5 {
		t.Fatalf("%d fills under the old snapshot, want 5", len(got))
	}
}
