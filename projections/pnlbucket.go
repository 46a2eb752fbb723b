package projections

import (
	"sort"

	"github.com/tradeledger/tradeledger/domain"
)

// PNL aggregates. Every fill is added, as it is applied, to a bucket of 15
// UTC minutes in its pair's series and in its quote currency's series (the
// sum of every pair with that quote). A day in any IANA zone is a run of
// whole buckets, since every zone offset in use is a multiple of 15 minutes
// (30- and 45-minute zones included); for the historical local-mean-time
// offsets that are not, a bucket belongs to the day its start falls in. So
// no request ever rescans fills: it folds at most one bucket per 15 minutes
// of history per series, and sums of pnl over a period use per-bucket
// prefix sums (O(log n)).
//
// Units. Amounts are in a pair's quote currency. A query over pairs of
// different quotes is answered in the reporting currency, at rates from
// the log (pnlconv.go), unless it names one quote to restrict to; nothing
// ever adds USDT to BTC without converting it.

// BucketSeconds is the width of a PNL bucket.
const BucketSeconds = 900

// bucket aggregates the fills of one 15-minute slot (or, as a series'
// total, of all time).
type bucket struct {
	slot int64          // unix seconds / BucketSeconds
	cum  domain.Decimal // Σ pnl of this and every earlier bucket
	domain.PnlAgg[int32]
}

// series is a time-ordered run of buckets and their total.
type series struct {
	b     []bucket
	total bucket
}

// fillFx is what one fill adds to a bucket.
type fillFx struct {
	t                    int64
	sell, closing, first bool
	noMoney              bool // an unconverted fill: counted, no money (pnlconv.go)
	sign                 int8 // the sign of the fill's pnl in its own currency
	value, net, fee, Pnl domain.Decimal
	Unmatched, Invested  domain.Decimal
	uniqueFrom, uniqueTo int8 // unique win/loss: counted sign before and after (2: none)
	uniqueSlot           int64
}

// pnlFill is fx as domain.PnlAgg.Add takes it: the one rule of what a
// fill adds to an aggregate, shared with the ClickHouse sink.
func (fx *fillFx) pnlFill() domain.PnlFill {
	return domain.PnlFill{T: fx.t, Sell: fx.sell, Closing: fx.closing, First: fx.first, NoMoney: fx.noMoney, Sign: fx.sign,
		Value: fx.value, Net: fx.net, Fee: fx.fee, Pnl: fx.Pnl, Unmatched: fx.Unmatched, Invested: fx.Invested}
}

// merge adds o into b (domain.PnlAgg.Merge: the one aggregation both PNL
// readers share).
func (b *bucket) merge(o *bucket) { b.PnlAgg.Merge(&o.PnlAgg) }

// at returns the bucket of slot, creating it in order.
func (s *series) at(slot int64) int {
	n := len(s.b)
	if n > 0 && s.b[n-1].slot == slot {
		return n - 1
	}
	if n == 0 || s.b[n-1].slot < slot {
		cum := domain.Zero
		if n > 0 {
			cum = s.b[n-1].cum
		}
		s.b = append(s.b, bucket{slot: slot, cum: cum})
		return n
	}
	i := sort.Search(n, func(i int) bool { return s.b[i].slot >= slot })
	if s.b[i].slot == slot {
		return i
	}
	cum := domain.Zero
	if i > 0 {
		cum = s.b[i-1].cum
	}
	s.b = append(s.b, bucket{})
	copy(s.b[i+1:], s.b[i:])
	s.b[i] = bucket{slot: slot, cum: cum}
	return i
}

func (s *series) add(fx *fillFx) {
	slot := domain.FloorDiv(fx.t, BucketSeconds*1000)
	i := s.at(slot)
	f := fx.pnlFill()
	s.b[i].Add(&f)
	s.total.Add(&f)
	if fx.closing && !fx.Pnl.IsZero() && !fx.noMoney {
		for j := i; j < len(s.b); j++ { // only the last bucket, but for late fills
			s.b[j].cum = s.b[j].cum.Add(fx.Pnl)
		}
	}
	if fx.uniqueFrom != fx.uniqueTo {
		s.b[s.at(fx.uniqueSlot)].Unique(fx.uniqueFrom, fx.uniqueTo)
		s.total.Unique(fx.uniqueFrom, fx.uniqueTo)
	}
}

// addToSeries folds one applied fill into its pair's and its quote's series.
func (l *Ledger) addToSeries(b *pairBook, st *orderState, t int64, sell bool, r *domain.FillPnl, net domain.Decimal) {
	fx := fillFx{t: t, sell: sell, closing: sell && r.Matched.IsPos(), first: st.fills == 1,
		value: r.Value, net: net, fee: r.Fee, Pnl: r.Pnl, Unmatched: r.UnmatchedValue,
		uniqueFrom: 2, uniqueTo: 2, sign: int8(r.Pnl.Sign())}
	if fx.closing {
		fx.Invested = r.LotCost
		st.pnl = st.pnl.Add(r.Pnl)
		sign := int8(st.pnl.Sign())
		if st.uniqueSign == 0 { // not counted yet: count in this fill's bucket
			st.uniqueSlot = domain.FloorDiv(t, BucketSeconds*1000)
			fx.uniqueTo = sign
		} else if old := st.uniqueSign - 2; old != sign { // stored as sign+2 once counted
			fx.uniqueFrom, fx.uniqueTo = old, sign
		}
		st.uniqueSign = sign + 2
		fx.uniqueSlot = st.uniqueSlot
	}
	// The fill's price was observed as a rate before (domain.RateBook.Fill):
	// it applies to the fill itself.
	l.convertFill(b, &fx) // before b.series.add: see convertFill
	b.series.add(&fx)
	q := l.quotes[b.quote]
	if q == nil {
		q = &series{}
		l.quotes[b.quote] = q
	}
	q.add(&fx)
}

// rangePnl returns Σ pnl of the buckets with from ≤ start < to (unix s).
func (s *series) rangePnl(from, to int64) domain.Decimal {
	i, j := s.span(from, to)
	if i >= j {
		return domain.Zero
	}
	before := domain.Zero
	if i > 0 {
		before = s.b[i-1].cum
	}
	return s.b[j-1].cum.Sub(before)
}

// span returns the bucket index range [i, j) starting in [from, to) (unix s).
func (s *series) span(from, to int64) (int, int) {
	i := sort.Search(len(s.b), func(k int) bool { return s.b[k].slot*BucketSeconds >= from })
	j := sort.Search(len(s.b), func(k int) bool { return s.b[k].slot*BucketSeconds >= to })
	return i, max(i, j)
}

// sum returns the merge of the buckets starting in [from, to), or the total
// when the range is unbounded.
func (s *series) sum(from, to int64) bucket {
	if from <= minTime && to >= maxTime {
		return s.total
	}
	var out bucket
	i, j := s.span(from, to)
	for k := i; k < j; k++ {
		out.merge(&s.b[k])
	}
	return out
}

const (
	minTime = -1 << 50
	maxTime = 1 << 50
)
