package projections

import (
	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// The PNL queries of the Ledger: pnl/overview, pnl/daily, pnl/sum and
// pnl/total (the aggregates they read are in pnlbucket.go, scopes in
// pnlscope.go, days and zones in pnldays.go, currency conversion in
// pnlconv.go).

func (l *Ledger) applyConfig(e *domain.Event) error {
	switch e.Type {
	case domain.TypePairAdded:
		var p domain.PairAdded
		if err := e.Decode(&p); err != nil {
			return err
		}
		l.strat[domain.PairKey(p.Exchange, p.Pair)] = p.Strategy
	case domain.TypePairRemoved:
		var p domain.PairRemoved
		if err := e.Decode(&p); err != nil {
			return err
		}
		delete(l.strat, domain.PairKey(p.Exchange, p.Pair))
	case domain.TypeConfigReplaced:
		c, ok := domain.DecodePnlConfig(e.Data)
		if !ok {
			return nil // the config projection reports bad documents; strategies stay as they were
		}
		l.conv.setReporting(c.Reporting)
		l.booksM, l.booksS = c.Method, c.Scope
		l.conv.FeeMaxAge(c.FeeRateMaxAge) // fees in third assets valued again under a new bound
		l.conv.Targets("")                // a new reporting currency: the pairs converted into it are folded again
		l.strat = map[string]string{}
		for _, p := range c.Strategies {
			l.strat[domain.PairKey(p.Exchange, p.Pair)] = p.Strategy
		}
	}
	return nil
}

// Overview computes the PNL overview, or EINVALID for bad keys. Over
// several quote currencies, total, the periods and dailyHistory are in the
// reporting currency (unit; pnlconv.go), pnlsPerPair, detailedPerPair and
// the periods' perPair in each pair's own quote, perQuote has each quote's
// total in its own currency and unconverted what had no rate.
func (l *Ledger) Overview(q OverviewQuery) (*Overview, error) {
	l.rlock()
	defer l.mu.RUnlock()
	sc, err := l.resolve(q.Scope)
	if err != nil {
		return nil, err
	}
	from, to := rangeSeconds(q.From, q.To)
	var mv *fold.Mixed[int32]
	var ss []*series
	if len(sc.quotes) > 1 {
		mv = l.mixed(&sc)
		ss = mv.Conv
		sc.unit = mv.Unit
	} else {
		ss = l.seriesOf(&sc)
	}
	o := &Overview{Unit: sc.unit, DailyHistory: []DayPnl{}, PnlsPerPair: []KeyPnl{}, DetailedPerPair: []PairDetail{}}

	periods := pnlread.OverviewPeriods(q.Now, q.Loc)
	period := func(a, b int64) decimal.Decimal {
		var s decimal.Decimal
		for _, x := range ss {
			s = s.Add(x.RangePnl(a, b))
		}
		return s
	}
	today, yearAgo := periods[0], periods[4]
	for i, f := range []*decimal.Number{&o.Today.Pnl, &o.Yesterday.Pnl, &o.WeekAgo.Pnl, &o.MonthAgo.Pnl, &o.YearAgo.Pnl, &o.LastYear.Pnl} {
		*f = decimal.Number(period(periods[i][0], periods[i][1]))
	}
	o.Today.PerPair = map[string]decimal.Number{}
	o.YearAgo.PerPair = map[string]decimal.Number{}

	var tot agg
	var unrealized decimal.Decimal
	for _, x := range ss {
		s := x.Sum(from, to)
		tot.Merge(&s)
	}
	perQuote := map[string]*quoteTotal{}
	for i, key := range sc.keys {
		b := sc.books[i]
		var s agg
		var unr decimal.Decimal
		var pt, py decimal.Decimal
		if b != nil {
			s = b.series.Sum(from, to)
			unr = b.fold.Unrealized()
			pt = b.series.RangePnl(today[0], today[1])
			py = b.series.RangePnl(yearAgo[0], yearAgo[1])
		}
		if mv == nil {
			unrealized = unrealized.Add(unr)
		} else {
			qt := perQuote[b.quoteOr(key)]
			if qt == nil {
				qt = &quoteTotal{}
				perQuote[b.quoteOr(key)] = qt
			}
			qt.b.Merge(&s)
			qt.unrealized = qt.unrealized.Add(unr)
			if b != nil {
				unrealized = unrealized.Add(l.unrealizedIn(mv, b.quote, unr))
			}
		}
		o.Today.PerPair[key] = decimal.Number(pt)
		o.YearAgo.PerPair[key] = decimal.Number(py)
		o.PnlsPerPair = append(o.PnlsPerPair, KeyPnl{Key: key, Pnl: decimal.Number(s.Pnl)})
		o.DetailedPerPair = append(o.DetailedPerPair, fold.Detail(key, &s, unr, l.strat[key], q.Loc))
	}
	o.Total = fold.Total(&tot, unrealized)
	o.UnconvertedFees = l.unconvertedFees(sc.books, from, to)
	if days := fold.Days(ss, from, to, q.Loc); days != nil {
		o.DailyHistory = days
	}
	if mv != nil {
		o.PerQuote = map[string]PnlTotal{}
		for _, qc := range sc.quotes {
			qt := perQuote[qc]
			if qt == nil {
				qt = &quoteTotal{}
			}
			o.PerQuote[qc] = fold.Total(&qt.b, qt.unrealized)
		}
		mv.Fold(from, to)
		o.Unconverted = mv.Unconverted.Result()
	}
	return o, nil
}

// agg is an aggregate of the Ledger's series.
type agg = fold.PnlAgg[int32]

// quoteTotal sums one quote currency's pairs of a mixed-quote overview.
type quoteTotal struct {
	b          agg
	unrealized decimal.Decimal
}

// quoteOr returns b's quote, or key's for a pair without fills (b nil).
func (b *pairBook) quoteOr(key string) string {
	if b != nil {
		return b.quote
	}
	q, _, _ := splitKey(key)
	return q
}

// Daily returns the daily history of the scope in [From, To), oldest first,
// with Σ unmatchedBaseValue over the range, and the unit; over several
// quote currencies in the reporting currency (pnlconv.go).
func (l *Ledger) Daily(q DailyQuery) ([]DayPnl, decimal.Decimal, string, error) {
	l.rlock()
	defer l.mu.RUnlock()
	sc, err := l.resolve(q.Scope)
	if err != nil {
		return nil, decimal.Zero, "", err
	}
	var ss []*series
	if len(sc.quotes) > 1 {
		mv := l.mixed(&sc)
		ss, sc.unit = mv.Conv, mv.Unit
	} else {
		ss = l.seriesOf(&sc)
	}
	from, to := rangeSeconds(q.From, q.To)
	days := fold.Days(ss, from, to, q.Loc)
	var unm decimal.Decimal
	for _, x := range ss {
		s := x.Sum(from, to)
		unm = unm.Add(s.Unmatched)
	}
	if days == nil {
		days = []DayPnl{}
	}
	return days, unm, sc.unit, nil
}

// Sum returns per-pair pnl and invested in [from, to) (ms, 0: unbounded),
// their sums and the unit; over several quote currencies the sums are in
// the reporting currency (pnlconv.go).
func (l *Ledger) Sum(scope PnlScope, fromMs, toMs int64) (SumResult, error) {
	l.rlock()
	defer l.mu.RUnlock()
	sc, err := l.resolve(scope)
	if err != nil {
		return SumResult{}, err
	}
	from, to := rangeSeconds(fromMs, toMs)
	var mv *fold.Mixed[int32]
	if len(sc.quotes) > 1 {
		mv = l.mixed(&sc)
		sc.unit = mv.Unit
	}
	out := SumResult{Pairs: []PairSum{}, Unit: sc.unit}
	perQuote := map[string]QuoteSum{}
	for i, key := range sc.keys {
		var s agg
		b := sc.books[i]
		if b != nil {
			s = b.series.Sum(from, to)
		}
		q := b.quoteOr(key)
		out.Pairs = append(out.Pairs, PairSum{Key: key, Pnl: decimal.Number(s.Pnl), Invested: decimal.Number(s.Invested), Trades: int64(s.Trades), Unit: q})
		if mv == nil {
			out.Pnl, out.Invested = out.Pnl.Add(s.Pnl), out.Invested.Add(s.Invested)
			continue
		}
		qs := perQuote[q]
		qs.Pnl = decimal.Number(decimal.Decimal(qs.Pnl).Add(s.Pnl))
		qs.Invested = decimal.Number(decimal.Decimal(qs.Invested).Add(s.Invested))
		qs.Trades += int64(s.Trades)
		perQuote[q] = qs
		if b != nil {
			c, _ := l.inCurrency(b, mv.Unit)
			cs := c.Sum(from, to)
			out.Pnl, out.Invested = out.Pnl.Add(cs.Pnl), out.Invested.Add(cs.Invested)
		}
	}
	if mv != nil {
		mv.Fold(from, to)
		out.PerQuote, out.Unconverted = perQuote, mv.Unconverted.Result()
	}
	out.UnconvertedFees = l.unconvertedFees(sc.books, from, to)
	return out, nil
}

// unconvertedFees returns the fees without a rate of books' fills in the
// buckets starting in [from, to) (unix s), by asset; nil when none.
func (l *Ledger) unconvertedFees(books []*pairBook, from, to int64) map[string]decimal.Number {
	var sum map[string]decimal.Decimal
	for _, b := range books {
		if b == nil || len(b.fees) == 0 {
			continue
		}
		if sum == nil {
			sum = map[string]decimal.Decimal{}
		}
		b.unconvertedFees(from, to, sum)
	}
	return feeNumbers(sum)
}

// Total returns key's all-time figures (zeros for a key without fills), or
// EINVALID for a malformed key.
func (l *Ledger) Total(key string) (PairTotal, error) {
	q, _, err := splitKey(key)
	if err != nil {
		return PairTotal{}, err
	}
	l.rlock()
	defer l.mu.RUnlock()
	out := PairTotal{Key: key, Unit: q, Method: l.Method.String()}
	i, ok := l.byKey[key]
	if !ok {
		return out, nil
	}
	b := l.pairs[i]
	t := &b.series.Total
	out.Pnl, out.NumberOfTrades = decimal.Number(t.Pnl), int64(t.Trades)
	out.BuyCount, out.SellCount, out.Winning, out.Losing = int64(t.Buys), int64(t.Sells), int64(t.Wins), int64(t.Losses)
	out.Fees, out.Invested, out.UnmatchedBaseValue = decimal.Number(t.Fees), decimal.Number(t.Invested), decimal.Number(t.Unmatched)
	out.UnrealizedPnl, out.Balance = decimal.Number(b.fold.Unrealized()), decimal.Number(b.fold.Position())
	out.InventoryCost, out.ABP = decimal.Number(b.fold.Lots().Cost()), decimal.Number(b.fold.Lots().ABP())
	out.UnconvertedFees = l.unconvertedFees([]*pairBook{b}, minTime, maxTime)
	return out, nil
}
