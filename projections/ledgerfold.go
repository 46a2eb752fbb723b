package projections

import (
	"math"
	"sort"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Trade time. Every figure of the Ledger — order records' derived fields,
// the PNL slots, the figures in other currencies, fee valuations — is the
// fold of each pair's fills in trade-time order (domain/fold.Pair), at the
// rates of the log at each fill's time. A fill in trade order is folded as
// it is applied. A fill recorded late, before a fill already folded (an
// import of an older history into a live log, a fill the exchange reported
// after later ones), is put in its place among the records and its pair
// becomes dirty; so does every pair whose figures depend on a rate recorded
// late (a fee in a third asset, figures in other currencies). Before the
// next read — or snapshot —, settle folds each dirty pair again from its
// nearest restart point before the late fill and rebuilds its slots from
// there, and each quote's sum of them: the events are never rewritten, and
// any order of arrival gives the same figures as the log sorted in trade
// time.

// rlock takes the read lock on a settled ledger (every late fill folded).
func (l *Ledger) rlock() {
	for {
		l.mu.RLock()
		if !l.unsettled() {
			return
		}
		l.mu.RUnlock()
		l.mu.Lock()
		l.settle()
		l.mu.Unlock()
	}
}

// Settle folds again, now, every pair a late fill or rate made dirty (a
// read does it first anyway), one pair under the lock at a time: between
// two pairs the runner's applies and the readers go on (a reader settles
// what is left itself before it reads), so that the first settle after a
// replay of an import (27-243 ms at 200,000 imported orders) does not hold
// them for all of it. The quote series are summed again at the end.
func (l *Ledger) Settle() {
	for {
		l.mu.Lock()
		i, ok := l.conv.TakeDirtyOne()
		if !ok {
			l.settle()
			l.mu.Unlock()
			return
		}
		l.refold(l.pairs[i])
		l.mu.Unlock()
	}
}

// unsettled reports whether a pair or a quote series waits for settle.
func (l *Ledger) unsettled() bool {
	if l.conv.Unsettled() {
		return true
	}
	for _, q := range l.quotes {
		if q.stale {
			return true
		}
	}
	return false
}

// settle folds every dirty pair again and sums the quote series they
// changed again. Called with l.mu held.
func (l *Ledger) settle() {
	for l.conv.Unsettled() { // a re-fold may find new targets, which make pairs dirty
		for _, i := range l.conv.TakeDirty() {
			l.refold(l.pairs[i])
		}
	}
	for q, qs := range l.quotes {
		if qs.stale {
			l.resum(q, qs)
		}
	}
	// The version moved when the late events were applied: a reader that
	// read it then reads the settled figures now.
}

// sawFill notes order id's fill at trade time t in the index of first
// fills: the second it falls in, or firstUnknown outside the index's
// range (a re-fold then looks for the order's fills from its pair's
// start).
func (l *Ledger) sawFill(id, t int64) {
	s := uint32(firstUnknown)
	if sec := pnlread.FloorDiv(t, 1000); sec >= 0 && sec < firstUnknown {
		s = uint32(sec)
	}
	if old, ok := l.first.get(id); ok && (old == firstUnknown || (s != firstUnknown && old <= s)) {
		return
	}
	l.first.set(id, s)
}

// firstUnknown is the first fill index's value for a time it cannot hold.
const firstUnknown = 1<<32 - 2

// journal is a pair's records as the fold reads them.
type journal struct {
	l *Ledger
	b *pairBook
}

func (b *pairBook) journal(l *Ledger) journal { return journal{l, b} }

// Len implements fold.Journal.
func (j journal) Len() int { return j.b.recs.len() }

// At implements fold.Journal.
func (j journal) At(i int) (fold.Fill, fold.Out) {
	b := j.b
	r := b.recs.at(i)
	v := b.recs.get
	f := fold.Fill{Key: fold.Key{Time: r.time, Pos: r.pos()}, Order: r.id, Side: domain.Buy, Price: v(r.rate), Qty: v(r.amount),
		Fee: v(r.fee), FeeAsset: b.feeAsset(r)}
	if r.sell() {
		f.Side = domain.Sell
	}
	return f, fold.Out{Pnl: v(r.pnl), Unmatched: v(r.unmatchedQt)}
}

// Search implements fold.Journal.
func (j journal) Search(k fold.Key) int {
	return j.b.recs.search(func(r *orderRecord) bool { return !(r.time < k.Time || (r.time == k.Time && r.pos() < k.Pos)) })
}

// FirstFill implements fold.Journal.
func (j journal) FirstFill(order int64) (int64, bool) {
	v, ok := j.l.first.get(order)
	switch {
	case !ok:
		return 0, false
	case v == firstUnknown:
		return math.MinInt64, true
	}
	return int64(v) * 1000, true
}

// refold folds b again from where it became dirty and rebuilds what was
// derived from its fills from there: records, fee valuations, slots in
// its quote and in other currencies, open orders' figures.
func (l *Ledger) refold(b *pairBook) {
	l.refolds++
	targets := l.conv.Targets(b.quote)
	conv := make([]*fold.ConvSeries[int32], len(targets))
	for k, to := range targets {
		conv[k] = l.convSeries(b, to)
	}
	owned := false
	l.ownSeries(&b.series, &b.seriesAt)
	rb, moved := fold.Refold(&b.fold, b.journal(l), &l.conv.Rates, &b.series, targets, conv, func(i int, f *fold.Fill, r *fold.Result) {
		if i < 0 {
			return // a conversion leg: in the slots, not among the records
		}
		if !owned {
			b.recs.own(i >> recChunkBits)
			owned = true
		}
		b.setDerived(b.recs.at(i), r)
		if r.Fee.Third {
			b.setFee(f.Key, &r.Fee)
		}
	})
	for id, o := range rb.Orders {
		if st, ok := l.open[id]; ok {
			st.fold = *o
			l.open[id] = st
		}
	}
	if b.fold.UsesRates() {
		l.conv.Valued(int(l.byKey[b.key]))
	}
	from := rb.FromSlot
	for _, s := range moved {
		from = min(from, s)
	}
	q := l.quotes[b.quote]
	if q == nil {
		q = &quoteSeries{}
		l.quotes[b.quote] = q
	}
	if !q.stale || from < q.staleFrom {
		q.staleFrom = from
	}
	q.stale = true
	b.gen++ // records' JSON changed
}

// resum sums quote q's series again from its stale slot on, from the
// series of its pairs.
func (l *Ledger) resum(q string, qs *quoteSeries) {
	from := qs.staleFrom
	bySlot := map[int64]*fold.Slot[int32]{}
	var slots []int64
	for _, b := range l.pairs {
		if b.quote != q {
			continue
		}
		s := b.series.Slots
		for i := sort.Search(len(s), func(i int) bool { return s[i].Slot >= from }); i < len(s); i++ {
			x := bySlot[s[i].Slot]
			if x == nil {
				x = &fold.Slot[int32]{Slot: s[i].Slot}
				bySlot[s[i].Slot] = x
				slots = append(slots, s[i].Slot)
			}
			x.Merge(&s[i].PnlAgg)
		}
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
	fresh := make([]fold.Slot[int32], len(slots))
	for i, s := range slots {
		fresh[i] = *bySlot[s]
	}
	l.ownSeries(&qs.series, &qs.seriesAt)
	qs.Replace(from, fresh)
	qs.stale = false
}

// LatestFill implements fold.FillRates over the order records: the
// latest fill at or before at of the pair quote-base on any exchange.
func (l *Ledger) LatestFill(quote, base string, at fold.Key, maxPos uint64) (fold.RatePoint, bool) {
	var best fold.RatePoint
	found := false
	for _, bi := range l.byCur[fold.CurrencyPair{Quote: quote, Base: base}] {
		b := l.pairs[bi]
		j := b.journal(l).Search(fold.Key{Time: at.Time, Pos: at.Pos}) // records before at: [0, j) and at itself
		if j < b.recs.len() && b.recs.at(j).time == at.Time && b.recs.at(j).pos() == at.Pos {
			j++
		}
		for ; j > 0; j-- {
			r := b.recs.at(j - 1)
			if r.pos() > maxPos {
				continue
			}
			rate := b.recs.get(r.rate)
			if rate.Sign() <= 0 {
				continue
			}
			p := fold.RatePoint{T: r.time, Pos: r.pos(), Rate: rate}
			if !found || p.T > best.T || (p.T == best.T && p.Pos > best.Pos) {
				best, found = p, true
			}
			break
		}
	}
	return best, found
}
