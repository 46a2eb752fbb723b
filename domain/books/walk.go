package books

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
)

// walkChunk is how many fills a walk reads from the source per pair at a
// time: its memory is this many fills per pair, whatever the log's size.
const walkChunk = 512

// Lot references (pnlmath.Lot.Ref) of lots no order of the service's
// acquired: a trade placed elsewhere, a conversion. A lot of an order
// has the order's id.
const (
	refExternal   = -1 << 62
	refConversion = refExternal + 1
	refDeposit    = refExternal + 2 // a deposit from the outside, at the log's price
)

// unknownLot is coins of unknown cost held (a deposit no withdrawal of
// the service's explains, a conversion the log has no rate for), dated
// when they arrived (a carried one: when its coins first did).
type unknownLot struct {
	qty  decimal.Decimal
	time int64
}

// pool is one pool of lots (the cost basis scope's: a pair key, or a pair
// across accounts): the lots by the method, the coins of unknown cost
// (oldest first), the position, the last price, and the state at the
// start of the period.
type pool struct {
	key, exchange, pair string
	quote, base         string
	lots                pnlmath.Lots
	trace               pnlmath.LotTrace
	unknown             []unknownLot
	unknownQty          decimal.Decimal
	position            decimal.Decimal // Σ in − Σ out, every fill and move read so far
	price               decimal.Decimal // the last fill's price
	priceT              int64           // and its time
	priced              bool

	// open is the state before the first fill of the period (or at the
	// end, for a pool whose fills all came before it).
	opened                                   bool
	openQty, openCost, openUnknown, openPosn decimal.Decimal
	fills                                    int  // fills and moves read (every one, the period's or not)
	selected                                 bool // a pair of it is among the query's keys
}

// pairWalk is one pair's state in a walk: its pool, and the fills read
// ahead.
type pairWalk struct {
	Pair
	pool     *pool
	selected bool // among the query's keys
	buf      []Fill
	i        int
	cur      Cursor
	eof      bool
}

// carry is what a withdrawal took, for its matched deposit: lots (with
// their acquisition dates and references) in quote, and coins of unknown
// cost, their total the quantity sent and its fee.
type carry struct {
	quote   string
	lots    []pnlmath.Lot
	unknown []unknownLot
	total   decimal.Decimal
}

// step is what one fill or move did to its pool, beyond the lots' own
// figures (pnlmath.FillPnl: a sale's matched quantity and cost, pnl…):
// the part of a sale or withdrawal taken from coins of unknown cost
// (which ones), what a withdrawal took beyond every coin held, and what a
// deposit brought.
type step struct {
	pnlmath.FillPnl
	UnknownQty  decimal.Decimal
	UnknownUsed []unknownLot
	Unheld      decimal.Decimal
	InLots      decimal.Decimal // a deposit: quantity into lots, and their cost
	InCost      decimal.Decimal
	InUnknown   decimal.Decimal // a deposit or an unpriced acquisition: quantity of unknown cost
}

// walk reads the fills of the source's pairs in (time, position) order
// across pairs, matching each pool's fills and moves under the query's
// method, up to the end of the period.
type walk struct {
	src     Source
	snap    Snapshot
	q       *Query
	match   bool // run the lots (false: the period's fills only, read from From on, moves left out)
	pairs   []*pairWalk
	pools   []*pool
	queue   walkQueue
	carries map[string]*carry // by withdrawal flow id
}

func newWalk(src Source, q *Query, match bool) *walk {
	w := &walk{src: src, snap: src.BookSnapshot(), q: q, match: match, carries: map[string]*carry{}}
	want := map[string]bool{}
	for _, k := range q.Keys {
		want[k] = true
	}
	poolKey := func(p Pair) (key, exchange string) {
		if q.Scope == domain.ScopeUniversal {
			return "*/" + p.Pair, "*"
		}
		return p.Key, p.Exchange
	}
	all := src.BookPairs()
	// The lots of the query's pairs may come from others: those of their
	// pools, and those a transfer carries from another pair. Without a
	// transfer, only the pools of the query's pairs are read.
	wantPool := map[string]bool{}
	for _, p := range all {
		if k, _ := poolKey(p); len(want) == 0 || want[p.Key] {
			wantPool[k] = true
		}
	}
	if match && len(want) > 0 {
		for _, f := range src.BookFlows(w.snap) {
			if f.Peer != "" {
				wantPool = nil // every pool: a transfer may carry lots from any
				break
			}
		}
	}
	byKey := map[string]*pool{}
	for _, p := range all {
		sel := len(want) == 0 || want[p.Key]
		k, exchange := poolKey(p)
		if (!match && !sel) || (wantPool != nil && !wantPool[k]) {
			continue // the tax formats read the period's own fills: no lots; a pool no lot of the query's comes from
		}
		pair := p.Pair
		pl := byKey[k]
		if pl == nil {
			pl = &pool{key: k, exchange: exchange, pair: pair, quote: p.Quote, base: p.Base}
			pl.lots.Method = q.Method
			byKey[k] = pl
			w.pools = append(w.pools, pl)
		}
		pl.selected = pl.selected || sel
		pw := &pairWalk{Pair: p, pool: pl, selected: sel}
		if !match {
			pw.cur = After(q.From)
		}
		w.pairs = append(w.pairs, pw)
	}
	sortBy(w.pools, func(p *pool) string { return p.key })
	return w
}

// head returns the next fill of p without taking it, reading ahead when
// its buffer is drained; nil at the end of its fills or of the period.
func (w *walk) head(p *pairWalk) *Fill {
	for {
		if p.i == len(p.buf) {
			if p.eof {
				return nil
			}
			p.buf, p.cur = w.src.BookFills(w.snap, p.Key, p.cur, walkChunk, p.buf[:0])
			p.i = 0
			if len(p.buf) < walkChunk {
				p.eof = true
			}
			if len(p.buf) == 0 {
				return nil
			}
		}
		f := &p.buf[p.i]
		if w.q.pastPeriod(f.Time) {
			p.eof, p.buf, p.i = true, p.buf[:0], 0
			return nil
		}
		if !w.match && f.Kind.Move() {
			p.i++ // the tax formats list the account's flows apart (Source.BookFlows)
			continue
		}
		return f
	}
}

// run calls fn for every fill and move of the pairs before To (and, when
// matching, every one before From too: their lots are the period's
// opening), in (time, position) order across pairs, after applying it to
// its pool: s holds its figures under the method (the zero step when not
// matching) and p.pool.trace.Used the lots a sale or withdrawal consumed.
// A pool's open state is taken before its first fill of the period. fn's
// error stops the walk and is returned.
func (w *walk) run(fn func(p *pairWalk, f *Fill, s *step) error) error {
	w.queue = w.queue[:0]
	for _, p := range w.pairs {
		if w.head(p) != nil {
			w.queue = append(w.queue, p)
		}
	}
	heap.Init(&w.queue)
	for len(w.queue) > 0 {
		p := w.queue[0]
		f := &p.buf[p.i]
		p.i++
		pl := p.pool
		if !pl.opened && f.Time >= w.q.From {
			pl.open()
		}
		var s step
		if w.match {
			w.apply(pl, f, &s)
		}
		if !f.Kind.Move() {
			pl.price, pl.priceT, pl.priced = f.Price, f.Time, true
		}
		pl.fills++
		if err := fn(p, f, &s); err != nil {
			return err
		}
		if w.head(p) == nil {
			heap.Pop(&w.queue)
		} else {
			heap.Fix(&w.queue, 0)
		}
	}
	for _, pl := range w.pools {
		if !pl.opened {
			pl.open()
		}
	}
	return nil
}

// apply applies f to pool pl by its kind (see package fold's move.go for
// the rules the Ledger's fold follows, which these mirror under the
// query's method): trades add a lot or take lots, then coins of unknown
// cost; a deposit adds the lots its matched withdrawal took (scaled to
// what arrived) or coins of unknown cost; a withdrawal takes its quantity
// and network fee from the lots, then from coins of unknown cost.
func (w *walk) apply(pl *pool, f *Fill, s *step) {
	tr := &pl.trace
	tr.Time, tr.Ref = f.Time, f.OrderID
	switch f.Kind {
	case KindExternal:
		tr.Ref = refExternal
	case KindConvertIn, KindConvertOut:
		tr.Ref = refConversion
	}
	switch f.Kind {
	case KindOrder, KindExternal:
		side := domain.Buy
		if f.Sell {
			side = domain.Sell
		}
		s.FillPnl = pl.lots.ApplyFeeTraced(side, f.Price, f.Qty, &f.Fee, tr)
		if f.Sell {
			pl.takeUnknown(s.Unmatched, s)
			pl.position = pl.position.Sub(f.Qty)
		} else {
			pl.position = pl.position.Add(f.Fee.Received(domain.Buy, f.Qty)) // a fee in the base came out of the coins bought
		}
	case KindConvertIn:
		s.Value = f.Value
		if f.Priced {
			s.Matched, s.LotCost = f.Qty, f.Value
			pl.lots.AddLot(pnlmath.Lot{Qty: f.Qty, Cost: f.Value, Time: f.Time, Ref: refConversion})
		} else {
			s.InUnknown = f.Qty
			pl.addUnknown(unknownLot{f.Qty, f.Time})
		}
		pl.position = pl.position.Add(f.Qty)
	case KindConvertOut:
		tr.Used = tr.Used[:0]
		var matched, cost decimal.Decimal
		matched, cost, tr.Used = pl.lots.TakeLots(f.Qty, tr.Used)
		s.Value = f.Value
		s.Unmatched = f.Qty.Sub(matched)
		pl.takeUnknown(s.Unmatched, s)
		s.Matched, s.LotCost = matched, cost
		if f.Priced && matched.IsPos() {
			share := decimal.MulDiv(f.Value, matched, f.Qty)
			s.Pnl, s.UnmatchedValue = share.Sub(cost), f.Value.Sub(share)
		} else if f.Priced {
			s.UnmatchedValue = f.Value
		}
		pl.position = pl.position.Sub(f.Qty)
	case KindDeposit:
		pl.position = pl.position.Add(f.Qty)
		if f.Peer == "" && f.Priced { // from the outside, at the log's price
			pl.lots.AddLot(pnlmath.Lot{Qty: f.Qty, Cost: f.Value, Time: f.Time, Ref: refDeposit})
			s.InLots, s.InCost = f.Qty, f.Value
			break
		}
		c := w.carries[f.Peer]
		if f.Peer == "" || c == nil || !strings.EqualFold(c.quote, pl.quote) {
			var dates []unknownLot
			if c != nil { // in another currency: the coins' dates come, not their cost
				dates = c.dates()
			}
			s.InUnknown = f.Qty
			pl.addDated(f.Qty, f.Time, dates)
			break
		}
		lots, unknown, dates := c.scaled(f.Qty)
		for _, l := range lots {
			pl.lots.AddLot(l)
			s.InLots, s.InCost = s.InLots.Add(l.Qty), s.InCost.Add(l.Cost)
		}
		s.InUnknown = unknown
		pl.addDated(unknown, f.Time, dates)
	case KindWithdrawal:
		total := f.Qty.Add(f.NetworkFee)
		tr.Used = tr.Used[:0]
		var matched, cost decimal.Decimal
		matched, cost, tr.Used = pl.lots.TakeLots(total, tr.Used)
		s.Matched, s.LotCost = matched, cost
		rest := total.Sub(matched)
		pl.takeUnknown(rest, s)
		s.Unheld = rest.Sub(s.UnknownQty)
		if f.Flow != "" {
			c := &carry{quote: pl.quote, lots: slices.Clone(tr.Used), unknown: slices.Clone(s.UnknownUsed), total: total}
			if s.Unheld.IsPos() { // coins the log never saw arrive: dated by the withdrawal that moved them
				c.unknown = append(c.unknown, unknownLot{s.Unheld, f.Time})
			}
			w.carries[f.Flow] = c
		}
		pl.position = pl.position.Sub(total)
	}
}

// takeUnknown takes up to qty from pl's coins of unknown cost, oldest
// first, into s.
func (pl *pool) takeUnknown(qty decimal.Decimal, s *step) {
	s.UnknownUsed = s.UnknownUsed[:0]
	for qty.IsPos() && len(pl.unknown) > 0 {
		u := &pl.unknown[0]
		q := u.qty.Min(qty)
		s.UnknownUsed = append(s.UnknownUsed, unknownLot{q, u.time})
		s.UnknownQty = s.UnknownQty.Add(q)
		qty = qty.Sub(q)
		pl.unknownQty = pl.unknownQty.Sub(q)
		if u.qty = u.qty.Sub(q); !u.qty.IsPos() {
			pl.unknown = pl.unknown[1:]
		}
	}
}

func (pl *pool) addUnknown(u unknownLot) {
	if u.qty.IsPos() {
		pl.unknown = append(pl.unknown, u)
		pl.unknownQty = pl.unknownQty.Add(u.qty)
	}
}

// addDated adds qty of unknown cost: split over dates pro rata when a
// carry dated them (the last part taking the rounding), else dated t.
func (pl *pool) addDated(qty decimal.Decimal, t int64, dates []unknownLot) {
	if !qty.IsPos() {
		return
	}
	var total decimal.Decimal
	for _, d := range dates {
		total = total.Add(d.qty)
	}
	if !total.IsPos() {
		pl.addUnknown(unknownLot{qty, t})
		return
	}
	rest := qty
	for i, d := range dates {
		q := rest
		if i < len(dates)-1 {
			q = decimal.MulDiv(d.qty, qty, total)
		}
		rest = rest.Sub(q)
		pl.addUnknown(unknownLot{q, d.time})
	}
}

// scaled returns what a deposit of qty brings of c (fold.Carry.Scaled's
// arithmetic, so that the Ledger's figures and the books agree): each lot
// its quantity × qty ÷ total with its whole cost and date, the rest of
// unknown cost, dated as the coins it carries.
func (c *carry) scaled(qty decimal.Decimal) (lots []pnlmath.Lot, unknown decimal.Decimal, dates []unknownLot) {
	if !c.total.IsPos() {
		return nil, qty, nil
	}
	rest := qty
	for _, l := range c.lots {
		q := decimal.MulDiv(l.Qty, qty, c.total)
		rest = rest.Sub(q)
		lots = append(lots, pnlmath.Lot{Qty: q, Cost: l.Cost, Time: l.Time, Ref: l.Ref})
	}
	var uq decimal.Decimal
	for _, u := range c.unknown {
		uq = uq.Add(u.qty)
	}
	if uq.IsPos() || len(lots) == 0 {
		return lots, rest, c.unknown
	}
	lots[len(lots)-1].Qty = lots[len(lots)-1].Qty.Add(rest)
	return lots, decimal.Zero, nil
}

// dates returns every coin c carries, lots and unknown ones, as dated
// quantities (a carry into a pool of another currency: their cost does
// not come).
func (c *carry) dates() []unknownLot {
	out := make([]unknownLot, 0, len(c.lots)+len(c.unknown))
	for _, l := range c.lots {
		out = append(out, unknownLot{l.Qty, l.Time})
	}
	return append(out, c.unknown...)
}

// open records the pool's state as the period's opening.
func (pl *pool) open() {
	pl.opened = true
	pl.openQty, pl.openCost, pl.openUnknown, pl.openPosn = pl.lots.Qty(), pl.lots.Cost(), pl.unknownQty, pl.position
}

// walkQueue is a min-heap of pairs by their next fill's (time, position).
type walkQueue []*pairWalk

func (q walkQueue) Len() int { return len(q) }
func (q walkQueue) Less(i, j int) bool {
	a, b := &q[i].buf[q[i].i], &q[j].buf[q[j].i]
	if a.Time != b.Time || a.Position != b.Position {
		return a.Time < b.Time || (a.Time == b.Time && a.Position < b.Position)
	}
	return q[i].Key < q[j].Key // a conversion's legs: one event, two pairs
}
func (q walkQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *walkQueue) Push(x any)   { *q = append(*q, x.(*pairWalk)) }
func (q *walkQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// sortBy sorts s by the string key of its elements.
func sortBy[T any](s []T, key func(T) string) {
	slices.SortFunc(s, func(a, b T) int { return strings.Compare(key(a), key(b)) })
}
