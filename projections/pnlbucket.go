package projections

import (
	"slices"

	"github.com/tradeledger/tradeledger/domain/fold"
)

// PNL aggregates. Every fill is added, as it is folded, to a slot of 15
// UTC minutes in its pair's series and in its quote currency's series (the
// sum of every pair with that quote), fold.Series. A day in any IANA zone
// is a run of whole slots, since every zone offset in use is a multiple of
// 15 minutes (30- and 45-minute zones included); for the historical
// local-mean-time offsets that are not, a slot belongs to the day its start
// falls in. So no request ever rescans fills: it folds at most one slot per
// 15 minutes of history per series, and sums of pnl over a period use
// per-slot prefix sums (O(log n)). A pair folded again from a late fill
// has its slots from there rebuilt (ledgerfold.go).
//
// Units. Amounts are in a pair's quote currency. A query over pairs of
// different quotes is answered in the reporting currency, at rates from
// the log (pnlconv.go), unless it names one quote to restrict to; nothing
// ever adds USDT to BTC without converting it.

// BucketSeconds is the width of a PNL bucket (a slot).
const BucketSeconds = fold.SlotSeconds

// series is a run of slots and their total.
type series = fold.Series[int32]

// quoteSeries is the series of every pair of one quote currency, summed,
// and the slot from which it must be summed again from its pairs before
// the next read (after a pair of it was folded again).
type quoteSeries struct {
	series
	stale     bool
	staleFrom int64
	seriesAt  uint64 `snap:"-"` // as pairBook.seriesAt
}

// ownSeries makes s's slots its own before they are written into (see
// ownSlice): a freeze copies no series, a pair's or quote's first change
// after it copies that one.
func (l *Ledger) ownSeries(s *series, at *uint64) { ownSlice(&s.Slots, at, l.frozen) }

// ownSlice copies *s before it is written into when a freeze since it was
// last copied (at; frozen is Ledger.frozen, the freezes so far) shares it
// with its frozen copy, and notes the copy in at.
func ownSlice[T any](s *[]T, at *uint64, frozen uint64) {
	if *at != frozen {
		*s = slices.Clone(*s)
		*at = frozen
	}
}

// addToSeries adds one fill folded in order to its pair's and its quote's
// series, and to its pair's series in other currencies (pnlconv.go).
func (l *Ledger) addToSeries(b *pairBook, f *fold.Fill, r *fold.Result) {
	fx := r.Agg(f)
	l.convertFill(b, f.Key, &fx, r.Unique)
	l.ownSeries(&b.series, &b.seriesAt)
	b.series.Add(&fx)
	b.series.Move(r.Unique)
	q := l.quotes[b.quote]
	if q == nil {
		q = &quoteSeries{}
		l.quotes[b.quote] = q
	}
	l.ownSeries(&q.series, &q.seriesAt)
	q.Add(&fx)
	q.Move(r.Unique)
}

const (
	minTime = fold.MinTime
	maxTime = fold.MaxTime
)
