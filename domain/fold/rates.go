package fold

import (
	"math"
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// RateBook is the conversion graph every PNL reader values money with:
// currencies are its nodes, and every currency pair the log quotes a rate
// for is a link. The in-memory Ledger and the ClickHouse sink each keep
// one, and both hold every rate of the log, so that a conversion means the
// same thing wherever it is read.
//
// Rates. A point says 1 base = rate quote at a time (ms): a RateObserved
// event at its recorded time (Observe), and every fill of a pair
// QUOTE-BASE at its price and trade time (ObserveFill). Rates of every
// exchange are pooled: a rate is a rate between two currencies. Points are
// ordered by time, then by log position (the tie rule of points of one
// millisecond).
//
// Paths. An amount in F converts into T along a path of links, hop by hop:
// a hop from A to B uses the latest point (by time, then log position) at
// or before the amount's time of either the pair B-A (1 A = r B: multiply)
// or A-B (divide). The path is the shortest one (fewest hops) whose every
// hop has such a point — and, for a fee (maxAge > 0), one no older than
// maxAge before the amount's time. Among equally short paths the tie rule
// is alphabetical: the path whose currencies, read from F on, come first in
// byte order (so USDT-BNB, USDT-BTC and BTC-BNB make BNB → BTC → USDT the
// path of a BNB amount into USDT when there is no USDT-BNB rate).
//
// Trade time. A path depends on the points of the log at or before the
// amount's time, whatever order they were recorded in: a rate recorded
// late (an imported history, a backfilled fill) changes the conversions of
// the amounts after its time, which the fold then values again
// (Pair.Refold). So the same log gives the same conversions in whatever
// order its events arrived, and a live answer equals a replay.
//
// Precision. Each hop multiplies or divides the amount by its rate with
// Decimal's rounding (Mul, Div: one rounding per hop, in one place); the
// path's Rate is 1 unit of F converted the same way.
//
// Memory. Every point is kept. A reader that holds its fills elsewhere (the
// Ledger's order records) sets Fills and keeps none of their points here.
//
// The zero value is an empty book. Not safe for concurrent use.
type RateBook struct {
	points map[CurrencyPair]*ratePoints
	links  map[string][]string // currency → currencies it has a rate with, sorted
	paths  map[link][]string   // shortest path by (from, to), with no regard to time; reset when links change
	fills  map[string]int64    // fills per quote currency (CountFill)
	quotes []string            // the quote currencies with fills, sorted
	report string              // bot.REPORTING_CURRENCY, "" when unset
	gen    uint64              // moves when links, quotes with fills or the reporting currency change
	// FeeMaxAge bounds the age (ms) of the rates a fee in a third asset is
	// valued at (ValueFee); ≤ 0 means DefaultFeeRateMaxAge.
	FeeMaxAge int64
	// Fills, when set, gives the points of fills: ObserveFill then records
	// the link and counts the fill but keeps no point.
	Fills FillRates
}

// FillRates gives the rates of fills a reader holds itself (the Ledger's
// order records).
type FillRates interface {
	// LatestFill returns the latest fill of a pair quote-base on any
	// exchange at or before at (trade time, then log position) among the
	// fills recorded at log positions up to maxPos, as a point: its trade
	// time, position and price.
	LatestFill(quote, base string, at Key, maxPos uint64) (RatePoint, bool)
}

// DefaultFeeRateMaxAge is bot.FEE_RATE_MAX_AGE's default: a fee in a third
// asset is valued at a rate at most one hour older than its fill.
const DefaultFeeRateMaxAge = 3_600_000

// CurrencyPair names a rate: 1 Base = rate Quote.
type CurrencyPair struct{ Quote, Base string }

// RatePoint is one rate of a currency pair: 1 base = Rate quote at T (ms),
// recorded at log position Pos.
type RatePoint struct {
	T    int64
	Pos  uint64
	Rate decimal.Decimal
}

// after reports whether p comes after q (time, then log position).
func (p RatePoint) after(q RatePoint) bool { return p.T > q.T || (p.T == q.T && p.Pos > q.Pos) }

// ratePoints are a pair's points sorted by (T, Pos).
type ratePoints struct{ pts []RatePoint }

// link is an ordered pair of currencies (a link of the graph when a < b,
// a path's ends otherwise).
type link struct{ a, b string }

// Observe records 1 base = rate quote at t (ms), recorded at log position
// pos. Rates ≤ 0 and pairs with an empty or a single currency are ignored.
func (b *RateBook) Observe(quote, base string, t int64, pos uint64, rate decimal.Decimal) {
	b.observe(quote, base, t, pos, rate, true)
}

// ObserveFill records the price of a fill of the pair quote-base at trade
// time t (ms), log position pos, as a rate (kept here unless Fills is
// set), and counts the fill (CountFill).
func (b *RateBook) ObserveFill(quote, base string, t int64, pos uint64, price decimal.Decimal) {
	b.observe(quote, base, t, pos, price, b.Fills == nil)
	b.CountFill(quote)
}

func (b *RateBook) observe(quote, base string, t int64, pos uint64, rate decimal.Decimal, keep bool) {
	if rate.Sign() <= 0 || quote == "" || base == "" || quote == base {
		return
	}
	if b.points == nil {
		b.points = map[CurrencyPair]*ratePoints{}
		b.links = map[string][]string{}
	}
	k := CurrencyPair{quote, base}
	s := b.points[k]
	if s == nil {
		quote, base = strings.Clone(quote), strings.Clone(base) // they may point into an event's buffer
		k = CurrencyPair{quote, base}
		s = &ratePoints{}
		b.points[k] = s
		if !b.linked(quote, base) {
			b.links[quote] = insertSorted(b.links[quote], base)
			b.links[base] = insertSorted(b.links[base], quote)
			b.paths = nil
			b.gen++
		}
	}
	if !keep {
		return
	}
	p := RatePoint{T: t, Pos: pos, Rate: rate}
	n := len(s.pts)
	if n == 0 || p.after(s.pts[n-1]) {
		s.pts = append(s.pts, p)
		return
	}
	i := sort.Search(n, func(i int) bool { return s.pts[i].after(p) })
	s.pts = append(s.pts, RatePoint{})
	copy(s.pts[i+1:], s.pts[i:])
	s.pts[i] = p
}

func (b *RateBook) linked(x, y string) bool {
	l := b.links[x]
	i := sort.SearchStrings(l, y)
	return i < len(l) && l[i] == y
}

func insertSorted(s []string, v string) []string {
	i := sort.SearchStrings(s, v)
	if i < len(s) && s[i] == v {
		return s
	}
	s = append(s, "")
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// shortest returns the path from → to with no regard to time (cached), or
// nil when they are not connected.
func (b *RateBook) shortest(from, to string) []string {
	k := link{from, to}
	if p, ok := b.paths[k]; ok {
		return p
	}
	p := b.search(from, to, nil)
	if b.paths == nil {
		b.paths = map[link][]string{}
	}
	b.paths[k] = p
	return p
}

// search is a breadth-first search from → to over the links usable
// accepts (every link when nil), neighbours in byte order: the first path
// found is the shortest, and among the shortest the first in byte order.
func (b *RateBook) search(from, to string, usable func(x, y string) bool) []string {
	if from == to {
		return []string{from}
	}
	if len(b.links[from]) == 0 || len(b.links[to]) == 0 {
		return nil
	}
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range b.links[x] {
			if _, seen := prev[y]; seen || (usable != nil && !usable(x, y)) {
				continue
			}
			prev[y] = x
			if y == to {
				var p []string
				for c := to; c != ""; c = prev[c] {
					p = append(p, c)
				}
				for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
					p[i], p[j] = p[j], p[i]
				}
				return p
			}
			queue = append(queue, y)
		}
	}
	return nil
}

// latestAt returns the latest point of pair k at or before at (time, then
// position) among those recorded at positions up to maxPos.
func (b *RateBook) latestAt(k CurrencyPair, at Key, maxPos uint64) (RatePoint, bool) {
	var best RatePoint
	found := false
	if s := b.points[k]; s != nil {
		pts := s.pts
		for j := sort.Search(len(pts), func(i int) bool { return pts[i].T > at.Time }); j > 0; j-- {
			if p := &pts[j-1]; p.Pos <= maxPos && (p.T < at.Time || p.Pos <= at.Pos) {
				best, found = *p, true
				break
			}
		}
	}
	if b.Fills != nil {
		if p, ok := b.Fills.LatestFill(k.Quote, k.Base, at, maxPos); ok && (!found || p.after(best)) {
			best, found = p, true
		}
	}
	return best, found
}

// hop returns how an amount in x converts into y at t: the latest point of
// y-x (multiply) or x-y (divide, inverse), whichever is later, among those
// recorded up to maxPos, when it is at or before t and, with maxAge > 0, no
// older than t − maxAge.
func (b *RateBook) hop(x, y string, at Key, maxAge int64, maxPos uint64) (RateHop, bool) {
	t := at.Time
	d, dok := b.latestAt(CurrencyPair{y, x}, at, maxPos)
	i, iok := b.latestAt(CurrencyPair{x, y}, at, maxPos)
	var h RateHop
	switch {
	case dok && (!iok || d.after(i)):
		h = RateHop{Rate: d.Rate, T: d.T}
	case iok:
		h = RateHop{Rate: i.Rate, T: i.T, Inverse: true}
	default:
		return h, false
	}
	if maxAge > 0 && h.T < t-maxAge {
		return h, false
	}
	return h, true
}

// RateHop is one step of a conversion: multiply by Rate, or divide when
// Inverse; T is the time of the rate's point (ms).
type RateHop struct {
	Rate    decimal.Decimal
	T       int64
	Inverse bool
}

// RatePath is how amounts convert from one currency into another at a
// time: its hops in order. The zero value converts nothing (from = to).
type RatePath struct {
	Hops []RateHop
}

// Convert returns x converted along the path, one rounding per hop.
func (p RatePath) Convert(x decimal.Decimal) decimal.Decimal {
	for _, h := range p.Hops {
		if h.Inverse {
			x = x.Div(h.Rate)
		} else {
			x = x.Mul(h.Rate)
		}
	}
	return x
}

// Rate returns what 1 unit converts into along the path.
func (p RatePath) Rate() decimal.Decimal { return p.Convert(decimal.DecimalFromInt(1)) }

// Time returns the time of the path's oldest rate, or t for an empty path.
func (p RatePath) Time(t int64) int64 {
	for i, h := range p.Hops {
		if i == 0 || h.T < t {
			t = h.T
		}
	}
	return t
}

// Path returns how an amount in from at time t (ms) converts into to (see
// RateBook for the rules), with every point at or before t; maxAge > 0
// refuses rates older than t − maxAge. ok is false when no path has a
// rate for each of its hops.
func (b *RateBook) Path(from, to string, t, maxAge int64) (RatePath, bool) {
	return b.PathAt(from, to, Key{Time: t, Pos: math.MaxUint64}, maxAge, math.MaxUint64)
}

// PathAsOf is Path among the rates recorded at log positions up to maxPos:
// what a reader that took a snapshot of the book (a report over the books)
// sees as long as it reads.
func (b *RateBook) PathAsOf(from, to string, t, maxAge int64, maxPos uint64) (RatePath, bool) {
	return b.PathAt(from, to, Key{Time: t, Pos: math.MaxUint64}, maxAge, maxPos)
}

// PathAt is PathAsOf with the points at or before at in (time, position)
// order: how a fill's amounts convert (at its Key), with the rates before
// it in trade order — those of its own millisecond recorded after it
// aside.
func (b *RateBook) PathAt(from, to string, at Key, maxAge int64, maxPos uint64) (RatePath, bool) {
	if from == to {
		return RatePath{}, true
	}
	p := b.shortest(from, to)
	if p == nil {
		return RatePath{}, false
	}
	if out, ok := b.along(p, at, maxAge, maxPos); ok {
		return out, true
	}
	// The shortest link path lacks a rate at t: the shortest among the
	// links that have one.
	p = b.search(from, to, func(x, y string) bool { _, ok := b.hop(x, y, at, maxAge, maxPos); return ok })
	if p == nil {
		return RatePath{}, false
	}
	return b.along(p, at, maxAge, maxPos)
}

// along returns the hops of path p at at, or false when one has no rate.
func (b *RateBook) along(p []string, at Key, maxAge int64, maxPos uint64) (RatePath, bool) {
	hops := make([]RateHop, 0, len(p)-1)
	for i := 1; i < len(p); i++ {
		h, ok := b.hop(p[i-1], p[i], at, maxAge, maxPos)
		if !ok {
			return RatePath{}, false
		}
		hops = append(hops, h)
	}
	return RatePath{Hops: hops}, true
}

// Connected reports whether a chain of links joins x and y.
func (b *RateBook) Connected(x, y string) bool { return x == y || b.shortest(x, y) != nil }

// CountFill counts a fill of a pair quoted in quote (for the default
// reporting currency and Targets).
func (b *RateBook) CountFill(quote string) {
	if b.fills == nil {
		b.fills = map[string]int64{}
	}
	if b.fills[quote] == 0 {
		quote = strings.Clone(quote)
		b.quotes = insertSorted(b.quotes, quote)
		b.gen++
	}
	b.fills[quote]++
}

// SetReporting sets bot.REPORTING_CURRENCY ("" when unset).
func (b *RateBook) SetReporting(x string) {
	if x != b.report {
		b.report = strings.Clone(x)
		b.gen++
	}
}

// Generation returns a number that moves whenever Targets may answer
// differently: a new link, a new quote currency with fills, another
// configured reporting currency.
func (b *RateBook) Generation() uint64 { return b.gen }

// Configured returns bot.REPORTING_CURRENCY ("" when unset).
func (b *RateBook) Configured() string { return b.report }

// Reporting returns the currency answers over several quotes are given in:
// bot.REPORTING_CURRENCY when set, otherwise the quote currency with the
// most fills (ties: byte order), "" without fills. Fills are counted, not
// valued, because values in different currencies cannot be compared before
// they are converted.
func (b *RateBook) Reporting() string {
	if b.report != "" {
		return b.report
	}
	best, n := "", int64(0)
	for _, q := range b.quotes {
		if k := b.fills[q]; k > n {
			best, n = q, k
		}
	}
	return best
}

// Targets returns the currencies a pair quoted in quote has its PNL
// converted into, in byte order: every other quote currency with fills and
// the configured reporting currency, among those a chain of links joins to
// quote.
func (b *RateBook) Targets(quote string) []string {
	var out []string
	add := func(x string) {
		if x != quote && b.Connected(quote, x) {
			out = insertSorted(out, x)
		}
	}
	for _, q := range b.quotes {
		add(q)
	}
	if b.report != "" {
		add(b.report)
	}
	return out
}

// Last returns the latest point (by time, then log position) kept of the
// pair quote-base.
func (b *RateBook) Last(quote, base string) (RatePoint, bool) {
	if s := b.points[CurrencyPair{quote, base}]; s != nil && len(s.pts) > 0 {
		return s.pts[len(s.pts)-1], true
	}
	return RatePoint{}, false
}

// Pairs returns the currency pairs the book has points of, sorted by
// quote then base.
func (b *RateBook) Pairs() []CurrencyPair {
	out := make([]CurrencyPair, 0, len(b.points))
	for k, s := range b.points {
		if len(s.pts) > 0 {
			out = append(out, k)
		}
	}
	sortPairs(out)
	return out
}

// Points returns the points kept of quote-base, in (time, position) order
// (the book's own slice: do not change it).
func (b *RateBook) Points(quote, base string) []RatePoint {
	if s := b.points[CurrencyPair{quote, base}]; s != nil {
		return s.pts
	}
	return nil
}

// Links returns every linked currency pair (as first observed: quote,
// base), including those whose points the book does not keep, sorted.
func (b *RateBook) Links() []CurrencyPair {
	out := make([]CurrencyPair, 0, len(b.points))
	for k := range b.points {
		out = append(out, k)
	}
	sortPairs(out)
	return out
}

// sortPairs sorts currency pairs by quote then base.
func sortPairs(out []CurrencyPair) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Quote != out[j].Quote {
			return out[i].Quote < out[j].Quote
		}
		return out[i].Base < out[j].Base
	})
}

// FillCounts returns the quote currencies with fills (sorted) and the
// number of fills counted of each.
func (b *RateBook) FillCounts() ([]string, []int64) {
	out := make([]int64, len(b.quotes))
	for i, q := range b.quotes {
		out[i] = b.fills[q]
	}
	return b.quotes, out
}

// SameCurrency reports whether a and b name the same currency: equal, case
// aside.
func SameCurrency(a, b string) bool { return strings.EqualFold(a, b) }

// RateState is a RateBook's whole state, field by field, as a snapshot
// writes it: every linked pair with the points kept of it (none of a
// link whose fills' points the Fills source holds), the fills counted per
// quote, the reporting currency, the generation and the fee rates' bound.
type RateState struct {
	Pairs     []PairPoints
	Quotes    []string
	Fills     []int64
	Report    string
	Gen       uint64
	FeeMaxAge int64
}

// PairPoints are the points of a currency pair, in (time, position) order.
type PairPoints struct {
	CurrencyPair
	Points []RatePoint
}

// State returns b's state (a copy).
func (b *RateBook) State() RateState {
	s := RateState{Report: b.report, Gen: b.gen, FeeMaxAge: b.FeeMaxAge}
	s.Quotes, s.Fills = b.FillCounts()
	s.Quotes = append([]string(nil), s.Quotes...)
	for _, k := range b.Links() {
		s.Pairs = append(s.Pairs, PairPoints{k, append([]RatePoint(nil), b.points[k].pts...)})
	}
	return s
}

// RateBookOf returns the book whose state is s (State's inverse), its
// Fills source unset, or EINVALID.
func RateBookOf(s *RateState) (RateBook, error) {
	b := RateBook{report: s.Report, gen: s.Gen, FeeMaxAge: s.FeeMaxAge}
	if len(s.Quotes) != len(s.Fills) {
		return RateBook{}, domain.Errorf(domain.EINVALID, "rates: %d quotes and %d counts", len(s.Quotes), len(s.Fills))
	}
	for i, q := range s.Quotes {
		if i > 0 && s.Quotes[i-1] >= q || s.Fills[i] <= 0 {
			return RateBook{}, domain.Errorf(domain.EINVALID, "rates: quote %q counted %d", q, s.Fills[i])
		}
		if b.fills == nil {
			b.fills = map[string]int64{}
		}
		b.fills[q] = s.Fills[i]
		b.quotes = append(b.quotes, q)
	}
	for _, pp := range s.Pairs {
		k := pp.CurrencyPair
		if k.Quote == "" || k.Base == "" || k.Quote == k.Base || b.points[k] != nil {
			return RateBook{}, domain.Errorf(domain.EINVALID, "rates: pair %s-%s", k.Quote, k.Base)
		}
		for i, p := range pp.Points {
			if p.Rate.Sign() <= 0 || (i > 0 && !p.after(pp.Points[i-1])) {
				return RateBook{}, domain.Errorf(domain.EINVALID, "rates: %s-%s's points out of order or not positive", k.Quote, k.Base)
			}
		}
		if b.points == nil {
			b.points = map[CurrencyPair]*ratePoints{}
			b.links = map[string][]string{}
		}
		b.points[k] = &ratePoints{pts: pp.Points}
		if !b.linked(k.Quote, k.Base) {
			b.links[k.Quote] = insertSorted(b.links[k.Quote], k.Base)
			b.links[k.Base] = insertSorted(b.links[k.Base], k.Quote)
		}
	}
	return b, nil
}
