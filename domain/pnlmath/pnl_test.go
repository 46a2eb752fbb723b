package pnlmath

import (
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

func pnlDec(s string) decimal.Decimal { return decimal.MustDecimal(s) }

type fillCase struct {
	side             domain.Side
	price, qty, fee  string
	wantPnl          string
	wantMatched      string
	wantUnmatchedVal string
	wantABP, wantInv string
}

// The worked example of the file comment, plus a sell with no lot left, under
// each method. Arithmetic in the comments.
func TestLotsWorkedExample(t *testing.T) {
	common := []fillCase{
		// buy 1 @ 100 fee 0.1 → lot A {1, 100.1}
		{side: domain.Buy, price: "100", qty: "1", fee: "0.1", wantPnl: "0", wantMatched: "1", wantUnmatchedVal: "0", wantABP: "100.1", wantInv: "100.1"},
		// buy 1 @ 90 fee 0.09 → lot B {1, 90.09}; inventory 190.19 / 2 = 95.095
		{side: domain.Buy, price: "90", qty: "1", fee: "0.09", wantPnl: "0", wantMatched: "1", wantUnmatchedVal: "0", wantABP: "95.095", wantInv: "190.19"},
	}
	tests := []struct {
		method domain.PnlMethod
		fills  []fillCase
	}{
		{domain.LOFO, []fillCase{
			// sell 1.5 @ 110 fee 0.165: B (90.09) + 0.5 of A (100.1×0.5 = 50.05) = 140.14
			// pnl = 165 − 0.165 − 140.14 = 24.695; A keeps {0.5, 50.05}: ABP 100.1
			{side: domain.Sell, price: "110", qty: "1.5", fee: "0.165", wantPnl: "24.695", wantMatched: "1.5", wantUnmatchedVal: "0", wantABP: "100.1", wantInv: "50.05"},
			// sell 1 @ 80 fee 0.08: 0.5 matched (cost 50.05), 0.5 unmatched
			// matched fee = 0.08×0.5/1 = 0.04; pnl = 80×0.5 − 0.04 − 50.05 = −10.09
			// unmatchedBaseValue = 80×0.5 = 40
			{side: domain.Sell, price: "80", qty: "1", fee: "0.08", wantPnl: "-10.09", wantMatched: "0.5", wantUnmatchedVal: "40", wantABP: "0", wantInv: "0"},
		}},
		{domain.FIFO, []fillCase{
			// A (100.1) + 0.5 of B (90.09×0.5 = 45.045) = 145.145
			// pnl = 165 − 0.165 − 145.145 = 19.69; B keeps {0.5, 45.045}: ABP 90.09
			{side: domain.Sell, price: "110", qty: "1.5", fee: "0.165", wantPnl: "19.69", wantMatched: "1.5", wantUnmatchedVal: "0", wantABP: "90.09", wantInv: "45.045"},
			// pnl = 40 − 0.04 − 45.045 = −5.085
			{side: domain.Sell, price: "80", qty: "1", fee: "0.08", wantPnl: "-5.085", wantMatched: "0.5", wantUnmatchedVal: "40", wantABP: "0", wantInv: "0"},
		}},
		{domain.Average, []fillCase{
			// pool {2, 190.19}; 1.5 costs 190.19×1.5/2 = 142.6425
			// pnl = 164.835 − 142.6425 = 22.1925; pool {0.5, 47.5475}: ABP 95.095
			{side: domain.Sell, price: "110", qty: "1.5", fee: "0.165", wantPnl: "22.1925", wantMatched: "1.5", wantUnmatchedVal: "0", wantABP: "95.095", wantInv: "47.5475"},
			// pnl = 40 − 0.04 − 47.5475 = −7.5875
			{side: domain.Sell, price: "80", qty: "1", fee: "0.08", wantPnl: "-7.5875", wantMatched: "0.5", wantUnmatchedVal: "40", wantABP: "0", wantInv: "0"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.method.String(), func(t *testing.T) {
			l := Lots{Method: tt.method}
			for i, f := range append(append([]fillCase{}, common...), tt.fills...) {
				r := l.ApplyFill(f.side, pnlDec(f.price), pnlDec(f.qty), pnlDec(f.fee))
				if got, want := r.Pnl, pnlDec(f.wantPnl); got != want {
					t.Errorf("fill %d: pnl = %s, want %s", i, got, want)
				}
				if got, want := r.Matched, pnlDec(f.wantMatched); got != want {
					t.Errorf("fill %d: matched = %s, want %s", i, got, want)
				}
				if got, want := r.UnmatchedValue, pnlDec(f.wantUnmatchedVal); got != want {
					t.Errorf("fill %d: unmatched value = %s, want %s", i, got, want)
				}
				if got, want := l.ABP(), pnlDec(f.wantABP); got != want {
					t.Errorf("fill %d: ABP = %s, want %s", i, got, want)
				}
				if got, want := l.Cost(), pnlDec(f.wantInv); got != want {
					t.Errorf("fill %d: inventory cost = %s, want %s", i, got, want)
				}
			}
		})
	}
}

// LOFO keeps equal unit costs in arrival order and always takes the cheapest.
func TestLotsLOFOOrder(t *testing.T) {
	l := Lots{Method: domain.LOFO}
	l.Add(pnlDec("1"), pnlDec("30")) // unit 30
	l.Add(pnlDec("2"), pnlDec("20")) // unit 10
	l.Add(pnlDec("1"), pnlDec("10")) // unit 10, after the earlier 10
	l.Add(pnlDec("1"), pnlDec("20")) // unit 20
	// take 2.5: the {2,20} lot (cost 20), then 0.5 of {1,10} (cost 5)
	m, c := l.Take(pnlDec("2.5"))
	if m != pnlDec("2.5") || c != pnlDec("25") {
		t.Fatalf("take = %s, %s; want 2.5, 25", m, c)
	}
	// left: {0.5,5} {1,20} {1,30}: take 1 = 5 + 0.5×20 = 15
	m, c = l.Take(pnlDec("1"))
	if m != pnlDec("1") || c != pnlDec("15") {
		t.Fatalf("take = %s, %s; want 1, 15", m, c)
	}
	if got, want := l.Qty(), pnlDec("1.5"); got != want {
		t.Fatalf("qty = %s, want %s", got, want)
	}
	if got, want := l.Cost(), pnlDec("40"); got != want { // 10 + 30
		t.Fatalf("cost = %s, want %s", got, want)
	}
}

// Rounding never loses cost: consuming a lot in thirds gives back exactly
// its cost.
func TestLotsConserveCost(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO} {
		l := Lots{Method: m}
		l.Add(pnlDec("3"), pnlDec("10"))
		var total decimal.Decimal
		for i := 0; i < 3; i++ {
			_, c := l.Take(pnlDec("1"))
			total = total.Add(c)
		}
		if total != pnlDec("10") || !l.Cost().IsZero() || !l.Qty().IsZero() {
			t.Fatalf("%s: consumed %s, left cost %s qty %s; want 10, 0, 0", m, total, l.Cost(), l.Qty())
		}
	}
}

// The worked example of the metric definitions.
func TestMetrics(t *testing.T) {
	if got, want := WinRate(1, 1, 1), "33.33"; got != want {
		t.Errorf("WinRate = %s, want %s", got, want)
	}
	if got, want := WinRate(2, 1, 0), "66.67"; got != want {
		t.Errorf("WinRate = %s, want %s", got, want)
	}
	if got, want := WinRate(0, 0, 0), "0.00"; got != want {
		t.Errorf("WinRate = %s, want %s", got, want)
	}
	// 21.695 / 3 = 7.2316666… → 7.231666666667
	if got, want := AveragePnl(pnlDec("21.695"), 3), pnlDec("7.231666666667"); got != want {
		t.Errorf("AveragePnl = %s, want %s", got, want)
	}
	// 21.695 × 1000 / (210.14 × 2) = 51.620348339…
	if got, want := DailyPnlPerThousand(pnlDec("21.695"), pnlDec("210.14"), 2), "51.62034834"; got != want {
		t.Errorf("DailyPnlPerThousand = %s, want %s", got, want)
	}
	if got, want := DailyPnlPerThousand(pnlDec("5"), decimal.Zero, 2), "0.00000000"; got != want {
		t.Errorf("DailyPnlPerThousand = %s, want %s", got, want)
	}
	// 24.695 / 140.14 × 100 = 17.6216640502354…
	if got, want := PnlPercent(pnlDec("24.695"), pnlDec("140.14")), pnlDec("17.621664050235"); got != want {
		t.Errorf("PnlPercent = %s, want %s", got, want)
	}
}

func TestParsePnlMethod(t *testing.T) {
	for s, want := range map[string]domain.PnlMethod{"": domain.LOFO, "LOFO": domain.LOFO, "fifo": domain.FIFO, "average": domain.Average, "avg": domain.Average,
		"lifo": domain.LIFO, "HIFO": domain.HIFO} {
		if got, err := domain.ParsePnlMethod(s); err != nil || got != want {
			t.Errorf("ParsePnlMethod(%q) = %v, %v", s, got, err)
		}
		if got, _ := domain.ParsePnlMethod(want.String()); got != want {
			t.Errorf("ParsePnlMethod(%q.String()) = %v", want, got)
		}
	}
	if _, err := domain.ParsePnlMethod("fofo"); domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), domain.PnlMethodNames) {
		t.Errorf("ParsePnlMethod(fofo) err = %v, want EINVALID listing the methods", err)
	}
}

// The five methods on one inventory where each consumes different lots.
// Four buys (no fees; Time is the hour, Ref the order id):
//
//	#1 t1 buy 1 @ 10 → A {1, 10}
//	#2 t2 buy 2 @ 30 → B {2, 60}   (unit 30)
//	#3 t3 buy 1 @ 20 → C {1, 20}
//	#4 t4 buy 1 @ 40 → D {1, 40}
//
// then #5 sells 2 @ 35 with a fee of 0.2: proceeds 70, pnl = 70 − 0.2 − cost.
//
//	FIFO    A (10) + 1 of B (60×1/2 = 30)       cost 40  pnl 29.8   left B½ C D: 3 for 90
//	LIFO    D (40) + C (20)                     cost 60  pnl  9.8   left A B:    3 for 70
//	HIFO    D (40) + 1 of B (30)                cost 70  pnl −0.2   left A B½ C: 3 for 60
//	LOFO    A (10) + C (20)                     cost 30  pnl 39.8   left B D:    3 for 100
//	Average pool {5, 130}: 2 cost 130×2/5 = 52  pnl 17.8   left 3 for 78;
//	        its parts are the oldest quantities: A (1) and 1 of B, the pooled
//	        52 split 52×1/2 = 26 each.
func TestLotsMethodsGolden(t *testing.T) {
	type part struct {
		qty, cost string
		time      int64
	}
	tests := []struct {
		m         domain.PnlMethod
		cost, pnl string
		left      string // cost of the 3 left
		parts     []part
	}{
		{domain.FIFO, "40", "29.8", "90", []part{{"1", "10", 1}, {"1", "30", 2}}},
		{domain.LIFO, "60", "9.8", "70", []part{{"1", "40", 4}, {"1", "20", 3}}},
		{domain.HIFO, "70", "-0.2", "60", []part{{"1", "40", 4}, {"1", "30", 2}}},
		{domain.LOFO, "30", "39.8", "100", []part{{"1", "10", 1}, {"1", "20", 3}}},
		{domain.Average, "52", "17.8", "78", []part{{"1", "26", 1}, {"1", "26", 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			l := Lots{Method: tt.m}
			tr := &LotTrace{}
			for i, b := range []struct{ qty, price string }{{"1", "10"}, {"2", "30"}, {"1", "20"}, {"1", "40"}} {
				tr.Time, tr.Ref = int64(i+1), int64(i+1)
				l.ApplyFillTraced(domain.Buy, pnlDec(b.price), pnlDec(b.qty), decimal.Zero, tr)
			}
			r := l.ApplyFillTraced(domain.Sell, pnlDec("35"), pnlDec("2"), pnlDec("0.2"), tr)
			if r.LotCost != pnlDec(tt.cost) || r.Pnl != pnlDec(tt.pnl) || r.Matched != pnlDec("2") {
				t.Errorf("sell: cost %s pnl %s matched %s; want %s, %s, 2", r.LotCost, r.Pnl, r.Matched, tt.cost, tt.pnl)
			}
			if l.Qty() != pnlDec("3") || l.Cost() != pnlDec(tt.left) {
				t.Errorf("left %s for %s, want 3 for %s", l.Qty(), l.Cost(), tt.left)
			}
			if len(tr.Used) != len(tt.parts) {
				t.Fatalf("used %+v, want %v", tr.Used, tt.parts)
			}
			for i, p := range tt.parts {
				u := tr.Used[i]
				if u.Qty != pnlDec(p.qty) || u.Cost != pnlDec(p.cost) || u.Time != p.time || u.Ref != p.time {
					t.Errorf("part %d = %+v, want %s for %s from #%d", i, u, p.qty, p.cost, p.time)
				}
			}
			// The same sell without a trace gives the same figures.
			l2 := Lots{Method: tt.m}
			for _, b := range []struct{ qty, price string }{{"1", "10"}, {"2", "30"}, {"1", "20"}, {"1", "40"}} {
				l2.ApplyFill(domain.Buy, pnlDec(b.price), pnlDec(b.qty), decimal.Zero)
			}
			if r2 := l2.ApplyFill(domain.Sell, pnlDec("35"), pnlDec("2"), pnlDec("0.2")); r2 != r {
				t.Errorf("untraced sell %+v, traced %+v", r2, r)
			}
		})
	}
}

// TakeLots lists parts whose quantities and costs add up to what Take
// returns, under every method, also when the pooled cost of Average rounds
// (thirds).
func TestTakeLotsPartsAddUp(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO} {
		l := Lots{Method: m}
		for i, c := range []string{"10", "10.00000001", "7", "3.33333333"} {
			l.AddLot(Lot{Qty: pnlDec("0.3"), Cost: pnlDec(c), Time: int64(i), Ref: int64(100 + i)})
		}
		for _, q := range []string{"0.1", "0.35", "0.4", "1"} {
			matched, cost, used := l.TakeLots(pnlDec(q), nil)
			var sq, sc decimal.Decimal
			for _, u := range used {
				sq, sc = sq.Add(u.Qty), sc.Add(u.Cost)
				if u.Ref != 100+u.Time {
					t.Errorf("%s: part %+v lost its lot's Ref", m, u)
				}
			}
			if sq != matched || sc != cost {
				t.Errorf("%s: take %s: parts %s for %s, take %s for %s", m, q, sq, sc, matched, cost)
			}
		}
	}
}

// WinRate rounds half to even, as Decimal.Round does.
func TestWinRateRounds(t *testing.T) {
	if got := WinRate(1, 31, 0); got != "3.12" { // 3.125 → 3.12
		t.Errorf("WinRate(1 of 32) = %s, want 3.12", got)
	}
}
