package pnlmath

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// refLots is the lot matching as it was before Lots used a heap (LOFO) — a
// slice kept sorted by unit cost with binary-search insertion, O(n) per buy —
// kept verbatim as the reference the property test compares Lots with.
//
// One addition: ambiguous records when a LOFO insertion's binary search ran
// over lots that were not in unit-cost order (a partly consumed lot whose
// rounded remaining cost put its unit cost above the next lot's, with a
// cheaper lot inserted in front of it). There the old algorithm's answer
// depends on how many lots are held (which probes the search happens to
// make), so it defines no order to compare with; the property test stops
// comparing a sequence at that point.
type refLots struct {
	Method    domain.PnlMethod
	lots      []Lot
	head      int
	qty, cost decimal.Decimal
	ambiguous bool
	tag       lotTag // Time and Ref of the lots Add adds (the property test's addition)
}

// unitCoef is 10^DecimalPlaces, the coefficient of 1.
const unitCoef = 1_000_000_000_000

func (l *refLots) Len() int { return len(l.lots) - l.head }

func (l *refLots) ABP() decimal.Decimal {
	if l.qty.Sign() <= 0 {
		return decimal.Zero
	}
	return l.cost.Div(l.qty)
}

func (l *refLots) Add(qty, cost decimal.Decimal) {
	if qty.Sign() <= 0 {
		return
	}
	l.qty = l.qty.Add(qty)
	l.cost = l.cost.Add(cost)
	n := Lot{Qty: qty, Cost: cost, Time: l.tag.time, Ref: l.tag.ref}
	switch l.Method {
	case domain.Average:
		if l.Len() == 0 {
			l.lots = append(l.lots[:0], n)
			l.head = 0
			return
		}
		l.lots[l.head].Qty = l.lots[l.head].Qty.Add(qty)
		l.lots[l.head].Cost = l.lots[l.head].Cost.Add(cost)
	case domain.FIFO:
		l.lots = append(l.lots, n)
	case domain.LIFO: // the newest lot goes in front
		l.lots = slices.Insert(l.lots, l.head, n)
	default:
		// LOFO: in front of the first lot dearer than n; HIFO: in front of
		// the first lot cheaper than n.
		before := func(a, b Lot) bool { return unitCostLess(a, b) }
		if l.Method == domain.HIFO {
			before = func(a, b Lot) bool { return unitCostLess(b, a) }
		}
		live := l.lots[l.head:]
		for i := 2; i < len(live); i++ { // the search predicate must be monotone on live[1:]
			if before(n, live[i-1]) && !before(n, live[i]) {
				l.ambiguous = true
			}
		}
		i := sort.Search(len(live), func(i int) bool { return before(n, live[i]) })
		l.lots = append(l.lots, Lot{})
		copy(l.lots[l.head+i+1:], l.lots[l.head+i:])
		l.lots[l.head+i] = n
	}
}

func (l *refLots) Take(qty decimal.Decimal) (matched, cost decimal.Decimal) {
	for qty.IsPos() && l.head < len(l.lots) {
		lot := &l.lots[l.head]
		if lot.Qty.Cmp(qty) <= 0 {
			matched = matched.Add(lot.Qty)
			cost = cost.Add(lot.Cost)
			qty = qty.Sub(lot.Qty)
			*lot = Lot{}
			l.head++
			continue
		}
		c := decimal.MulDiv(lot.Cost, qty, lot.Qty)
		lot.Qty = lot.Qty.Sub(qty)
		lot.Cost = lot.Cost.Sub(c)
		matched = matched.Add(qty)
		cost = cost.Add(c)
		qty = decimal.Zero
	}
	if l.head == len(l.lots) {
		l.lots, l.head = l.lots[:0], 0
	} else if l.head > 32 && l.head*2 > len(l.lots) {
		n := copy(l.lots, l.lots[l.head:])
		clear(l.lots[n:])
		l.lots, l.head = l.lots[:n], 0
	}
	l.qty = l.qty.Sub(matched)
	l.cost = l.cost.Sub(cost)
	if l.Len() == 0 {
		l.qty, l.cost = decimal.Zero, decimal.Zero
	}
	return matched, cost
}

func (l *refLots) ApplyFill(side domain.Side, price, qty, feeQuote decimal.Decimal) FillPnl {
	r := FillPnl{Value: price.Mul(qty), Fee: feeQuote}
	if qty.Sign() <= 0 {
		return r
	}
	if side == domain.Buy {
		r.Matched = qty
		r.LotCost = r.Value.Add(feeQuote)
		l.Add(qty, r.LotCost)
		return r
	}
	r.Matched, r.LotCost = l.Take(qty)
	r.Unmatched = qty.Sub(r.Matched)
	if r.Matched.IsPos() {
		matchedFee := decimal.MulDiv(feeQuote, r.Matched, qty)
		r.Pnl = price.Mul(r.Matched).Sub(matchedFee).Sub(r.LotCost)
	}
	r.UnmatchedValue = price.Mul(r.Unmatched)
	return r
}

func (l *refLots) held() []Lot { return append([]Lot(nil), l.lots[l.head:]...) }

// held returns the lots held, in the order they would be consumed (under
// Average, the pool as one lot, as refLots keeps it).
func (l *Lots) held() []Lot {
	switch l.Method {
	case domain.Average:
		if l.Len() == 0 {
			return nil
		}
		return []Lot{{Qty: l.qty, Cost: l.cost}}
	case domain.FIFO:
		var out []Lot
		for i := l.head; i < len(l.lots); i++ {
			out = append(out, l.lot(l.lots[i], i))
		}
		return out
	case domain.LIFO:
		var out []Lot
		for i := len(l.lots) - 1; i >= 0; i-- {
			out = append(out, l.lot(l.lots[i], i))
		}
		return out
	}
	idx := make([]int, len(l.heap))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return l.less(l.heap[idx[i]], l.heap[idx[j]]) })
	out := make([]Lot, len(idx))
	for k, i := range idx {
		out[k] = l.lot(l.heap[i].heldLot, i)
	}
	return out
}

// lotsOp is one step of a random sequence.
type lotsOp struct {
	side            domain.Side
	price, qty, fee decimal.Decimal
	direct          bool // Add/Take instead of ApplyFill
}

// randomLotsOps returns a sequence of buys and sells meant to exercise the
// corners: equal unit costs (a few round prices, fees proportional), odd
// quantities whose partial consumption rounds, sells larger than the
// inventory (unmatched), zero and negative quantities, zero fees and
// rebates (negative fees).
func randomLotsOps(r *rand.Rand, n int) []lotsOp {
	prices := []string{"100", "100", "99.5", "101", "0.00012345", "3"}
	ops := make([]lotsOp, n)
	for i := range ops {
		o := &ops[i]
		o.side = domain.Buy
		if r.IntN(5) < 2 {
			o.side = domain.Sell
		}
		if r.IntN(3) == 0 {
			o.price = decimal.DecimalFromInt(1 + r.Int64N(200)).Add(decimal.NewDecimal(r.Int64N(unitCoef), -8))
		} else {
			o.price = decimal.MustDecimal(prices[r.IntN(len(prices))])
		}
		switch r.IntN(6) {
		case 0: // round
			o.qty = decimal.DecimalFromInt(1 + r.Int64N(3))
		case 1: // thirds and sevenths: partial takes round
			o.qty = decimal.MustDecimal([]string{"0.33333333", "0.66666667", "1.42857143", "0.00000001", "0.00000003"}[r.IntN(5)])
		case 2:
			o.qty = decimal.NewDecimal(-r.Int64N(2), -8) // 0 or -0.00000001: ignored
		default:
			o.qty = decimal.NewDecimal(1+r.Int64N(3*unitCoef), -8)
		}
		if o.side == domain.Sell && r.IntN(4) == 0 {
			o.qty = o.qty.MulInt(3) // often more than is held: unmatched
		}
		switch r.IntN(4) {
		case 0:
			o.fee = decimal.Zero
		case 1: // a rebate
			o.fee = decimal.MulDiv(o.price.Mul(o.qty), decimal.NewDecimal(1, -8), decimal.DecimalFromInt(10000)).Neg()
		default: // 0.1%, so equal prices give equal unit costs
			o.fee = decimal.MulDiv(o.price.Mul(o.qty), decimal.NewDecimal(1, -8), decimal.DecimalFromInt(1000))
		}
		o.direct = r.IntN(10) == 0
		if o.direct && o.side == domain.Buy && r.IntN(3) == 0 {
			o.price = o.price.Neg() // Add with a negative cost (a lot got for less than nothing)
		}
	}
	return ops
}

// TestLotsMatchReference runs random sequences through Lots and through the
// old algorithm (refLots) under every method and requires the same figures
// after every step: the fill's pnl, matched and unmatched quantities and
// values, lot cost, the inventory's quantity, cost and ABP, and the lots
// held, in consumption order.
func TestLotsMatchReference(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO} {
		t.Run(m.String(), func(t *testing.T) { checkLotsMatchReference(t, m, false) })
	}
}

// TestLotsWideTracedMatchReference is TestLotsMatchReference with lots that
// carry a Time and Ref and with quantities often ten thousand times larger,
// so that many lots' costs, whole or partly consumed, are wider than a
// Compact holds: Lots keeps them in its side table, and the table holds
// exactly the wide amounts of the lots held.
func TestLotsWideTracedMatchReference(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO} {
		t.Run(m.String(), func(t *testing.T) { checkLotsMatchReference(t, m, true) })
	}
}

// checkLotsMatchReference is TestLotsMatchReference under method m, wide
// and traced as TestLotsWideTracedMatchReference when wide is set.
func checkLotsMatchReference(t *testing.T, m domain.PnlMethod, wide bool) {
	const runs, steps = 1500, 150
	var ambiguous, comparedSteps, wideSteps int
	for seed := uint64(0); seed < runs; seed++ {
		r := rand.New(rand.NewPCG(seed, uint64(m)))
		got, want := &Lots{Method: m}, &refLots{Method: m}
		ops := randomLotsOps(r, steps)
		for i, o := range ops {
			var g, w FillPnl
			var tr *LotTrace
			if wide {
				if r.IntN(2) == 0 {
					o.qty, o.fee = o.qty.MulInt(10007), o.fee.MulInt(10007)
				}
				tr = &LotTrace{Time: int64(i + 1), Ref: int64(seed)}
				want.tag = lotTag{int64(i + 1), int64(seed)}
			}
			if o.direct {
				if o.side == domain.Buy {
					if tr != nil {
						got.AddLot(Lot{Qty: o.qty, Cost: o.price, Time: tr.Time, Ref: tr.Ref})
					} else {
						got.Add(o.qty, o.price)
					}
					want.Add(o.qty, o.price)
				} else {
					g.Matched, g.LotCost = got.Take(o.qty)
					w.Matched, w.LotCost = want.Take(o.qty)
				}
			} else {
				g = got.ApplyFillTraced(o.side, o.price, o.qty, o.fee, tr)
				w = want.ApplyFill(o.side, o.price, o.qty, o.fee)
			}
			if want.ambiguous {
				ambiguous++
				break
			}
			comparedSteps++
			where := func() string {
				return fmt.Sprintf("seed %d step %d (%s %s @ %s fee %s direct %v)", seed, i, o.side, o.qty, o.price, o.fee, o.direct)
			}
			if g != w {
				t.Fatalf("%s: fill = %+v, want %+v", where(), g, w)
			}
			gl := got.Len()
			if m == domain.Average { // the pool as one lot, as the reference keeps it
				gl = min(gl, 1)
			}
			if got.Qty() != want.qty || got.Cost() != want.cost || got.ABP() != want.ABP() || gl != want.Len() {
				t.Fatalf("%s: qty %s cost %s ABP %s len %d, want %s %s %s %d", where(),
					got.Qty(), got.Cost(), got.ABP(), gl, want.qty, want.cost, want.ABP(), want.Len())
			}
			gh, wh := got.held(), want.held()
			if m == domain.Average && wide { // the pool's lots keep their tags; the reference's pool has the first one's
				for i := range gh {
					gh[i].Time, gh[i].Ref = 0, 0
				}
				for i := range wh {
					wh[i].Time, wh[i].Ref = 0, 0
				}
			}
			if !slices.Equal(gh, wh) {
				t.Fatalf("%s: lots held %v, want %v", where(), gh, wh)
			}
			refs, live := got.wideAmounts()
			if refs != live {
				t.Fatalf("%s: %d amounts of held lots in the side table, which holds %d", where(), refs, live)
			}
			if refs > 0 {
				wideSteps++
			}
		}
	}
	// The comparison must not be vacuous: almost every sequence is
	// one the old algorithm orders unambiguously. (HIFO meets more
	// ambiguous insertions than LOFO, about 6% of these sequences:
	// it partly consumes the dearest lots, whose prices here are the
	// random ones with 8 decimals, and leaves the round-priced ties
	// behind them.)
	if ambiguous > runs/10 || comparedSteps < runs*steps*9/10 {
		t.Fatalf("%d of %d sequences ambiguous, %d steps compared", ambiguous, runs, comparedSteps)
	}
	if wide && wideSteps < comparedSteps/4 {
		t.Fatalf("only %d of %d steps held a wide amount", wideSteps, comparedSteps)
	}
	t.Logf("%d sequences, %d steps compared (%d with wide amounts held), %d stopped at an ambiguous insertion",
		runs, comparedSteps, wideSteps, ambiguous)
}

// wideAmounts returns how many amounts of the lots held are in the side
// table, and how many slots of the table are in use.
func (l *Lots) wideAmounts() (refs, live int) {
	count := func(h heldLot) {
		for _, c := range []decimal.Compact{h.qty, h.cost} {
			if _, ok := c.Ref(); ok {
				refs++
			}
		}
	}
	for _, h := range l.lots[l.head:] {
		count(h)
	}
	for _, h := range l.heap {
		count(h.heldLot)
	}
	return refs, len(l.wide.Wide) - len(l.wide.Free)
}

// A partly consumed LOFO lot whose rounded remaining cost puts its unit cost
// a hair above an equal lot stays first (as the sorted slice kept it): lots
// A and B both cost 10/3 a unit; taking 1 of A gives up round(10/3) =
// 3.333333333333 and leaves A {2, 6.666666666667} (3.3333333333335 a unit,
// above B's 3.3333333333…). The next take of 2 still finishes A.
func TestLotsLOFOPartialStaysFirst(t *testing.T) {
	l := Lots{Method: domain.LOFO}
	l.Add(pnlDec("3"), pnlDec("10"))
	l.Add(pnlDec("6"), pnlDec("20"))
	if _, c := l.Take(pnlDec("1")); c != pnlDec("3.333333333333") {
		t.Fatalf("first take cost %s, want 3.333333333333", c)
	}
	if _, c := l.Take(pnlDec("2")); c != pnlDec("6.666666666667") {
		t.Fatalf("second take cost %s, want 6.666666666667", c)
	}
	if l.Len() != 1 || l.Qty() != pnlDec("6") || l.Cost() != pnlDec("20") {
		t.Fatalf("left %d lots, qty %s, cost %s; want B alone {6, 20}", l.Len(), l.Qty(), l.Cost())
	}
	// A cheaper lot still goes in front of a partly consumed one: buy 1 @ 1,
	// take 1 of B {6,20} → B {5, 16.666666666667}; buy {1, 3.333333333333}
	// (below B's 3.3333333333334 a unit) → it is taken first.
	l.Take(pnlDec("1"))
	l.Add(pnlDec("1"), pnlDec("3.333333333333"))
	if _, c := l.Take(pnlDec("1")); c != pnlDec("3.333333333333") {
		t.Fatalf("take cost %s, want the cheaper new lot's 3.333333333333", c)
	}
}

// dcaFills is a DCA-style log: two buys per sell, each sell taking 3/4 of
// what the two buys bought, so lots pile up (about n/6 lots held at the
// end). Prices follow a seeded mean-reverting walk; quantities have 8 decimals so
// partial consumption rounds; fees are 0.1%.
func dcaFills(n int) []lotsOp {
	r := rand.New(rand.NewPCG(42, 7))
	price := decimal.DecimalFromInt(30000)
	ops := make([]lotsOp, n)
	var bought decimal.Decimal
	for i := range ops {
		// a random walk pulled back towards 30000: buys land among the
		// lots held, not only above or below them
		price = price.Add(decimal.NewDecimal(r.Int64N(201*unitCoef)-100*unitCoef, -decimal.DecimalPlaces)).Sub(price.Sub(decimal.DecimalFromInt(30000)).DivInt(1000))
		o := &ops[i]
		o.price = price
		if i%3 == 2 {
			o.side, o.qty = domain.Sell, decimal.MulDiv(bought, decimal.NewDecimal(3, -8), decimal.NewDecimal(4, -8))
			bought = decimal.Zero
		} else {
			o.side, o.qty = domain.Buy, decimal.NewDecimal(100_000+r.Int64N(900_000), -8) // 0.001 – 0.01
			bought = bought.Add(o.qty)
		}
		o.fee = decimal.MulDiv(o.price.Mul(o.qty), decimal.NewDecimal(1, -8), decimal.DecimalFromInt(1000))
	}
	return ops
}

// BenchmarkLotsDCA replays 1M DCA fills (2 buys per sell) into one
// inventory per method and reports fills/s.
func BenchmarkLotsDCA(b *testing.B) {
	const fills = 1_000_000
	ops := dcaFills(fills)
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.LIFO, domain.HIFO, domain.Average} {
		b.Run(m.String(), func(b *testing.B) {
			var held int
			start := time.Now()
			for i := 0; i < b.N; i++ {
				l := Lots{Method: m}
				for _, o := range ops {
					l.ApplyFill(o.side, o.price, o.qty, o.fee)
				}
				held = l.Len()
			}
			b.ReportMetric(float64(fills)*float64(b.N)/time.Since(start).Seconds(), "fills/s")
			b.ReportMetric(float64(held), "lots-held")
		})
	}
}

// Selling off a large inventory gives its memory back, under every method,
// and what is left is still matched in order.
func TestLotsShrinkAfterSellOff(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO} {
		l := Lots{Method: m}
		for i := 0; i < 100000; i++ {
			l.Add(decimal.DecimalFromInt(1), decimal.DecimalFromInt(int64(100+i%7)))
		}
		for i := 0; i < 99990; i++ {
			l.Take(decimal.DecimalFromInt(1))
		}
		if got := cap(l.heap) + cap(l.lots); got > 1024 {
			t.Errorf("%s: %d lots held in storage for %d lots", m, got, l.Len())
		}
		if q, _ := l.Take(decimal.DecimalFromInt(20)); q != decimal.DecimalFromInt(10) {
			t.Errorf("%s: %s left, want 10", m, q)
		}
	}
}
