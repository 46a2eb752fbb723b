package projections

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
)

// mixedLog is the mixed-quote scenario of issue 14 §2, all on day D (UTC),
// fees 0 unless given:
//
//	binance/BTC-ETH (quote BTC)
//	 #1 buy 1 @ 0.06                      00:10  lot A {1, 0.06}; no USDT/BTC rate yet: unconverted
//	 #3 buy 1 @ 0.04                      00:30  lot B {1, 0.04}; rate 50000 (#2's fill)
//	 #4 sell 1.5 @ 0.08 fee 0.0012 BTC    01:10  value 0.12; rate 60000 (RateObserved 01:00)
//	 #9 sell 0.5 @ 0.1                    02:20  value 0.05; rate 70000 (#8's fill, 02:10)
//	binance/USDT-BTC (quote USDT; the conversion pair: its fills are rates)
//	 #2 buy 0.1 @ 50000                   00:20  lot {0.1, 5000}; BTC→USDT 50000
//	 #8 sell 0.05 @ 70000                 02:10  takes 2500: pnl 3500 − 2500 = 1000; BTC→USDT 70000
//	RateObserved binance BTC/USDT 60000   01:00
//	binance/USDT-XRP (quote USDT)
//	 #5 buy 100 @ 0.7 fee 0.07 USDT       01:20  lot L1 {100, 70.07}
//	 #6 buy 100 @ 0.5 fee 0.05 USDT       01:30  lot L2 {100, 50.05}
//	 #7 sell 150 @ 0.8 fee 0.12 USDT      02:00  value 120
//
// Fills: USDT 5 (#2 #5 #6 #7 #8), BTC 4: the reporting currency is USDT.
func mixedLog(t *testing.T, reporting string) []domain.Event {
	g := &testLog{t: t}
	if reporting != "" {
		g.add(domain.StreamConfig, domain.TypeConfigReplaced, at(0, 0, 0), map[string]any{"config": map[string]any{
			"bot": map[string]any{"REPORTING_CURRENCY": reporting}, "pairs": map[string]any{}}})
	}
	g.filled(1, "binance", "BTC-ETH", domain.Buy, "0.06", "1", "0", "BTC", at(0, 0, 10))
	g.filled(2, "binance", "USDT-BTC", domain.Buy, "50000", "0.1", "0", "USDT", at(0, 0, 20))
	g.filled(3, "binance", "BTC-ETH", domain.Buy, "0.04", "1", "0", "BTC", at(0, 0, 30))
	g.add(domain.RateStream("binance"), domain.TypeRateObserved, at(0, 1, 0), domain.RateObserved{Exchange: "binance", Base: "BTC", Quote: "USDT", Rate: dec("60000")})
	g.filled(4, "binance", "BTC-ETH", domain.Sell, "0.08", "1.5", "0.0012", "BTC", at(0, 1, 10))
	g.filled(5, "binance", "USDT-XRP", domain.Buy, "0.7", "100", "0.07", "USDT", at(0, 1, 20))
	g.filled(6, "binance", "USDT-XRP", domain.Buy, "0.5", "100", "0.05", "USDT", at(0, 1, 30))
	g.filled(7, "binance", "USDT-XRP", domain.Sell, "0.8", "150", "0.12", "USDT", at(0, 2, 0))
	g.filled(8, "binance", "USDT-BTC", domain.Sell, "70000", "0.05", "0", "USDT", at(0, 2, 10))
	g.filled(9, "binance", "BTC-ETH", domain.Sell, "0.1", "0.5", "0", "BTC", at(0, 2, 20))
	return g.events
}

// TestMixedQuoteGolden checks pnl/overview and pnl/sum over BTC and USDT
// pairs against figures computed by hand, under every method.
func TestMixedQuoteGolden(t *testing.T) {
	type want struct {
		pnl, invested, hero, fuckup, buyPnl string // total, in USDT
		usdtPnl, usdtInvested               string // perQuote USDT (own currency)
	}
	tests := []struct {
		m domain.PnlMethod
		w want
	}{
		// LOFO. BTC-ETH #4 takes B (0.04) + 0.5 of A (0.03) = 0.07:
		//   pnl 0.12 − 0.0012 − 0.07 = 0.0488 BTC × 60000 = 2928; invested 0.07 × 60000 = 4200
		// #9 takes the rest of A (0.03): pnl 0.05 − 0.03 = 0.02 × 70000 = 1400; invested 0.03 × 70000 = 2100
		// XRP #7 takes L2 (50.05) + 50 of L1 (35.035) = 85.085: pnl 120 − 0.12 − 85.085 = 34.795
		// USDT-BTC #8: pnl 1000, invested 2500
		// pnl = 2928 + 1400 + 34.795 + 1000 = 5362.795; invested = 4200 + 2100 + 85.085 + 2500 = 8885.085
		// hero #4 2928, fuckup #7 34.795
		// buyPnl: USDT-BTC 0.05 × 70000 − 2500 = 1000; XRP 50 × 0.8 − 35.035 = 4.965 → 1004.965
		{domain.LOFO, want{"5362.795", "8885.085", "2928", "34.795", "1004.965", "1034.795", "2585.085"}},
		// FIFO. #4 takes A (0.06) + 0.5 of B (0.02) = 0.08: pnl 0.0388 × 60000 = 2328; invested 4800
		// #9 takes the rest of B (0.02): pnl 0.03 × 70000 = 2100; invested 1400
		// XRP #7 takes L1 (70.07) + 50 of L2 (25.025) = 95.095: pnl 120 − 0.12 − 95.095 = 24.785
		// pnl = 2328 + 2100 + 24.785 + 1000 = 5452.785; invested = 4800 + 1400 + 95.095 + 2500 = 8795.095
		// hero #4 2328, fuckup #7 24.785; buyPnl 1000 + (40 − 25.025) = 1014.975
		{domain.FIFO, want{"5452.785", "8795.095", "2328", "24.785", "1014.975", "1024.785", "2595.095"}},
		// Average. #4: pool {2, 0.10}, 1.5 costs 0.075: pnl 0.0438 × 60000 = 2628; invested 4500
		// #9: pool {0.5, 0.025}: pnl 0.025 × 70000 = 1750; invested 1750
		// XRP: pool {200, 120.12}, 150 costs 90.09: pnl 120 − 0.12 − 90.09 = 29.79
		// pnl = 2628 + 1750 + 29.79 + 1000 = 5407.79; invested = 4500 + 1750 + 90.09 + 2500 = 8840.09
		// hero #4 2628, fuckup #7 29.79; buyPnl 1000 + (40 − 30.03) = 1009.97
		{domain.Average, want{"5407.79", "8840.09", "2628", "29.79", "1009.97", "1029.79", "2590.09"}},
	}
	num := func(t *testing.T, name string, got decimal.Number, want string) {
		t.Helper()
		if decimal.Decimal(got) != dec(want) {
			t.Errorf("%s = %s, want %s", name, decimal.Decimal(got), want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			l := replay(t, tt.m, mixedLog(t, ""))
			o, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: at(0, 23, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if o.Unit != "USDT" {
				t.Fatalf("unit = %q, want USDT (5 USDT fills against 4 BTC fills)", o.Unit)
			}
			num(t, "total.pnl", o.Total.Pnl, tt.w.pnl)
			num(t, "today.pnl", o.Today.Pnl, tt.w.pnl)
			num(t, "heroTrade", o.Total.HeroTrade.Pnl, tt.w.hero)
			num(t, "fuckupTrade", o.Total.FuckupTrade.Pnl, tt.w.fuckup)
			num(t, "buyPnl", o.Total.BuyPnl, tt.w.buyPnl)
			if o.Total.HeroTrade.Time != at(0, 1, 10).UnixMilli() {
				t.Errorf("hero time %d, want #4's", o.Total.HeroTrade.Time)
			}
			// Counts are currency-free: every fill, #1 (unconverted) included.
			if o.Total.NumberOfTrades != 9 || o.Total.Winning != 4 || o.Total.BuyCount != 5 || o.Total.SellCount != 4 {
				t.Errorf("counts: %+v", o.Total)
			}
			if len(o.DailyHistory) != 1 || o.DailyHistory[0].NumberOfTrades != 9 {
				t.Fatalf("dailyHistory: %+v", o.DailyHistory)
			}
			num(t, "dailyHistory[0].pnl", o.DailyHistory[0].Pnl, tt.w.pnl)
			num(t, "cumulativePnlPercent", o.DailyHistory[0].CumulativePnlPercent,
				pnlmath.PnlPercent(dec(tt.w.pnl), dec(tt.w.invested)).String())
			// perQuote: each quote in its own currency. BTC: every ETH was
			// sold: 0.12 + 0.05 − 0.0012 − 0.10 = 0.0688 under every method.
			num(t, "perQuote.BTC.pnl", o.PerQuote["BTC"].Pnl, "0.0688")
			num(t, "perQuote.USDT.pnl", o.PerQuote["USDT"].Pnl, tt.w.usdtPnl)
			if len(o.PerQuote) != 2 || o.PerQuote["BTC"].NumberOfTrades != 4 || o.PerQuote["USDT"].NumberOfTrades != 5 {
				t.Errorf("perQuote: %+v", o.PerQuote)
			}
			// #1 came before any USDT/BTC rate: one BTC fill unconverted
			// (a buy: no pnl, nothing invested).
			if u, ok := o.Unconverted["BTC"]; !ok || len(o.Unconverted) != 1 || u.Trades != 1 || !decimal.Decimal(u.Pnl).IsZero() || !decimal.Decimal(u.Invested).IsZero() {
				t.Errorf("unconverted: %+v", o.Unconverted)
			}
			// Per pair figures stay in their own quote.
			for _, p := range o.PnlsPerPair {
				if p.Key == "binance/BTC-ETH" {
					num(t, "pnlsPerPair BTC-ETH", p.Pnl, "0.0688")
				}
			}

			s, err := l.Sum(PnlScope{Exchange: "binance"}, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if s.Unit != "USDT" || s.Pnl != dec(tt.w.pnl) || s.Invested != dec(tt.w.invested) {
				t.Errorf("sum: unit %s pnl %s invested %s, want USDT %s %s", s.Unit, s.Pnl, s.Invested, tt.w.pnl, tt.w.invested)
			}
			num(t, "sum perQuote.USDT.invested", s.PerQuote["USDT"].Invested, tt.w.usdtInvested)
			if u := s.Unconverted["BTC"]; u.Trades != 1 || len(s.Unconverted) != 1 {
				t.Errorf("sum unconverted: %+v", s.Unconverted)
			}

			// quote narrows to one currency: no conversion, no breakdown.
			ob, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}, Quote: "BTC"}, Loc: time.UTC, Now: at(0, 23, 0)})
			if err != nil || ob.Unit != "BTC" || decimal.Decimal(ob.Total.Pnl) != dec("0.0688") || ob.PerQuote != nil || ob.Unconverted != nil {
				t.Errorf("quote BTC: %+v, %v", ob, err)
			}
		})
	}
}

// TestMixedQuoteReportingBTC: bot.REPORTING_CURRENCY BTC converts the USDT
// amounts by dividing by the BTC/USDT rate (the pair is USDT-BTC):
//
//	XRP #7 02:00, latest rate ≤ 02:00 is 60000 (01:00): pnl 34.795 ÷ 60000 = 0.0005799166666… → 0.000579916667
//	USDT-BTC #8 02:10 at its own price 70000: pnl 1000 ÷ 70000 = 0.0142857142857… → 0.014285714286
//	BTC own: 0.0688
//	total (LOFO) = 0.0688 + 0.000579916667 + 0.014285714286 = 0.083665630953
//	invested: BTC 0.07 + 0.03 = 0.10; 85.085 ÷ 60000 = 0.001418083333; 2500 ÷ 70000 = 0.035714285714
//	→ 0.137132369047
//
// Every USDT fill has a rate at its time (#2 at its own price), so nothing
// is unconverted.
func TestMixedQuoteReportingBTC(t *testing.T) {
	l := replay(t, domain.LOFO, mixedLog(t, "BTC"))
	o, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: at(0, 23, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Unit != "BTC" || decimal.Decimal(o.Total.Pnl) != dec("0.083665630953") || len(o.Unconverted) != 0 {
		t.Fatalf("unit %s pnl %s unconverted %+v, want BTC 0.083665630953 none", o.Unit, decimal.Decimal(o.Total.Pnl), o.Unconverted)
	}
	s, err := l.Sum(PnlScope{Keys: []string{"All"}}, 0, 0)
	if err != nil || s.Invested != dec("0.137132369047") || s.Pnl != dec("0.083665630953") {
		t.Fatalf("sum: %+v %v", s, err)
	}
}

// TestMixedQuoteReplay: a ledger that answered queries while the log was
// applied gives the same bodies, digit for digit, as a fresh replay of the
// same log, and a second replay gives them again.
func TestMixedQuoteReplay(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average} {
		events := mixedLog(t, "")
		q := OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: at(0, 23, 0)}
		body := func(l *Ledger) string {
			o, err := l.Overview(q)
			if err != nil {
				t.Fatal(err)
			}
			s, err := l.Sum(PnlScope{Exchange: "binance"}, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal([]any{o, s})
			return string(b)
		}
		live := NewLedger(m)
		for i := range events {
			if err := live.Apply(&events[i]); err != nil {
				t.Fatal(err)
			}
			body(live) // reads between events change nothing
		}
		a, b, c := body(live), body(replay(t, m, events)), body(replay(t, m, mixedLog(t, "")))
		if a != b || b != c {
			t.Fatalf("%s: live and replays differ:\n%s\n%s\n%s", m, a, b, c)
		}
	}
}

// TestOneQuoteNoConversion: in a log of one quote every fill is a rate to
// its base, but no base is a quote with fills: nothing is converted, and
// the rate book keeps no point of fills (the order records are their
// rates: the replay's memory stays what it was).
func TestOneQuoteNoConversion(t *testing.T) {
	g := &testLog{t: t}
	for i := int64(1); i <= 20; i++ {
		g.order(i, "binance", "USDT-BTC", domain.Buy, "1", at(0, int(i), 0))
		g.fill(i, "100", "1", "0", "USDT", at(0, int(i), 0))
	}
	l := replay(t, domain.LOFO, g.events)
	if n, pts := len(l.conv.pairs), len(l.conv.Rates.Points("USDT", "BTC")); n != 0 || pts != 0 {
		t.Fatalf("one quote: %d converted series, %d rate points; want 0 and 1", n, pts)
	}
}
