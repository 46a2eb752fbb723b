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
	slot                        int64          // unix seconds / BucketSeconds
	cum                         domain.Decimal // Σ pnl of this and every earlier bucket
	trades, buys, sells         int32
	wins, losses, evens         int32 // closing trades by pnl sign
	priced                      int32 // closing trades whose pnl is in the bucket (all but unconverted ones)
	uBuys, uSells               int32 // orders by their first fill
	uWins, uLosses              int32 // sell orders by the sign of their summed pnl
	pnl, profit, loss, fees     domain.Decimal
	cpWins, cpLosses            domain.Decimal // Σ costProceed of winning / losing closing trades
	buyValue, sellValue, volume domain.Decimal // Σ baseValue of buys / sells; Σ rate×amount
	unmatched, invested         domain.Decimal // Σ unmatchedBaseValue; Σ cost of consumed lots
	hero, fuck                  domain.Decimal
	heroT, fuckT                int64
	firstT, lastT               int64 // first and last fill time (ms)
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
	value, net, fee, pnl domain.Decimal
	unmatched, invested  domain.Decimal
	uniqueFrom, uniqueTo int8 // unique win/loss: counted sign before and after (2: none)
	uniqueSlot           int64
}

func (b *bucket) add(fx *fillFx) {
	if b.trades == 0 || fx.t < b.firstT {
		b.firstT = fx.t
	}
	if fx.t > b.lastT {
		b.lastT = fx.t
	}
	b.trades++
	b.volume = b.volume.Add(fx.value)
	b.fees = b.fees.Add(fx.fee)
	if fx.sell {
		b.sells++
		b.sellValue = b.sellValue.Add(fx.net)
		b.unmatched = b.unmatched.Add(fx.unmatched)
		if fx.first {
			b.uSells++
		}
	} else {
		b.buys++
		b.buyValue = b.buyValue.Add(fx.net)
		if fx.first {
			b.uBuys++
		}
	}
	if !fx.closing {
		return
	}
	switch fx.sign {
	case 1:
		b.wins++
	case -1:
		b.losses++
	default:
		b.evens++
	}
	if fx.noMoney {
		return
	}
	closes := b.priced
	b.priced++
	b.pnl = b.pnl.Add(fx.pnl)
	b.invested = b.invested.Add(fx.invested)
	switch fx.sign {
	case 1:
		b.profit = b.profit.Add(fx.pnl)
		b.cpWins = b.cpWins.Add(fx.net)
	case -1:
		b.loss = b.loss.Add(fx.pnl)
		b.cpLosses = b.cpLosses.Add(fx.net)
	}
	if closes == 0 || fx.pnl > b.hero || (fx.pnl == b.hero && fx.t < b.heroT) {
		b.hero, b.heroT = fx.pnl, fx.t
	}
	if closes == 0 || fx.pnl < b.fuck || (fx.pnl == b.fuck && fx.t < b.fuckT) {
		b.fuck, b.fuckT = fx.pnl, fx.t
	}
}

// unique moves a sell order's unique win/loss count from sign from to sign
// to (2 means not counted).
func (b *bucket) unique(from, to int8) {
	switch from {
	case 1:
		b.uWins--
	case -1:
		b.uLosses--
	}
	switch to {
	case 1:
		b.uWins++
	case -1:
		b.uLosses++
	}
}

// merge adds o into b (as for totals over several buckets).
func (b *bucket) merge(o *bucket) {
	if o.trades == 0 {
		return
	}
	bc, oc := b.priced, o.priced
	if oc > 0 {
		if bc == 0 || o.hero > b.hero || (o.hero == b.hero && o.heroT < b.heroT) {
			b.hero, b.heroT = o.hero, o.heroT
		}
		if bc == 0 || o.fuck < b.fuck || (o.fuck == b.fuck && o.fuckT < b.fuckT) {
			b.fuck, b.fuckT = o.fuck, o.fuckT
		}
	}
	if b.trades == 0 || o.firstT < b.firstT {
		b.firstT = o.firstT
	}
	b.lastT = max(b.lastT, o.lastT)
	b.trades += o.trades
	b.buys += o.buys
	b.sells += o.sells
	b.wins += o.wins
	b.losses += o.losses
	b.evens += o.evens
	b.priced += o.priced
	b.uBuys += o.uBuys
	b.uSells += o.uSells
	b.uWins += o.uWins
	b.uLosses += o.uLosses
	b.pnl = b.pnl.Add(o.pnl)
	b.profit = b.profit.Add(o.profit)
	b.loss = b.loss.Add(o.loss)
	b.fees = b.fees.Add(o.fees)
	b.cpWins = b.cpWins.Add(o.cpWins)
	b.cpLosses = b.cpLosses.Add(o.cpLosses)
	b.buyValue = b.buyValue.Add(o.buyValue)
	b.sellValue = b.sellValue.Add(o.sellValue)
	b.volume = b.volume.Add(o.volume)
	b.unmatched = b.unmatched.Add(o.unmatched)
	b.invested = b.invested.Add(o.invested)
}

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
	slot := floorDiv(fx.t, BucketSeconds*1000)
	i := s.at(slot)
	s.b[i].add(fx)
	s.total.add(fx)
	if fx.closing && fx.pnl != 0 && !fx.noMoney {
		for j := i; j < len(s.b); j++ { // only the last bucket, but for late fills
			s.b[j].cum = s.b[j].cum.Add(fx.pnl)
		}
	}
	if fx.uniqueFrom != fx.uniqueTo {
		s.b[s.at(fx.uniqueSlot)].unique(fx.uniqueFrom, fx.uniqueTo)
		s.total.unique(fx.uniqueFrom, fx.uniqueTo)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// addToSeries folds one applied fill into its pair's and its quote's series.
func (l *Ledger) addToSeries(b *pairBook, st *orderState, t int64, sell bool, r *domain.FillPnl, net domain.Decimal) {
	fx := fillFx{t: t, sell: sell, closing: sell && r.Matched > 0, first: st.fills == 1,
		value: r.Value, net: net, fee: r.Fee, pnl: r.Pnl, unmatched: r.UnmatchedValue,
		uniqueFrom: 2, uniqueTo: 2, sign: int8(r.Pnl.Sign())}
	if fx.closing {
		fx.invested = r.LotCost
		st.pnl = st.pnl.Add(r.Pnl)
		sign := int8(st.pnl.Sign())
		if st.uniqueSign == 0 { // not counted yet: count in this fill's bucket
			st.uniqueSlot = floorDiv(t, BucketSeconds*1000)
			fx.uniqueTo = sign
		} else if old := st.uniqueSign - 2; old != sign { // stored as sign+2 once counted
			fx.uniqueFrom, fx.uniqueTo = old, sign
		}
		st.uniqueSign = sign + 2
		fx.uniqueSlot = st.uniqueSlot
	}
	// A fill's price is a rate between its currencies (applyFill sets
	// lastPrice before it calls here); it applies to the fill itself.
	l.conv.observe(b.quote, b.base, t, b.lastPrice)
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
		return 0
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
