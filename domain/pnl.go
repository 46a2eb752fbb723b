package domain

import (
	"math/bits"
	"sort"
	"strings"
)

// This file is the one implementation of lot matching and PNL arithmetic
// (docs/api.md, "PNL and order records"). The in-memory projections and the ClickHouse sink both call
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
// ValueFee, fee.go) adds a lot {Qty: q, Cost: p×q + f}; its unit cost is Cost/Qty.
// A sell fill of qty q consumes lots (by Method) up to q; the consumed
// quantity is "matched", the rest "unmatched" (coins sold that the log never
// saw bought: deposits, trades before the log began). Then
//
//	pnl               = p×matched − f×matched/q − cost of consumed lots
//	unmatchedBaseValue = p×unmatched        (reported, never counted as pnl)
//
// The sell fee is split pro rata between the matched and unmatched parts,
// so a sell of unknown coins shows no invented profit and no invented loss.
// A partly consumed lot gives up cost×taken/lotQty (rounded half to even to
// 12 decimals, domain.MulDiv) and keeps the rest, so no unit of cost is lost or
// created by rounding: Σ consumed cost + remaining cost = Σ lot costs.
//
// Worked example (LOFO): buy 1 @ 100 fee 0.1 → lot A {1, 100.1};
// buy 1 @ 90 fee 0.09 → lot B {1, 90.09}; sell 1.5 @ 110 fee 0.165:
// LOFO takes B first (90.09 < 100.1) then 0.5 of A (cost 50.05):
// pnl = 165 − 0.165 − (90.09 + 50.05) = 24.695; A keeps {0.5, 50.05},
// ABP = 50.05/0.5 = 100.1. Under FIFO the same sell takes A then 0.5 of B
// (45.045): pnl = 165 − 0.165 − 145.145 = 19.69. Under Average the pool is
// {2, 190.19}, 1.5 of it costs 142.6425: pnl = 22.1925, ABP = 95.095.
// LIFO takes the newest (B) first and HIFO the dearest (A) first, which
// here give LOFO's and FIFO's figures; pnl_test.go has a case where the
// five methods differ.

// PnlMethod selects how sells consume lots.
type PnlMethod uint8

// Lot matching methods. LOFO is the default (as Gunbot documents it). The
// values are stable (they never change meaning): add new methods at the end.
const (
	// LOFO consumes the lot with the lowest unit cost first (ties: oldest
	// first; see Lots for a partly consumed lot).
	LOFO PnlMethod = iota
	// FIFO consumes the oldest lot first.
	FIFO
	// Average pools every lot at the weighted average unit cost; a sell
	// takes cost pro rata. The quantities it consumes are the oldest first
	// (FIFO), which is what dates its disposals for holding periods.
	Average
	// LIFO consumes the newest lot first.
	LIFO
	// HIFO consumes the lot with the highest unit cost first (ties: oldest
	// first), mirroring LOFO.
	HIFO
)

// PnlMethodNames lists the accepted names of ParsePnlMethod, for help
// texts and messages.
const PnlMethodNames = "lofo, fifo, lifo, hifo or average"

// ParsePnlMethod reads "lofo", "fifo", "lifo", "hifo" or "average"
// ("avg"), case-insensitive; "" is LOFO. Anything else is EINVALID.
func ParsePnlMethod(s string) (PnlMethod, error) {
	switch strings.ToLower(s) {
	case "", "lofo":
		return LOFO, nil
	case "fifo":
		return FIFO, nil
	case "lifo":
		return LIFO, nil
	case "hifo":
		return HIFO, nil
	case "average", "avg":
		return Average, nil
	}
	return LOFO, Errorf(EINVALID, "pnl method %q must be %s", s, PnlMethodNames)
}

// String returns "lofo", "fifo", "lifo", "hifo" or "average".
func (m PnlMethod) String() string {
	switch m {
	case FIFO:
		return "fifo"
	case Average:
		return "average"
	case LIFO:
		return "lifo"
	case HIFO:
		return "hifo"
	}
	return "lofo"
}

// Lot is a quantity held and its total cost in quote (fees included), with
// where it came from: the time it was acquired (ms) and the caller's
// reference of the fill that acquired it (the order id, for the reports).
// Lots never look at Time or Ref; they only carry them, so that a sell can
// list the lots it consumed (TakeLots).
type Lot struct {
	Qty, Cost Decimal
	Time, Ref int64
}

// UnitCost returns Cost/Qty, or 0 for an empty lot.
func (l Lot) UnitCost() Decimal {
	if l.Qty.Sign() <= 0 {
		return Zero
	}
	return l.Cost.Div(l.Qty)
}

// Lots is the inventory of one pair under one method. The zero value is an
// empty LOFO inventory; set Method before the first Add and do not change it
// afterwards. Not safe for concurrent use.
//
// Cost of the operations in the number n of lots held: LOFO and HIFO Add
// and each lot a Take consumes are O(log n) (a binary heap); FIFO, LIFO and
// Average Add and consumption are O(1) amortized (a queue with a head index,
// compacted when the consumed front outgrows the rest; a stack for LIFO).
// Quantity and cost held are maintained as lots come and go, so Qty, Cost
// and ABP are O(1).
//
// Memory: 16 bytes a lot (FIFO, LIFO, Average), 24 (LOFO, HIFO), and 16 more
// a lot once any lot was added with a Time or Ref (the Ledger adds none; the
// reports do). A lot's amounts are kept as Compacts; one a Compact cannot
// hold (a cost above about 10^6 with 12 significant decimals) takes 16 bytes
// more in a side table while it is held.
//
// LOFO order, precisely: a new lot goes after every held lot whose unit cost
// is lower or equal (ties: oldest first), and the lot being consumed is the
// first one. A lot that a Take leaves partly consumed stays first — its
// rounded remaining cost may move its unit cost a hair above an equal lot
// behind it, and it is still finished before that lot; a later lot goes in
// front of it only if it is cheaper than both its current unit cost and the
// lot after it. (This is the order the earlier sorted-slice implementation
// kept wherever its binary search was well defined; lots_test.go compares
// the two on random sequences.) HIFO is the same with "higher" for "lower".
// Why: in exact arithmetic a partly consumed lot's unit cost does not move,
// and the older of two lots of equal price goes first; only the rounding
// of its remaining cost to 12 decimals could move it past its equal, and
// rounding dust must not decide which lot a sale uses (docs/api.md, "The
// tie rule of a partly consumed lot").
//
// Average keeps the lots in arrival order: their quantities date a sell's
// parts (oldest first) while its cost is the pool's, so that under every
// method a sell lists the lots it consumed.
type Lots struct {
	Method PnlMethod
	lots   []heldLot // FIFO, Average: oldest first from head; LIFO: a stack, newest last
	head   int
	heap   []heapLot     // LOFO, HIFO: binary heap by less
	tags   []lotTag      // each lot's Time and Ref, by its index in lots or heap; nil until a lot has one
	wide   compactTable  // the lots' amounts that a Compact cannot hold
	clamp  map[int64]Lot // LOFO, HIFO: order key of the lots with seq&1 == 1, by seq
	seq    int64         // LOFO, HIFO: seq of the next lot added (÷2)
	front  int64         // LOFO, HIFO: lowest seq given out so far (÷2)
	qty    Decimal
	cost   Decimal
}

// heldLot is a lot's quantity and cost as Lots keeps them (each a Compact,
// or a slot of Lots.wide).
type heldLot struct{ qty, cost Compact }

// heapLot is a LOFO (or HIFO) lot and its place among equal unit costs.
// The heap orders lots by (key unit cost, seq) where the key is the lot
// itself, or, when seq is odd, the entry in Lots.clamp: a partly consumed
// first lot whose unit cost moved past the next lot's is keyed with the
// next lot's unit cost and a seq below every other, so that it stays first
// (see Lots).
type heapLot struct {
	heldLot
	seq int64 // new lots 0, 2, 4…; partly consumed first lots −2, −4… (+1 if clamped)
}

// lotTag is a lot's Time and Ref.
type lotTag struct{ time, ref int64 }

// heaped reports whether the method keeps its lots in the heap.
func (l *Lots) heaped() bool { return l.Method == LOFO || l.Method == HIFO }

// Qty returns the quantity held in lots.
func (l *Lots) Qty() Decimal { return l.qty }

// Cost returns the total cost of the lots held (the inventory cost).
func (l *Lots) Cost() Decimal { return l.cost }

// ABP returns the average unit cost of the lots held (Cost/Qty), 0 when
// nothing is held.
func (l *Lots) ABP() Decimal {
	if l.qty.Sign() <= 0 {
		return Zero
	}
	return l.cost.Div(l.qty)
}

// Len returns the number of lots held (under Average, the lots whose
// quantities the pool holds).
func (l *Lots) Len() int {
	if l.heaped() {
		return len(l.heap)
	}
	return len(l.lots) - l.head
}

// lot returns stored lot h, whose tag is at index i of tags.
func (l *Lots) lot(h heldLot, i int) Lot {
	n := Lot{Qty: l.wide.get(h.qty), Cost: l.wide.get(h.cost)}
	if l.tags != nil {
		n.Time, n.Ref = l.tags[i].time, l.tags[i].ref
	}
	return n
}

// amounts returns the quantity and cost of stored lot h (for ordering).
func (l *Lots) amounts(h heldLot) Lot {
	return Lot{Qty: l.wide.get(h.qty), Cost: l.wide.get(h.cost)}
}

// Add adds a lot of qty (> 0; others are ignored) costing cost in total.
func (l *Lots) Add(qty, cost Decimal) { l.AddLot(Lot{Qty: qty, Cost: cost}) }

// AddLot adds n (n.Qty > 0; others are ignored), keeping its Time and Ref.
func (l *Lots) AddLot(n Lot) {
	if n.Qty.Sign() <= 0 {
		return
	}
	l.qty = l.qty.Add(n.Qty)
	l.cost = l.cost.Add(n.Cost)
	h := heldLot{l.wide.put(n.Qty), l.wide.put(n.Cost)}
	stored := len(l.lots)
	if l.heaped() {
		stored = len(l.heap)
	}
	if l.tags == nil && (n.Time != 0 || n.Ref != 0) {
		l.tags = make([]lotTag, stored, max(2*stored, 8))
	}
	if l.tags != nil {
		l.tags = append(l.tags, lotTag{n.Time, n.Ref})
	}
	if l.heaped() { // after every lot whose key is ≤ the new one (seq is the highest)
		l.heap = append(l.heap, heapLot{heldLot: h, seq: l.seq * 2})
		l.seq++
		l.up(len(l.heap) - 1)
		return
	}
	l.lots = append(l.lots, h)
}

// Take consumes up to qty (> 0) from the lots in the method's order and
// returns the quantity matched and the cost of what was consumed.
func (l *Lots) Take(qty Decimal) (matched, cost Decimal) { return l.take(qty, nil) }

// TakeLots is Take that also appends to used the parts of lots it consumed,
// in the order it consumed them: each with its quantity, the cost it gave
// up, and its lot's Time and Ref. The parts' quantities add up to matched
// and their costs to cost exactly (under Average, the pooled cost is split
// over the parts pro rata, the last part taking the rounding).
func (l *Lots) TakeLots(qty Decimal, used []Lot) (matched, cost Decimal, _ []Lot) {
	matched, cost = l.take(qty, &used)
	return matched, cost, used
}

// take is Take, appending the parts consumed to *used unless used is nil.
func (l *Lots) take(qty Decimal, used *[]Lot) (matched, cost Decimal) {
	switch l.Method {
	case LOFO, HIFO:
		matched, cost = l.takeHeap(qty, used)
	case LIFO:
		matched, cost = l.takeStack(qty, used)
	case Average:
		matched, cost = l.takeAverage(qty, used)
	default:
		matched, cost = l.takeQueue(qty, used)
	}
	l.qty = l.qty.Sub(matched)
	l.cost = l.cost.Sub(cost)
	if l.Len() == 0 { // no dust of cost without quantity
		l.qty, l.cost = Zero, Zero
	}
	l.heap = shrunk(l.heap)
	l.lots = shrunk(l.lots)
	l.tags = shrunk(l.tags)
	return matched, cost
}

// shrunk returns s, or a copy in smaller storage once it uses under a
// quarter of its capacity: a large inventory sold off does not keep its
// memory. Each copy follows at least as many removals as it moves, so
// consumption stays O(1) amortized.
func shrunk[T any](s []T) []T {
	if cap(s) <= 256 || len(s) >= cap(s)/4 {
		return s
	}
	return append(make([]T, 0, 2*len(s)), s...)
}

// takePart consumes up to qty of stored lot h (in place), whose tag is at
// index i, and returns the part taken: all of it, or qty of it costing
// cost×qty/lotQty (rounded, MulDiv) while the lot keeps the rest, so that
// no unit of cost is lost or created.
func (l *Lots) takePart(h *heldLot, i int, qty Decimal) (part Lot, whole bool) {
	lot := l.lot(*h, i)
	if lot.Qty.Cmp(qty) <= 0 {
		l.wide.drop(h.qty)
		l.wide.drop(h.cost)
		*h = heldLot{}
		return lot, true
	}
	c := MulDiv(lot.Cost, qty, lot.Qty)
	l.wide.set(&h.qty, lot.Qty.Sub(qty))
	l.wide.set(&h.cost, lot.Cost.Sub(c))
	return Lot{Qty: qty, Cost: c, Time: lot.Time, Ref: lot.Ref}, false
}

// takeQueue is TakeLots for FIFO: lots are consumed from the head.
func (l *Lots) takeQueue(qty Decimal, used *[]Lot) (matched, cost Decimal) {
	for qty.IsPos() && l.head < len(l.lots) {
		part, whole := l.takePart(&l.lots[l.head], l.head, qty)
		if whole {
			l.head++
		}
		matched, cost, qty = matched.Add(part.Qty), cost.Add(part.Cost), qty.Sub(part.Qty)
		if used != nil {
			*used = append(*used, part)
		}
	}
	l.compactQueue()
	return matched, cost
}

// compactQueue drops the consumed front once it is larger than what is
// left: a compaction moves fewer lots than were consumed since the
// previous one, so consumption stays O(1) amortized.
func (l *Lots) compactQueue() {
	if l.head == len(l.lots) {
		l.lots, l.head = l.lots[:0], 0
		if l.tags != nil {
			l.tags = l.tags[:0]
		}
	} else if l.head > 32 && l.head*2 > len(l.lots) {
		n := copy(l.lots, l.lots[l.head:])
		clear(l.lots[n:])
		l.lots = l.lots[:n]
		if l.tags != nil {
			copy(l.tags, l.tags[l.head:])
			l.tags = l.tags[:n]
		}
		l.head = 0
	}
}

// takeStack is TakeLots for LIFO: lots are consumed from the end.
func (l *Lots) takeStack(qty Decimal, used *[]Lot) (matched, cost Decimal) {
	for qty.IsPos() && len(l.lots) > 0 {
		last := len(l.lots) - 1
		part, whole := l.takePart(&l.lots[last], last, qty)
		if whole {
			l.lots = l.lots[:last]
			if l.tags != nil {
				l.tags = l.tags[:last]
			}
		}
		matched, cost, qty = matched.Add(part.Qty), cost.Add(part.Cost), qty.Sub(part.Qty)
		if used != nil {
			*used = append(*used, part)
		}
	}
	return matched, cost
}

// takeAverage is TakeLots for Average: the cost is the pool's, pro rata
// (all of it when the whole pool goes), and the quantities leave the queue
// oldest first.
func (l *Lots) takeAverage(qty Decimal, used *[]Lot) (matched, cost Decimal) {
	if l.Len() == 0 || !qty.IsPos() {
		return Zero, Zero
	}
	matched, cost = l.qty, l.cost
	if qty.Less(l.qty) {
		matched, cost = qty, MulDiv(l.cost, qty, l.qty)
	}
	first := 0
	if used != nil {
		first = len(*used)
	}
	for left := matched; left.IsPos() && l.head < len(l.lots); {
		h := &l.lots[l.head]
		lot := l.lot(*h, l.head)
		q := lot.Qty.Min(left)
		if used != nil {
			*used = append(*used, Lot{Qty: q, Time: lot.Time, Ref: lot.Ref})
		}
		if rest := lot.Qty.Sub(q); rest.IsZero() {
			l.wide.drop(h.qty)
			l.wide.drop(h.cost)
			*h = heldLot{}
			l.head++
		} else {
			l.wide.set(&h.qty, rest)
		}
		left = left.Sub(q)
	}
	if used != nil { // the pooled cost over the parts, pro rata
		rest := cost
		parts := (*used)[first:]
		for i := range parts {
			if i == len(parts)-1 {
				parts[i].Cost = rest
				break
			}
			parts[i].Cost = MulDiv(cost, parts[i].Qty, matched)
			rest = rest.Sub(parts[i].Cost)
		}
	}
	l.compactQueue()
	return matched, cost
}

// takeHeap is TakeLots for LOFO and HIFO: lots are consumed from the top of
// the heap.
func (l *Lots) takeHeap(qty Decimal, used *[]Lot) (matched, cost Decimal) {
	for qty.IsPos() && len(l.heap) > 0 {
		part, whole := l.takePart(&l.heap[0].heldLot, 0, qty)
		if whole {
			l.pop()
		} else {
			l.rekeyTop()
		}
		matched, cost, qty = matched.Add(part.Qty), cost.Add(part.Cost), qty.Sub(part.Qty)
		if used != nil {
			*used = append(*used, part)
		}
	}
	if len(l.heap) == 0 {
		l.heap = l.heap[:0]
		if l.tags != nil {
			l.tags = l.tags[:0]
		}
		l.clamp = nil
		l.seq, l.front = 0, 0
	}
	return matched, cost
}

// rekeyTop gives the partly consumed first lot its new unit cost as key and a
// seq below every other, clamping the key to the next lot's when the rounded
// remaining cost moved it past, so that the lot stays first.
func (l *Lots) rekeyTop() {
	top := &l.heap[0]
	if top.seq&1 != 0 {
		delete(l.clamp, top.seq)
	}
	l.front--
	top.seq = l.front * 2
	next := -1
	for i := 1; i <= 2 && i < len(l.heap); i++ {
		if next < 0 || l.less(l.heap[i], l.heap[next]) {
			next = i
		}
	}
	if next < 0 {
		return
	}
	if k := l.key(l.heap[next]); l.order(l.amounts(top.heldLot), k) > 0 {
		top.seq++
		if l.clamp == nil {
			l.clamp = make(map[int64]Lot)
		}
		l.clamp[top.seq] = k
	}
}

// key returns the lot whose unit cost orders e.
func (l *Lots) key(e heapLot) Lot {
	if e.seq&1 != 0 {
		return l.clamp[e.seq]
	}
	return l.amounts(e.heldLot)
}

// order compares two lots' unit costs in the method's order: −1 when a
// comes first (LOFO: cheaper; HIFO: dearer), 0 when equal, +1 otherwise.
func (l *Lots) order(a, b Lot) int {
	if l.Method == HIFO {
		return unitCostCmp(b, a)
	}
	return unitCostCmp(a, b)
}

// less orders heap lots: key unit cost in the method's order, then lower
// seq.
func (l *Lots) less(a, b heapLot) bool {
	c, ok := plainCmp(a, b)
	if !ok {
		c = l.order(l.key(a), l.key(b))
	} else if l.Method == HIFO {
		c = -c
	}
	if c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

// plainCmp is unitCostCmp of two heap lots keyed by themselves whose
// amounts are plain Compacts (counts of 10^-12 below 2^60) and whose costs
// are ≥ 0 — nearly every lot —, computed on the Compacts; false for others.
func plainCmp(a, b heapLot) (int, bool) {
	if (a.qty|a.cost|b.qty|b.cost)&compactRefTag != 0 || (a.seq|b.seq)&1 != 0 || a.cost < 0 || b.cost < 0 {
		return 0, false
	}
	h1, l1 := bits.Mul64(uint64(a.cost>>compactTagBits), uint64(b.qty>>compactTagBits))
	h2, l2 := bits.Mul64(uint64(b.cost>>compactTagBits), uint64(a.qty>>compactTagBits))
	return cmp128(h1, l1, h2, l2), true
}

// up moves heap lot i up to its place, its tag with it.
func (l *Lots) up(i int) {
	h := l.heap
	e := h[i]
	var tag lotTag
	if l.tags != nil {
		tag = l.tags[i]
	}
	for i > 0 {
		p := (i - 1) / 2
		if !l.less(e, h[p]) {
			break
		}
		l.move(i, p)
		i = p
	}
	h[i] = e
	if l.tags != nil {
		l.tags[i] = tag
	}
}

// move puts heap lot src, and its tag, at index dst.
func (l *Lots) move(dst, src int) {
	l.heap[dst] = l.heap[src]
	if l.tags != nil {
		l.tags[dst] = l.tags[src]
	}
}

// pop removes the first lot (its amounts already dropped from wide). The
// hole at the root goes down along the lesser children to a leaf, then the
// last lot fills it and goes up (the last lot is usually among the last to
// be consumed, so this makes about half the comparisons of sifting it down
// from the root).
func (l *Lots) pop() {
	h := l.heap
	if h[0].seq&1 != 0 {
		delete(l.clamp, h[0].seq)
	}
	n := len(h) - 1
	if n == 0 {
		l.heap = h[:0]
		if l.tags != nil {
			l.tags = l.tags[:0]
		}
		return
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && l.less(h[r], h[c]) {
			c = r
		}
		l.move(i, c)
		i = c
	}
	l.move(i, n)
	h[n] = heapLot{}
	l.heap = h[:n]
	if l.tags != nil {
		l.tags = l.tags[:n]
	}
	l.up(i)
}

// unitCostLess reports a.Cost/a.Qty < b.Cost/b.Qty exactly (quantities are
// positive).
func unitCostLess(a, b Lot) bool { return unitCostCmp(a, b) < 0 }

// unitCostCmp compares a.Cost/a.Qty with b.Cost/b.Qty (quantities are
// positive): −1, 0 or +1. Exact when both costs are ≥ 0 (128-bit cross
// products); otherwise it compares the unit costs rounded to 12 decimals.
func unitCostCmp(a, b Lot) int {
	if a.Cost.Sign() >= 0 && b.Cost.Sign() >= 0 {
		return CmpProducts(a.Cost, b.Qty, b.Cost, a.Qty)
	}
	ua, ub := a.UnitCost(), b.UnitCost()
	switch {
	case ua.Less(ub):
		return -1
	case ua == ub:
		return 0
	}
	return 1
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
	return l.ApplyFillTraced(side, price, qty, feeQuote, nil)
}

// LotTrace is what ApplyFillTraced records beyond the figures: a buy's lot
// gets Time and Ref (Lot); a sell appends the parts of lots it consumed to
// Used (Lots.TakeLots). The reports read it to list each disposal's lots.
type LotTrace struct {
	Time, Ref int64
	Used      []Lot
}

// ApplyFillTraced is ApplyFill that dates a buy's lot and lists a sell's
// consumed lots in tr (nil: neither, as ApplyFill).
func (l *Lots) ApplyFillTraced(side Side, price, qty, feeQuote Decimal, tr *LotTrace) FillPnl {
	r := FillPnl{Value: price.Mul(qty), Fee: feeQuote}
	if qty.Sign() <= 0 {
		return r
	}
	if side == Buy {
		r.Matched = qty
		r.LotCost = r.Value.Add(feeQuote)
		n := Lot{Qty: qty, Cost: r.LotCost}
		if tr != nil {
			n.Time, n.Ref = tr.Time, tr.Ref
		}
		l.AddLot(n)
		return r
	}
	if tr != nil {
		tr.Used = tr.Used[:0]
		r.Matched, r.LotCost = l.take(qty, &tr.Used)
	} else {
		r.Matched, r.LotCost = l.take(qty, nil)
	}
	r.Unmatched = qty.Sub(r.Matched)
	if r.Matched.IsPos() {
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
// breakeven 1, winRate "33.33", averagePnl = 21.695/3 = 7.231666666667,
// heroTrade 24.695, fuckupTrade −3, daily_pnl_per_thousand =
// 21.695/2/210.14×1000 = 51.62034834.

// WinRate returns winning ÷ (winning+losing+breakeven) × 100 with 2
// decimals (rounded half to even), "0.00" when there are no closing trades.
func WinRate(winning, losing, breakeven int64) string {
	n := winning + losing + breakeven
	if n <= 0 {
		return "0.00"
	}
	s := MulDiv(DecimalFromInt(winning), DecimalFromInt(100), DecimalFromInt(n)).Round(2).String()
	return s[:len(s)-6] // 8 decimals, the last 6 zeros
}

// AveragePnl returns pnl ÷ trades, 0 when trades is 0.
func AveragePnl(pnl Decimal, trades int64) Decimal {
	if trades <= 0 {
		return Zero
	}
	return pnl.DivInt(trades)
}

// DailyPnlPerThousand returns pnl ÷ days ÷ invested × 1000 as an 8-decimal
// string (rounded half to even), "0.00000000" when invested ≤ 0 or days ≤ 0.
func DailyPnlPerThousand(pnl, invested Decimal, days int64) string {
	if invested.Sign() <= 0 || days <= 0 {
		return Zero.String()
	}
	return MulDiv(pnl, DecimalFromInt(1000), invested.MulInt(days)).Round(8).String()
}

// PnlPercent returns pnl ÷ invested × 100, 0 when invested ≤ 0 (used for
// cumulativePnlPercent).
func PnlPercent(pnl, invested Decimal) Decimal {
	if invested.Sign() <= 0 {
		return Zero
	}
	return MulDiv(pnl, DecimalFromInt(100), invested)
}

// Clone returns a copy of l that shares nothing with it.
func (l *Lots) Clone() Lots {
	c := *l
	c.lots = append([]heldLot(nil), l.lots...)
	c.heap = append([]heapLot(nil), l.heap...)
	if l.tags != nil {
		c.tags = append(make([]lotTag, 0, len(l.tags)), l.tags...)
	}
	c.wide = compactTable{wide: append([]Decimal(nil), l.wide.wide...), free: append([]int(nil), l.wide.free...)}
	if l.clamp != nil {
		c.clamp = make(map[int64]Lot, len(l.clamp))
		for k, v := range l.clamp {
			c.clamp[k] = v
		}
	}
	return c
}

// LotsState is the whole state of a Lots, field by field, as a snapshot
// writes it (projections/snapledger.go): the stored lots exactly as Lots
// keeps them — amounts as Compacts, those that a Compact cannot hold in
// Wide (their slots, Free the unused ones) —, so that a state written and
// read back is the same Lots, its order of equal lots included.
type LotsState struct {
	Method     PnlMethod
	Queue      []HeldLot // FIFO, Average, LIFO: the stored lots, Head the first held (FIFO, Average)
	Head       int
	Heap       []HeapLot // LOFO, HIFO: the heap
	Tagged     bool      // Tags holds each stored lot's Time and Ref
	Tags       []LotTag
	Wide       []Decimal
	Free       []int
	Clamp      []ClampKey // LOFO, HIFO: the order keys of clamped lots, by seq
	Seq, Front int64
	Qty, Cost  Decimal
}

// HeldLot is a stored lot's quantity and cost.
type HeldLot struct{ Qty, Cost Compact }

// HeapLot is a LOFO or HIFO lot and its place among equal unit costs.
type HeapLot struct {
	HeldLot
	Seq int64
}

// LotTag is a stored lot's Time and Ref.
type LotTag struct{ Time, Ref int64 }

// ClampKey is the order key of a clamped lot (see Lots).
type ClampKey struct {
	Seq int64
	Key Lot
}

// State returns l's state (a copy: later changes to l do not show in it).
func (l *Lots) State() LotsState {
	s := LotsState{Method: l.Method, Head: l.head, Tagged: l.tags != nil, Seq: l.seq, Front: l.front, Qty: l.qty, Cost: l.cost,
		Wide: append([]Decimal(nil), l.wide.wide...), Free: append([]int(nil), l.wide.free...)}
	for _, h := range l.lots {
		s.Queue = append(s.Queue, HeldLot{h.qty, h.cost})
	}
	for _, h := range l.heap {
		s.Heap = append(s.Heap, HeapLot{HeldLot{h.qty, h.cost}, h.seq})
	}
	for _, t := range l.tags {
		s.Tags = append(s.Tags, LotTag{t.time, t.ref})
	}
	for seq, k := range l.clamp {
		s.Clamp = append(s.Clamp, ClampKey{seq, k})
	}
	sort.Slice(s.Clamp, func(i, j int) bool { return s.Clamp[i].Seq < s.Clamp[j].Seq })
	return s
}

// LotsOf returns the Lots whose state is s (State's inverse), or EINVALID
// when s is not one a Lots could hold.
func LotsOf(s *LotsState) (Lots, error) {
	l := Lots{Method: s.Method, head: s.Head, seq: s.Seq, front: s.Front, qty: s.Qty, cost: s.Cost,
		wide: compactTable{wide: s.Wide, free: s.Free}}
	if err := l.checkState(s); err != nil {
		return Lots{}, err
	}
	if err := l.restoreLots(s); err != nil {
		return Lots{}, err
	}
	l.restoreKeys(s)
	return l, nil
}

// checkState returns EINVALID unless s has the shape l's method (already
// set) can hold: a head within the queue, a tag for every stored lot when
// tagged and none otherwise, heaped lots and clamp keys only for a method
// by price (LOFO, HIFO) and queued lots only for the others, free slots
// within the wide table.
func (l *Lots) checkState(s *LotsState) error {
	stored := len(s.Queue) + len(s.Heap)
	if s.Head < 0 || s.Head > len(s.Queue) || (s.Tagged && len(s.Tags) != stored) || (!s.Tagged && len(s.Tags) != 0) {
		return Errorf(EINVALID, "lots: head %d of %d, %d tags of %d lots", s.Head, len(s.Queue), len(s.Tags), stored)
	}
	if (l.heaped() && len(s.Queue) != 0) || (!l.heaped() && (len(s.Heap) != 0 || len(s.Clamp) != 0)) {
		return Errorf(EINVALID, "lots: a %s inventory with %d queued and %d heaped lots", s.Method, len(s.Queue), len(s.Heap))
	}
	for _, f := range s.Free {
		if f < 0 || f >= len(s.Wide) {
			return Errorf(EINVALID, "lots: free slot %d of %d", f, len(s.Wide))
		}
	}
	return nil
}

// restoreLots fills l's queue and heap with s's lots, or returns EINVALID
// when an amount refers to an entry s's wide table does not have.
func (l *Lots) restoreLots(s *LotsState) error {
	for _, h := range s.Queue {
		if !inWide(h.Qty, len(s.Wide)) || !inWide(h.Cost, len(s.Wide)) {
			return Errorf(EINVALID, "lots: an amount out of the wide table")
		}
		l.lots = append(l.lots, heldLot{h.Qty, h.Cost})
	}
	for _, h := range s.Heap {
		if !inWide(h.Qty, len(s.Wide)) || !inWide(h.Cost, len(s.Wide)) {
			return Errorf(EINVALID, "lots: an amount out of the wide table")
		}
		l.heap = append(l.heap, heapLot{heldLot{h.Qty, h.Cost}, h.Seq})
	}
	return nil
}

// restoreKeys gives l s's lot tags (when tagged, with room to grow) and
// clamp keys (nil when none).
func (l *Lots) restoreKeys(s *LotsState) {
	if s.Tagged {
		l.tags = make([]lotTag, 0, max(len(s.Tags), 8))
		for _, t := range s.Tags {
			l.tags = append(l.tags, lotTag{t.Time, t.Ref})
		}
	}
	for _, c := range s.Clamp {
		if l.clamp == nil {
			l.clamp = make(map[int64]Lot, len(s.Clamp))
		}
		l.clamp[c.Seq] = c.Key
	}
}

// inWide reports whether c is an amount a wide table of n entries can
// give: one held inline, or a reference to one of those entries.
func inWide(c Compact, n int) bool {
	i, ok := c.Ref()
	return !ok || (i >= 0 && i < n)
}

// CostBasisScope says which lots a disposal may consume (bot.COST_BASIS_SCOPE,
// the books' scope= parameter): those of its own exchange account
// (ScopeAccount, the default: per wallet or account, the rule the United
// States require from 1 January 2025, IRS Revenue Procedure 2024-28 and
// Treas. Reg. §1.1012-1(j)), or those of every account of the service
// (ScopeUniversal: one pool per asset across accounts, the earlier
// universal method). Lots stay in the currency they were paid in: a pool
// is an asset against one quote currency (domain/books).
type CostBasisScope uint8

// Cost basis scopes; the values are stable.
const (
	ScopeAccount CostBasisScope = iota
	ScopeUniversal
)

// CostBasisScopeNames lists the accepted names of ParseCostBasisScope.
const CostBasisScopeNames = "account or universal"

// ParseCostBasisScope reads "account" or "universal" (case-insensitive);
// "" is ScopeAccount. Anything else is EINVALID.
func ParseCostBasisScope(s string) (CostBasisScope, error) {
	switch strings.ToLower(s) {
	case "", "account":
		return ScopeAccount, nil
	case "universal":
		return ScopeUniversal, nil
	}
	return ScopeAccount, Errorf(EINVALID, "cost basis scope %q must be %s", s, CostBasisScopeNames)
}

// String returns "account" or "universal".
func (s CostBasisScope) String() string {
	if s == ScopeUniversal {
		return "universal"
	}
	return "account"
}
