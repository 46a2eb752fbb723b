package clickhouse

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// The reader's answers over several quote currencies, as the Ledger's
// (projections/pnl.go, pnlconv.go): in the reporting currency the sink
// computed, pairs quoted in it from their own buckets, the others from
// their converted aggregates (pnl_conv_buckets, part 0), with what had no
// rate reported apart in each quote's own currency (part 1), each pair's
// figures in its own quote, and unrealized pnl converted at the latest
// rates (rates). Everything is folded here in exact decimals, slot by
// slot, so that the digits are the Ledger's.

// errMixed is assemble's refusal of a scope over several quotes: the
// overview goes the mixed way.
var errMixed = errors.New("clickhouse: a scope over several quote currencies")

// slotAgg is a pair's aggregate of one 15-minute slot.
type slotAgg struct {
	slot int64
	pos  uint64
	a    agg
}

// slotSeries is one pair's slots, ascending.
type slotSeries []slotAgg

// span returns the index range of the slots starting in [from, to) (unix s).
func (s slotSeries) span(from, to int64) (int, int) {
	i := sort.Search(len(s), func(k int) bool { return s[k].slot*bucketSecs >= from })
	j := sort.Search(len(s), func(k int) bool { return s[k].slot*bucketSecs >= to })
	return i, max(i, j)
}

// sum merges the slots starting in [from, to).
func (s slotSeries) sum(from, to int64) agg {
	var out agg
	i, j := s.span(from, to)
	for k := i; k < j; k++ {
		out.Merge(&s[k].a)
	}
	return out
}

// pnl returns Σ pnl of the slots starting in [from, to).
func (s slotSeries) pnl(from, to int64) domain.Decimal {
	var out domain.Decimal
	i, j := s.span(from, to)
	for k := i; k < j; k++ {
		out = out.Add(s[k].a.Pnl)
	}
	return out
}

// countsOnly returns s without money (every fill unconverted).
func (s slotSeries) countsOnly() slotSeries {
	out := make(slotSeries, len(s))
	for i, x := range s {
		a := x.a
		out[i] = slotAgg{slot: x.slot, pos: x.pos, a: agg{Trades: a.Trades, Buys: a.Buys, Sells: a.Sells, Wins: a.Wins,
			Losses: a.Losses, Evens: a.Evens, UBuys: a.UBuys, USells: a.USells, UWins: a.UWins, ULosses: a.ULosses,
			FirstT: a.FirstT, LastT: a.LastT}}
	}
	return out
}

// put keeps the latest row (by position) of each slot of a pair's series
// being read (in any order; sorted by finish).
func put(m map[string]slotSeries, at map[string]map[int64]int, key string, x slotAgg) {
	idx := at[key]
	if idx == nil {
		idx = map[int64]int{}
		at[key] = idx
	}
	if i, ok := idx[x.slot]; ok {
		if x.pos > m[key][i].pos {
			m[key][i] = x
		}
		return
	}
	idx[x.slot] = len(m[key])
	m[key] = append(m[key], x)
}

func finish(m map[string]slotSeries) {
	for _, s := range m {
		sort.Slice(s, func(i, j int) bool { return s[i].slot < s[j].slot })
	}
}

// ownSlots reads every pair's buckets (their latest rows).
func (r *Reader) ownSlots(ctx context.Context) (map[string]slotSeries, error) {
	rows, err := r.conn.Query(ctx, `SELECT exchange, pair, slot, position, `+bucketCols+`
FROM `+r.db+`.pnl_buckets7 WHERE method = ?`, r.Method.String())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, at := map[string]slotSeries{}, map[string]map[int64]int{}
	var (
		k    pairKey
		x    slotAgg
		v    [aggCols]int64
		wide string
	)
	dest := []any{&k.Exchange, &k.Pair, &x.slot, &x.pos}
	for i := range v {
		dest = append(dest, &v[i])
	}
	dest = append(dest, &wide)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if err := setAgg(&x.a, v[:], wide); err != nil {
			return nil, err
		}
		put(out, at, domain.PairKey(k.Exchange, k.Pair), x)
	}
	finish(out)
	return out, rows.Err()
}

// convSlots reads every pair's aggregates in currency to: part 0 (conv)
// and part 1 (unconv).
func (r *Reader) convSlots(ctx context.Context, to string) (conv, unconv map[string]slotSeries, err error) {
	rows, err := r.conn.Query(ctx, "SELECT part, exchange, pair, slot, position, v FROM "+r.db+".pnl_conv_buckets WHERE method = ? AND currency = ?",
		r.Method.String(), to)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	conv, unconv = map[string]slotSeries{}, map[string]slotSeries{}
	cAt, uAt := map[string]map[int64]int{}, map[string]map[int64]int{}
	for rows.Next() {
		var (
			part   uint8
			k      pairKey
			x      slotAgg
			packed string
		)
		if err := rows.Scan(&part, &k.Exchange, &k.Pair, &x.slot, &x.pos, &packed); err != nil {
			return nil, nil, err
		}
		if x.a, err = unpackAgg(packed); err != nil {
			return nil, nil, err
		}
		key := domain.PairKey(k.Exchange, k.Pair)
		if part == 0 {
			put(conv, cAt, key, x)
		} else {
			put(unconv, uAt, key, x)
		}
	}
	finish(conv)
	finish(unconv)
	return conv, unconv, rows.Err()
}

// setting returns the sink's setting name ("" when unset).
func (r *Reader) setting(ctx context.Context, name string) (string, error) {
	rows, err := r.conn.Query(ctx, "SELECT value FROM "+r.db+".settings FINAL WHERE method = ? AND name = ?", r.Method.String(), name)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var v string
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return "", err
		}
	}
	return v, rows.Err()
}

// latestRates returns a book of every pair's latest rate: what converts
// amounts "now", as the Ledger's book at the log's end.
func (r *Reader) latestRates(ctx context.Context) (*domain.RateBook, error) {
	rows, err := r.conn.Query(ctx, "SELECT quote, base, rate, time_ms, seq FROM "+r.db+".rates FINAL ORDER BY seq")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	b := &domain.RateBook{}
	for rows.Next() {
		var quote, base, rate string
		var p domain.RatePoint
		if err := rows.Scan(&quote, &base, &rate, &p.T, &p.Seq); err != nil {
			return nil, err
		}
		if p.Rate, err = domain.ParseDecimal(rate); err != nil {
			return nil, err
		}
		b.SetLast(quote, base, p)
	}
	return b, rows.Err()
}

// unconvertedFees returns the fees without a rate of the fills of keys in
// the buckets starting in [from, to) (unix s), by asset; nil when none.
func (r *Reader) unconvertedFees(ctx context.Context, keys []string, from, to int64) (map[string]domain.Number, error) {
	rows, err := r.conn.Query(ctx, "SELECT exchange, pair, time_ms, fee_asset, fee_amount FROM "+r.db+".fill_fees FINAL WHERE valued = 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	in := make(map[string]bool, len(keys))
	for _, k := range keys {
		in[k] = true
	}
	var sum map[string]domain.Decimal
	for rows.Next() {
		var ex, pair, asset, amount string
		var t int64
		if err := rows.Scan(&ex, &pair, &t, &asset, &amount); err != nil {
			return nil, err
		}
		if start := domain.FloorDiv(t, bucketMs) * bucketSecs; !in[domain.PairKey(ex, pair)] || start < from || start >= to {
			continue
		}
		v, err := domain.ParseDecimal(amount)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = map[string]domain.Decimal{}
		}
		sum[asset] = sum[asset].Add(v)
	}
	if err := rows.Err(); err != nil || sum == nil {
		return nil, err
	}
	out := make(map[string]domain.Number, len(sum))
	for a, v := range sum {
		out[a] = domain.Number(v)
	}
	return out, nil
}

// mixedData is what an answer over several quotes reads.
type mixedData struct {
	unit         string
	byKey        map[string]*pairInfo
	own          map[string]slotSeries
	conv, unconv map[string]slotSeries
	rates        *domain.RateBook
	strat        map[string]string
}

// readMixed reads the pairs, their buckets, their aggregates in the
// reporting currency, the latest rates and (withStrategies) the strategies.
func (r *Reader) readMixed(ctx context.Context, withStrategies bool) (*mixedData, error) {
	if _, err := r.overviewReady(ctx); err != nil {
		return nil, err
	}
	d := &mixedData{}
	unit, err := r.setting(ctx, "reporting")
	if err != nil {
		return nil, err
	}
	d.unit = unit
	var (
		wg                 sync.WaitGroup
		e1, e2, e3, e4, e5 error
	)
	wg.Add(4)
	go func() { defer wg.Done(); d.byKey, _, e1 = r.pairs(ctx) }()
	go func() { defer wg.Done(); d.own, e2 = r.ownSlots(ctx) }()
	go func() { defer wg.Done(); d.conv, d.unconv, e3 = r.convSlots(ctx, unit) }()
	go func() { defer wg.Done(); d.rates, e4 = r.latestRates(ctx) }()
	if withStrategies {
		d.strat, e5 = r.strategies(ctx)
	}
	wg.Wait()
	return d, errors.Join(e1, e2, e3, e4, e5)
}

// inUnit returns p's slots with money in the unit, and the part without a
// rate in p's quote (nil when p is quoted in the unit).
func (d *mixedData) inUnit(p *pairInfo) (conv, unconv slotSeries) {
	own := d.own[p.key]
	if p.quote == d.unit {
		return own, nil
	}
	if c, ok := d.conv[p.key]; ok {
		return c, d.unconv[p.key]
	}
	return own.countsOnly(), own
}

// mixedView is a scope over several quotes in the unit: each known pair's
// converted slots, and per quote what had no rate.
type mixedView struct {
	d           *mixedData
	conv        []slotSeries
	unconv      map[string][]slotSeries
	unconverted domain.UnconvertedBook
}

func (d *mixedData) view(keys []string) *mixedView {
	v := &mixedView{d: d, unconv: map[string][]slotSeries{}}
	for _, k := range keys {
		p := d.byKey[k]
		if p == nil {
			continue
		}
		c, u := d.inUnit(p)
		v.conv = append(v.conv, c)
		if u != nil {
			v.unconv[p.quote] = append(v.unconv[p.quote], u)
		}
	}
	return v
}

// fold adds the unconverted fills of [from, to) to the unconverted entries.
func (v *mixedView) fold(from, to int64) {
	for q, ss := range v.unconv {
		var s agg
		for _, x := range ss {
			y := x.sum(from, to)
			s.Merge(&y)
		}
		v.unconverted.AddFills(q, s.Pnl, s.Invested, s.Trades)
	}
}

// unrealized converts x (unrealized pnl of a pair quoted in q) at the
// latest rates, or adds it to q's unconverted entry and returns 0.
func (v *mixedView) unrealized(q string, x domain.Decimal) domain.Decimal {
	p, ok := v.d.rates.Path(q, v.d.unit, maxTime, 0)
	return v.unconverted.Unrealized(q, v.d.unit, x, p, ok)
}

// mixedOverview answers an overview over several quotes (sc resolved).
func (r *Reader) mixedOverview(ctx context.Context, q domain.OverviewQuery, sc domain.ScopeKeys) (*domain.Overview, error) {
	d, err := r.readMixed(ctx, true)
	if err != nil {
		return nil, err
	}
	from, to := rangeSeconds(q.From, q.To)
	v := d.view(sc.Keys)
	o := &domain.Overview{Unit: d.unit, DailyHistory: []domain.DayPnl{}, PnlsPerPair: []domain.KeyPnl{}, DetailedPerPair: []domain.PairDetail{}}
	periods := overviewPeriods(q.Now, q.Loc)
	period := func(a, b int64) domain.Number {
		var s domain.Decimal
		for _, x := range v.conv {
			s = s.Add(x.pnl(a, b))
		}
		return domain.Number(s)
	}
	for i, f := range []*domain.Number{&o.Today.Pnl, &o.Yesterday.Pnl, &o.WeekAgo.Pnl, &o.MonthAgo.Pnl, &o.YearAgo.Pnl, &o.LastYear.Pnl} {
		*f = period(periods[i][0], periods[i][1])
	}
	o.Today.PerPair = map[string]domain.Number{}
	o.YearAgo.PerPair = map[string]domain.Number{}
	var tot agg
	for _, x := range v.conv {
		s := x.sum(from, to)
		tot.Merge(&s)
	}
	type quoteTotal struct {
		a          agg
		unrealized domain.Decimal
	}
	perQuote := map[string]*quoteTotal{}
	var unrealized domain.Decimal
	for _, key := range sc.Keys {
		p := d.byKey[key]
		quote, _, _ := splitKey(key)
		var s agg
		var unr, pt, py domain.Decimal
		if p != nil {
			own := d.own[key]
			s = own.sum(from, to)
			unr = p.unrealized()
			pt, py = own.pnl(periods[0][0], periods[0][1]), own.pnl(periods[4][0], periods[4][1])
			unrealized = unrealized.Add(v.unrealized(p.quote, unr))
		}
		qt := perQuote[quote]
		if qt == nil {
			qt = &quoteTotal{}
			perQuote[quote] = qt
		}
		qt.a.Merge(&s)
		qt.unrealized = qt.unrealized.Add(unr)
		o.Today.PerPair[key] = domain.Number(pt)
		o.YearAgo.PerPair[key] = domain.Number(py)
		o.PnlsPerPair = append(o.PnlsPerPair, domain.KeyPnl{Key: key, Pnl: domain.Number(s.Pnl)})
		o.DetailedPerPair = append(o.DetailedPerPair, pairDetail(key, &s, unr, d.strat[key], q.Loc))
	}
	o.Total = totalOf(&tot, unrealized)
	if days := slotDays(v.conv, from, to, q.Loc); len(days) > 0 {
		o.DailyHistory = days
	}
	o.PerQuote = map[string]domain.PnlTotal{}
	for _, qc := range sc.Quotes {
		qt := perQuote[qc]
		if qt == nil {
			qt = &quoteTotal{}
		}
		o.PerQuote[qc] = totalOf(&qt.a, qt.unrealized)
	}
	v.fold(from, to)
	o.Unconverted = v.unconverted.Result()
	return o, nil
}

// mixedSum answers pnl/sum over several quotes.
func (r *Reader) mixedSum(ctx context.Context, sc domain.ScopeKeys, fromMs, toMs int64) (domain.SumResult, error) {
	d, err := r.readMixed(ctx, false)
	if err != nil {
		return domain.SumResult{}, err
	}
	from, to := rangeSeconds(fromMs, toMs)
	v := d.view(sc.Keys)
	out := domain.SumResult{Pairs: []domain.PairSum{}, Unit: d.unit, PerQuote: map[string]domain.QuoteSum{}}
	for _, key := range sc.Keys {
		quote, _, _ := splitKey(key)
		var s agg
		p := d.byKey[key]
		if p != nil {
			s = d.own[key].sum(from, to)
		}
		out.Pairs = append(out.Pairs, domain.PairSum{Key: key, Pnl: domain.Number(s.Pnl), Invested: domain.Number(s.Invested), Trades: s.Trades, Unit: quote})
		qs := out.PerQuote[quote]
		qs.Pnl = domain.Number(domain.Decimal(qs.Pnl).Add(s.Pnl))
		qs.Invested = domain.Number(domain.Decimal(qs.Invested).Add(s.Invested))
		qs.Trades += s.Trades
		out.PerQuote[quote] = qs
		if p != nil {
			c, _ := d.inUnit(p)
			cs := c.sum(from, to)
			out.Pnl, out.Invested = out.Pnl.Add(cs.Pnl), out.Invested.Add(cs.Invested)
		}
	}
	v.fold(from, to)
	out.Unconverted = v.unconverted.Result()
	return out, nil
}

// mixedDaily answers pnl/daily over several quotes: the days in the unit,
// and Σ unmatchedBaseValue in it.
func (r *Reader) mixedDaily(ctx context.Context, q domain.DailyQuery, sc domain.ScopeKeys) ([]domain.DayPnl, domain.Decimal, string, error) {
	d, err := r.readMixed(ctx, false)
	if err != nil {
		return nil, domain.Zero, "", err
	}
	from, to := rangeSeconds(q.From, q.To)
	v := d.view(sc.Keys)
	var unm domain.Decimal
	for _, x := range v.conv {
		s := x.sum(from, to)
		unm = unm.Add(s.Unmatched)
	}
	days := slotDays(v.conv, from, to, q.Loc)
	if days == nil {
		days = []domain.DayPnl{}
	}
	return days, unm, d.unit, nil
}

// slotDays folds the slots of ss starting in [from, to) into days of loc
// (the local date of each slot's start), oldest first, days without fills
// left out, with the running sums — the Ledger's foldDays, in exact
// decimals.
func slotDays(ss []slotSeries, from, to int64, loc *time.Location) []domain.DayPnl {
	type day struct {
		trades                   int64
		volume, pnl, unm, invest domain.Decimal
	}
	zone := domain.LocalDays{Loc: loc}
	byDay := map[int64]*day{}
	for _, s := range ss {
		i, j := s.span(from, to)
		for k := i; k < j; k++ {
			a := &s[k].a
			if a.Trades == 0 {
				continue
			}
			n := zone.Day(s[k].slot * bucketSecs)
			x := byDay[n]
			if x == nil {
				x = &day{}
				byDay[n] = x
			}
			x.trades += a.Trades
			x.volume, x.pnl = x.volume.Add(a.Volume), x.pnl.Add(a.Pnl)
			x.unm, x.invest = x.unm.Add(a.Unmatched), x.invest.Add(a.Invested)
		}
	}
	if len(byDay) == 0 {
		return nil
	}
	ns := make([]int64, 0, len(byDay))
	for n := range byDay {
		ns = append(ns, n)
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	out := make([]domain.DayPnl, len(ns))
	var cum, inv domain.Decimal
	for i, n := range ns {
		x := byDay[n]
		cum, inv = cum.Add(x.pnl), inv.Add(x.invest)
		out[i] = domain.DayPnl{Date: string(appendDate(nil, n)), NumberOfTrades: x.trades, TotalVolume: domain.Number(x.volume),
			Pnl: domain.Number(x.pnl), CumulativePnl: domain.Number(cum), CumulativePnlPercent: domain.Number(domain.PnlPercent(cum, inv)),
			UnmatchedBaseValue: domain.Number(x.unm)}
	}
	return out
}
