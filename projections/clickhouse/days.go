package clickhouse

import (
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Local days of the PNL history, as the reader assembles them. A day is
// its day number: the days from 1970-01-01 to its local date
// (domain.DayNumber). Each pair's days are a dense slice by day number, so that
// merging pairs, ordering days and summing periods are index arithmetic,
// not string sorts and maps per date: an overview over all time carries
// every day of the fills' span (1,389 a series at 2,000,000 orders).

// dayAgg is a pair's figures on one local day (or, in the sink, one UTC
// hour). A day without fills has Trades 0: the Ledger leaves such days
// out, and so does foldDays. Amounts are summed as Decimals (Add: exact,
// saturating at the ledger's range as the Ledger's own sums).
type dayAgg struct {
	Trades                           int64
	Volume, Pnl, Unmatched, Invested domain.Decimal
}

// figures appends a's dayCols figures (pnl_overview9's order) to dst.
func (a *dayAgg) figures(dst []i128) []i128 {
	return append(dst, i64(a.Trades), unitsOf(a.Volume), unitsOf(a.Pnl), unitsOf(a.Unmatched), unitsOf(a.Invested))
}

// add adds the dayCols figures f (pnl_overview9's order).
func (a *dayAgg) add(f []i128) {
	t, _ := f[0].int64()
	a.Trades += t
	a.Volume = a.Volume.Add(f[1].dec())
	a.Pnl = a.Pnl.Add(f[2].dec())
	a.Unmatched = a.Unmatched.Add(f[3].dec())
	a.Invested = a.Invested.Add(f[4].dec())
}

// sub subtracts the dayCols figures f.
func (a *dayAgg) sub(f []i128) {
	t, _ := f[0].int64()
	a.Trades -= t
	a.Volume = a.Volume.Sub(f[1].dec())
	a.Pnl = a.Pnl.Sub(f[2].dec())
	a.Unmatched = a.Unmatched.Sub(f[3].dec())
	a.Invested = a.Invested.Sub(f[4].dec())
}

func (a *dayAgg) merge(b *dayAgg) {
	a.Trades += b.Trades
	a.Volume = a.Volume.Add(b.Volume)
	a.Pnl = a.Pnl.Add(b.Pnl)
	a.Unmatched = a.Unmatched.Add(b.Unmatched)
	a.Invested = a.Invested.Add(b.Invested)
}

// daySeries is one pair's local days: v[i] is day first+i.
type daySeries struct {
	first int64
	v     []dayAgg
}

// dayPool holds day slices no longer used (releaseSeries, foldDays): an
// overview over years of days would otherwise allocate them anew each time
// (at 2,000,000 orders, 3 pairs × 1,400 days and their sum: 400 KB).
var dayPool sync.Pool // of *[]dayAgg

// daySlice returns an empty slice of capacity n or more, from dayPool if
// it holds one that large.
func daySlice(n int64) []dayAgg {
	if p, _ := dayPool.Get().(*[]dayAgg); p != nil && int64(cap(*p)) >= n {
		return (*p)[:0]
	}
	return make([]dayAgg, 0, n)
}

func putDays(v []dayAgg) {
	if cap(v) > 0 {
		v = v[:0]
		dayPool.Put(&v)
	}
}

// newSeries returns a series sized for the days from, …, to.
func newSeries(from, to int64) *daySeries {
	return &daySeries{first: from, v: daySlice(max(to-from+1, 0))}
}

// releaseSeries gives the series' days back to dayPool: nothing may use
// them after.
func releaseSeries(days map[string]*daySeries) {
	for _, s := range days {
		putDays(s.v)
		s.v = nil
	}
}

// at returns day n's figures, growing s to hold it.
func (s *daySeries) at(n int64) *dayAgg {
	switch end := s.first + int64(len(s.v)); {
	case len(s.v) == 0:
		s.first, s.v = n, append(s.v[:0], dayAgg{})
	case n < s.first:
		grow := max(s.first-n, int64(len(s.v))) // doubled: a series read backwards stays linear
		v := make([]dayAgg, grow+int64(len(s.v)), grow+int64(cap(s.v)))
		copy(v[grow:], s.v)
		s.first, s.v = s.first-grow, v
	case n >= end:
		need := int(n - s.first + 1)
		if need > cap(s.v) {
			s.v = append(s.v[:cap(s.v)], make([]dayAgg, max(need, 2*cap(s.v))-cap(s.v))...)
		}
		s.v = s.v[:need]
		clear(s.v[end-s.first:]) // appended past len before: zero
	}
	return &s.v[n-s.first]
}

// last returns the day number of s's last slot (first−1 when empty).
func (s *daySeries) last() int64 { return s.first + int64(len(s.v)) - 1 }

// pnl returns the pnl of s's days from, …, to−1.
func (s *daySeries) pnl(from, to int64) domain.Decimal {
	from, to = max(from, s.first), min(to, s.last()+1)
	var p domain.Decimal
	for n := from; n < to; n++ {
		p = p.Add(s.v[n-s.first].Pnl)
	}
	return p
}

// seriesOf returns key's series in days, adding an empty one.
func seriesOf(days map[string]*daySeries, key string) *daySeries {
	s := days[key]
	if s == nil {
		s = &daySeries{}
		days[key] = s
	}
	return s
}

// foldDays merges the days of keys into a daily history, oldest first,
// days without fills left out, with the running sums
// (cumulativePnlPercent = Σpnl ÷ Σinvested × 100).
func foldDays(perPair map[string]*daySeries, keys []string) []domain.DayPnl {
	var ss []*daySeries
	lo, hi := int64(maxTime), int64(minTime)
	for _, k := range keys {
		if s := perPair[k]; s != nil && len(s.v) > 0 {
			ss = append(ss, s)
			lo, hi = min(lo, s.first), max(hi, s.last())
		}
	}
	if len(ss) == 0 {
		return []domain.DayPnl{}
	}
	days := ss[0].v // one pair: its own days, read only
	if len(ss) > 1 {
		days = daySlice(hi - lo + 1)[:hi-lo+1]
		clear(days)
		defer putDays(days)
		for _, s := range ss {
			for i := range s.v {
				days[s.first-lo+int64(i)].merge(&s.v[i])
			}
		}
	}
	// The dates first, into one buffer made a string once: one allocation
	// for all of them.
	n := 0
	for i := range days {
		if days[i].Trades != 0 {
			n++
		}
	}
	buf, ends := make([]byte, 0, 10*n), make([]int, 0, n)
	for i := range days {
		if days[i].Trades != 0 {
			buf = appendDate(buf, lo+int64(i))
			ends = append(ends, len(buf))
		}
	}
	dates := string(buf)
	out := make([]domain.DayPnl, len(ends))
	var cum, inv domain.Decimal
	k, start := 0, 0
	for i := range days {
		a := &days[i]
		if a.Trades == 0 {
			continue
		}
		cum = cum.Add(a.Pnl)
		inv = inv.Add(a.Invested)
		out[k] = domain.DayPnl{
			Date: dates[start:ends[k]], NumberOfTrades: a.Trades, TotalVolume: domain.Number(a.Volume), Pnl: domain.Number(a.Pnl),
			CumulativePnl: domain.Number(cum), CumulativePnlPercent: domain.Number(domain.PnlPercent(cum, inv)),
			UnmatchedBaseValue: domain.Number(a.Unmatched),
		}
		start = ends[k]
		k++
	}
	return out
}

// appendDate appends day n's date (YYYY-MM-DD, as time's DateOnly layout)
// to b.
func appendDate(b []byte, n int64) []byte {
	y, m, d := civil(n)
	if y < 0 || y > 9999 {
		return time.Unix(n*86400, 0).UTC().AppendFormat(b, time.DateOnly)
	}
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// civil returns the proleptic Gregorian date of day number n (Howard
// Hinnant's civil_from_days).
func civil(n int64) (y, m, d int64) {
	z := n + 719468
	era := domain.FloorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}
