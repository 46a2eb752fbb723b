package projections

import (
	"sort"

	"github.com/tradeledger/tradeledger/domain"
)

// Currency conversion for PNL scopes over several quote currencies (issue
// 14 §2). Amounts of a pair are in its quote currency; a scope whose pairs
// use several quotes (["All"] on a bot trading USDT and BTC pairs) is
// answered in one reporting currency R, with each quote's own figures
// beside it and what could not be converted reported apart.
//
// Reporting currency. bot.REPORTING_CURRENCY when set; otherwise the quote
// currency with the most fills in the whole ledger (ties: alphabetical).
// Fills are counted, not valued, because values in different currencies
// cannot be compared before they are converted.
//
// Rates come from the log only, so replay gives the same digits:
//   - RateObserved{exchange, base, quote, rate}: 1 base = rate quote, at the
//     event's time (the core records one per cycled pair at most every 15
//     minutes);
//   - every fill of a pair QUOTE-BASE at price p: 1 BASE = p QUOTE, at the
//     fill's time (so a USDT-BTC fill at 50000 gives BTC→USDT = 50000).
//
// Rates of every exchange are pooled: a rate is a rate between two
// currencies. An amount in currency F converts into T with the rate of the
// pair T-F (multiply) or F-T (divide), whichever point is the latest with a
// time at or before the amount's own time, among the rates the log held
// when the amount was applied (log order: a rate appended later never
// changes an amount already applied, so a live answer and a replay up to
// the same position agree). There is no conversion through a third
// currency, and none along a link that is not active yet (see candidate). An amount with no such rate is not converted and is reported in
// unconverted, in its own currency; it is never guessed.
//
// Precision. Every fill's money figures (pnl, invested, fees, values) are
// converted one by one, rounded half to even to 12 decimals, then
// added up; counts (trades, wins …) are currency-free and always complete.
// Unrealized pnl (lots still held, valued now) converts at the latest rate.

// ratePoint is one rate of a currency pair: 1 base = rate quote at time t
// (ms); seq orders rates in log order.
type ratePoint struct {
	t    int64
	seq  uint64
	rate domain.Decimal
}

type currencyPair struct{ quote, base string }

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
	seq       uint64
	rates     map[currencyPair][]ratePoint // sorted by (t, seq)
	links     map[string][]string          // currency → currencies it has a rate with, sorted
	targets   map[string][]string          // the active part of links (see active)
	pairs     map[convKey]*pairConv
	fills     map[string]int64 // fills per quote currency
	reporting string           // bot.REPORTING_CURRENCY, "" when unset
}

// observe records a rate: 1 base = rate quote at t (ms).
func (c *convBook) observe(quote, base string, t int64, rate domain.Decimal) {
	if rate.Sign() <= 0 || quote == "" || base == "" || quote == base {
		return
	}
	if c.rates == nil {
		c.rates = map[currencyPair][]ratePoint{}
		c.links = map[string][]string{}
		c.targets = map[string][]string{}
		c.pairs = map[convKey]*pairConv{}
	}
	c.seq++
	k := currencyPair{quote, base}
	pts, known := c.rates[k]
	p := ratePoint{t: t, seq: c.seq, rate: rate}
	store := true // pts is another slice than the map's
	switch n := len(pts); {
	case n > 0 && !c.active(quote, base): // only the latest is kept
		if pts[n-1].t <= t {
			pts[0], pts = p, pts[:1]
		}
		store = n > 1 // the same slice when it held one (a fill's every rate, mostly)
	case n == 0 || pts[n-1].t <= t:
		pts = append(pts, p)
	default: // an older time than the newest: in place, after equal times
		i := sort.Search(n, func(i int) bool { return pts[i].t > t })
		pts = append(pts, ratePoint{})
		copy(pts[i+1:], pts[i:])
		pts[i] = p
	}
	if store {
		c.rates[k] = pts
	}
	if !known && !c.linked(quote, base) {
		c.links[quote] = insertSorted(c.links[quote], base)
		c.links[base] = insertSorted(c.links[base], quote)
		if c.candidate(quote) && c.candidate(base) {
			c.activate(quote, base)
		}
	}
}

// A link between two currencies is active once both are candidates: a
// quote currency with fills, or the configured reporting currency. Amounts
// are converted along active links only, and an inactive link keeps only
// its latest rate, so that a log of one quote (whose every fill is a rate
// to its base) pays no conversion and keeps no rate history. An amount
// applied before its link became active stays unconverted.
func (c *convBook) candidate(x string) bool { return c.fills[x] > 0 || x == c.reporting }

func (c *convBook) active(a, b string) bool {
	for _, x := range c.targets[a] {
		if x == b {
			return true
		}
	}
	return false
}

func (c *convBook) activate(a, b string) {
	if !c.active(a, b) {
		c.targets[a] = insertSorted(c.targets[a], b)
		c.targets[b] = insertSorted(c.targets[b], a)
	}
}

// becameCandidate activates x's links to candidates.
func (c *convBook) becameCandidate(x string) {
	for _, y := range c.links[x] {
		if c.candidate(y) {
			c.activate(x, y)
		}
	}
}

// setReporting sets bot.REPORTING_CURRENCY.
func (c *convBook) setReporting(r string) {
	if r == c.reporting {
		return
	}
	c.reporting = r
	if r != "" && c.links != nil {
		c.becameCandidate(r)
	}
}

func (c *convBook) linked(a, b string) bool {
	for _, x := range c.links[a] {
		if x == b {
			return true
		}
	}
	return false
}

func insertSorted(s []string, v string) []string {
	i := sort.SearchStrings(s, v)
	s = append(s, "")
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// latest returns the last point of pts with time ≤ t.
func latest(pts []ratePoint, t int64) (ratePoint, bool) {
	j := sort.Search(len(pts), func(k int) bool { return pts[k].t > t })
	if j == 0 {
		return ratePoint{}, false
	}
	return pts[j-1], true
}

// rate returns how an amount in from converts into to at time t (ms): the
// rate, and inverse when the amount is divided by it (the pair is from-to)
// rather than multiplied (the pair is to-from). ok is false without a rate.
func (c *convBook) rate(from, to string, t int64) (r domain.Decimal, inverse, ok bool) {
	d, dok := latest(c.rates[currencyPair{to, from}], t)
	i, iok := latest(c.rates[currencyPair{from, to}], t)
	switch {
	case dok && (!iok || d.t > i.t || (d.t == i.t && d.seq > i.seq)):
		return d.rate, false, true
	case iok:
		return i.rate, true, true
	}
	return domain.Zero, false, false
}

// ratePoint is rate for the books: the point itself, among the first seq
// rates observed (a report reads the book as of its snapshot; a point
// observed later is passed over).
func (c *convBook) ratePoint(from, to string, t int64, seq uint64) (p ratePoint, inverse, ok bool) {
	d, dok := latestUpTo(c.rates[currencyPair{to, from}], t, seq)
	i, iok := latestUpTo(c.rates[currencyPair{from, to}], t, seq)
	switch {
	case dok && (!iok || d.t > i.t || (d.t == i.t && d.seq > i.seq)):
		return d, false, true
	case iok:
		return i, true, true
	}
	return ratePoint{}, false, false
}

// latestUpTo is latest among the points of seq ≤ max.
func latestUpTo(pts []ratePoint, t int64, max uint64) (ratePoint, bool) {
	j := sort.Search(len(pts), func(k int) bool { return pts[k].t > t })
	for ; j > 0; j-- {
		if pts[j-1].seq <= max {
			return pts[j-1], true
		}
	}
	return ratePoint{}, false
}

// convert returns x in the other currency: x×r, or x÷r when inverse.
func convert(x, r domain.Decimal, inverse bool) domain.Decimal {
	if inverse {
		return x.Div(r)
	}
	return x.Mul(r)
}

// converted returns fx with its money converted.
func (fx fillFx) converted(r domain.Decimal, inverse bool) fillFx {
	for _, p := range []*domain.Decimal{&fx.value, &fx.net, &fx.fee, &fx.Pnl, &fx.Unmatched, &fx.Invested} {
		*p = convert(*p, r, inverse)
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

// reportingCurrency returns bot.REPORTING_CURRENCY, or the quote with the
// most fills (ties: alphabetical), or "" without fills.
func (c *convBook) reportingCurrency() string {
	if c.reporting != "" {
		return c.reporting
	}
	best, n := "", int64(0)
	for q, k := range c.fills {
		if k > n || (k == n && q < best) {
			best, n = q, k
		}
	}
	return best
}

// convertFill adds fx (a fill of b, not yet in b.series) to b's series in
// every currency its quote has an active link with. The fill's own price
// was observed as a rate before.
func (l *Ledger) convertFill(b *pairBook, fx *fillFx) {
	c := &l.conv
	if c.fills == nil {
		c.fills = map[string]int64{}
	}
	n := c.fills[b.quote] + 1
	if c.fills[b.quote] = n; n == 1 && c.links != nil {
		c.becameCandidate(b.quote)
	}
	for _, to := range c.targets[b.quote] {
		k := convKey{b, to}
		pc := c.pairs[k]
		if pc == nil { // b's fills so far came before any rate with to
			pc = &pairConv{conv: countsOnly(&b.series), unconv: cloneSeries(&b.series)}
			c.pairs[k] = pc
		}
		if r, inv, ok := c.rate(b.quote, to, fx.t); ok {
			cf := fx.converted(r, inv)
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
	unconverted map[string]*Unconverted
}

func (l *Ledger) mixed(sc *scoped) *mixedView {
	v := &mixedView{unit: l.conv.reportingCurrency(), unconv: map[string][]*series{}, unconverted: map[string]*Unconverted{}}
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
		if s.Trades == 0 {
			continue
		}
		u := v.entry(q)
		u.Pnl = domain.Number(domain.Decimal(u.Pnl).Add(s.Pnl))
		u.Invested = domain.Number(domain.Decimal(u.Invested).Add(s.Invested))
		u.Trades += int64(s.Trades)
	}
}

func (v *mixedView) entry(q string) *Unconverted {
	u := v.unconverted[q]
	if u == nil {
		u = &Unconverted{}
		v.unconverted[q] = u
	}
	return u
}

// unrealized converts the unrealized pnl x of a pair quoted in q at the
// latest rate, or adds it to q's unconverted entry and returns 0.
func (l *Ledger) unrealizedIn(v *mixedView, q string, x domain.Decimal) domain.Decimal {
	if q == v.unit || x.IsZero() {
		return x
	}
	if r, inv, ok := l.conv.rate(q, v.unit, maxTime); ok {
		return convert(x, r, inv)
	}
	u := v.entry(q)
	u.UnrealizedPnl = domain.Number(domain.Decimal(u.UnrealizedPnl).Add(x))
	return domain.Zero
}

func (v *mixedView) result() map[string]Unconverted {
	out := map[string]Unconverted{}
	for q, u := range v.unconverted {
		out[q] = *u
	}
	return out
}
