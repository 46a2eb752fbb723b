package fold

import (
	"sort"

	"github.com/tradeledger/tradeledger/domain"
)

// SlotMs is the width of a PNL slot (15 minutes, in ms): the unit of the
// readers' aggregates (a day in any zone with a whole quarter-hour offset
// is a run of whole slots), and of a re-fold, which rebuilds whole slots.
const SlotMs = 15 * 60 * 1000

// SlotOf returns the slot of a time in ms.
func SlotOf(ms int64) int64 { return domain.FloorDiv(ms, SlotMs) }

// Key is a fill's place in trade-time order: its trade time (ms), then the
// log position it was recorded at (the tie rule of fills of one
// millisecond).
type Key struct {
	Time int64
	Pos  uint64
}

// Less reports whether k comes before o.
func (k Key) Less(o Key) bool { return k.Time < o.Time || (k.Time == o.Time && k.Pos < o.Pos) }

// Fill is what the fold takes in: one acquisition or disposal of a pair's
// base, in plain values, whatever event recorded it: a fill of one of the
// service's orders (OrderFilled), or a trade on the account the service
// did not place (ExternalFill, order 0). The account's other movements
// (deposits, withdrawals, conversions) are Movements (move.go).
type Fill struct {
	Key
	Order    int64       // the order it fills: per-order figures group by it; 0: none (it counts as an order of its own)
	Side     domain.Side // Buy acquires, Sell disposes
	Price    domain.Decimal
	Qty      domain.Decimal
	Fee      domain.Decimal // as charged, in FeeAsset
	FeeAsset string         // "" or the quote: in quote
}

// Out is what the fold derived for a fill that its owner keeps beside it
// and gives back (Journal.At) when the fold needs an order's earlier
// figures: the realized pnl and, for a sell, the quantity no lot matched.
// A fill not folded yet (recorded late, before the re-fold) has the zero
// pnl and, for a sell, its whole quantity unmatched (PendingOut).
type Out struct {
	Pnl       domain.Decimal
	Unmatched domain.Decimal
}

// PendingOut returns the Out of a fill not folded yet: it closes nothing.
func PendingOut(f *Fill) Out {
	if f.Side == domain.Sell {
		return Out{Unmatched: f.Qty}
	}
	return Out{}
}

// closing reports whether a fill with out closed lots (a sell that matched
// some).
func closing(f *Fill, out *Out) bool { return f.Side == domain.Sell && out.Unmatched.Less(f.Qty) }

// Result is everything the fold derived for one fill.
type Result struct {
	Fee            domain.FeeValue // the fee as charged and valued in quote
	domain.FillPnl                 // its effect on the lots
	Net            domain.Decimal  // baseValue: what it cost (buy) or brought (sell), fee included
	// The pair after the fill: base position from the fills (Σ received −
	// Σ sold), quote cash flow (Σ costProceed), the lots' cost and average
	// unit cost.
	Position, CashFlow, InvCost, ABP domain.Decimal
	AvgPrice                         domain.Decimal // the order's Σ price×qty ÷ Σ qty up to this fill
	First                            bool           // the order's first fill
	Closing                          bool           // a sell that matched lots
	Unique                           Move           // how the order's unique win/loss count moves (Next's; a re-fold moves counts in its Rebuild)
	// Unknown is the part of a sale's unmatched quantity that came from
	// coins of unknown cost (move.go): sold, realizing nothing.
	Unknown domain.Decimal
}

// Out returns what the owner keeps of r.
func (r *Result) Out() Out { return Out{Pnl: r.Pnl, Unmatched: r.Unmatched} }

// Agg returns what the fill adds to an aggregate (PnlAgg.Add).
func (r *Result) Agg(f *Fill) PnlFill {
	a := PnlFill{T: f.Time, Sell: f.Side == domain.Sell, Closing: r.Closing, First: r.First, Sign: int8(r.Pnl.Sign()),
		Value: r.Value, Net: r.Net, Fee: r.FillPnl.Fee, Pnl: r.Pnl, Unmatched: r.UnmatchedValue}
	if r.Closing {
		a.Invested = r.LotCost
	}
	return a
}

// Move is a change of a sell order's unique win/loss count in the
// aggregate of a slot: from sign From to sign To (1 win, -1 loss, 0
// breakeven, 2 not counted). From == To changes nothing.
type Move struct {
	Slot     int64
	From, To int8
}

// Order is an order's running figures over its fills in trade-time
// order. A sell order counts once as a unique win or loss, by the sign of
// the pnl of all its closing fills, in the slot of its first closing fill.
type Order struct {
	Fills              int32
	Filled, FilledCost domain.Decimal
	Pnl                domain.Decimal // Σ pnl of its closing fills
	CloseT             int64          // trade time of its first closing fill
	Closed             bool           // it has a closing fill
}

// add adds fill f, with what the fold derived for it, to o.
func (o *Order) add(f *Fill, out *Out) {
	o.Fills++
	o.Filled = o.Filled.Add(f.Qty)
	o.FilledCost = o.FilledCost.Add(f.Price.Mul(f.Qty))
	if closing(f, out) {
		o.Pnl = o.Pnl.Add(out.Pnl)
		if !o.Closed {
			o.Closed, o.CloseT = true, f.Time
		}
	}
}

// count returns the slot and sign o counts with as a unique win or loss,
// and false when it has no closing fill.
func (o *Order) count() (slot int64, sign int8, ok bool) {
	if !o.Closed {
		return 0, 0, false
	}
	return SlotOf(o.CloseT), int8(o.Pnl.Sign()), true
}

// Journal is one pair's fills in trade-time order as their owner stores
// them (the Ledger's order records, the sink's list), each with the Out
// the fold last gave it.
type Journal interface {
	// Len returns the number of fills.
	Len() int
	// At returns fill i (0 ≤ i < Len) and its Out.
	At(i int) (Fill, Out)
	// Search returns the index of the first fill at or after k (Len when
	// none).
	Search(k Key) int
	// FirstFill returns a time (ms) at or before the first fill of order
	// on this pair, false when the pair has none of it.
	FirstFill(order int64) (int64, bool)
}

// MarkEvery is the least number of fills between two of a pair's restart
// points (Pair): a re-fold goes back at most about that many fills before
// the late fill, or a quarter of the lots held, whichever is more.
const MarkEvery = 1024

// maxMarks bounds the restart points a pair keeps: past it, every other
// one of the older half goes, so that recent ones stay dense and older
// ones thin out (their memory O(lots × log fills)).
const maxMarks = 16

// markEvery is MarkEvery, smaller in tests (to exercise restart points).
var markEvery = MarkEvery

// Pair is the fold of one pair's fills in trade-time order: its lots
// (domain.Lots, by the method), position, cash flow and last price, and
// the restart points a re-fold starts from.
//
// A fill in trade order (after every fill folded) is folded at once
// (Next: O(1) but for the lots' own cost). A fill recorded late, before
// some fill already folded, makes the pair dirty from its time (Late); the
// owner then re-folds it (Refold), from the nearest restart point before
// it, and rebuilds the aggregates of the slots from that point on: events
// are never rewritten, only what was derived from them. A restart point
// is the pair's state before a fill, taken once at least MarkEvery fills,
// and a quarter of the lots held, were folded since the last one (so that
// keeping them costs a few lots' copy per fill, amortized), with the
// aggregate of the fills of its slot before it (the slot's prefix), so
// that a re-fold from it rebuilds its slot from that prefix: a fill
// recorded a few fills late — concurrent placements — re-folds about the
// distance to the last restart point. A pair whose figures convert into
// other currencies takes them at the first fill of a slot only (its
// figures in other currencies have no prefix).
type Pair struct {
	Quote, Base string
	lots        domain.Lots
	position    domain.Decimal
	cashFlow    domain.Decimal
	lastPrice   domain.Decimal
	last        Key  // the last fill folded
	started     bool // a fill was folded
	marks       []Mark
	since       int // fills folded since the last mark
	dirty       bool
	from        Key           // the earliest fill not folded, when dirty
	third       int           // fills whose fee is in a third asset: the pair's figures depend on rates
	slot        int64         // the slot of the last fill folded
	prefix      PnlAgg[int64] // the aggregate of that slot's fills folded so far
	converted   bool          // its figures convert into other currencies: marks at slot starts only (Pairs)
	moves       []Movement    // deposits, withdrawals and conversion legs routed to it, in trade-time order (move.go)
	unknown     domain.Decimal
	rated       int     // moves whose figures depend on rates
	carried     bool    // a withdrawal took other lots than before: its matched deposit must carry them (Pairs)
	tr          *tracer // a traced fold's (Traced), nil in the Ledger's and the sink's
}

// Mark is a restart point: the pair's state before the fill at Key, and
// the aggregate of the fills of Key's slot before it (Prefix; none when
// Key's fill is its slot's first).
type Mark struct {
	Key                           Key
	Lots                          domain.Lots
	Position, CashFlow, LastPrice domain.Decimal
	Third                         int // fills before it whose fee is in a third asset
	Prefix                        PnlAgg[int64]
	Unknown                       domain.Decimal // the base held at unknown cost
}

// NewPair returns the empty fold of pair quote-base, matching lots by m.
func NewPair(quote, base string, m domain.PnlMethod) *Pair {
	p := &Pair{Quote: quote, Base: base}
	p.lots.Method = m
	return p
}

// Method returns the pair's lot matching method.
func (p *Pair) Method() domain.PnlMethod { return p.lots.Method }

// Lots returns the lots held (do not change them).
func (p *Pair) Lots() *domain.Lots { return &p.lots }

// Position returns the base position after the last fill folded.
func (p *Pair) Position() domain.Decimal { return p.position }

// CashFlow returns the quote cash flow after the last fill folded.
func (p *Pair) CashFlow() domain.Decimal { return p.cashFlow }

// LastPrice returns the price of the last fill in trade-time order.
func (p *Pair) LastPrice() domain.Decimal { return p.lastPrice }

// Unrealized values the lots held at the last fill's price: qty×last −
// cost (0 without lots).
func (p *Pair) Unrealized() domain.Decimal {
	if p.lots.Qty().Sign() <= 0 {
		return domain.Zero
	}
	return p.lots.Qty().Mul(p.lastPrice).Sub(p.lots.Cost())
}

// Last returns the key of the last fill folded, false before the first.
func (p *Pair) Last() (Key, bool) { return p.last, p.started }

// InOrder reports whether a fill at k can be folded at once (Next): the
// pair is not dirty and k comes after every fill folded.
func (p *Pair) InOrder(k Key) bool { return !p.dirty && (!p.started || p.last.Less(k)) }

// Dirty reports whether the pair waits for a re-fold, and from which fill.
func (p *Pair) Dirty() (Key, bool) { return p.from, p.dirty }

// Late marks the pair dirty from k: a fill recorded there, or a rate its
// figures depend on (RatesChanged).
func (p *Pair) Late(k Key) {
	if !p.dirty || k.Less(p.from) {
		p.from = k
	}
	p.dirty = true
}

// UsesRates reports whether the pair's own figures (not only their
// conversions) depend on rates: a fee charged in a third asset, a
// conversion leg valued at a rate (move.go).
func (p *Pair) UsesRates() bool { return p.third > 0 || p.rated > 0 }

// Marks returns the pair's restart points (for a snapshot; do not change
// them).
func (p *Pair) Marks() []Mark { return p.marks }

// Next folds f, which comes after every fill folded (InOrder), with its
// order's figures so far o (updated), valuing its fee with rates, and sets
// *r to what it derived.
func (p *Pair) Next(f *Fill, o *Order, rates *RateBook, r *Result) {
	p.mark(f)
	p.apply(f, o, rates, r)
}

// mark takes a restart point before f when enough fills were folded since
// the last one (and f starts a new slot, for a pair whose figures
// convert), then thins the older ones out.
func (p *Pair) mark(f *Fill) {
	p.since++
	newSlot := SlotOf(f.Time) != p.slot
	if !p.started || (p.converted && !newSlot) || p.since < max(markEvery, p.lots.Len()/4) {
		return
	}
	m := Mark{Key: f.Key, Lots: p.lots.Clone(), Position: p.position, CashFlow: p.cashFlow, LastPrice: p.lastPrice, Third: p.third,
		Unknown: p.unknown}
	if !newSlot {
		m.Prefix = p.prefix
	}
	p.marks = append(p.marks, m)
	p.since = 0
	if len(p.marks) > maxMarks {
		half := len(p.marks) / 2
		kept := p.marks[:0]
		for i, x := range p.marks {
			if i >= half || i%2 == 0 {
				kept = append(kept, x)
			}
		}
		clear(p.marks[len(kept):])
		p.marks = kept
	}
}

// apply folds f with its order's figures o (updated) and sets *r to what
// it derived, the move of its order's unique win/loss count among it, and
// adds it to its slot's prefix.
func (p *Pair) apply(f *Fill, o *Order, rates *RateBook, r *Result) {
	wasClosed, before := o.Closed, int8(o.Pnl.Sign())
	*r = Result{}
	r.Fee = ValueFee(rates, f.Fee, f.FeeAsset, p.Quote, p.Base, f.Price, f.Key)
	p.trade(f, r)
	if r.Fee.Third && !f.Fee.IsZero() {
		p.third++
	}
	p.lastPrice = f.Price
	p.last = f.Key
	p.started = true
	r.Position, r.CashFlow, r.InvCost, r.ABP = p.position, p.cashFlow, p.lots.Cost(), p.lots.ABP()
	r.First = o.Fills == 0
	out := r.Out()
	o.add(f, &out)
	r.AvgPrice = o.FilledCost.Div(o.Filled)
	if r.Closing {
		slot, sign, _ := o.count()
		from := int8(2)
		if wasClosed {
			from = before
		}
		r.Unique = Move{Slot: slot, From: from, To: sign}
	}
	if slot := SlotOf(f.Time); slot != p.slot {
		p.slot, p.prefix = slot, PnlAgg[int64]{}
	}
	a := r.Agg(f)
	p.prefix.Add(&a)
	if r.Unique.Slot == p.slot && r.Unique.From != r.Unique.To {
		p.prefix.Unique(r.Unique.From, r.Unique.To)
	}
}

// trade folds fill f, its fee valued in r.Fee, by the lots' rules — the
// one place they are applied to a fill, which the Ledger's fold (apply)
// and the books' (Traced) both run: a buy adds a lot of what it received,
// a sale takes the lots by the method, then the coins of unknown cost
// (which realize nothing) —, moves the position and the cash flow, and
// sets r's FillPnl, Net, Unknown and Closing.
func (p *Pair) trade(f *Fill, r *Result) {
	var lt *domain.LotTrace
	if p.tr != nil {
		lt = p.tr.fill(f)
	}
	r.FillPnl = p.lots.ApplyFeeTraced(f.Side, f.Price, f.Qty, &r.Fee, lt)
	r.Net = r.Fee.Net(f.Side, r.Value)
	if f.Side == domain.Sell {
		r.Unknown = p.takeUnknown(r.Unmatched) // after the lots: coins of unknown cost realize nothing
		p.position = p.position.Sub(f.Qty)
		p.cashFlow = p.cashFlow.Add(r.Net)
		r.Closing = r.Matched.IsPos()
	} else {
		p.position = p.position.Add(r.Matched)
		p.cashFlow = p.cashFlow.Sub(r.Net)
	}
	if p.tr != nil {
		p.tr.traded(f, r)
	}
}

// OrderBefore returns the figures of order over its fills in j before k
// (the zero Order when it has none there).
func OrderBefore(j Journal, order int64, k Key) Order {
	var o Order
	if order == 0 {
		return o
	}
	first, ok := j.FirstFill(order)
	if !ok || first > k.Time {
		return o
	}
	end := j.Search(k)
	for i := j.Search(Key{Time: first}); i < end; i++ {
		if f, out := j.At(i); f.Order == order {
			o.add(&f, &out)
		}
	}
	return o
}

// Rebuild is what a re-fold changed beyond each fill's Result: the slots
// from FromSlot on hold only the fills re-folded, whose aggregates the
// owner builds anew from the Results; Moves are the unique win/loss counts
// to move, in slots before FromSlot (in the aggregates kept) and from
// FromSlot on (in the new ones); Orders are the final figures of every
// order with a fill re-folded.
type Rebuild struct {
	From     int // index in the journal of the first fill re-folded
	FromSlot int64
	// Prefix is the aggregate of FromSlot's fills before the first one
	// re-folded (a restart point inside the slot): the new aggregate of
	// FromSlot starts from it.
	Prefix PnlAgg[int64]
	Moves  []Move
	Orders map[int64]*Order
}

// walkOrder is an order met by a re-fold.
type walkOrder struct {
	before   Order  // its figures before the re-fold's first fill
	oldAfter Order  // its fills from there on, as they were folded before
	now      *Order // its figures as the re-fold goes
}

// Refold folds the pair again from its nearest restart point before the
// slot of the first fill it is dirty from, to the end of j (which holds
// every fill, the late ones in their place), valuing fees with rates, and
// calls emit with each fill re-folded, in order, with its new Result (the
// owner stores it: its Out among it), and with each conversion leg among
// its moves (move.go) at index −1 (a trade of the pair's figures that is
// no fill of the journal). It returns what the owner must rebuild. A pair
// not dirty is not folded (the zero Rebuild, From = j.Len()).
func (p *Pair) Refold(j Journal, rates *RateBook, emit func(i int, f *Fill, r *Result)) Rebuild {
	if !p.dirty {
		return Rebuild{From: j.Len(), FromSlot: SlotOf(p.last.Time) + 1}
	}
	m := p.restartMark()
	p.restore(m)
	rb := Rebuild{Orders: map[int64]*Order{}}
	i0, m0 := 0, 0
	if m != nil { // the mark stays: the state before it is unchanged
		rb.Prefix = m.Prefix
		i0 = j.Search(m.Key)
		m0 = p.moveIndex(m.Key) // the moves before it are in the mark's state
	}
	rb.From = i0
	rb.FromSlot = p.firstSlot(j, i0, m0)
	orders := walkOrders(j, i0)
	for id, w := range orders {
		rb.Orders[id] = w.now
	}
	p.refoldFrom(j, i0, m0, orders, rates, &rb, emit)
	p.dirty, p.from = false, Key{}
	rb.Moves = append(rb.Moves, uniqueMoves(orders, rb.FromSlot)...)
	sortMoves(rb.Moves)
	return rb
}

// restartMark drops the restart points a re-fold from p.from cannot start
// at and returns the last one kept, nil when none is left (the re-fold
// starts from the first fill). A usable mark is at or before p.from; for a
// pair whose figures convert, one at a slot's first fill (no prefix) at or
// before p.from's slot's start, so that the slot is whole after it. Later
// marks go: the re-fold takes them again.
func (p *Pair) restartMark() *Mark {
	usable := func(m *Mark) bool {
		if p.converted {
			return m.Prefix.Trades == 0 && !(Key{Time: SlotOf(p.from.Time) * SlotMs}).Less(m.Key)
		}
		return !p.from.Less(m.Key)
	}
	k := len(p.marks)
	for k > 0 && !usable(&p.marks[k-1]) {
		k--
	}
	p.marks = p.marks[:k]
	if k == 0 {
		return nil
	}
	return &p.marks[k-1]
}

// restore sets the pair's folded state to m's, the state before m's fill
// (to the empty pair's when m is nil), its method and moves kept.
func (p *Pair) restore(m *Mark) {
	p.lots = domain.Lots{Method: p.lots.Method}
	p.position, p.cashFlow, p.lastPrice = domain.Zero, domain.Zero, domain.Zero
	p.started, p.since, p.third, p.last = false, 0, 0, Key{}
	p.slot, p.prefix = 0, PnlAgg[int64]{}
	p.unknown = domain.Zero
	if m == nil {
		return
	}
	p.lots = m.Lots.Clone()
	p.position, p.cashFlow, p.lastPrice, p.third, p.unknown = m.Position, m.CashFlow, m.LastPrice, m.Third, m.Unknown
	p.started, p.last = true, m.Key // not marked again at its own fill
	p.since = -1                    // which counts as the first since the mark, as it did
	p.slot, p.prefix = SlotOf(m.Key.Time), m.Prefix
}

// firstSlot returns the slot of the first fill (j's from index i0) or
// move (the pair's from index m0) a re-fold from there folds, 0 when
// there is none.
func (p *Pair) firstSlot(j Journal, i0, m0 int) int64 {
	first, found := Key{}, false
	if i0 < j.Len() {
		f, _ := j.At(i0)
		first, found = f.Key, true
	}
	if m0 < len(p.moves) && (!found || p.moves[m0].Key.Less(first)) {
		first, found = p.moves[m0].Key, true
	}
	if !found {
		return 0
	}
	return SlotOf(first.Time)
}

// walkOrders returns the orders of j's fills from index i0 on (a fill of
// no order, order 0, is none), each with its figures over its fills
// before i0 (before), over its fills from i0 on as they were folded
// before this re-fold (oldAfter), and now set to a copy of before, which
// the re-fold goes on from.
func walkOrders(j Journal, i0 int) map[int64]*walkOrder {
	orders := map[int64]*walkOrder{}
	var firstNeeded int64
	needScan := false
	for i := i0; i < j.Len(); i++ {
		f, out := j.At(i)
		if f.Order == 0 {
			continue // of no order: an order of its own each
		}
		w := orders[f.Order]
		if w == nil {
			w = &walkOrder{}
			orders[f.Order] = w
			if t, ok := j.FirstFill(f.Order); ok && i0 > 0 {
				if !needScan || t < firstNeeded {
					firstNeeded = t
				}
				needScan = true
			}
		}
		w.oldAfter.add(&f, &out)
	}
	if needScan {
		for i := j.Search(Key{Time: firstNeeded}); i < i0; i++ {
			f, out := j.At(i)
			if w := orders[f.Order]; w != nil {
				w.before.add(&f, &out)
			}
		}
	}
	for _, w := range orders {
		o := w.before
		w.now = &o
	}
	return orders
}

// refoldFrom folds j's fills from index i0 and the pair's moves from index
// m0 in trade-time order (a move before a fill of the same key), each
// fill with its order's figures in orders (a fill of no order as an order
// of its own), calling emit as Refold says, and appends to rb.Moves the
// unique win/loss moves of the fills of no order and of the conversion
// legs (an order's are uniqueMoves').
func (p *Pair) refoldFrom(j Journal, i0, m0 int, orders map[int64]*walkOrder, rates *RateBook, rb *Rebuild, emit func(i int, f *Fill, r *Result)) {
	var r Result
	n := j.Len()
	mi := m0
	for i := i0; i < n || mi < len(p.moves); i++ {
		var f Fill
		if i < n {
			f, _ = j.At(i)
		}
		if mi < len(p.moves) && (i == n || p.moves[mi].Key.Less(f.Key)) { // a move first (moves.go)
			m := &p.moves[mi]
			mi++
			i--
			p.applyMove(m, rates, &r)
			if m.Kind.Trade() {
				if r.Closing {
					rb.Moves = append(rb.Moves, r.Unique)
				}
				mf := m.fill()
				emit(-1, &mf, &r)
			}
			continue
		}
		p.mark(&f)
		var o *Order
		if w := orders[f.Order]; w != nil {
			o = w.now
		} else { // a fill of no order: counted once in its own slot (below)
			o = &Order{}
		}
		p.apply(&f, o, rates, &r)
		if f.Order == 0 && r.Closing {
			rb.Moves = append(rb.Moves, r.Unique)
		}
		emit(i, &f, &r)
	}
}

// uniqueMoves returns the moves of the unique win/loss counts of the
// orders a re-fold from slot fromSlot met: an order whose first closing
// fill came before the restart is counted in a slot kept (with the sign
// of all its fills as they were folded) or in the prefix of the restart's
// slot (with its sign at the restart); the others are counted in the new
// slots.
func uniqueMoves(orders map[int64]*walkOrder, fromSlot int64) []Move {
	var moves []Move
	for _, w := range orders {
		ns, nsign, has := w.now.count()
		if bs, bsign, before := w.before.count(); before {
			if bs >= fromSlot { // in the prefix
				if bsign != nsign {
					moves = append(moves, Move{Slot: bs, From: bsign, To: nsign})
				}
				continue
			}
			old := w.before
			old.Pnl = old.Pnl.Add(w.oldAfter.Pnl)
			if _, osign, _ := old.count(); osign != nsign {
				moves = append(moves, Move{Slot: bs, From: osign, To: nsign})
			}
			continue
		}
		if has {
			moves = append(moves, Move{Slot: ns, From: 2, To: nsign})
		}
	}
	return moves
}

// sortMoves orders moves by slot, then by their signs, so that owners
// apply them in one order.
func sortMoves(m []Move) {
	sort.Slice(m, func(i, k int) bool {
		a, b := m[i], m[k]
		if a.Slot != b.Slot {
			return a.Slot < b.Slot
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
}

// PairState is a Pair's state, field by field, as a snapshot writes it
// (a copy: later changes to the pair do not show in it). The restart
// points are a cache, left out: a pair read back takes new ones as it
// folds, and folds again from its start the first time it must.
type PairState struct {
	Quote, Base                   string
	Lots                          domain.LotsState
	Position, CashFlow, LastPrice domain.Decimal
	Last                          Key
	Started                       bool
	Dirty                         bool
	From                          Key
	Third                         int
	Slot                          int64 // the slot of the last fill folded
	Prefix                        PnlAgg[int64]
}

// State returns p's state.
func (p *Pair) State() PairState {
	return PairState{Quote: p.Quote, Base: p.Base, Lots: p.lots.State(), Position: p.position, CashFlow: p.cashFlow,
		LastPrice: p.lastPrice, Last: p.last, Started: p.started, Dirty: p.dirty, From: p.from, Third: p.third,
		Slot: p.slot, Prefix: p.prefix}
}

// PairOf returns the Pair whose state is s (State's inverse), or EINVALID.
func PairOf(s *PairState) (*Pair, error) {
	p := &Pair{Quote: s.Quote, Base: s.Base, position: s.Position, cashFlow: s.CashFlow, lastPrice: s.LastPrice, last: s.Last,
		started: s.Started, dirty: s.Dirty, from: s.From, third: s.Third, slot: s.Slot, prefix: s.Prefix}
	var err error
	if p.lots, err = domain.LotsOf(&s.Lots); err != nil {
		return nil, err
	}
	return p, nil
}

// Clone returns a copy of p that shares nothing with it, without its
// restart points (a cache: PairState).
func (p *Pair) Clone() Pair {
	c := *p
	c.lots = p.lots.Clone()
	c.marks, c.since = nil, 0
	c.moves = make([]Movement, len(p.moves))
	for i, m := range p.moves {
		c.moves[i] = m.clone()
	}
	return c
}
