package fold

import (
	"math"
	"slices"
	"sort"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
)

// Movements: the account's other activity in a pair's fold. Besides the fills
// of its journal (the service's orders' and the trades placed on the
// exchange by hand, External: order 0), a pair's base comes and goes
// without a trade of the pair: deposits and withdrawals of the asset, and
// the legs of conversions (dust converted, a convert trade). Pairs routes
// each of them to one pair of its account — the asset's home pair, the
// account's pair of that base with the alphabetically first quote
// (flows.go) — as a Movement, which the pair keeps itself in trade-time order
// and folds among its fills, by the same lots (pnlmath.Lots) under the same
// method:
//
//   - Deposit adds the coins received. When a withdrawal from another of
//     the service's accounts matched it (a transfer, flows.go), the lots
//     that withdrawal took come with it (Carry): their quantities scaled to
//     what arrived, their costs whole, so that the network fee's cost is in
//     the cost of the coins that arrived and no unit of cost is lost (never
//     a new lot at market; into a pair of another quote their cost cannot
//     come: coins of unknown cost). A deposit from the outside (no
//     withdrawal of the service's explains it) is a lot at the log's price
//     of the asset in the quote at its time, no older than the fee rates'
//     bound (its fair value when it arrived, as the tax tools take a
//     deposit by default). Without such a price the coins' cost is unknown:
//     they are held apart (Pair.Unknown), never as a lot costing 0, and a
//     sale of them realizes nothing (they count in the sale's unmatched
//     quantity, as coins the log never saw bought).
//   - Withdrawal takes the quantity sent and the network fee (in the
//     asset, on top) from the lots by the method, then from the coins of
//     unknown cost: no gain is realized (a transfer is not a disposal, the
//     fee is a cost). What it took is Taken, which a matched deposit
//     carries.
//   - ConvertOut and ConvertIn are a conversion's legs: a disposal of the
//     base for the counter asset, a sale at the counter's value in the
//     quote, and an acquisition of it, a purchase at the value in the quote
//     of what was given for it. The value is the counter amount itself when
//     the counter is the pair's quote (the rate the exchange gave, on a
//     pair of both assets); else the counter amount at the rate of the
//     log at the leg's time, no older than the fee rates' bound
//     (RateBook.FeeMaxAge), as a fee in a third asset is valued. Without
//     such a rate the value is unknown: a disposal realizes nothing (its
//     lots go, its quantity counts as unmatched), an acquisition holds
//     coins of unknown cost. Legs are trades of the pair's figures (its
//     PNL slots count them); deposits and withdrawals are not.
//
// Every sale, a fill's or a conversion's, takes the lots by the method
// first and the coins of unknown cost after them (oldest first in the
// books, which date them); a disposal's quantity beyond both is unmatched.

// MoveKind is what a Movement records.
type MoveKind uint8

// Movement kinds.
const (
	Deposit MoveKind = iota + 1
	Withdrawal
	ConvertOut
	ConvertIn
)

// Trade reports whether a move of kind k is a trade of the pair's
// figures (a conversion's leg).
func (k MoveKind) Trade() bool { return k == ConvertOut || k == ConvertIn }

// String names the kind.
func (k MoveKind) String() string {
	switch k {
	case Deposit:
		return "deposit"
	case Withdrawal:
		return "withdrawal"
	case ConvertOut:
		return "conversionOut"
	case ConvertIn:
		return "conversionIn"
	}
	return "none"
}

// Movement is a movement of a pair's base without a trade of the pair (see
// above). Key is its trade time (the exchange's) and the log position of
// the event that first recorded it; Flow names it among the account's
// flows (Pairs); Peer is a transfer's matched other side (a deposit's
// withdrawal, a withdrawal's deposit), "" for none.
type Movement struct {
	Key
	Kind       MoveKind
	Qty        decimal.Decimal // the base received, sent, disposed of or acquired
	Fee        decimal.Decimal // a withdrawal's network fee, in the base, on top of Qty
	Counter    string          // a conversion leg's other asset
	CounterQty decimal.Decimal // and its amount
	Flow, Peer string
	// Carry is what a matched deposit brings: the lots its withdrawal
	// took (Pairs sets it as that withdrawal folds); nil: coins of unknown
	// cost.
	Carry *Carry
	// Derived by the fold: what a withdrawal took, and a conversion leg's
	// or an outside deposit's value in the quote (Priced false: no rate).
	Taken  Carry
	Value  decimal.Decimal
	Priced bool
}

// Carry is what a withdrawal took from its pair: lots (quantity and cost
// in Quote), and Unknown, the quantity it took from coins of unknown cost
// or beyond every coin the pair held; Total is their sum (what was sent
// and its fee). At is the withdrawal's Key. A traced fold (Traced) keeps
// the lots' Time and Ref and dates the Unknown quantity (Dated: the coins
// of unknown cost it took, then what it took beyond every coin, dated by
// the withdrawal); the Ledger's fold keeps neither.
type Carry struct {
	Quote   string
	At      Key
	Lots    []pnlmath.Lot
	Unknown decimal.Decimal
	Total   decimal.Decimal
	Dated   []Coins
}

// Equal reports whether c and o took the same.
func (c *Carry) Equal(o *Carry) bool {
	return c.Quote == o.Quote && c.At == o.At && c.Unknown == o.Unknown && c.Total == o.Total &&
		slices.Equal(c.Lots, o.Lots) && slices.Equal(c.Dated, o.Dated)
}

// Clone returns a copy of c that shares nothing with it.
func (c *Carry) Clone() Carry {
	x := *c
	x.Lots = append([]pnlmath.Lot(nil), c.Lots...)
	x.Dated = slices.Clone(c.Dated)
	return x
}

// Scaled returns what a deposit of qty brings of c: each lot's quantity
// scaled by qty ÷ Total (decimal.MulDiv) with its whole cost (and its Time
// and Ref), and the quantity of unknown cost scaled the same way, the
// rounding going to the last part so that the parts add up to qty
// exactly. A carry that took nothing (Total 0) brings qty of unknown cost.
func (c *Carry) Scaled(qty decimal.Decimal) (lots []pnlmath.Lot, unknown decimal.Decimal) {
	if !c.Total.IsPos() {
		return nil, qty
	}
	rest := qty
	lots = make([]pnlmath.Lot, 0, len(c.Lots))
	for _, l := range c.Lots {
		q := decimal.MulDiv(l.Qty, qty, c.Total)
		rest = rest.Sub(q)
		lots = append(lots, pnlmath.Lot{Qty: q, Cost: l.Cost, Time: l.Time, Ref: l.Ref})
	}
	if c.Unknown.IsPos() || len(lots) == 0 {
		return lots, rest
	}
	lots[len(lots)-1].Qty = lots[len(lots)-1].Qty.Add(rest)
	return lots, decimal.Zero
}

// coins returns every coin c carries, its lots' and those of unknown
// cost, as dated quantities: what a carry into a pair of another quote
// brings (their dates, not their cost).
func (c *Carry) coins() []Coins {
	out := make([]Coins, 0, len(c.Lots)+len(c.Dated))
	for _, l := range c.Lots {
		out = append(out, Coins{Qty: l.Qty, Time: l.Time})
	}
	return append(out, c.Dated...)
}

// fill returns the move as a fill of no order, for the aggregates of a
// conversion leg.
func (m *Movement) fill() Fill {
	f := Fill{Key: m.Key, Side: domain.Buy, Qty: m.Qty}
	if m.Kind == ConvertOut || m.Kind == Withdrawal {
		f.Side = domain.Sell
	}
	return f
}

// Fill returns the move as the fold hands it to Refold's emit (order 0).
func (m *Movement) Fill() Fill { return m.fill() }

// rated reports whether the move's figures depend on rates of the log: a
// conversion leg whose counter is not the quote, a deposit from the
// outside.
func (m *Movement) rated(quote string) bool {
	return (m.Kind.Trade() && !SameCurrency(m.Counter, quote)) || (m.Kind == Deposit && m.Peer == "")
}

// Moves returns the pair's moves in trade-time order (do not change
// them).
func (p *Pair) Moves() []Movement { return p.moves }

// Unknown returns the quantity of the base held at unknown cost.
func (p *Pair) Unknown() decimal.Decimal { return p.unknown }

// moveIndex returns the index of the first move at or after k.
func (p *Pair) moveIndex(k Key) int {
	return sort.Search(len(p.moves), func(i int) bool { return !p.moves[i].Key.Less(k) })
}

// addMove puts m in its place among the pair's moves (one at its Key
// replaced) and makes the pair dirty from it.
func (p *Pair) addMove(m Movement) {
	i := p.moveIndex(m.Key)
	if i < len(p.moves) && p.moves[i].Key == m.Key {
		if p.moves[i].rated(p.Quote) {
			p.rated--
		}
		p.moves[i] = m
	} else {
		p.moves = append(p.moves, Movement{})
		copy(p.moves[i+1:], p.moves[i:])
		p.moves[i] = m
	}
	if m.rated(p.Quote) {
		p.rated++
	}
	p.Late(m.Key)
}

// removeMove removes the move at k, if any, and makes the pair dirty from
// it.
func (p *Pair) removeMove(k Key) {
	i := p.moveIndex(k)
	if i == len(p.moves) || p.moves[i].Key != k {
		return
	}
	if p.moves[i].rated(p.Quote) {
		p.rated--
	}
	p.moves = append(p.moves[:i], p.moves[i+1:]...)
	p.Late(k)
}

// move returns the move at k, nil when there is none.
func (p *Pair) move(k Key) *Movement {
	i := p.moveIndex(k)
	if i == len(p.moves) || p.moves[i].Key != k {
		return nil
	}
	return &p.moves[i]
}

// counterValue returns a conversion leg's value in the quote: its counter
// amount when the counter is the quote, else at the rate of the log at
// its Key no older than the fee rates' bound; false without one.
func (p *Pair) counterValue(m *Movement, rates *RateBook) (decimal.Decimal, bool) {
	if SameCurrency(m.Counter, p.Quote) {
		return m.CounterQty, true
	}
	return p.inQuote(m.Counter, m.CounterQty, m.Key, rates)
}

// baseValue returns a deposit's value in the quote: its quantity at the
// log's price of the base at its Key, no older than the fee rates' bound;
// false without one.
func (p *Pair) baseValue(m *Movement, rates *RateBook) (decimal.Decimal, bool) {
	return p.inQuote(p.Base, m.Qty, m.Key, rates)
}

// inQuote converts qty of asset into the quote at the rates' path at k,
// no older than the fee rates' bound; false without one (or without rates).
func (p *Pair) inQuote(asset string, qty decimal.Decimal, k Key, rates *RateBook) (decimal.Decimal, bool) {
	if rates == nil {
		return decimal.Zero, false
	}
	path, ok := rates.PathAt(asset, p.Quote, k, rates.feeMaxAge(), math.MaxUint64)
	if !ok {
		return decimal.Zero, false
	}
	return path.Convert(qty), true
}

// takeUnknown takes up to qty from the coins of unknown cost (oldest
// first, in a traced fold) and returns how much it took.
func (p *Pair) takeUnknown(qty decimal.Decimal) decimal.Decimal {
	if !qty.IsPos() || !p.unknown.IsPos() {
		return decimal.Zero
	}
	u := qty.Min(p.unknown)
	p.unknown = p.unknown.Sub(u)
	if p.tr != nil {
		p.tr.takeDated(u)
	}
	return u
}

// addUnknown adds qty (> 0; others are ignored) of coins of unknown cost
// that arrived at t; a traced fold dates them as the coins they carry
// (dates, pro rata), else at t.
func (p *Pair) addUnknown(qty decimal.Decimal, t int64, dates []Coins) {
	if !qty.IsPos() {
		return
	}
	p.unknown = p.unknown.Add(qty)
	if p.tr != nil {
		p.tr.InUnknown = p.tr.InUnknown.Add(qty)
		p.tr.addDated(qty, t, dates)
	}
}

// addLot adds lot l: dated and referenced in a traced fold, which records
// it (Trace.In, InCost); the Ledger's lots carry neither Time nor Ref.
func (p *Pair) addLot(l pnlmath.Lot) {
	if p.tr == nil {
		p.lots.Add(l.Qty, l.Cost)
		return
	}
	p.lots.AddLot(l)
	p.tr.In, p.tr.InCost = p.tr.In.Add(l.Qty), p.tr.InCost.Add(l.Cost)
}

// take takes up to qty from the lots by the method and returns the
// quantity matched and its cost; a traced fold lists the parts it took
// (Trace.Used, Out, OutCost).
func (p *Pair) take(qty decimal.Decimal) (matched, cost decimal.Decimal) {
	if p.tr == nil {
		return p.lots.Take(qty)
	}
	matched, cost, p.tr.lt.Used = p.lots.TakeLots(qty, p.tr.lt.Used[:0])
	p.tr.took(matched, cost)
	return matched, cost
}

// valueMove values m where its rule takes a rate of the log: a conversion
// leg at its counter's value in the quote (counterValue), a deposit from
// the outside at the log's price of the base (baseValue). Value and Priced
// are what the books read of it (a traced fold takes them as given).
func (p *Pair) valueMove(m *Movement, rates *RateBook) {
	switch {
	case m.Kind.Trade():
		m.Value, m.Priced = p.counterValue(m, rates)
	case m.Kind == Deposit && m.Peer == "":
		m.Value, m.Priced = p.baseValue(m, rates)
	}
}

// applyMove values m (valueMove), folds it (moveLots) and sets *r to what
// it derived (a fill's Result: the value, lots matched and their cost, pnl
// of a disposal; Position and the rest after it). Only a conversion leg
// adds to the slot's prefix.
func (p *Pair) applyMove(m *Movement, rates *RateBook, r *Result) {
	p.valueMove(m, rates)
	p.moveLots(m, r)
	r.Position, r.CashFlow, r.InvCost, r.ABP = p.position, p.cashFlow, p.lots.Cost(), p.lots.ABP()
	if !m.Kind.Trade() {
		return
	}
	// A leg is an order of its own: its first fill, counted once as a
	// unique win or loss in its own slot.
	r.First = true
	if m.Qty.IsPos() {
		r.AvgPrice = r.Value.Div(m.Qty)
	}
	if r.Closing {
		r.Unique = Move{Slot: SlotOf(m.Time), From: 2, To: int8(r.Pnl.Sign())}
	}
	f := m.fill()
	if slot := SlotOf(m.Time); slot != p.slot {
		p.slot, p.prefix = slot, PnlAgg[int64]{}
	}
	a := r.Agg(&f)
	p.prefix.Add(&a)
	if r.Unique.Slot == p.slot && r.Unique.From != r.Unique.To {
		p.prefix.Unique(r.Unique.From, r.Unique.To)
	}
}

// moveLots folds m, valued (Value, Priced), by the rules above — the one
// place they are written, which the Ledger's fold (applyMove) and the
// books' (Traced) both run — and sets *r to its figures: a conversion
// leg's value, lots matched and their cost, the pnl of a disposal.
func (p *Pair) moveLots(m *Movement, r *Result) {
	*r = Result{Fee: pnlmath.FeeValue{Asset: p.Quote, Rate: decimal.DecimalFromInt(1), RateTime: m.Time, Valued: true}}
	switch m.Kind {
	case Deposit:
		var lots []pnlmath.Lot
		unknown := m.Qty
		var dates []Coins
		switch {
		case m.Carry != nil && SameCurrency(m.Carry.Quote, p.Quote):
			lots, unknown = m.Carry.Scaled(m.Qty)
			dates = m.Carry.Dated
		case m.Peer == "" && m.Priced: // from the outside, at the log's price
			lots, unknown = []pnlmath.Lot{{Qty: m.Qty, Cost: m.Value, Time: m.Time, Ref: RefDeposit}}, decimal.Zero
		case m.Carry != nil && p.tr != nil: // into a pair of another quote: the coins' dates come, not their cost
			dates = m.Carry.coins()
		}
		for _, l := range lots {
			p.addLot(l)
		}
		p.addUnknown(unknown, m.Time, dates)
		p.position = p.position.Add(m.Qty)
	case Withdrawal:
		total := m.Qty.Add(m.Fee)
		var used []pnlmath.Lot
		if p.tr != nil {
			used = p.tr.lt.Used[:0]
		}
		matched, cost, used := p.lots.TakeLots(total, used)
		rest := total.Sub(matched)
		u := p.takeUnknown(rest)
		taken := Carry{Quote: p.Quote, At: m.Key, Lots: used, Unknown: rest, Total: total}
		if p.tr != nil { // what it took, dated, for the books' own matched deposit
			p.tr.lt.Used = used
			p.tr.took(matched, cost)
			p.tr.Unheld = rest.Sub(u)
			m.Taken = taken.Clone()
			m.Taken.Dated = slices.Clone(p.tr.Unknown)
			if p.tr.Unheld.IsPos() { // coins the log never saw arrive: dated by the withdrawal that moved them
				m.Taken.Dated = append(m.Taken.Dated, Coins{Qty: p.tr.Unheld, Time: m.Time})
			}
		} else {
			for i := range used {
				used[i].Time, used[i].Ref = 0, 0
			}
			if !taken.Equal(&m.Taken) {
				m.Taken = taken
				p.carried = true
			}
		}
		p.position = p.position.Sub(total)
	case ConvertOut:
		v, ok := m.Value, m.Priced
		matched, cost := p.take(m.Qty)
		r.Unmatched = m.Qty.Sub(matched)
		r.Unknown = p.takeUnknown(r.Unmatched)
		if p.tr != nil {
			p.tr.Unheld = r.Unmatched.Sub(r.Unknown)
		}
		r.Value, r.Net = v, v
		if ok {
			r.Matched, r.LotCost = matched, cost
			if matched.IsPos() {
				share := decimal.MulDiv(v, matched, m.Qty)
				r.Pnl = share.Sub(cost)
				r.UnmatchedValue = v.Sub(share)
			} else {
				r.UnmatchedValue = v
			}
			r.Closing = matched.IsPos()
		} else { // no value: the lots go, nothing is realized
			r.Unmatched = m.Qty
		}
		p.position = p.position.Sub(m.Qty)
		p.cashFlow = p.cashFlow.Add(v)
	case ConvertIn:
		v, ok := m.Value, m.Priced
		r.Value, r.Net = v, v
		if ok {
			r.Matched, r.LotCost = m.Qty, v
			p.addLot(pnlmath.Lot{Qty: m.Qty, Cost: v, Time: m.Time, Ref: RefConversion})
		} else {
			p.addUnknown(m.Qty, m.Time, nil)
		}
		p.position = p.position.Add(m.Qty)
		p.cashFlow = p.cashFlow.Sub(v)
	}
	p.last, p.started = m.Key, true
}

// clone returns a copy of m that shares nothing with it.
func (m *Movement) clone() Movement {
	c := *m
	c.Taken = m.Taken.Clone()
	if m.Carry != nil {
		x := m.Carry.Clone()
		c.Carry = &x
	}
	return c
}
