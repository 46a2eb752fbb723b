package fold

import "github.com/tradeledger/tradeledger/domain"

// The traced fold: a pair's fills and moves folded once, in trade-time
// order, by the same rules as the Ledger's fold (Pair.trade, moveLots),
// under whatever method its owner names, with each lot dated and
// referenced and the coins of unknown cost dated, so that every disposal
// can list the lots it consumed and how long they were held. The books
// (domain/books: the realized-gains report, the statement, the exports)
// walk their pools of lots with it.
//
// What it does not do: restart points, slots, per-order figures, re-folds
// (its owner reads the fills in order once), and valuation: a fill's fee
// comes valued (as the owner's fold valued it, ValueFee) and a move with
// its Value and Priced (valueMove's), and a deposit with the Carry its
// owner matched (the withdrawal's Taken, under the same method).

// Lot references (domain.Lot.Ref) of a traced fold's lots that no order of
// the service's acquired; a lot of an order has the order's id.
const (
	RefExternal   = -1 << 62        // a trade placed by hand (a fill of order 0)
	RefConversion = RefExternal + 1 // a conversion's acquisition leg
	RefDeposit    = RefExternal + 2 // a deposit from the outside, at the log's price
)

// Coins is a quantity of coins of unknown cost and when they arrived (ms):
// a deposit no withdrawal of the service's explains and the log has no
// price for, a conversion the log has no rate for, or, carried by a
// transfer, when its coins first did.
type Coins struct {
	Qty  domain.Decimal
	Time int64
}

// Trace is what a traced fold records of one fill or move beyond its
// Result: the lots and coins of unknown cost it added and took.
type Trace struct {
	// In and InCost are the quantity and cost of the lots it added (a
	// buy, a conversion's acquisition at a known value, a deposit's lots);
	// InUnknown the coins of unknown cost it added.
	In, InCost, InUnknown domain.Decimal
	// Used are the parts of lots it took (a sale, a conversion's
	// disposal, a withdrawal), in the order taken, each with its lot's
	// Time and Ref; Out and OutCost their quantity and cost. A conversion
	// of unknown value takes them too, though its Result matches none.
	Used         []domain.Lot
	Out, OutCost domain.Decimal
	// Unknown are the coins of unknown cost it took after the lots,
	// oldest first; UnknownQty their quantity.
	Unknown    []Coins
	UnknownQty domain.Decimal
	// Unheld is what a disposal or withdrawal took beyond every coin
	// held: neither in lots nor of unknown cost.
	Unheld domain.Decimal
}

// tracer is a traced fold's state beyond its Pair's: the trace of the
// fill or move under way and the coins of unknown cost held, dated,
// oldest first (their sum is Pair.unknown).
type tracer struct {
	Trace
	lt    domain.LotTrace
	dated []Coins
}

// reset starts the trace of a new fill or move.
func (t *tracer) reset() {
	t.Trace = Trace{Used: t.Trace.Used[:0], Unknown: t.Trace.Unknown[:0]}
	t.lt.Used = t.lt.Used[:0]
}

// fill returns the lot trace of fill f: a buy's lot is dated by it and
// referenced by its order (RefExternal: order 0).
func (t *tracer) fill(f *Fill) *domain.LotTrace {
	t.lt.Time, t.lt.Ref = f.Time, f.Order
	if f.Order == 0 {
		t.lt.Ref = RefExternal
	}
	return &t.lt
}

// traded records what fill f did to the lots (r: its figures).
func (t *tracer) traded(f *Fill, r *Result) {
	if f.Side != domain.Sell {
		t.In, t.InCost = r.Matched, r.LotCost
		return
	}
	t.took(r.Matched, r.LotCost)
	t.Unheld = r.Unmatched.Sub(r.Unknown)
}

// took records the lots taken (in lt.Used): their quantity and cost.
func (t *tracer) took(matched, cost domain.Decimal) {
	t.Used, t.Out, t.OutCost = t.lt.Used, matched, cost
}

// takeDated takes qty (at most what is held) from the dated coins of
// unknown cost, oldest first, into the trace.
func (t *tracer) takeDated(qty domain.Decimal) {
	for qty.IsPos() && len(t.dated) > 0 {
		c := &t.dated[0]
		q := c.Qty.Min(qty)
		t.Unknown = append(t.Unknown, Coins{Qty: q, Time: c.Time})
		t.UnknownQty = t.UnknownQty.Add(q)
		qty = qty.Sub(q)
		if c.Qty = c.Qty.Sub(q); !c.Qty.IsPos() {
			t.dated = t.dated[1:]
		}
	}
}

// addDated adds qty of coins of unknown cost: split over dates pro rata
// when it carries dated coins (the last part taking the rounding), else
// dated at.
func (t *tracer) addDated(qty domain.Decimal, at int64, dates []Coins) {
	var total domain.Decimal
	for _, d := range dates {
		total = total.Add(d.Qty)
	}
	if !total.IsPos() {
		t.dated = append(t.dated, Coins{Qty: qty, Time: at})
		return
	}
	rest := qty
	for i, d := range dates {
		q := rest
		if i < len(dates)-1 {
			q = domain.MulDiv(d.Qty, qty, total)
		}
		rest = rest.Sub(q)
		if q.IsPos() {
			t.dated = append(t.dated, Coins{Qty: q, Time: d.Time})
		}
	}
}

// Traced is one pool of lots folded once in trade-time order by the fold's
// rules (see above), under its own method: the books' walk. The Result and
// Trace its Fill and Move return are reused by the next call.
type Traced struct {
	p  Pair
	tr tracer
	r  Result
}

// NewTraced returns the empty traced fold of a pool of quote-base lots,
// matched by m.
func NewTraced(quote, base string, m domain.PnlMethod) *Traced {
	t := &Traced{p: Pair{Quote: quote, Base: base}}
	t.p.lots.Method = m
	t.p.tr = &t.tr
	return t
}

// Fill folds f, which comes after everything folded (trade-time order),
// its fee as charged and valued in fee (the owner's fold's valuation: f's
// own Fee and FeeAsset are not read), and returns its figures and trace.
func (t *Traced) Fill(f *Fill, fee *domain.FeeValue) (*Result, *Trace) {
	t.tr.reset()
	t.r = Result{Fee: *fee}
	t.p.trade(f, &t.r)
	t.p.lastPrice, t.p.last, t.p.started = f.Price, f.Key, true
	return &t.r, &t.tr.Trace
}

// Move folds m, which comes after everything folded, valued as the
// owner's fold valued it (Value, Priced) and, a deposit, carrying the
// Carry the owner matched to it (nil: none), and returns its figures and
// trace. A withdrawal's Taken is set to what it took, dated (the Carry of
// its matched deposit), sharing nothing with the fold.
func (t *Traced) Move(m *Movement) (*Result, *Trace) {
	t.tr.reset()
	t.p.moveLots(m, &t.r)
	return &t.r, &t.tr.Trace
}

// Lots returns the lots held (do not change them).
func (t *Traced) Lots() *domain.Lots { return &t.p.lots }

// Unknown returns the quantity held of unknown cost.
func (t *Traced) Unknown() domain.Decimal { return t.p.unknown }

// Position returns the base position: every coin in less every coin out,
// whatever its cost.
func (t *Traced) Position() domain.Decimal { return t.p.position }
