// Package pnltest is the conformance suite of the PNL read contract
// (projections.PnlReader): every reader — the in-memory Ledger and the
// ClickHouse reader — runs the same hand-computed cases through Run.
package pnltest

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
	"github.com/tradeledger/tradeledger/projections"
)

// Entry is one event of a case's log, in log order: its stream and the
// event (type, time and payload set; positions and versions are the
// store's).
type Entry struct {
	Stream string
	Event  domain.Event
}

// Open returns a reader over log (in order) whose figures use method; it
// fails or skips t when it cannot.
type Open func(t *testing.T, log []Entry, method domain.PnlMethod) projections.PnlReader

// day0 is D = 2024-03-10 (UTC). Asia/Kathmandu is UTC+05:45.
var day0 = time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)

func at(day, hh, mm int) time.Time {
	return day0.AddDate(0, 0, day).Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
}

// Log is the suite's log (UTC; Kathmandu local in brackets):
//
//	binance/USDT-BTC (the worked example of domain/pnl.go)
//	 #1 buy 1 @ 100 fee 0.1 USDT      D 10:00 [D 15:45]    lot A {1, 100.1}
//	 #2 buy 1 @ 90 fee 0.09 USDT      D 11:00 [D 16:45]    lot B {1, 90.09}
//	 #3 sell 1.5 @ 110 fee 0.165 USDT D 20:00 [D+1 01:45]
//	binance/USDT-ETH
//	 #4 buy 1 @ 10                    D 12:00 [D 17:45]    lot {1, 10}
//	 #5 sell 1 @ 9                    D+1 20:00 [D+2 01:45] pnl −1 (every method)
//	binance/BTC-ETH (quote BTC)
//	 #6 sell 1 @ 0.05, no lot         D 13:00              unmatchedBaseValue 0.05
func Log() []Entry {
	var l logBuilder
	add := l.add
	order := func(id int64, pair string, side domain.Side, amount string, price, qty, fee string, t time.Time) {
		l.filled(id, pair, side, amount, price, qty, fee, "", t)
	}
	add(domain.StreamConfig, domain.TypePairAdded, at(0, 0, 0), domain.PairAdded{Exchange: "binance", Pair: "USDT-BTC", Strategy: "gain", Enabled: true})
	order(1, "USDT-BTC", domain.Buy, "1", "100", "1", "0.1", at(0, 10, 0))
	order(2, "USDT-BTC", domain.Buy, "1", "90", "1", "0.09", at(0, 11, 0))
	order(4, "USDT-ETH", domain.Buy, "1", "10", "1", "0", at(0, 12, 0))
	order(6, "BTC-ETH", domain.Sell, "1", "0.05", "1", "0", at(0, 13, 0))
	order(3, "USDT-BTC", domain.Sell, "1.5", "110", "1.5", "0.165", at(0, 20, 0))
	order(5, "USDT-ETH", domain.Sell, "1", "9", "1", "0", at(1, 20, 0))
	return l.out
}

// expected figures per method, computed by hand (domain/pnl.go's worked
// example for USDT-BTC):
//
//	LOFO: #3 takes B (90.09) + 0.5 of A (50.05) = 140.14: pnl 165 − 0.165 − 140.14 = 24.695;
//	      A keeps {0.5, 50.05}: ABP 100.1, unrealized 0.5×110 − 50.05 = 4.95
//	FIFO: #3 takes A (100.1) + 0.5 of B (45.045) = 145.145: pnl 19.69;
//	      B keeps {0.5, 45.045}: ABP 90.09, unrealized 55 − 45.045 = 9.955
//	Average: pool {2, 190.19}, 1.5 costs 142.6425: pnl 22.1925;
//	      {0.5, 47.5475}: ABP 95.095, unrealized 55 − 47.5475 = 7.4525
//
// USDT over both pairs: pnl − 1, invested + 10.
type expected struct {
	pnl, invested, abp, inventory, unrealized string // USDT-BTC
	usdtPnl, usdtInvested                     string // every USDT pair
}

var cases = []struct {
	m domain.PnlMethod
	w expected
}{
	{domain.LOFO, expected{"24.695", "140.14", "100.1", "50.05", "4.95", "23.695", "150.14"}},
	{domain.FIFO, expected{"19.69", "145.145", "90.09", "45.045", "9.955", "18.69", "155.145"}},
	{domain.Average, expected{"22.1925", "142.6425", "95.095", "47.5475", "7.4525", "21.1925", "152.6425"}},
	// LIFO takes the newest lot B first, then 0.5 of A: LOFO's figures;
	// HIFO the dearest, A, then 0.5 of B: FIFO's (methodCases tells the
	// five apart).
	{domain.LIFO, expected{"24.695", "140.14", "100.1", "50.05", "4.95", "23.695", "150.14"}},
	{domain.HIFO, expected{"19.69", "145.145", "90.09", "45.045", "9.955", "18.69", "155.145"}},
}

// MethodsLog is a log on which the five methods consume different lots
// (domain/pnl_test.go's TestLotsMethodsGolden), on binance/USDT-SOL, one
// fill an hour from D 01:00:
//
//	#11 buy 1 @ 10 → A {1, 10}    #12 buy 2 @ 30 → B {2, 60}
//	#13 buy 1 @ 20 → C {1, 20}    #14 buy 1 @ 40 → D {1, 40}
//	#15 sell 2 @ 35 fee 0.2: proceeds 70, pnl = 70 − 0.2 − cost of the lots taken
func MethodsLog() []Entry {
	var l logBuilder
	fill := func(id int64, side domain.Side, price, qty, fee string, t time.Time) {
		l.filled(id, "USDT-SOL", side, qty, price, qty, fee, "USDT", t)
	}
	fill(11, domain.Buy, "10", "1", "0", at(0, 1, 0))
	fill(12, domain.Buy, "30", "2", "0", at(0, 2, 0))
	fill(13, domain.Buy, "20", "1", "0", at(0, 3, 0))
	fill(14, domain.Buy, "40", "1", "0", at(0, 4, 0))
	fill(15, domain.Sell, "35", "2", "0.2", at(0, 5, 0))
	return l.out
}

// methodCases are MethodsLog's figures per method, by hand: the lots #15
// takes (invested), pnl = 69.8 − invested, the cost of the 3 left, ABP =
// left ÷ 3, unrealized = 3 × 35 − left.
//
//	FIFO    A + 1 of B = 10 + 30 = 40    pnl 29.8   left 90
//	LIFO    D + C = 40 + 20 = 60         pnl 9.8    left 70
//	HIFO    D + 1 of B = 40 + 30 = 70    pnl −0.2   left 60
//	LOFO    A + C = 10 + 20 = 30         pnl 39.8   left 100
//	Average 2/5 of the pool {5, 130} = 52 pnl 17.8  left 78
var methodCases = []struct {
	m                   domain.PnlMethod
	invested, pnl, left string
	unrealized          string
}{
	{domain.FIFO, "40", "29.8", "90", "15"},
	{domain.LIFO, "60", "9.8", "70", "35"},
	{domain.HIFO, "70", "-0.2", "60", "45"},
	{domain.LOFO, "30", "39.8", "100", "5"},
	{domain.Average, "52", "17.8", "78", "27"},
}

// Run runs every case against the readers open returns.
func Run(t *testing.T, open Open) {
	for _, c := range cases {
		t.Run(c.m.String(), func(t *testing.T) {
			r := open(t, Log(), c.m)
			testTotal(t, r, c.m, c.w)
			testSum(t, r, c.w)
			testOverview(t, r, c.w)
			testDaily(t, r, c.w)
			testMixed(t, r)
			testFees(t, open(t, FeesLog(), c.m))
			testWide(t, open(t, WideLog(), c.m))
			testSums(t, open(t, SumsLog(), c.m))
		})
	}
	for _, c := range methodCases {
		t.Run("methods/"+c.m.String(), func(t *testing.T) {
			r := open(t, MethodsLog(), c.m)
			tot, err := r.Total("binance/USDT-SOL")
			if err != nil {
				t.Fatal(err)
			}
			num(t, "total.pnl", tot.Pnl, c.pnl)
			num(t, "total.invested", tot.Invested, c.invested)
			num(t, "total.inventory_cost", tot.InventoryCost, c.left)
			num(t, "total.ABP", tot.ABP, decimal.MustDecimal(c.left).DivInt(3).String())
			num(t, "total.unrealizedPnl", tot.UnrealizedPnl, c.unrealized)
			num(t, "total.balance", tot.Balance, "3")
			if tot.Method != c.m.String() {
				t.Errorf("total.method = %q, want %q", tot.Method, c.m)
			}
		})
	}
}

func num(t *testing.T, name string, got decimal.Number, want string) {
	t.Helper()
	if decimal.Decimal(got) != decimal.MustDecimal(want) {
		t.Errorf("%s = %s, want %s", name, decimal.Decimal(got), want)
	}
}

func testTotal(t *testing.T, r projections.PnlReader, m domain.PnlMethod, w expected) {
	tot, err := r.Total("binance/USDT-BTC")
	if err != nil {
		t.Fatal(err)
	}
	num(t, "total.pnl", tot.Pnl, w.pnl)
	num(t, "total.invested", tot.Invested, w.invested)
	num(t, "total.ABP", tot.ABP, w.abp)
	num(t, "total.inventory_cost", tot.InventoryCost, w.inventory)
	num(t, "total.unrealizedPnl", tot.UnrealizedPnl, w.unrealized)
	num(t, "total.fees", tot.Fees, "0.355") // 0.1 + 0.09 + 0.165
	num(t, "total.balance", tot.Balance, "0.5")
	if tot.NumberOfTrades != 3 || tot.BuyCount != 2 || tot.SellCount != 1 || tot.Winning != 1 || tot.Losing != 0 ||
		tot.Unit != "USDT" || tot.Method != m.String() {
		t.Errorf("total: %+v", tot)
	}
	if _, err := r.Total("bad"); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("total of a malformed key: %v, want EINVALID", err)
	}
}

func testSum(t *testing.T, r projections.PnlReader, w expected) {
	s, err := r.Sum(projections.PnlScope{Exchange: "binance", Quote: "USDT"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Unit != "USDT" || s.Pnl != decimal.MustDecimal(w.usdtPnl) || s.Invested != decimal.MustDecimal(w.usdtInvested) || len(s.Pairs) != 2 {
		t.Errorf("sum: %+v, want USDT pnl %s invested %s over 2 pairs", s, w.usdtPnl, w.usdtInvested)
	}
	// Day D+1 alone (UTC) holds only #5: pnl −1, invested 10.
	s, err = r.Sum(projections.PnlScope{Keys: []string{"binance/USDT-ETH"}}, at(1, 0, 0).UnixMilli(), at(2, 0, 0).UnixMilli())
	if err != nil || s.Pnl != decimal.MustDecimal("-1") || s.Invested != decimal.MustDecimal("10") {
		t.Errorf("sum of D+1: %+v, %v", s, err)
	}
}

func testOverview(t *testing.T, r projections.PnlReader, w expected) {
	o, err := r.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}, Quote: "USDT"},
		Loc: time.UTC, Now: at(1, 22, 0)})
	if err != nil {
		t.Fatal(err)
	}
	num(t, "overview total.pnl", o.Total.Pnl, w.usdtPnl)
	num(t, "overview today.pnl", o.Today.Pnl, "-1") // D+1: #5
	num(t, "overview yesterday.pnl", o.Yesterday.Pnl, w.pnl)
	num(t, "overview heroTrade", o.Total.HeroTrade.Pnl, w.pnl)
	num(t, "overview fuckupTrade", o.Total.FuckupTrade.Pnl, "-1")
	if o.Unit != "USDT" || o.Total.NumberOfTrades != 5 || o.Total.Winning != 1 || o.Total.Losing != 1 || o.Total.WinRate != "50.00" ||
		len(o.PnlsPerPair) != 2 || len(o.DailyHistory) != 2 {
		t.Errorf("overview: %+v", o)
	}
	if _, err := r.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"nokey"}}, Loc: time.UTC, Now: at(1, 22, 0)}); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("overview of a malformed key: %v, want EINVALID", err)
	}
}

func testDaily(t *testing.T, r projections.PnlReader, w expected) {
	ktm, err := projections.LoadZone("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	// In Kathmandu #1 and #2 fall on D, #3 (D 20:00Z) on D+1.
	days, _, unit, err := r.Daily(projections.DailyQuery{Scope: projections.PnlScope{Keys: []string{"binance/USDT-BTC"}}, Loc: ktm})
	if err != nil {
		t.Fatal(err)
	}
	if unit != "USDT" || len(days) != 2 || days[0].Date != "2024-03-10" || days[0].NumberOfTrades != 2 || days[1].Date != "2024-03-11" || days[1].NumberOfTrades != 1 {
		t.Fatalf("daily in Kathmandu: %+v", days)
	}
	num(t, "daily D+1 pnl", days[1].Pnl, w.pnl)
	num(t, "daily D+1 cumulativePnl", days[1].CumulativePnl, w.pnl)
	num(t, "daily D+1 cumulativePnlPercent", days[1].CumulativePnlPercent,
		pnlmath.PnlPercent(decimal.MustDecimal(w.pnl), decimal.MustDecimal(w.invested)).String())
	// In UTC the three fills are on D.
	days, _, _, err = r.Daily(projections.DailyQuery{Scope: projections.PnlScope{Keys: []string{"binance/USDT-BTC"}}, Loc: time.UTC})
	if err != nil || len(days) != 1 || days[0].NumberOfTrades != 3 {
		t.Fatalf("daily in UTC: %+v, %v", days, err)
	}
	// A sell of coins never bought realizes nothing and reports its value.
	_, unm, unit, err := r.Daily(projections.DailyQuery{Scope: projections.PnlScope{Keys: []string{"binance/BTC-ETH"}}, Loc: time.UTC})
	if err != nil || unit != "BTC" || unm != decimal.MustDecimal("0.05") {
		t.Errorf("daily BTC-ETH: unmatched %s unit %s, %v", unm, unit, err)
	}
}

// testMixed: over USDT and BTC pairs a reader converts into the reporting
// currency (USDT: 5 fills against 1) with a per-quote breakdown in each
// quote's own currency; it never adds the currencies up. #6 (13:00)
// converts at the USDT-BTC pair's latest price at its time, #2's 90: its
// unmatched value 0.05 BTC is 4.5 USDT.
func testMixed(t *testing.T, r projections.PnlReader) {
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: at(1, 22, 0)}
	o, err := r.Overview(q)
	if err != nil {
		t.Fatalf("mixed overview: %v", err)
	}
	if o.Unit != "USDT" || len(o.PerQuote) != 2 || o.Total.NumberOfTrades != 6 {
		t.Errorf("mixed overview: unit %q perQuote %+v trades %d", o.Unit, o.PerQuote, o.Total.NumberOfTrades)
	}
	num(t, "perQuote.BTC.unmatchedBaseValue", o.PerQuote["BTC"].UnmatchedValue, "0.05")
	num(t, "mixed unmatchedBaseValue", o.Total.UnmatchedValue, "4.5")
	if len(o.Unconverted) != 0 {
		t.Errorf("mixed overview: unconverted %+v, want none", o.Unconverted)
	}
}

// FeesLog is the suite's log of fees in any asset and of conversions
// through several rates (issue 28), all on day D (UTC), every figure the
// same under every method (one lot at a time):
//
//	config: bot.REPORTING_CURRENCY USDT
//	09:30 RateObserved BNB = 500 USDT; 10:10 BNB = 600 USDT
//	binance/USDT-ETH
//	 #11 10:00 buy 2 @ 1000 fee 0.001 BNB     fee 0.001 × 500 = 0.5: lot {2, 2000.5}
//	 #12 10:20 sell 2 @ 1100 fee 0.0011 BNB   fee 0.0011 × 600 = 0.66: pnl 2200 − 0.66 − 2000.5 = 198.84
//	binance/USDT-SOL
//	 #13 11:00 buy 1 @ 100 fee 0.2 KCS        no KCS rate: unconverted, lot {1, 100}
//	 #14 11:30 sell 1 @ 110 fee 0.1 USDT      pnl 110 − 0.1 − 100 = 9.9
//	binance/USDT-XRP
//	 #15 12:00 buy 100 @ 0.5 fee 0.1 XRP      received 99.9, lot {99.9, 50}, fee 0.1 × 0.5 = 0.05
//	 #16 12:30 sell 99.9 @ 0.6 fee 0.05994 USDT  pnl 59.94 − 0.05994 − 50 = 9.88006; balance 0
//	binance/USDT-BTC #18 12:50 buy 0.1 @ 50000: BTC = 50000 USDT
//	binance/EUR-BTC  #17 13:00 buy 0.1 @ 40000: BTC = 40000 EUR (EUR → USDT: ÷ 40000 × 50000)
//	binance/EUR-SOL
//	 #19 13:10 buy 10 @ 100; #20 13:20 sell 10 @ 120: pnl 200 EUR = 250 USDT, invested 1000 EUR = 1250 USDT
//
// In USDT: pnl 198.84 + 9.9 + 9.88006 + 250 = 468.62006; invested 2000.5 +
// 100 + 50 + 1250 = 3400.5; unconvertedFees {KCS: 0.2}; 10 fills.
func FeesLog() []Entry {
	var l logBuilder
	add := l.add
	rate := func(base, quote, r string, t time.Time) {
		add(domain.RateStream("binance"), domain.TypeRateObserved, t, domain.RateObserved{Exchange: "binance", Base: base, Quote: quote, Rate: decimal.MustDecimal(r)})
	}
	order := func(id int64, pair string, side domain.Side, price, qty, fee, feeAsset string, t time.Time) {
		l.filled(id, pair, side, qty, price, qty, fee, feeAsset, t)
	}
	add(domain.StreamConfig, domain.TypeConfigReplaced, at(0, 0, 0), map[string]any{"config": map[string]any{
		"bot": map[string]any{"REPORTING_CURRENCY": "USDT"}, "pairs": map[string]any{}}})
	rate("BNB", "USDT", "500", at(0, 9, 30))
	order(11, "USDT-ETH", domain.Buy, "1000", "2", "0.001", "BNB", at(0, 10, 0))
	rate("BNB", "USDT", "600", at(0, 10, 10))
	order(12, "USDT-ETH", domain.Sell, "1100", "2", "0.0011", "BNB", at(0, 10, 20))
	order(13, "USDT-SOL", domain.Buy, "100", "1", "0.2", "KCS", at(0, 11, 0))
	order(14, "USDT-SOL", domain.Sell, "110", "1", "0.1", "USDT", at(0, 11, 30))
	order(15, "USDT-XRP", domain.Buy, "0.5", "100", "0.1", "XRP", at(0, 12, 0))
	order(16, "USDT-XRP", domain.Sell, "0.6", "99.9", "0.05994", "USDT", at(0, 12, 30))
	order(18, "USDT-BTC", domain.Buy, "50000", "0.1", "0", "USDT", at(0, 12, 50))
	order(17, "EUR-BTC", domain.Buy, "40000", "0.1", "0", "EUR", at(0, 13, 0))
	order(19, "EUR-SOL", domain.Buy, "100", "10", "0", "EUR", at(0, 13, 10))
	order(20, "EUR-SOL", domain.Sell, "120", "10", "0", "EUR", at(0, 13, 20))
	return l.out
}

// testFees checks FeesLog's figures (its comment has the arithmetic).
func testFees(t *testing.T, r projections.PnlReader) {
	eth, err := r.Total("binance/USDT-ETH")
	if err != nil {
		t.Fatal(err)
	}
	num(t, "fees ETH pnl", eth.Pnl, "198.84")
	num(t, "fees ETH fees", eth.Fees, "1.16")
	sol, _ := r.Total("binance/USDT-SOL")
	num(t, "fees SOL pnl", sol.Pnl, "9.9")
	num(t, "fees SOL fees", sol.Fees, "0.1")
	if len(sol.UnconvertedFees) != 1 {
		t.Errorf("fees SOL unconvertedFees = %v, want {KCS: 0.2}", sol.UnconvertedFees)
	}
	num(t, "fees SOL unconvertedFees.KCS", sol.UnconvertedFees["KCS"], "0.2")
	xrp, _ := r.Total("binance/USDT-XRP")
	num(t, "fees XRP pnl", xrp.Pnl, "9.88006")
	num(t, "fees XRP fees", xrp.Fees, "0.10994")
	num(t, "fees XRP balance", xrp.Balance, "0")
	num(t, "fees XRP inventory_cost", xrp.InventoryCost, "0")

	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: at(0, 23, 0)}
	o, err := r.Overview(q)
	if err != nil {
		t.Fatalf("fees overview: %v", err)
	}
	if o.Unit != "USDT" || o.Total.NumberOfTrades != 10 || len(o.Unconverted) != 0 {
		t.Errorf("fees overview: unit %q trades %d unconverted %+v; want USDT, 10, none", o.Unit, o.Total.NumberOfTrades, o.Unconverted)
	}
	num(t, "fees overview total.pnl", o.Total.Pnl, "468.62006")
	num(t, "fees overview today.pnl", o.Today.Pnl, "468.62006")
	num(t, "fees overview heroTrade", o.Total.HeroTrade.Pnl, "250")
	num(t, "fees overview perQuote.EUR.pnl", o.PerQuote["EUR"].Pnl, "200")
	num(t, "fees overview perQuote.USDT.pnl", o.PerQuote["USDT"].Pnl, "218.62006")
	num(t, "fees overview unconvertedFees.KCS", o.UnconvertedFees["KCS"], "0.2")
	if len(o.DailyHistory) != 1 {
		t.Fatalf("fees overview dailyHistory: %+v", o.DailyHistory)
	}
	num(t, "fees overview day pnl", o.DailyHistory[0].Pnl, "468.62006")

	s, err := r.Sum(projections.PnlScope{Keys: []string{"All"}}, 0, 0)
	if err != nil {
		t.Fatalf("fees sum: %v", err)
	}
	if s.Unit != "USDT" || s.Pnl != decimal.MustDecimal("468.62006") || s.Invested != decimal.MustDecimal("3400.5") {
		t.Errorf("fees sum: %s pnl %s invested %s; want USDT 468.62006 3400.5", s.Unit, s.Pnl, s.Invested)
	}
	num(t, "fees sum unconvertedFees.KCS", s.UnconvertedFees["KCS"], "0.2")

	days, _, unit, err := r.Daily(projections.DailyQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC})
	if err != nil || unit != "USDT" || len(days) != 1 {
		t.Fatalf("fees daily: %+v %s, %v", days, unit, err)
	}
	num(t, "fees daily pnl", days[0].Pnl, "468.62006")
}

// logBuilder builds the cases' logs: add appends any event, filled a limit
// order on binance and its one fill, order one filled whole without a fee.
type logBuilder struct{ out []Entry }

func (l *logBuilder) add(stream, typ string, t time.Time, data any) {
	l.out = append(l.out, Entry{Stream: stream, Event: domain.NewEvent(domain.NewManualClock(t), typ, data)})
}

// filled adds order id, a limit order of amount at price, and its fill of
// qty at price with fee in feeAsset ("": none named), both at t.
func (l *logBuilder) filled(id int64, pair string, side domain.Side, amount, price, qty, fee, feeAsset string, t time.Time) {
	l.add(domain.OrderStream(id), domain.TypeOrderRequested, t, domain.OrderRequested{OrderID: id, Exchange: "binance",
		Pair: pair, Side: side, Kind: domain.KindLimit, Amount: decimal.MustDecimal(amount), Price: decimal.MustDecimal(price), ClientOrderID: "c"})
	l.add(domain.OrderStream(id), domain.TypeOrderFilled, t, domain.OrderFilled{FillID: "f", Price: decimal.MustDecimal(price),
		Quantity: decimal.MustDecimal(qty), Fee: decimal.MustDecimal(fee), FeeAsset: feeAsset})
}

// order adds order id of qty at price, filled whole at once without a fee
// (fee asset USDT).
func (l *logBuilder) order(id int64, pair string, side domain.Side, price, qty string, t time.Time) {
	l.filled(id, pair, side, qty, price, qty, "0", "USDT", t)
}

// WideLog holds numbers beyond ±2^63 units of 10^-12 (±9,223,372.036854775808):
// a quantity of 10^15 at a 10-decimal price, single fills and a pair's
// volume beyond it, and a cumulative volume of 51.72 million USDT over four
// pairs. Day D (UTC; Kathmandu local in brackets: all on D), no fees, one
// lot at a time per pair (every method gives the same figures):
//
//	binance/USDT-BABYDOGE
//	 #21 01:00 buy 1,000,000,000,000,000 @ 0.0000000012   value 1,200,000: lot {10^15, 1,200,000}
//	 #22 02:00 sell 400,000,000,000,000 @ 0.0000000013    value 520,000, cost 480,000: pnl 40,000
//	          lot left {6×10^14, 720,000}: ABP 0.0000000012, unrealized 6×10^14 × 0.0000000013 − 720,000 = 60,000
//	binance/USDT-BTC  #23 03:00 buy 100 @ 60,000 (6,000,000); #24 03:30 sell 100 @ 65,000 (6,500,000): pnl 500,000
//	binance/USDT-ETH  #25 05:00 buy 4,000 @ 2,500 (10,000,000); #26 05:30 sell 4,000 @ 3,000 (12,000,000): pnl 2,000,000
//	binance/USDT-SOL  #27 07:00 buy 50,000 @ 150 (7,500,000); #28 07:30 sell 50,000 @ 160 (8,000,000): pnl 500,000
//	08:00 BalancesObserved binance: 6×10^14 BABYDOGE, 20,000,000 USDT: 780,000 + 20,000,000 = 20,780,000 USDT
//
// Over the four: pnl 3,040,000; invested 480,000 + 6,000,000 + 10,000,000 +
// 7,500,000 = 23,980,000; buys' value 24,700,000, sells' 27,020,000, volume
// 51,720,000; 8 trades, 4 winning.
func WideLog() []Entry {
	var l logBuilder
	order, add := l.order, l.add
	order(21, "USDT-BABYDOGE", domain.Buy, "0.0000000012", "1000000000000000", at(0, 1, 0))
	order(22, "USDT-BABYDOGE", domain.Sell, "0.0000000013", "400000000000000", at(0, 2, 0))
	order(23, "USDT-BTC", domain.Buy, "60000", "100", at(0, 3, 0))
	order(24, "USDT-BTC", domain.Sell, "65000", "100", at(0, 3, 30))
	order(25, "USDT-ETH", domain.Buy, "2500", "4000", at(0, 5, 0))
	order(26, "USDT-ETH", domain.Sell, "3000", "4000", at(0, 5, 30))
	order(27, "USDT-SOL", domain.Buy, "150", "50000", at(0, 7, 0))
	order(28, "USDT-SOL", domain.Sell, "160", "50000", at(0, 7, 30))
	add(domain.BalanceStream("binance"), domain.TypeBalancesObserved, at(0, 8, 0), domain.BalancesObserved{Exchange: "binance",
		Balances: []domain.AssetBalance{{Asset: "BABYDOGE", Available: decimal.MustDecimal("600000000000000")},
			{Asset: "USDT", Available: decimal.MustDecimal("20000000")}}})
	return l.out
}

// testWide checks WideLog's figures (its comment has the arithmetic): over
// all time and over a range, in UTC and in Kathmandu (whose days another
// read path answers).
func testWide(t *testing.T, r projections.PnlReader) {
	bd, err := r.Total("binance/USDT-BABYDOGE")
	if err != nil {
		t.Fatalf("wide total: %v", err)
	}
	num(t, "wide BABYDOGE pnl", bd.Pnl, "40000")
	num(t, "wide BABYDOGE invested", bd.Invested, "480000")
	num(t, "wide BABYDOGE balance", bd.Balance, "600000000000000")
	num(t, "wide BABYDOGE inventory_cost", bd.InventoryCost, "720000")
	num(t, "wide BABYDOGE ABP", bd.ABP, "0.0000000012")
	num(t, "wide BABYDOGE unrealizedPnl", bd.UnrealizedPnl, "60000")
	if bd.NumberOfTrades != 2 || bd.Winning != 1 {
		t.Errorf("wide BABYDOGE: %d trades, %d winning; want 2, 1", bd.NumberOfTrades, bd.Winning)
	}
	eth, _ := r.Total("binance/USDT-ETH")
	num(t, "wide ETH pnl", eth.Pnl, "2000000")
	num(t, "wide ETH invested", eth.Invested, "10000000")

	all := projections.PnlScope{Keys: []string{"All"}}
	pct := pnlmath.PnlPercent(decimal.MustDecimal("3040000"), decimal.MustDecimal("23980000")).String()
	for _, c := range []struct {
		name     string
		from, to int64
	}{{"wide overview", 0, 0}, {"wide overview of D", at(0, 0, 0).UnixMilli(), at(1, 0, 0).UnixMilli()}} {
		o, err := r.Overview(projections.OverviewQuery{Scope: all, Loc: time.UTC, Now: at(0, 23, 0), From: c.from, To: c.to})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if o.Unit != "USDT" || o.Total.NumberOfTrades != 8 || o.Total.Winning != 4 || len(o.DailyHistory) != 1 {
			t.Fatalf("%s: unit %q, %d trades, %d winning, %d days; want USDT, 8, 4, 1", c.name, o.Unit,
				o.Total.NumberOfTrades, o.Total.Winning, len(o.DailyHistory))
		}
		num(t, c.name+" total.pnl", o.Total.Pnl, "3040000")
		num(t, c.name+" total.buyBaseValue", o.Total.BuyBaseValue, "24700000")
		num(t, c.name+" total.sellBaseValue", o.Total.SellBaseValue, "27020000")
		num(t, c.name+" total.buyPnl", o.Total.BuyPnl, "60000")
		num(t, c.name+" heroTrade", o.Total.HeroTrade.Pnl, "2000000")
		num(t, c.name+" fuckupTrade", o.Total.FuckupTrade.Pnl, "40000")
		num(t, c.name+" today.pnl", o.Today.Pnl, "3040000")
		d := o.DailyHistory[0]
		num(t, c.name+" day totalVolume", d.TotalVolume, "51720000")
		num(t, c.name+" day pnl", d.Pnl, "3040000")
		num(t, c.name+" day cumulativePnl", d.CumulativePnl, "3040000")
		num(t, c.name+" day cumulativePnlPercent", d.CumulativePnlPercent, pct)
	}
	s, err := r.Sum(all, 0, 0)
	if err != nil || s.Pnl != decimal.MustDecimal("3040000") || s.Invested != decimal.MustDecimal("23980000") {
		t.Errorf("wide sum: pnl %s invested %s, %v; want 3040000, 23980000", s.Pnl, s.Invested, err)
	}

	ktm, err := projections.LoadZone("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []projections.DailyQuery{{Scope: all, Loc: time.UTC}, {Scope: all, Loc: ktm},
		{Scope: all, Loc: time.UTC, From: at(0, 0, 0).UnixMilli(), To: at(1, 0, 0).UnixMilli()}} {
		days, _, _, err := r.Daily(q)
		if err != nil || len(days) != 1 || days[0].Date != "2024-03-10" || days[0].NumberOfTrades != 8 {
			t.Fatalf("wide daily in %s [%d, %d): %+v, %v", q.Loc, q.From, q.To, days, err)
		}
		num(t, "wide daily totalVolume in "+q.Loc.String(), days[0].TotalVolume, "51720000")
		num(t, "wide daily pnl in "+q.Loc.String(), days[0].Pnl, "3040000")
	}
	// D 23:00 UTC is D+1 04:45 in Kathmandu: the fills are yesterday's.
	o, err := r.Overview(projections.OverviewQuery{Scope: all, Loc: ktm, Now: at(0, 23, 0)})
	if err != nil {
		t.Fatalf("wide overview in Kathmandu: %v", err)
	}
	num(t, "wide overview in Kathmandu total.pnl", o.Total.Pnl, "3040000")
	num(t, "wide overview in Kathmandu today.pnl", o.Today.Pnl, "0")
	num(t, "wide overview in Kathmandu yesterday.pnl", o.Yesterday.Pnl, "3040000")

	pts := r.AssetHistory("binance", "USDT", 0, at(1, 0, 0).UnixMilli())
	if len(pts) != 1 {
		t.Fatalf("wide asset history: %+v", pts)
	}
	num(t, "wide asset history amount", pts[0].Amount, "20780000")
}

// SumsLog's pairs each keep every figure within ±2^63 units of 10^-12
// (±9,223,372.036854775808), but their sums over pairs go beyond: a reader
// must not add them in 64 bits. Day D (UTC), no fees:
//
//	binance/USDT-BNB  #31 09:00 buy 1,000 @ 1,000 (1,000,000); #32 09:30 sell 1,000 @ 6,000 (6,000,000): pnl 5,000,000
//	binance/USDT-XRP  #33 10:00 buy 1,000,000 @ 1; #34 10:30 sell 1,000,000 @ 6: pnl 5,000,000
//	11:00 BalancesObserved binance: USDT 5,000,000 available and 5,000,000 on order: 10,000,000
//
// Over both: pnl 10,000,000, invested 2,000,000, volume 14,000,000, sells'
// value 12,000,000.
func SumsLog() []Entry {
	var l logBuilder
	order, add := l.order, l.add
	order(31, "USDT-BNB", domain.Buy, "1000", "1000", at(0, 9, 0))
	order(32, "USDT-BNB", domain.Sell, "6000", "1000", at(0, 9, 30))
	order(33, "USDT-XRP", domain.Buy, "1", "1000000", at(0, 10, 0))
	order(34, "USDT-XRP", domain.Sell, "6", "1000000", at(0, 10, 30))
	add(domain.BalanceStream("binance"), domain.TypeBalancesObserved, at(0, 11, 0), domain.BalancesObserved{Exchange: "binance",
		Balances: []domain.AssetBalance{{Asset: "USDT", Available: decimal.MustDecimal("5000000"), OnOrder: decimal.MustDecimal("5000000")}}})
	return l.out
}

// testSums checks SumsLog's figures over both pairs.
func testSums(t *testing.T, r projections.PnlReader) {
	all := projections.PnlScope{Keys: []string{"All"}}
	ktm, err := projections.LoadZone("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []*time.Location{time.UTC, ktm} {
		name := "sums overview in " + loc.String()
		o, err := r.Overview(projections.OverviewQuery{Scope: all, Loc: loc, Now: at(0, 23, 0)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		num(t, name+" total.pnl", o.Total.Pnl, "10000000")
		num(t, name+" total.sellBaseValue", o.Total.SellBaseValue, "12000000")
		period := o.Today.Pnl // D 23:00 UTC is D+1 04:45 in Kathmandu: D is yesterday there
		if loc != time.UTC {
			period = o.Yesterday.Pnl
		}
		num(t, name+" pnl of D", period, "10000000")
		if len(o.DailyHistory) != 1 {
			t.Fatalf("%s: days %+v", name, o.DailyHistory)
		}
		num(t, name+" day pnl", o.DailyHistory[0].Pnl, "10000000")
		num(t, name+" day cumulativePnl", o.DailyHistory[0].CumulativePnl, "10000000")
		num(t, name+" day totalVolume", o.DailyHistory[0].TotalVolume, "14000000")
		days, _, _, err := r.Daily(projections.DailyQuery{Scope: all, Loc: loc})
		if err != nil || len(days) != 1 {
			t.Fatalf("sums daily in %s: %+v, %v", loc, days, err)
		}
		num(t, "sums daily pnl in "+loc.String(), days[0].Pnl, "10000000")
		num(t, "sums daily totalVolume in "+loc.String(), days[0].TotalVolume, "14000000")
	}
	s, err := r.Sum(all, 0, 0)
	if err != nil || s.Pnl != decimal.MustDecimal("10000000") || s.Invested != decimal.MustDecimal("2000000") {
		t.Errorf("sums sum: pnl %s invested %s, %v; want 10000000, 2000000", s.Pnl, s.Invested, err)
	}
	pts := r.AssetHistory("binance", "USDT", 0, at(1, 0, 0).UnixMilli())
	if len(pts) != 1 {
		t.Fatalf("sums asset history: %+v", pts)
	}
	num(t, "sums asset history amount", pts[0].Amount, "10000000")
}
