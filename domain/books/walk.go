package books

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// walkChunk is how many fills a walk reads from the source per pair at a
// time: its memory is this many fills per pair, whatever the log's size.
const walkChunk = 512

// pairWalk is one pair's state in a walk: its lots, its position and last
// price, the fills read ahead, and the state at the start of the period.
type pairWalk struct {
	Pair
	lots     domain.Lots
	trace    domain.LotTrace
	position domain.Decimal // Σ bought − Σ sold, every fill read so far
	price    domain.Decimal // the last fill's price
	priceT   int64          // and its time

	// open is the state before the first fill of the period (or at the
	// end, for a pair whose fills all came before it).
	opened                      bool
	openQty, openCost, openPosn domain.Decimal
	fills                       int // fills read (every one, the period's or not)

	buf []Fill
	i   int
	cur Cursor
	eof bool
}

// walk reads the fills of a query's pairs from a source in (time,
// position) order across pairs, matching each pair's fills under the
// query's method, up to the end of the period.
type walk struct {
	src   Source
	snap  Snapshot
	q     *Query
	match bool // run the lots (false: the period's fills only, read from From on)
	pairs []*pairWalk
	queue walkQueue
}

func newWalk(src Source, q *Query, match bool) *walk {
	w := &walk{src: src, snap: src.BookSnapshot(), q: q, match: match}
	for _, p := range q.pairs(src) {
		pw := &pairWalk{Pair: p}
		pw.lots.Method = q.Method
		if !match {
			pw.cur = After(q.From)
		}
		w.pairs = append(w.pairs, pw)
	}
	return w
}

// head returns the next fill of p without taking it, reading ahead when
// its buffer is drained; nil at the end of its fills or of the period.
func (w *walk) head(p *pairWalk) *Fill {
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
	return f
}

// run calls fn for every fill of the selected pairs before To (and, when
// matching, every fill before From too: their lots are the period's
// opening), in (time, position) order across pairs, after applying it to
// its pair: r holds the fill's figures under the method (the zero FillPnl
// when not matching) and p.trace.Used the lots a sell consumed. A pair's
// open state is taken before its first fill of the period. fn's error
// stops the walk and is returned.
func (w *walk) run(fn func(p *pairWalk, f *Fill, r *domain.FillPnl) error) error {
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
		if !p.opened && f.Time >= w.q.From {
			p.open()
		}
		var r domain.FillPnl
		if w.match {
			side := domain.Buy
			if f.Sell {
				side = domain.Sell
			}
			p.trace.Time, p.trace.Ref = f.Time, f.OrderID
			r = p.lots.ApplyFeeTraced(side, f.Price, f.Qty, &f.Fee, &p.trace)
		}
		if f.Sell {
			p.position = p.position.Sub(f.Qty)
		} else {
			p.position = p.position.Add(f.Fee.Received(domain.Buy, f.Qty)) // a fee in the base came out of the coins bought
		}
		p.price, p.priceT = f.Price, f.Time
		p.fills++
		if err := fn(p, f, &r); err != nil {
			return err
		}
		if w.head(p) == nil {
			heap.Pop(&w.queue)
		} else {
			heap.Fix(&w.queue, 0)
		}
	}
	for _, p := range w.pairs {
		if !p.opened {
			p.open()
		}
	}
	return nil
}

// open records the pair's state as the period's opening.
func (p *pairWalk) open() {
	p.opened = true
	p.openQty, p.openCost, p.openPosn = p.lots.Qty(), p.lots.Cost(), p.position
}

// walkQueue is a min-heap of pairs by their next fill's (time, position).
type walkQueue []*pairWalk

func (q walkQueue) Len() int { return len(q) }
func (q walkQueue) Less(i, j int) bool {
	a, b := &q[i].buf[q[i].i], &q[j].buf[q[j].i]
	return a.Time < b.Time || (a.Time == b.Time && a.Position < b.Position)
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
