package projections

import (
	"github.com/tradeledger/tradeledger/domain"
)

// Currency conversion for PNL scopes over several quote currencies (issue
// 14 §2, issue 28 §5). Amounts of a pair are in its quote currency; a scope
// whose pairs use several quotes (["All"] on a bot trading USDT and BTC
// pairs) is answered in one reporting currency R, with each quote's own
// figures beside it and what could not be converted reported apart.
//
// Reporting currency. bot.REPORTING_CURRENCY when set; otherwise the quote
// currency with the most fills in the whole ledger (ties: alphabetical),
// domain.RateBook.Reporting.
//
// Rates and paths are domain.RateBook's, which the ClickHouse sink folds
// the same way: RateObserved events and every fill's price, pooled across
// exchanges; an amount converts along the shortest chain of pairs with a
// rate at or before its time (ties: alphabetical), among the rates the log
// held when the amount was applied (log order: a rate appended later never
// changes an amount already applied, so a live answer and a replay up to
// the same position agree). A pair's figures are converted into every
// other quote currency with fills (and the configured reporting currency)
// that a chain of pairs joins to its quote, from the first fill after
// they are joined; fills before that, and fills without a rate on some hop
// at their time, are not converted and are reported in unconverted, in
// their own currency; they are never guessed.
//
// Precision. Every fill's money figures (pnl, invested, fees, values) are
// converted one by one (rounded half to even to 12 decimals at each hop),
// then added up; counts (trades, wins …) are currency-free and always
// complete. Unrealized pnl (lots still held, valued now) converts at the
// latest rates.

// convKey names the conversion of one pair's figures into a currency.
type convKey struct {
	b  *pairBook
	to string
}

// pairConv is one pair's figures in another currency: conv holds every
// fill, with its money converted when a rate was known and without money
// (counts only) otherwise; unconv holds the fills without a rate, in the
// pair's own quote.
type pairConv struct {
	conv, unconv series
}

// convBook holds the rates and the converted series of the Ledger.
type convBook struct {
	rates domain.RateBook
	pairs map[convKey]*pairConv
}

// observe records a rate: 1 base = rate quote at t (ms).
func (c *convBook) observe(quote, base string, t int64, rate domain.Decimal) {
	c.rates.Observe(quote, base, t, rate)
}

// setReporting sets bot.REPORTING_CURRENCY.
func (c *convBook) setReporting(r string) { c.rates.SetReporting(r) }

// reportingCurrency returns bot.REPORTING_CURRENCY, or the quote with the
// most fills (ties: alphabetical), or "" without fills.
func (c *convBook) reportingCurrency() string { return c.rates.Reporting() }

// converted returns fx with its money converted along p.
func (fx fillFx) converted(p domain.RatePath) fillFx {
	for _, x := range []*domain.Decimal{&fx.value, &fx.net, &fx.fee, &fx.Pnl, &fx.Unmatched, &fx.Invested} {
		*x = p.Convert(*x)
	}
	return fx
}

// unpriced returns fx without money: it counts (by its pnl's sign) and adds
// nothing else.
func (fx fillFx) unpriced() fillFx {
	fx.value, fx.net, fx.fee, fx.Pnl, fx.Unmatched, fx.Invested = domain.Zero, domain.Zero, domain.Zero, domain.Zero, domain.Zero, domain.Zero
	fx.noMoney = true
	return fx
}

// convertFill adds fx (a fill of b, not yet in b.series) to b's series in
// every currency its quote converts into (domain.RateBook.Targets). The
// fill's own price was observed as a rate, and the fill counted, before.
func (l *Ledger) convertFill(b *pairBook, fx *fillFx) {
	c := &l.conv
	for _, to := range c.rates.Targets(b.quote) {
		k := convKey{b, to}
		pc := c.pairs[k]
		if pc == nil { // b's fills so far came before its quote was joined to to
			pc = &pairConv{conv: countsOnly(&b.series), unconv: cloneSeries(&b.series)}
			if c.pairs == nil {
				c.pairs = map[convKey]*pairConv{}
			}
			c.pairs[k] = pc
		}
		if p, ok := c.rates.Path(b.quote, to, fx.t, 0); ok {
			cf := fx.converted(p)
			pc.conv.add(&cf)
			continue
		}
		u := fx.unpriced()
		pc.conv.add(&u)
		o := *fx
		o.uniqueFrom, o.uniqueTo = 2, 2 // unconv reports money and trades only
		pc.unconv.add(&o)
	}
}

// inCurrency returns b's series with money in to, and the part that has no
// rate in b's own quote (nil when b is quoted in to).
func (l *Ledger) inCurrency(b *pairBook, to string) (conv, unconv *series) {
	if b.quote == to {
		return &b.series, nil
	}
	if pc := l.conv.pairs[convKey{b, to}]; pc != nil {
		return &pc.conv, &pc.unconv
	}
	s := countsOnly(&b.series)
	return &s, &b.series
}

// countsOnly returns a copy of s without money (every fill unconverted).
func countsOnly(s *series) series {
	out := series{b: make([]bucket, len(s.b)), total: s.total.countsOnly()}
	for i := range s.b {
		out.b[i] = s.b[i].countsOnly()
	}
	return out
}

func (b bucket) countsOnly() bucket {
	return bucket{slot: b.slot, PnlAgg: domain.PnlAgg[int32]{Trades: b.Trades, Buys: b.Buys, Sells: b.Sells,
		Wins: b.Wins, Losses: b.Losses, Evens: b.Evens, UBuys: b.UBuys, USells: b.USells, UWins: b.UWins,
		ULosses: b.ULosses, FirstT: b.FirstT, LastT: b.LastT}}
}

func cloneSeries(s *series) series {
	return series{b: append([]bucket(nil), s.b...), total: s.total}
}

// mixedView is a scope over several quotes seen in the reporting currency.
type mixedView struct {
	unit        string
	conv        []*series // per known book, money in unit
	unconv      map[string][]*series
	unconverted domain.UnconvertedBook
}

func (l *Ledger) mixed(sc *scoped) *mixedView {
	v := &mixedView{unit: l.conv.reportingCurrency(), unconv: map[string][]*series{}}
	for _, b := range sc.books {
		if b == nil {
			continue
		}
		c, u := l.inCurrency(b, v.unit)
		v.conv = append(v.conv, c)
		if u != nil {
			v.unconv[b.quote] = append(v.unconv[b.quote], u)
		}
	}
	return v
}

// fold adds the unconverted fills of [from, to) to v.unconverted.
func (v *mixedView) fold(from, to int64) {
	for q, ss := range v.unconv {
		var s bucket
		for _, x := range ss {
			y := x.sum(from, to)
			s.merge(&y)
		}
		v.unconverted.AddFills(q, s.Pnl, s.Invested, int64(s.Trades))
	}
}

// unrealizedIn converts the unrealized pnl x of a pair quoted in q at the
// latest rates, or adds it to q's unconverted entry and returns 0.
func (l *Ledger) unrealizedIn(v *mixedView, q string, x domain.Decimal) domain.Decimal {
	p, ok := l.conv.rates.Path(q, v.unit, maxTime, 0)
	return v.unconverted.Unrealized(q, v.unit, x, p, ok)
}
