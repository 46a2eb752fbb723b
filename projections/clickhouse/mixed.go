package clickhouse

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlread"
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

// series is a pair's slots, ascending, as the Ledger keeps them
// (fold.Series): built from the rows, the latest of each slot.
type series = fold.Series[int64]

// slotRow is a slot's row as read: its aggregate and its version.
type slotRow struct {
	slot int64
	pos  uint64
	a    agg
}

// put keeps the latest row (by position) of each slot of a pair being
// read, in any order (two rows of one position are the same row written
// twice).
func put(m map[string]map[int64]slotRow, key string, x slotRow) {
	slots := m[key]
	if slots == nil {
		slots = map[int64]slotRow{}
		m[key] = slots
	}
	if old, ok := slots[x.slot]; ok && old.pos >= x.pos {
		return
	}
	slots[x.slot] = x
}

// finish turns the rows read into series (slots ascending, running pnl
// and totals set).
func finish(m map[string]map[int64]slotRow) map[string]*series {
	out := make(map[string]*series, len(m))
	for key, slots := range m {
		s := &series{Slots: make([]fold.Slot[int64], 0, len(slots))}
		for _, x := range slots {
			s.Slots = append(s.Slots, fold.Slot[int64]{Slot: x.slot, PnlAgg: x.a})
		}
		sort.Slice(s.Slots, func(i, j int) bool { return s.Slots[i].Slot < s.Slots[j].Slot })
		s.Finish(0)
		out[key] = s
	}
	return out
}

// ownSlots reads every pair's buckets (their latest rows).
func (r *Reader) ownSlots(ctx context.Context) (map[string]*series, error) {
	return bucketSlots(ctx, r.conn, r.db, "method = ? AND instance = ?", []any{r.Method.String(), r.Instance}, pairOnly)
}

// convSlots reads every pair's aggregates in currency to: part 0 (conv)
// and part 1 (unconv).
func (r *Reader) convSlots(ctx context.Context, to string) (conv, unconv map[string]*series, err error) {
	return convBucketSlots(ctx, r.conn, r.db, "method = ? AND currency = ? AND instance = ?", []any{r.Method.String(), to, r.Instance}, pairOnly)
}

// slotKey names the series a row of an instance's pair goes to.
type slotKey func(instance, pairKey string) string

// pairOnly keys series by pair (one instance's rows).
func pairOnly(_, key string) string { return key }

// bucketSlots reads the pnl_buckets9 rows where cond holds (with args),
// the latest of each slot, into a series per key.
func bucketSlots(ctx context.Context, conn driver.Conn, db, cond string, args []any, key slotKey) (map[string]*series, error) {
	rows, err := conn.Query(ctx, `SELECT instance, exchange, pair, slot, position, `+bucketCols+`
FROM `+db+`.pnl_buckets9 WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[int64]slotRow{}
	var (
		instance string
		k        pairKey
		x        slotRow
		v        [aggCols]int64
		wide     string
	)
	dest := []any{&instance, &k.Exchange, &k.Pair, &x.slot, &x.pos}
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
		put(out, key(instance, domain.PairKey(k.Exchange, k.Pair)), x)
	}
	return finish(out), rows.Err()
}

// convBucketSlots reads the pnl_conv_buckets9 rows where cond holds (with
// args), the latest of each slot, into series per key: part 0 (conv) and
// part 1 (unconv).
func convBucketSlots(ctx context.Context, conn driver.Conn, db, cond string, args []any, key slotKey) (conv, unconv map[string]*series, err error) {
	rows, err := conn.Query(ctx, "SELECT instance, part, exchange, pair, slot, position, v FROM "+db+".pnl_conv_buckets9 WHERE "+cond, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	c, u := map[string]map[int64]slotRow{}, map[string]map[int64]slotRow{}
	for rows.Next() {
		var (
			instance, packed string
			part             uint8
			k                pairKey
			x                slotRow
		)
		if err := rows.Scan(&instance, &part, &k.Exchange, &k.Pair, &x.slot, &x.pos, &packed); err != nil {
			return nil, nil, err
		}
		if x.a, err = unpackAgg(packed); err != nil {
			return nil, nil, err
		}
		if part == 0 {
			put(c, key(instance, domain.PairKey(k.Exchange, k.Pair)), x)
		} else {
			put(u, key(instance, domain.PairKey(k.Exchange, k.Pair)), x)
		}
	}
	return finish(c), finish(u), rows.Err()
}

// setting returns the sink's setting name ("" when unset).
func (r *Reader) setting(ctx context.Context, name string) (string, error) {
	rows, err := r.conn.Query(ctx, "SELECT value FROM "+r.db+".settings9 FINAL WHERE method = ? AND instance = ? AND name = ?", r.Method.String(), r.Instance, name)
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
func (r *Reader) latestRates(ctx context.Context) (*fold.RateBook, error) {
	rows, err := r.conn.Query(ctx, "SELECT quote, base, rate, time_ms, seq FROM "+r.db+".rates9 FINAL WHERE instance = ? ORDER BY seq", r.Instance)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	b := &fold.RateBook{}
	for rows.Next() {
		var quote, base, rate string
		var p fold.RatePoint
		if err := rows.Scan(&quote, &base, &rate, &p.T, &p.Pos); err != nil {
			return nil, err
		}
		if p.Rate, err = decimal.ParseDecimal(rate); err != nil {
			return nil, err
		}
		b.Observe(quote, base, p.T, p.Pos, p.Rate)
	}
	return b, rows.Err()
}

// unconvertedFees returns the fees without a rate of the fills of keys in
// the buckets starting in [from, to) (unix s), by asset; nil when none.
func (r *Reader) unconvertedFees(ctx context.Context, keys []string, from, to int64) (map[string]decimal.Number, error) {
	fees, err := r.unvaluedFees(ctx)
	if err != nil {
		return nil, err
	}
	return sumFees(fees, keys, from, to)
}

// unvaluedFee is a fill_fees9 row without a rate: the fee as charged.
type unvaluedFee struct {
	exchange, pair, asset, amount string
	timeMs                        int64
}

// unvaluedFees reads every fill's fee without a rate (one query, which an
// overview runs beside its others: feesAhead).
func (r *Reader) unvaluedFees(ctx context.Context) ([]unvaluedFee, error) {
	rows, err := r.conn.Query(ctx, "SELECT exchange, pair, time_ms, fee_asset, fee_amount FROM "+r.db+".fill_fees9 FINAL WHERE instance = ? AND valued = 0", r.Instance)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fees []unvaluedFee
	for rows.Next() {
		var f unvaluedFee
		if err := rows.Scan(&f.exchange, &f.pair, &f.timeMs, &f.asset, &f.amount); err != nil {
			return nil, err
		}
		fees = append(fees, f)
	}
	return fees, rows.Err()
}

// sumFees sums by asset the fees of the fills of keys in the buckets
// starting in [from, to) (unix s); nil when none.
func sumFees(fees []unvaluedFee, keys []string, from, to int64) (map[string]decimal.Number, error) {
	in := make(map[string]bool, len(keys))
	for _, k := range keys {
		in[k] = true
	}
	var sum map[string]decimal.Decimal
	for _, f := range fees {
		if start := pnlread.FloorDiv(f.timeMs, bucketMs) * bucketSecs; !in[domain.PairKey(f.exchange, f.pair)] || start < from || start >= to {
			continue
		}
		v, err := decimal.ParseDecimal(f.amount)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = map[string]decimal.Decimal{}
		}
		sum[f.asset] = sum[f.asset].Add(v)
	}
	if sum == nil {
		return nil, nil
	}
	out := make(map[string]decimal.Number, len(sum))
	for a, v := range sum {
		out[a] = decimal.Number(v)
	}
	return out, nil
}

// mixedData is what an answer over several quotes reads.
type mixedData struct {
	unit         string
	byKey        map[string]*pairInfo
	own          map[string]*series
	conv, unconv map[string]*series
	rates        *fold.RateBook
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
func (d *mixedData) inUnit(p *pairInfo) (conv, unconv *series) {
	own := d.own[p.key]
	if own == nil {
		own = &series{}
	}
	if p.quote == d.unit {
		return own, nil
	}
	if c, ok := d.conv[p.key]; ok {
		u := d.unconv[p.key]
		if u == nil {
			u = &series{}
		}
		return c, u
	}
	c := own.CountsOnly()
	return &c, own
}

// view returns the keys' pairs seen in the unit (fold.Mixed, as the
// Ledger's).
func (d *mixedData) view(keys []string) *fold.Mixed[int64] {
	v := &fold.Mixed[int64]{Unit: d.unit}
	for _, k := range keys {
		p := d.byKey[k]
		if p == nil {
			continue
		}
		c, u := d.inUnit(p)
		v.Add(p.quote, c, u)
	}
	return v
}

// mixedOverview answers an overview over several quotes (sc resolved).
func (r *Reader) mixedOverview(ctx context.Context, q pnlread.OverviewQuery, sc pnlread.ScopeKeys) (*pnlread.Overview, error) {
	d, err := r.readMixed(ctx, true)
	if err != nil {
		return nil, err
	}
	from, to := rangeSeconds(q.From, q.To)
	v := d.view(sc.Keys)
	o := &pnlread.Overview{Unit: d.unit, DailyHistory: []pnlread.DayPnl{}, PnlsPerPair: []pnlread.KeyPnl{}, DetailedPerPair: []pnlread.PairDetail{}}
	periods := overviewPeriods(q.Now, q.Loc)
	period := func(a, b int64) decimal.Number {
		var s decimal.Decimal
		for _, x := range v.Conv {
			s = s.Add(x.RangePnl(a, b))
		}
		return decimal.Number(s)
	}
	for i, f := range []*decimal.Number{&o.Today.Pnl, &o.Yesterday.Pnl, &o.WeekAgo.Pnl, &o.MonthAgo.Pnl, &o.YearAgo.Pnl, &o.LastYear.Pnl} {
		*f = period(periods[i][0], periods[i][1])
	}
	o.Today.PerPair = map[string]decimal.Number{}
	o.YearAgo.PerPair = map[string]decimal.Number{}
	var tot agg
	for _, x := range v.Conv {
		s := x.Sum(from, to)
		tot.Merge(&s)
	}
	type quoteTotal struct {
		a          agg
		unrealized decimal.Decimal
	}
	perQuote := map[string]*quoteTotal{}
	var unrealized decimal.Decimal
	for _, key := range sc.Keys {
		p := d.byKey[key]
		quote, _, _ := splitKey(key)
		var s agg
		var unr, pt, py decimal.Decimal
		if p != nil {
			if own := d.own[key]; own != nil {
				s = own.Sum(from, to)
				pt, py = own.RangePnl(periods[0][0], periods[0][1]), own.RangePnl(periods[4][0], periods[4][1])
			}
			unr = p.unrealized()
			unrealized = unrealized.Add(v.Unrealized(d.rates, p.quote, unr))
		}
		qt := perQuote[quote]
		if qt == nil {
			qt = &quoteTotal{}
			perQuote[quote] = qt
		}
		qt.a.Merge(&s)
		qt.unrealized = qt.unrealized.Add(unr)
		o.Today.PerPair[key] = decimal.Number(pt)
		o.YearAgo.PerPair[key] = decimal.Number(py)
		o.PnlsPerPair = append(o.PnlsPerPair, pnlread.KeyPnl{Key: key, Pnl: decimal.Number(s.Pnl)})
		o.DetailedPerPair = append(o.DetailedPerPair, pairDetail(key, &s, unr, d.strat[key], q.Loc))
	}
	o.Total = totalOf(&tot, unrealized)
	if days := fold.Days(v.Conv, from, to, q.Loc); len(days) > 0 {
		o.DailyHistory = days
	}
	o.PerQuote = map[string]pnlread.PnlTotal{}
	for _, qc := range sc.Quotes {
		qt := perQuote[qc]
		if qt == nil {
			qt = &quoteTotal{}
		}
		o.PerQuote[qc] = totalOf(&qt.a, qt.unrealized)
	}
	v.Fold(from, to)
	o.Unconverted = v.Unconverted.Result()
	return o, nil
}

// mixedSum answers pnl/sum over several quotes.
func (r *Reader) mixedSum(ctx context.Context, sc pnlread.ScopeKeys, fromMs, toMs int64) (pnlread.SumResult, error) {
	d, err := r.readMixed(ctx, false)
	if err != nil {
		return pnlread.SumResult{}, err
	}
	from, to := rangeSeconds(fromMs, toMs)
	v := d.view(sc.Keys)
	out := pnlread.SumResult{Pairs: []pnlread.PairSum{}, Unit: d.unit, PerQuote: map[string]pnlread.QuoteSum{}}
	for _, key := range sc.Keys {
		quote, _, _ := splitKey(key)
		var s agg
		p := d.byKey[key]
		if own := d.own[key]; p != nil && own != nil {
			s = own.Sum(from, to)
		}
		out.Pairs = append(out.Pairs, pnlread.PairSum{Key: key, Pnl: decimal.Number(s.Pnl), Invested: decimal.Number(s.Invested), Trades: s.Trades, Unit: quote})
		qs := out.PerQuote[quote]
		qs.Pnl = decimal.Number(decimal.Decimal(qs.Pnl).Add(s.Pnl))
		qs.Invested = decimal.Number(decimal.Decimal(qs.Invested).Add(s.Invested))
		qs.Trades += s.Trades
		out.PerQuote[quote] = qs
		if p != nil {
			c, _ := d.inUnit(p)
			cs := c.Sum(from, to)
			out.Pnl, out.Invested = out.Pnl.Add(cs.Pnl), out.Invested.Add(cs.Invested)
		}
	}
	v.Fold(from, to)
	out.Unconverted = v.Unconverted.Result()
	return out, nil
}

// mixedDaily answers pnl/daily over several quotes: the days in the unit,
// and Σ unmatchedBaseValue in it.
func (r *Reader) mixedDaily(ctx context.Context, q pnlread.DailyQuery, sc pnlread.ScopeKeys) ([]pnlread.DayPnl, decimal.Decimal, string, error) {
	d, err := r.readMixed(ctx, false)
	if err != nil {
		return nil, decimal.Zero, "", err
	}
	from, to := rangeSeconds(q.From, q.To)
	v := d.view(sc.Keys)
	var unm decimal.Decimal
	for _, x := range v.Conv {
		s := x.Sum(from, to)
		unm = unm.Add(s.Unmatched)
	}
	days := fold.Days(v.Conv, from, to, q.Loc)
	if days == nil {
		days = []pnlread.DayPnl{}
	}
	return days, unm, d.unit, nil
}
