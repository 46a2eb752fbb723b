package domain

import (
	"math"
	"sort"
	"strings"
)

// RateBook is the conversion graph every PNL reader values money with:
// currencies are its nodes, and every currency pair the log quotes a rate
// for is a link. Both the in-memory Ledger and the ClickHouse sink fold the
// log's rates into one, in log order, so that a conversion means the same
// thing wherever it is read.
//
// Rates. Observe records 1 base = rate quote at a time (ms): a RateObserved
// event at its time, and every fill of a pair QUOTE-BASE at its price and
// trade time. Rates of every exchange are pooled: a rate is a rate between
// two currencies.
//
// Paths. An amount in F converts into T along a path of links, hop by hop:
// a hop from A to B uses the latest point (by time, then log order) at or
// before the amount's time of either the pair B-A (1 A = r B: multiply) or
// A-B (divide). The path is the shortest one (fewest hops) whose every hop
// has such a point — and, for a fee (maxAge > 0), one no older than maxAge
// before the amount's time. Among equally short paths the tie rule is
// alphabetical: the path whose currencies, read from F on, come first in
// byte order (so USDT-BNB, USDT-BTC and BTC-BNB make BNB → BTC → USDT the
// path of a BNB amount into USDT when there is no USDT-BNB rate, not BNB → …
// any later name). Paths are searched among the rates the book held when the
// amount was applied: a rate appended to the log later never changes an
// amount already applied, so a live answer and a replay up to the same
// position agree.
//
// Precision. Each hop multiplies or divides the amount by its rate with
// Decimal's rounding (Mul, Div: one rounding per hop, in one place); the
// path's Rate is 1 unit of F converted the same way.
//
// Memory. A link keeps every point only while it lies on the path between
// two anchors (see Anchor): quote currencies with fills, the configured
// reporting currency and fee assets. Any other link keeps only its latest
// point, so that a log of one quote (whose every fill is a rate to its
// base) keeps no rate history. A link whose history starts late converts
// older amounts with the points it kept (its latest, when that is at or
// before their time).
//
// The zero value is an empty book. Not safe for concurrent use.
type RateBook struct {
	seq     uint64
	points  map[CurrencyPair]*ratePoints
	links   map[string][]string // currency → currencies it has a rate with, sorted
	kept    map[link]bool       // links whose every point is kept
	anchors []string            // sorted
	paths   map[link][]string   // shortest path by (from, to), with no regard to time; reset when links change
	fills   map[string]int64    // fills per quote currency (CountFill)
	report  string              // bot.REPORTING_CURRENCY, "" when unset
	// FeeMaxAge bounds the age (ms) of the rates a fee in a third asset is
	// valued at (ValueFee); ≤ 0 means DefaultFeeRateMaxAge.
	FeeMaxAge int64
}

// DefaultFeeRateMaxAge is bot.FEE_RATE_MAX_AGE's default: a fee in a third
// asset is valued at a rate at most one hour older than its fill.
const DefaultFeeRateMaxAge = 3_600_000

// CurrencyPair names a rate: 1 Base = rate Quote.
type CurrencyPair struct{ Quote, Base string }

// RatePoint is one rate of a currency pair: 1 base = Rate quote at T (ms);
// Seq orders points in log order.
type RatePoint struct {
	T    int64
	Seq  uint64
	Rate Decimal
}

// ratePoints are a pair's points sorted by (T, Seq).
type ratePoints struct{ pts []RatePoint }

// link is an ordered pair of currencies (a link of the graph when a < b,
// a path's ends otherwise).
type link struct{ a, b string }

func linkOf(x, y string) link {
	if y < x {
		x, y = y, x
	}
	return link{x, y}
}

// Observe records 1 base = rate quote at t (ms). Rates ≤ 0 and pairs with
// an empty or a single currency are ignored.
func (b *RateBook) Observe(quote, base string, t int64, rate Decimal) {
	if rate.Sign() <= 0 || quote == "" || base == "" || quote == base {
		return
	}
	if b.points == nil {
		b.points = map[CurrencyPair]*ratePoints{}
		b.links = map[string][]string{}
		b.kept = map[link]bool{}
	}
	b.seq++
	k := CurrencyPair{quote, base}
	s := b.points[k]
	if s == nil {
		s = &ratePoints{}
		b.points[k] = s
		if !b.linked(quote, base) {
			b.links[quote] = insertSorted(b.links[quote], base)
			b.links[base] = insertSorted(b.links[base], quote)
			b.paths = nil
			b.keepPaths()
		}
	}
	p := RatePoint{T: t, Seq: b.seq, Rate: rate}
	n := len(s.pts)
	switch {
	case !b.kept[linkOf(quote, base)]: // only the latest
		if n == 0 || s.pts[n-1].T <= t {
			s.pts = append(s.pts[:0], p)
		}
	case n == 0 || s.pts[n-1].T <= t:
		s.pts = append(s.pts, p)
	default: // an older time than the newest: in place, after equal times
		i := sort.Search(n, func(i int) bool { return s.pts[i].T > t })
		s.pts = append(s.pts, RatePoint{})
		copy(s.pts[i+1:], s.pts[i:])
		s.pts[i] = p
	}
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

// Anchor makes x a currency whose conversions keep their history: every
// link on the path (with no regard to time) between x and another anchor
// keeps all its points from now on. The Ledger and the sink anchor the
// quote currencies with fills (CountFill), the reporting currency
// (SetReporting) and fee assets (ValueFee).
// It returns the book's own copy of x.
func (b *RateBook) Anchor(x string) string {
	if x == "" {
		return x
	}
	i := sort.SearchStrings(b.anchors, x)
	if i < len(b.anchors) && b.anchors[i] == x {
		return b.anchors[i]
	}
	x = strings.Clone(x) // x may point into an event's buffer
	b.anchors = insertSorted(b.anchors, x)
	b.keepPaths()
	return x
}

// keepPaths marks the links on the paths between anchors as kept.
func (b *RateBook) keepPaths() {
	if len(b.anchors) < 2 || b.links == nil {
		return
	}
	for i, x := range b.anchors {
		for _, y := range b.anchors[i+1:] {
			p := b.shortest(x, y)
			for j := 1; j < len(p); j++ {
				b.kept[linkOf(p[j-1], p[j])] = true
			}
		}
	}
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

// latestAt returns the latest point of pair at or before t among the
// points observed up to seq (log order).
func (b *RateBook) latestAt(k CurrencyPair, t int64, seq uint64) (RatePoint, bool) {
	s := b.points[k]
	if s == nil {
		return RatePoint{}, false
	}
	pts := s.pts
	for j := sort.Search(len(pts), func(i int) bool { return pts[i].T > t }); j > 0; j-- {
		if pts[j-1].Seq <= seq {
			return pts[j-1], true
		}
	}
	return RatePoint{}, false
}

// hop returns how an amount in x converts into y at t: the latest point of
// y-x (multiply) or x-y (divide, inverse), whichever is later, among those
// observed up to seq, when it is at or before t and, with maxAge > 0, no
// older than t − maxAge.
func (b *RateBook) hop(x, y string, t, maxAge int64, seq uint64) (RateHop, bool) {
	d, dok := b.latestAt(CurrencyPair{y, x}, t, seq)
	i, iok := b.latestAt(CurrencyPair{x, y}, t, seq)
	var h RateHop
	switch {
	case dok && (!iok || d.T > i.T || (d.T == i.T && d.Seq > i.Seq)):
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
	Rate    Decimal
	T       int64
	Inverse bool
}

// RatePath is how amounts convert from one currency into another at a
// time: its hops in order. The zero value converts nothing (from = to).
type RatePath struct {
	Hops []RateHop
}

// Convert returns x converted along the path, one rounding per hop.
func (p RatePath) Convert(x Decimal) Decimal {
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
func (p RatePath) Rate() Decimal { return p.Convert(DecimalFromInt(1)) }

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
// RateBook for the rules); maxAge > 0 refuses rates older than t − maxAge.
// ok is false when no path has a rate for each of its hops.
func (b *RateBook) Path(from, to string, t, maxAge int64) (RatePath, bool) {
	return b.PathAsOf(from, to, t, maxAge, math.MaxUint64)
}

// PathAsOf is Path among the rates observed up to the seq-th (Seq): what a
// reader that took a snapshot of the book (a report over the books) sees
// as long as it reads. A link that keeps only its latest point (see
// RateBook) may have dropped a point of the snapshot since.
func (b *RateBook) PathAsOf(from, to string, t, maxAge int64, seq uint64) (RatePath, bool) {
	if from == to {
		return RatePath{}, true
	}
	p := b.shortest(from, to)
	if p == nil {
		return RatePath{}, false
	}
	if out, ok := b.along(p, t, maxAge, seq); ok {
		return out, true
	}
	// The shortest link path lacks a rate at t: the shortest among the
	// links that have one.
	p = b.search(from, to, func(x, y string) bool { _, ok := b.hop(x, y, t, maxAge, seq); return ok })
	if p == nil {
		return RatePath{}, false
	}
	return b.along(p, t, maxAge, seq)
}

// Seq returns the number of rates observed so far (the Seq of the last).
func (b *RateBook) Seq() uint64 { return b.seq }

// along returns the hops of path p at t, or false when one has no rate.
func (b *RateBook) along(p []string, t, maxAge int64, seq uint64) (RatePath, bool) {
	hops := make([]RateHop, 0, len(p)-1)
	for i := 1; i < len(p); i++ {
		h, ok := b.hop(p[i-1], p[i], t, maxAge, seq)
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
// reporting currency) and anchors quote.
func (b *RateBook) CountFill(quote string) {
	if b.fills == nil {
		b.fills = map[string]int64{}
	}
	b.fills[quote]++
	if b.fills[quote] == 1 {
		b.Anchor(quote)
	}
}

// SetReporting sets bot.REPORTING_CURRENCY ("" when unset) and anchors it.
func (b *RateBook) SetReporting(x string) {
	b.report = x
	b.Anchor(x)
}

// Reporting returns the currency answers over several quotes are given in:
// bot.REPORTING_CURRENCY when set, otherwise the quote currency with the
// most fills (ties: byte order), "" without fills. Fills are counted, not
// valued, because values in different currencies cannot be compared before
// they are converted.
func (b *RateBook) Reporting() string {
	if b.report != "" {
		return b.report
	}
	return reportingOf(b.fills)
}

// reportingOf returns the quote with the most fills in fills (ties: byte
// order), "" when there is none.
func reportingOf(fills map[string]int64) string {
	best, n := "", int64(0)
	for q, k := range fills {
		if k > n || (k == n && q < best) {
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
	if len(b.anchors) < 2 {
		return nil
	}
	var out []string
	for _, x := range b.anchors {
		if x != quote && (b.fills[x] > 0 || x == b.report) && b.Connected(quote, x) {
			out = append(out, x)
		}
	}
	return out
}

// Points returns the number of points the pair quote-base keeps (all of
// them on a kept link, the latest only otherwise).
func (b *RateBook) Points(quote, base string) int {
	if s := b.points[CurrencyPair{quote, base}]; s != nil {
		return len(s.pts)
	}
	return 0
}

// Last returns the latest point (by time, then log order) of the pair
// quote-base.
func (b *RateBook) Last(quote, base string) (RatePoint, bool) {
	if s := b.points[CurrencyPair{quote, base}]; s != nil && len(s.pts) > 0 {
		return s.pts[len(s.pts)-1], true
	}
	return RatePoint{}, false
}

// SetLast makes p the latest point of quote-base, as a reader that keeps
// only every pair's latest point (the ClickHouse reader) rebuilds the book
// that converts amounts "now". Points must be set in their Seq order.
func (b *RateBook) SetLast(quote, base string, p RatePoint) {
	b.Observe(quote, base, p.T, p.Rate)
	if s := b.points[CurrencyPair{quote, base}]; s != nil && len(s.pts) > 0 {
		s.pts[len(s.pts)-1].Seq = p.Seq
	}
}

// SameCurrency reports whether a and b name the same currency: equal, case
// aside.
func SameCurrency(a, b string) bool { return strings.EqualFold(a, b) }
