package domain

import (
	"math"
	"math/bits"
	"sort"
	"strings"
)

// This file is the one implementation of lot matching and PNL arithmetic
// (DESIGN §4). The in-memory projections and the ClickHouse sink both call
// it, so a figure means the same thing wherever it is read.
//
// Vocabulary. A pair "USDT-BTC" has quote USDT and base BTC (domain
// convention, quote first). The spec's field names come from Gunbot, which
// calls the currency amounts are valued in the "base" (baseValue,
// unmatchedBaseValue, assets/total's base): in those names "base" means the
// currency of value, i.e. our quote. Every money figure below is in the
// pair's quote currency.
//
// Lots. A buy fill of qty q at price p with fee f (converted to quote, see
// FeeInQuote) adds a lot {Qty: q, Cost: p×q + f}; its unit cost is Cost/Qty.
// A sell fill of qty q consumes lots (by Method) up to q; the consumed
// quantity is "matched", the rest "unmatched" (coins sold that the log never
// saw bought: deposits, trades before the log began). Then
//
//	pnl               = p×matched − f×matched/q − cost of consumed lots
//	unmatchedBaseValue = p×unmatched        (reported, never counted as pnl)
//
// The sell fee is split pro rata between the matched and unmatched parts,
// so a sell of unknown coins shows no invented profit and no invented loss.
// A partly consumed lot gives up cost×taken/lotQty (rounded half away from
// zero to 8 decimals) and keeps the rest, so no unit of cost is lost or
// created by rounding: Σ consumed cost + remaining cost = Σ lot costs.
//
// Worked example (LOFO): buy 1 @ 100 fee 0.1 → lot A {1, 100.1};
// buy 1 @ 90 fee 0.09 → lot B {1, 90.09}; sell 1.5 @ 110 fee 0.165:
// LOFO takes B first (90.09 < 100.1) then 0.5 of A (cost 50.05):
// pnl = 165 − 0.165 − (90.09 + 50.05) = 24.695; A keeps {0.5, 50.05},
// ABP = 50.05/0.5 = 100.1. Under FIFO the same sell takes A then 0.5 of B
// (45.045): pnl = 165 − 0.165 − 145.145 = 19.69. Under Average the pool is
// {2, 190.19}, 1.5 of it costs 142.6425: pnl = 22.1925, ABP = 95.095.

// PnlMethod selects how sells consume lots.
type PnlMethod uint8

// Lot matching methods. LOFO is the default (as Gunbot documents it).
const (
	// LOFO consumes the lot with the lowest unit cost first (ties: oldest
	// first).
	LOFO PnlMethod = iota
	// FIFO consumes the oldest lot first.
	FIFO
	// Average pools every lot into one at the weighted average unit cost; a
	// sell takes cost pro rata.
	Average
)

// ParsePnlMethod reads "lofo", "fifo" or "average" (case-insensitive; ""
// is LOFO), or returns EINVALID.
func ParsePnlMethod(s string) (PnlMethod, error) {
	switch strings.ToLower(s) {
	case "", "lofo":
		return LOFO, nil
	case "fifo":
		return FIFO, nil
	case "average", "avg":
		return Average, nil
	}
	return LOFO, Errorf(EINVALID, "pnl method %q must be lofo, fifo or average", s)
}

// String returns "lofo", "fifo" or "average".
func (m PnlMethod) String() string {
	switch m {
	case FIFO:
		return "fifo"
	case Average:
		return "average"
	}
	return "lofo"
}

// Lot is a quantity held and its total cost in quote (fees included).
type Lot struct {
	Qty, Cost Decimal
}

// UnitCost returns Cost/Qty, or 0 for an empty lot.
func (l Lot) UnitCost() Decimal {
	if l.Qty <= 0 {
		return 0
	}
	return l.Cost.Div(l.Qty)
}

// Lots is the inventory of one pair under one method. The zero value is an
// empty LOFO inventory. Not safe for concurrent use.
type Lots struct {
	Method PnlMethod
	lots   []Lot // LOFO: ascending unit cost from head; FIFO: oldest first; Average: one lot
	head   int
	qty    Decimal
	cost   Decimal
}

// Qty returns the quantity held in lots.
func (l *Lots) Qty() Decimal { return l.qty }

// Cost returns the total cost of the lots held (the inventory cost).
func (l *Lots) Cost() Decimal { return l.cost }

// ABP returns the average unit cost of the lots held (Cost/Qty), 0 when
// nothing is held.
func (l *Lots) ABP() Decimal {
	if l.qty <= 0 {
		return 0
	}
	return l.cost.Div(l.qty)
}

// Len returns the number of lots held.
func (l *Lots) Len() int { return len(l.lots) - l.head }

// Add adds a lot of qty (> 0; others are ignored) costing cost in total.
func (l *Lots) Add(qty, cost Decimal) {
	if qty <= 0 {
		return
	}
	l.qty = l.qty.Add(qty)
	l.cost = l.cost.Add(cost)
	n := Lot{Qty: qty, Cost: cost}
	switch l.Method {
	case Average:
		if l.Len() == 0 {
			l.lots = append(l.lots[:0], n)
			l.head = 0
			return
		}
		l.lots[l.head].Qty = l.lots[l.head].Qty.Add(qty)
		l.lots[l.head].Cost = l.lots[l.head].Cost.Add(cost)
	case FIFO:
		l.lots = append(l.lots, n)
	default: // LOFO: insert after every lot whose unit cost is ≤ the new one
		live := l.lots[l.head:]
		i := sort.Search(len(live), func(i int) bool { return unitCostLess(n, live[i]) })
		l.lots = append(l.lots, Lot{})
		copy(l.lots[l.head+i+1:], l.lots[l.head+i:])
		l.lots[l.head+i] = n
	}
}

// Take consumes up to qty (> 0) from the lots in the method's order and
// returns the quantity matched and the cost of what was consumed.
func (l *Lots) Take(qty Decimal) (matched, cost Decimal) {
	for qty > 0 && l.head < len(l.lots) {
		lot := &l.lots[l.head]
		if lot.Qty <= qty {
			matched += lot.Qty
			cost += lot.Cost
			qty -= lot.Qty
			*lot = Lot{}
			l.head++
			continue
		}
		c := MulDiv(lot.Cost, qty, lot.Qty)
		lot.Qty -= qty
		lot.Cost -= c
		matched += qty
		cost += c
		qty = 0
	}
	if l.head == len(l.lots) {
		l.lots, l.head = l.lots[:0], 0
	} else if l.head > 32 && l.head*2 > len(l.lots) {
		n := copy(l.lots, l.lots[l.head:])
		clear(l.lots[n:])
		l.lots, l.head = l.lots[:n], 0
	}
	l.qty -= matched
	l.cost -= cost
	if l.Len() == 0 { // no dust of cost without quantity
		l.qty, l.cost = 0, 0
	}
	return matched, cost
}

// unitCostLess reports a.Cost/a.Qty < b.Cost/b.Qty exactly (quantities are
// positive).
func unitCostLess(a, b Lot) bool {
	if a.Cost >= 0 && b.Cost >= 0 {
		h1, l1 := bits.Mul64(uint64(a.Cost), uint64(b.Qty))
		h2, l2 := bits.Mul64(uint64(b.Cost), uint64(a.Qty))
		return h1 < h2 || (h1 == h2 && l1 < l2)
	}
	return a.UnitCost() < b.UnitCost()
}

// MulDiv returns a×b÷c rounded half away from zero, computed in 128 bits so
// that no intermediate rounding happens (all three are Decimals, the result
// has their scale). c = 0 returns 0; a result out of range saturates.
func MulDiv(a, b, c Decimal) Decimal {
	if c == 0 {
		return 0
	}
	neg := (a < 0) != (b < 0) != (c < 0)
	hi, lo := bits.Mul64(uint64(a.Abs()), uint64(b.Abs()))
	q, ok := fromWide(hi, lo, uint64(c.Abs()), neg)
	if !ok {
		if neg {
			return math.MinInt64 + 1
		}
		return math.MaxInt64
	}
	return q
}

// FeeInQuote converts a fill's fee to the pair's quote currency: a fee in
// quote is taken as is; a fee in base is valued at the fill price (fee×price);
// a fee in any other asset (e.g. an exchange token) cannot be valued from
// the fill alone and returns ok = false (the caller counts it as 0 and says
// so). An empty feeAsset means quote.
func FeeInQuote(fee Decimal, feeAsset, quote, base string, price Decimal) (Decimal, bool) {
	switch {
	case fee == 0:
		return 0, true
	case feeAsset == "" || strings.EqualFold(feeAsset, quote):
		return fee, true
	case strings.EqualFold(feeAsset, base):
		return fee.Mul(price), true
	}
	return 0, false
}

// FillPnl is the effect of one fill on an inventory (all money in quote).
type FillPnl struct {
	Value          Decimal // price × qty (gross)
	Fee            Decimal // fee in quote
	Matched        Decimal // sells: qty taken from lots; buys: qty added
	Unmatched      Decimal // sells: qty with no lot
	LotCost        Decimal // buys: cost of the new lot; sells: cost of the consumed lots
	Pnl            Decimal // sells: realized pnl of the matched part; buys: 0
	UnmatchedValue Decimal // sells: price × Unmatched
}

// ApplyFill adds a buy fill's lot or consumes lots for a sell fill and
// returns the figures of the fill (see the file comment for the formulas).
// Quantities ≤ 0 change nothing and return the zero FillPnl with Value set.
func (l *Lots) ApplyFill(side Side, price, qty, feeQuote Decimal) FillPnl {
	r := FillPnl{Value: price.Mul(qty), Fee: feeQuote}
	if qty <= 0 {
		return r
	}
	if side == Buy {
		r.Matched = qty
		r.LotCost = r.Value.Add(feeQuote)
		l.Add(qty, r.LotCost)
		return r
	}
	r.Matched, r.LotCost = l.Take(qty)
	r.Unmatched = qty - r.Matched
	if r.Matched > 0 {
		matchedFee := MulDiv(feeQuote, r.Matched, qty)
		r.Pnl = price.Mul(r.Matched).Sub(matchedFee).Sub(r.LotCost)
	}
	r.UnmatchedValue = price.Mul(r.Unmatched)
	return r
}

// Metric definitions used by the PNL read models. A "closing trade" is a
// sell fill that matched at least one lot (Matched > 0); a sell of only
// unmatched coins realizes nothing and is not a trade for these metrics.
//
//   - winning / losing / breakeven: closing trades with pnl > 0, < 0, = 0.
//   - heroTrade: the closing trade with the highest pnl (earliest wins a tie);
//     fuckupTrade: the one with the lowest pnl. Without closing trades both
//     are {pnl: 0, time: 0}.
//   - averagePnl = pnl ÷ closing trades (0 without any).
//   - winRate = winning ÷ closing trades × 100, as a string with 2 decimals
//     ("66.67"; "0.00" without closing trades).
//   - daily_pnl_per_thousand = pnl ÷ days ÷ invested × 1000, where invested is
//     the cost of the lots the closing trades consumed and days the number of
//     calendar days from the first to the last fill, both included. 8-decimal
//     string, "0.00000000" when nothing was invested.
//
// Worked example: closing trades with pnl 24.695, −3 and 0 over 2 days,
// consuming lots that cost 140.14 + 50 + 20 = 210.14: winning 1, losing 1,
// breakeven 1, winRate "33.33", averagePnl = 21.695/3 = 7.23166667,
// heroTrade 24.695, fuckupTrade −3, daily_pnl_per_thousand =
// 21.695/2/210.14×1000 = 51.62034834.

// WinRate returns winning ÷ (winning+losing+breakeven) × 100 with 2
// decimals, "0.00" when there are no closing trades.
func WinRate(winning, losing, breakeven int64) string {
	n := winning + losing + breakeven
	if n <= 0 {
		return "0.00"
	}
	p := MulDiv(DecimalFromInt(winning), DecimalFromInt(100), DecimalFromInt(n))
	// round to 2 decimals, half away from zero
	u := p.Units()
	const cent = 1_000_000
	r := (u + cent/2) / cent * cent
	s := Decimal(r).String()
	return s[:len(s)-6]
}

// AveragePnl returns pnl ÷ trades, 0 when trades is 0.
func AveragePnl(pnl Decimal, trades int64) Decimal {
	if trades <= 0 {
		return 0
	}
	return pnl.DivInt(trades)
}

// DailyPnlPerThousand returns pnl ÷ days ÷ invested × 1000 as an 8-decimal
// string, "0.00000000" when invested ≤ 0 or days ≤ 0.
func DailyPnlPerThousand(pnl, invested Decimal, days int64) string {
	if invested <= 0 || days <= 0 {
		return Zero.String()
	}
	return MulDiv(pnl, DecimalFromInt(1000), invested.MulInt(days)).String()
}

// PnlPercent returns pnl ÷ invested × 100, 0 when invested ≤ 0 (used for
// cumulativePnlPercent).
func PnlPercent(pnl, invested Decimal) Decimal {
	if invested <= 0 {
		return 0
	}
	return MulDiv(pnl, DecimalFromInt(100), invested)
}
