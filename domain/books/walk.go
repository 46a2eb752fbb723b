package books

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/fold"
)

// walkChunk is how many fills a walk reads from the source per pair at a
// time: its memory is this many fills per pair, whatever the log's size.
const walkChunk = 512

// pool is one pool of lots (the cost basis scope's: a pair key, or a pair
// across accounts): its lots, coins of unknown cost and position as the
// fold keeps them under the query's method (fold.Traced), the last price,
// and the state at the start of the period.
type pool struct {
	key, exchange, pair string
	quote, base         string
	fold                *fold.Traced
	price               domain.Decimal // the last fill's price
	priceT              int64          // and its time
	priced              bool

	// open is the state before the first fill of the period (or at the
	// end, for a pool whose fills all came before it).
	opened                                   bool
	openQty, openCost, openUnknown, openPosn domain.Decimal
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

// step is what one fill or move did to its pool under the query's
// method: the fold's figures (a sale's matched quantity, cost and pnl, a
// conversion leg's value…) and its trace (the lots and coins of unknown
// cost it added and took, dated). Both nil when the walk does not match
// lots.
type step struct {
	r  *fold.Result
	tr *fold.Trace
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
	carries map[string]*fold.Carry // what each withdrawal took, by its flow id, for its matched deposit
}

func newWalk(src Source, q *Query, match bool) *walk {
	w := &walk{src: src, snap: src.BookSnapshot(), q: q, match: match, carries: map[string]*fold.Carry{}}
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
			pl = &pool{key: k, exchange: exchange, pair: pair, quote: p.Quote, base: p.Base, fold: fold.NewTraced(p.Quote, p.Base, q.Method)}
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
// opening), in (time, position) order across pairs, after folding it into
// its pool: s holds its figures and trace under the method (the zero step
// when not matching).
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
			s = w.apply(pl, f)
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

// apply folds f into pool pl (fold.Traced: the rules of package fold,
// which the Ledger's fold runs too; the fee and a move's value as the
// Ledger's fold valued them) and returns what it did. A deposit carries
// what its matched withdrawal took under the query's method, when that
// withdrawal was walked before it; a withdrawal's take is kept for its
// deposit.
func (w *walk) apply(pl *pool, f *Fill) step {
	key := fold.Key{Time: f.Time, Pos: f.Position}
	if !f.Kind.Move() {
		side := domain.Buy
		if f.Sell {
			side = domain.Sell
		}
		order := f.OrderID
		if f.Kind == KindExternal {
			order = 0 // a trade placed by hand: an order of its own
		}
		ff := fold.Fill{Key: key, Order: order, Side: side, Price: f.Price, Qty: f.Qty}
		r, tr := pl.fold.Fill(&ff, &f.Fee)
		return step{r, tr}
	}
	m := fold.Movement{Key: key, Kind: moveKinds[f.Kind], Qty: f.Qty, Fee: f.NetworkFee, Counter: f.Counter, CounterQty: f.CounterQty,
		Flow: f.Flow, Peer: f.Peer, Value: f.Value, Priced: f.Priced}
	if f.Kind == KindDeposit && f.Peer != "" {
		m.Carry = w.carries[f.Peer]
	}
	r, tr := pl.fold.Move(&m)
	if f.Kind == KindWithdrawal && f.Flow != "" {
		w.carries[f.Flow] = &m.Taken
	}
	return step{r, tr}
}

// moveKinds maps the kinds of a flow's moves to the fold's.
var moveKinds = [...]fold.MoveKind{KindDeposit: fold.Deposit, KindWithdrawal: fold.Withdrawal, KindConvertOut: fold.ConvertOut,
	KindConvertIn: fold.ConvertIn}

// open records the pool's state as the period's opening.
func (pl *pool) open() {
	pl.opened = true
	l := pl.fold.Lots()
	pl.openQty, pl.openCost, pl.openUnknown, pl.openPosn = l.Qty(), l.Cost(), pl.fold.Unknown(), pl.fold.Position()
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

// entry returns m[k], a new zero V put there first when it has none.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

// sortBy sorts s by the string key of its elements.
func sortBy[T any](s []T, key func(T) string) {
	slices.SortFunc(s, func(a, b T) int { return strings.Compare(key(a), key(b)) })
}
