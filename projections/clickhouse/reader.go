package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// PnlSource is the PNL read contract (pnlread.PnlReader), which *Reader
// implements from ClickHouse. The reader imports no other adapter: the
// contract's types, scopes and zones are domain's.
type PnlSource = pnlread.PnlReader

var _ PnlSource = (*Reader)(nil)

// DefaultReadTimeout bounds one read's queries.
const DefaultReadTimeout = 10 * time.Second

// Reader answers the PNL and asset reads from the sink's tables (always
// with FINAL, so rows written twice count once). Every figure follows the
// definitions of projections.Ledger (projections/pnl.go, assets.go): the
// aggregation happens in ClickHouse over the fills the sink computed with
// the same lot matching, by the same 15-minute buckets; Go only merges
// per-pair results and formats them.
//
// The answers reflect what ClickHouse holds: while the sink lags they can
// be behind the in-memory ones. When ClickHouse fails, a read returns
// EUNAVAILABLE, or the Fallback's answer when one is set; so does every
// read while the sink's rows are of a newer SchemaVersion than the
// reader's (a newer release's sink rewrote them, and may have dropped or
// changed tables this reader knows). Rows of an older one, being
// rewritten, are read from the buckets.
type Reader struct {
	// URL is the sink's clickhouse:// URL.
	URL string
	// Method must be the sink's PNL method.
	Method domain.PnlMethod
	// Instance is the sink's instance: the reader answers from its rows
	// alone, whatever other services write to the database
	// (CheckInstance; NewReader sets DefaultInstance).
	Instance string
	// Timeout bounds the queries of one read.
	Timeout time.Duration
	// Fallback, if set, returns the source that answers when ClickHouse
	// cannot (the in-memory Ledger), so the API keeps serving through an
	// outage or over a newer release's rows; it may return nil.
	Fallback func() PnlSource
	// Logger is told of failed reads.
	Logger *zap.Logger
	// Checkpoint, if set, is the in-process sink's Sink.Checkpoint (same
	// database and method): Version then reads it instead of querying
	// ClickHouse, so an overview served from the HTTP cache costs no
	// query. Unset, Version asks ClickHouse (a sink in another process).
	Checkpoint func() (pos uint64, current bool)

	pool

	schema atomic.Uint32 // what the reader knows of the sink's rows: schemaUnknown, schemaCurrent or schemaForeign
	spanMu sync.Mutex
	span   [2]int64 // the fills' time span (ms) the last read over all time planned for, widened
}

// NewReader returns a Reader of the tables at url for method.
func NewReader(url string, method domain.PnlMethod) *Reader {
	return &Reader{URL: url, Method: method, Instance: DefaultInstance, Timeout: DefaultReadTimeout, Logger: zap.NewNop()}
}

// Open checks the URL and prepares the connection pool (it connects on
// first use, so ClickHouse need not be up yet).
func (r *Reader) Open() error {
	if r.Instance == "" {
		r.Instance = DefaultInstance
	}
	if err := CheckInstance(r.Instance); err != nil {
		return err
	}
	if err := r.pool.open(r.URL, "clickhouse reader"); err != nil {
		return err
	}
	if r.Logger == nil {
		r.Logger = zap.NewNop()
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultReadTimeout
	}
	return nil
}

// pool is a reader's connection pool to one database (Reader, Fleet).
type pool struct {
	db   string
	conn driver.Conn
}

// open checks the URL and prepares the pool (it connects on first use, so
// ClickHouse need not be up yet); what names the reader in errors.
func (p *pool) open(url, what string) error {
	opts, db, err := ParseURL(url)
	if err != nil {
		return err
	}
	conn, err := ch.Open(opts)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	p.db, p.conn = db, conn
	return nil
}

// Close releases the connections.
func (p *pool) Close() error {
	if p.conn != nil {
		return p.conn.Close()
	}
	return nil
}

func (r *Reader) fallback() PnlSource {
	if r.Fallback == nil {
		return nil
	}
	return r.Fallback()
}

func (r *Reader) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), r.Timeout)
}

// unavailable wraps a ClickHouse failure as EUNAVAILABLE (the detail goes
// to the log, not to clients), which the PNL methods answer from the
// Fallback when one is set.
func (r *Reader) unavailable(op string, err error) error {
	r.logFailure(op, err)
	return domain.Errorf(domain.EUNAVAILABLE, "analytics store unavailable")
}

// logFailure logs a failed read, except one of rows of a newer schema
// (errForeignRows, logged once when found). A table missing (a sink of a
// newer schema dropped it) ends the reader's trust in its schema's tables:
// logged once, and the next reads ask the version again (current).
func (r *Reader) logFailure(op string, err error) {
	var ex *ch.Exception
	switch {
	case errors.Is(err, errForeignRows):
	case errors.As(err, &ex) && ex.Code == errUnknownTable:
		if r.schema.Swap(schemaForeign) != schemaForeign {
			r.Logger.Warn("clickhouse table missing: PNL reads use the fallback until the sink's rows are of this schema again",
				zap.String("op", op), zap.Uint32("schema", SchemaVersion), zap.Error(err))
		}
	default:
		r.Logger.Warn("clickhouse read failed", zap.String("op", op), zap.Error(err))
	}
}

// agg is the aggregate of a pair's fills over a range, merged as the
// Ledger merges its slots (fold.PnlAgg.Merge).
type agg = fold.PnlAgg[int64]

// pairInfo is a known pair (one with an order) and its inventory.
type pairInfo struct {
	key, exchange, pair, quote, base string
	lotsQty, lotsCost, last, balance decimal.Decimal
}

func (p *pairInfo) unrealized() decimal.Decimal {
	if p.lotsQty.Sign() <= 0 {
		return decimal.Zero
	}
	return p.lotsQty.Mul(p.last).Sub(p.lotsCost)
}

const (
	minTime = -1 << 50
	maxTime = 1 << 50
)

// slotCond is the SQL condition "the bucket starts in [from, to)" (unix
// seconds), as the Ledger selects buckets: on slot itself (slot·900 ≥ from
// ⇔ slot ≥ ⌈from/900⌉), so that ClickHouse can use the sort key.
func slotCond(from, to int64) string {
	if from <= minTime && to >= maxTime {
		return "1"
	}
	return fmt.Sprintf("slot >= %d AND slot < %d", -pnlread.FloorDiv(-from, bucketSecs), -pnlread.FloorDiv(-to, bucketSecs))
}

// slotIn reports whether slot starts in [from, to) (unix seconds), as
// slotCond selects it.
func slotIn(slot, from, to int64) bool {
	if from <= minTime && to >= maxTime {
		return true
	}
	return slot >= -pnlread.FloorDiv(-from, bucketSecs) && slot < -pnlread.FloorDiv(-to, bucketSecs)
}

// rangeSeconds is the Ledger's conversion of a [from, to) range in ms (0:
// unbounded) into bucket bounds in unix seconds.
func rangeSeconds(fromMs, toMs int64) (int64, int64) {
	from, to := int64(minTime), int64(maxTime)
	if fromMs != 0 {
		from = pnlread.FloorDiv(fromMs, bucketMs) * 900
	}
	if toMs != 0 {
		to = -pnlread.FloorDiv(-toMs, 1000)
	}
	return from, to
}

// pairs returns the known pairs by key.
func (r *Reader) pairs(ctx context.Context) (map[string]*pairInfo, []*pairInfo, error) {
	rows, err := r.conn.Query(ctx, "SELECT exchange, pair, lots_qty_e12, lots_cost_e12, last_price_e12, balance_e12, wide FROM "+r.db+
		".pairs9 FINAL WHERE method = ? AND instance = ? ORDER BY position", r.Method.String(), r.Instance)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	byKey := map[string]*pairInfo{}
	var list []*pairInfo
	for rows.Next() {
		var p pairInfo
		var v [4]int64
		var wide string
		if err := rows.Scan(&p.exchange, &p.pair, &v[0], &v[1], &v[2], &v[3], &wide); err != nil {
			return nil, nil, err
		}
		for i, d := range []*decimal.Decimal{&p.lotsQty, &p.lotsCost, &p.last, &p.balance} {
			var err error
			if *d, err = amountOf(v[i], [4]string{"lots_qty", "lots_cost", "last_price", "balance"}[i], wide); err != nil {
				return nil, nil, err
			}
		}
		p.key = domain.PairKey(p.exchange, p.pair)
		p.quote, p.base, _ = domain.SplitPair(p.pair)
		byKey[p.key] = &p
		list = append(list, &p)
	}
	return byKey, list, rows.Err()
}

type scoped struct {
	keys  []string
	unit  string
	all   bool
	mixed *pnlread.ScopeKeys // the keys span several quote currencies (mixed.go)
}

// resolve is the Ledger's scope resolution (pnlread.ResolveScopeMixed)
// over the pairs ClickHouse knows.
func resolve(sc pnlread.PnlScope, list []*pairInfo) (scoped, error) {
	known := make([]string, 0, len(list))
	for _, p := range list {
		known = append(known, p.key)
	}
	r, err := pnlread.ResolveScopeMixed(sc, known)
	out := scoped{keys: r.Keys, unit: r.Unit, all: r.All}
	if err == nil && len(r.Quotes) > 1 {
		out.mixed = &r
	}
	return out, err
}

// quoteKeys returns the pairs whose figures a period or a day sums: the
// scope's keys, or for "All" every pair of list in the unit's quote (as
// the Ledger's quote series does).
func (sc scoped) quoteKeys(list []*pairInfo) []string {
	if !sc.all {
		return sc.keys
	}
	var keys []string
	for _, p := range list {
		if p.quote == sc.unit {
			keys = append(keys, p.key)
		}
	}
	return keys
}

// mixedScope is assemble's answer to a scope over several quotes: the
// overview is answered the mixed way (mixed.go).
type mixedScope struct{ sc pnlread.ScopeKeys }

func (m *mixedScope) Error() string { return errMixed.Error() }

func splitKey(k string) (quote, base string, err error) {
	_, pair, err := domain.SplitPairKey(k)
	if err != nil {
		return "", "", err
	}
	return domain.SplitPair(pair)
}

// rangeAggs returns each pair's aggregate over the buckets starting in
// [from, to) and, with loc, its days (local date of the bucket's start);
// where is an extra SQL condition. The bucket rows are read without FINAL
// (a row written twice counts once: the latest position) and merged here
// by fold.PnlAgg.Merge, the Ledger's own rule, in Decimals. On 18.16 this
// costs a third of FINAL with the aggregate functions in SQL, whose If and
// tuple combinators dominate, and no sum is left to ClickHouse's types.
func (r *Reader) rangeAggs(ctx context.Context, from, to int64, loc *time.Location, where string, args ...any) (map[string]*agg, map[string]*daySeries, error) {
	rows, err := r.conn.Query(ctx, `SELECT exchange, pair, slot, position, `+bucketCols+`
FROM `+r.db+`.pnl_buckets9 WHERE method = ? AND instance = ? AND `+slotCond(from, to)+where, append([]any{r.Method.String(), r.Instance}, args...)...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	// The latest row of each pair and slot: a row written twice (in parts
	// not merged yet) counts once, as with FINAL. The scan's destinations
	// are made once, not per row.
	type bucket struct {
		a    agg
		slot int64
		pos  uint64
	}
	type pairBuckets struct {
		at map[int64]int // slot → index in b
		b  []bucket
	}
	var (
		byPair = map[pairKey]*pairBuckets{}
		cur    *pairBuckets
		k      pairKey
		slot   int64
		pos    uint64
		v      [aggCols]int64
		wide   string
	)
	// A pair has at most a slot per 15 minutes of the range: room for them
	// at first (up to 16,384: 170 days), not grown row by row.
	hint := 64
	if from > minTime && to < maxTime {
		hint = int(min(max((to-from)/bucketSecs+1, 1), 1<<14))
	}
	dest := []any{&k.Exchange, &k.Pair, &slot, &pos}
	for i := range v {
		dest = append(dest, &v[i])
	}
	dest = append(dest, &wide)
	for rows.Next() {
		prev := k
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		if cur == nil || k != prev {
			if cur = byPair[k]; cur == nil {
				cur = &pairBuckets{at: make(map[int64]int, hint), b: make([]bucket, 0, hint)}
				byPair[k] = cur
			}
		}
		i, ok := cur.at[slot]
		if !ok {
			i = len(cur.b)
			cur.at[slot] = i
			cur.b = append(cur.b, bucket{slot: slot})
		} else if pos <= cur.b[i].pos {
			continue
		}
		if err := setAgg(&cur.b[i].a, v[:], wide); err != nil {
			return nil, nil, err
		}
		cur.b[i].pos = pos
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	aggs := make(map[string]*agg, len(byPair))
	var days map[string]*daySeries
	if loc != nil {
		days = map[string]*daySeries{}
	}
	zone := pnlread.LocalDays{Loc: loc}
	for pk, pb := range byPair {
		key := domain.PairKey(pk.Exchange, pk.Pair)
		a := &agg{}
		aggs[key] = a
		var s *daySeries
		for i := range pb.b {
			b := &pb.b[i]
			a.Merge(&b.a)
			if days == nil || b.a.Trades == 0 {
				continue
			}
			if s == nil {
				s = seriesOf(days, key)
			}
			s.at(zone.Day(b.slot * bucketSecs)).merge(&dayAgg{b.a.Trades, b.a.Volume, b.a.Pnl, b.a.Unmatched, b.a.Invested})
		}
	}
	return aggs, days, nil
}

// days returns per pair and local day (in loc, of the bucket's start) the
// daily figures over the buckets starting in [from, to), summed in SQL
// exactly (exactSum; the wide rows' amounts added here).
func (r *Reader) days(ctx context.Context, from, to int64, loc *time.Location) (map[string]*daySeries, error) {
	q := `SELECT exchange, pair, toString(toDate(toDateTime(slot * 900, ?))) AS d, sum(trades), ` +
		exactSum("volume_e12", "") + ", " + exactSum("pnl_e12", "") + ", " + exactSum("unmatched_value_e12", "") + ", " +
		exactSum("invested_e12", "") + `, groupArrayIf(wide, wide != '')
FROM ` + r.db + `.pnl_buckets9 FINAL WHERE method = ? AND instance = ? AND ` + slotCond(from, to) + ` GROUP BY exchange, pair, d`
	rows, err := r.conn.Query(ctx, q, loc.String(), r.Method.String(), r.Instance)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*daySeries{}
	for rows.Next() {
		var ex, pair, d string
		var a dayAgg
		var v [8]int64
		var wides []string
		if err := rows.Scan(&ex, &pair, &d, &a.Trades, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &wides); err != nil {
			return nil, err
		}
		t, err := time.Parse(time.DateOnly, d)
		if err != nil {
			return nil, fmt.Errorf("day %q: %w", d, err)
		}
		for i, x := range []*decimal.Decimal{&a.Volume, &a.Pnl, &a.Unmatched, &a.Invested} {
			*x = joinSum(v[2*i], v[2*i+1])
			if *x, err = addWide(*x, wides, [4]string{"volume", "pnl", "unmatched_value", "invested"}[i]); err != nil {
				return nil, err
			}
		}
		seriesOf(out, domain.PairKey(ex, pair)).at(pnlread.FloorDiv(t.Unix(), 86400)).merge(&a)
	}
	return out, rows.Err()
}

// Overview answers pnl/overview like projections.Ledger.Overview.
func (r *Reader) Overview(q pnlread.OverviewQuery) (*pnlread.Overview, error) {
	o, err := r.overview(q)
	if err != nil && domain.ErrorCode(err) == domain.EUNAVAILABLE && r.fallback() != nil {
		return r.fallback().Overview(q)
	}
	return o, err
}

// overviewPeriods are the ranges of the overview's period figures
// (pnlread.OverviewPeriods), bucket starts in [from, to).
func overviewPeriods(now time.Time, loc *time.Location) [][2]int64 {
	ps := pnlread.OverviewPeriods(now, loc)
	return ps[:]
}

// overviewData is what an overview is made of: the pairs, each pair's
// aggregate over the range, its local days, its pnl in each period and
// its strategy.
type overviewData struct {
	byKey map[string]*pairInfo
	list  []*pairInfo
	aggs  map[string]*agg
	days  map[string]*daySeries
	per   map[string][6]decimal.Decimal
	strat map[string]string
}

func (r *Reader) overview(q pnlread.OverviewQuery) (*pnlread.Overview, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	periods := overviewPeriods(q.Now, q.Loc)
	if q.From == 0 && q.To == 0 {
		// One query: the fees come with pnl_overview9's rows.
		fees := []unvaluedFee{}
		d, ok, err := r.allTime(ctx, q.Loc, periods, true, [2]int64{}, &fees)
		if err != nil {
			return nil, r.unavailable("overview", err)
		}
		if ok {
			o, err := assemble(q, d)
			releaseSeries(d.days) // the answer holds none of them
			return r.finishOverview(ctx, q, o, err, func() ([]unvaluedFee, error) { return fees, nil })
		}
	}
	fees := r.feesAhead(ctx)
	from, to := rangeSeconds(q.From, q.To)

	// The range's aggregates and days come from the buckets (one read,
	// merged here); the pairs,
	// strategies and period figures from pnl_overview9 when the zone's
	// offsets are whole hours (the periods are whole local days), else
	// from the buckets too. The queries are independent: run them at once.
	var (
		wg   sync.WaitGroup
		aggs map[string]*agg
		days map[string]*daySeries
		e1   error
	)
	wg.Add(1)
	go func() { defer wg.Done(); aggs, days, e1 = r.rangeAggs(ctx, from, to, q.Loc, "") }()
	window := [2]int64{periods[0][0] * 1000, periods[0][1]*1000 - 1}
	for _, p := range periods {
		window = [2]int64{min(window[0], p[0]*1000), max(window[1], p[1]*1000-1)}
	}
	d, ok, e3 := r.allTime(ctx, q.Loc, periods, true, window, nil)
	if e3 == nil && !ok {
		d, e3 = r.bucketPeriods(ctx, periods)
	}
	wg.Wait()
	if err := errors.Join(e1, e3); err != nil {
		return nil, r.unavailable("overview", err)
	}
	d.aggs, d.days = aggs, days
	o, err := assemble(q, d)
	return r.finishOverview(ctx, q, o, err, fees)
}

// feesAhead starts reading the fees without a rate (unvaluedFees) beside
// an overview's other queries, so that they cost no round trip of their
// own; the function returned waits for them.
func (r *Reader) feesAhead(ctx context.Context) func() ([]unvaluedFee, error) {
	type read struct {
		fees []unvaluedFee
		err  error
	}
	done := make(chan read, 1)
	go func() {
		f, err := r.unvaluedFees(ctx)
		done <- read{f, err}
	}()
	return func() ([]unvaluedFee, error) { x := <-done; return x.fees, x.err }
}

// finishOverview completes assemble's answer o with the unconverted fees
// of its range (of fees, feesAhead's), or answers a scope over several
// quotes the mixed way.
func (r *Reader) finishOverview(ctx context.Context, q pnlread.OverviewQuery, o *pnlread.Overview, err error, fees func() ([]unvaluedFee, error)) (*pnlread.Overview, error) {
	var m *mixedScope
	if errors.As(err, &m) {
		o, err = r.mixedOverview(ctx, q, m.sc)
		if err != nil {
			return nil, r.unavailable("overview", err)
		}
	} else if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(o.PnlsPerPair))
	for _, p := range o.PnlsPerPair {
		keys = append(keys, p.Key)
	}
	from, to := rangeSeconds(q.From, q.To)
	unvalued, err := fees()
	if err == nil {
		o.UnconvertedFees, err = sumFees(unvalued, keys, from, to)
	}
	if err != nil {
		return nil, r.unavailable("overview", err)
	}
	return o, nil
}

// bucketPeriods returns the pairs, strategies and period figures of an
// overview from the pairs, strategies and bucket tables.
func (r *Reader) bucketPeriods(ctx context.Context, periods [][2]int64) (*overviewData, error) {
	var (
		wg         sync.WaitGroup
		d          overviewData
		e1, e2, e3 error
	)
	wg.Add(3)
	go func() { defer wg.Done(); d.byKey, d.list, e1 = r.pairs(ctx) }()
	go func() { defer wg.Done(); d.per, e2 = r.periods(ctx, periods) }()
	go func() { defer wg.Done(); d.strat, e3 = r.strategies(ctx) }()
	wg.Wait()
	return &d, errors.Join(e1, e2, e3)
}

// assemble makes the overview of q from d, as projections.Ledger does.
func assemble(q pnlread.OverviewQuery, d *overviewData) (*pnlread.Overview, error) {
	byKey, list, aggs, days, per, strat := d.byKey, d.list, d.aggs, d.days, d.per, d.strat
	sc, err := resolve(q.Scope, list)
	if err != nil {
		return nil, err
	}
	if sc.mixed != nil {
		return nil, &mixedScope{*sc.mixed}
	}

	o := &pnlread.Overview{Unit: sc.unit, DailyHistory: []pnlread.DayPnl{}, PnlsPerPair: []pnlread.KeyPnl{}, DetailedPerPair: []pnlread.PairDetail{}}
	// Period figures cover the selected pairs (for "All": every pair of the
	// unit's quote, as the Ledger's quote series does).
	periodKeys := sc.quoteKeys(list)
	var pv [6]decimal.Decimal
	for _, k := range periodKeys {
		v := per[k]
		for i := range pv {
			pv[i] = pv[i].Add(v[i])
		}
	}
	for i, f := range []*decimal.Number{&o.Today.Pnl, &o.Yesterday.Pnl, &o.WeekAgo.Pnl, &o.MonthAgo.Pnl, &o.YearAgo.Pnl, &o.LastYear.Pnl} {
		*f = decimal.Number(pv[i])
	}
	o.Today.PerPair = map[string]decimal.Number{}
	o.YearAgo.PerPair = map[string]decimal.Number{}

	var tot agg
	var unrealized decimal.Decimal
	totKeys := sc.keys
	if sc.all {
		totKeys = periodKeys
	}
	for _, k := range totKeys {
		if a := aggs[k]; a != nil {
			tot.Merge(a)
		}
	}
	for _, key := range sc.keys {
		var s agg
		if a := aggs[key]; a != nil {
			s = *a
		}
		var unr decimal.Decimal
		if p := byKey[key]; p != nil {
			unr = p.unrealized()
		}
		unrealized = unrealized.Add(unr)
		o.Today.PerPair[key] = decimal.Number(per[key][0])
		o.YearAgo.PerPair[key] = decimal.Number(per[key][4])
		o.PnlsPerPair = append(o.PnlsPerPair, pnlread.KeyPnl{Key: key, Pnl: decimal.Number(s.Pnl)})
		o.DetailedPerPair = append(o.DetailedPerPair, pairDetail(key, &s, unr, strat[key], q.Loc))
	}
	o.Total = totalOf(&tot, unrealized)
	if d := foldDays(days, totKeys); len(d) > 0 {
		o.DailyHistory = d
	}
	return o, nil
}

// pairDetail is key's element of detailedPerPair: its aggregate s over the
// range, its unrealized pnl and strategy (fold.Detail, as the Ledger's).
func pairDetail(key string, s *agg, unr decimal.Decimal, strategy string, loc *time.Location) pnlread.PairDetail {
	return fold.Detail(key, s, unr, strategy, loc)
}

// totalOf is the overview's total section (fold.Total, as the Ledger's).
func totalOf(t *agg, unrealized decimal.Decimal) pnlread.PnlTotal { return fold.Total(t, unrealized) }

// periods returns each pair's realized pnl in each [from, to) of ps (unix
// seconds, bucket starts), summed in SQL exactly (exactSum; the wide rows'
// pnl added here by their slot).
func (r *Reader) periods(ctx context.Context, ps [][2]int64) (map[string][6]decimal.Decimal, error) {
	var cols []string
	for _, p := range ps {
		cols = append(cols, exactSum("pnl_e12", slotCond(p[0], p[1])))
	}
	rows, err := r.conn.Query(ctx, "SELECT exchange, pair, "+strings.Join(cols, ", ")+
		", groupArrayIf(concat(toString(slot), ' ', wide), wide != '') FROM "+r.db+
		".pnl_buckets9 FINAL WHERE method = ? AND instance = ? GROUP BY exchange, pair", r.Method.String(), r.Instance)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	per := map[string][6]decimal.Decimal{}
	for rows.Next() {
		var ex, pair string
		var v [12]int64
		var wides []string
		dest := []any{&ex, &pair}
		for i := range v {
			dest = append(dest, &v[i])
		}
		if err := rows.Scan(append(dest, &wides)...); err != nil {
			return nil, err
		}
		var out [6]decimal.Decimal
		for i := range ps {
			out[i] = joinSum(v[2*i], v[2*i+1])
		}
		for _, w := range wides {
			slotText, wide, _ := strings.Cut(w, " ")
			slot, err := strconv.ParseInt(slotText, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("pnl_buckets9: wide row %q: %w", w, err)
			}
			pnl, ok := wideField(wide, "pnl")
			if !ok {
				continue // its pnl is in pnl_e12
			}
			d, err := decimal.ParseDecimal(pnl)
			if err != nil {
				return nil, fmt.Errorf("pnl_buckets9: wide row %q: %w", w, err)
			}
			for i, p := range ps {
				if slotIn(slot, p[0], p[1]) {
					out[i] = out[i].Add(d)
				}
			}
		}
		per[domain.PairKey(ex, pair)] = out
	}
	return per, rows.Err()
}

func (r *Reader) strategies(ctx context.Context) (map[string]string, error) {
	rows, err := r.conn.Query(ctx, "SELECT exchange, pair, strategy FROM "+r.db+".strategies9 FINAL WHERE instance = ? AND strategy != ''", r.Instance)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var ex, pair, s string
		if err := rows.Scan(&ex, &pair, &s); err != nil {
			return nil, err
		}
		out[domain.PairKey(ex, pair)] = s
	}
	return out, rows.Err()
}

// Daily answers pnl/daily like projections.Ledger.Daily.
func (r *Reader) Daily(q pnlread.DailyQuery) ([]pnlread.DayPnl, decimal.Decimal, string, error) {
	days, unm, unit, err := r.daily(q)
	if err != nil && domain.ErrorCode(err) == domain.EUNAVAILABLE && r.fallback() != nil {
		return r.fallback().Daily(q)
	}
	return days, unm, unit, err
}

func (r *Reader) daily(q pnlread.DailyQuery) ([]pnlread.DayPnl, decimal.Decimal, string, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	_, list, err := r.pairs(ctx)
	if err != nil {
		return nil, decimal.Zero, "", r.unavailable("daily", err)
	}
	sc, err := resolve(q.Scope, list)
	if err != nil {
		return nil, decimal.Zero, "", err
	}
	if sc.mixed != nil {
		days, unm, unit, err := r.mixedDaily(ctx, q, *sc.mixed)
		if err != nil {
			return nil, decimal.Zero, "", r.unavailable("daily", err)
		}
		return days, unm, unit, nil
	}
	keys := sc.quoteKeys(list)
	var perPair map[string]*daySeries
	if q.From == 0 && q.To == 0 {
		d, ok, err := r.allTime(ctx, q.Loc, nil, false, [2]int64{}, nil)
		if err != nil {
			return nil, decimal.Zero, "", r.unavailable("daily", err)
		}
		if ok {
			perPair = d.days
		}
	}
	if perPair == nil {
		if _, err := r.overviewReady(ctx); err != nil { // the buckets of a newer schema are not this reader's
			return nil, decimal.Zero, "", r.unavailable("daily", err)
		}
		from, to := rangeSeconds(q.From, q.To)
		if perPair, err = r.days(ctx, from, to, q.Loc); err != nil {
			return nil, decimal.Zero, "", r.unavailable("daily", err)
		}
	}
	var unm decimal.Decimal
	for _, k := range keys {
		if s := perPair[k]; s != nil {
			for i := range s.v {
				unm = unm.Add(s.v[i].Unmatched)
			}
		}
	}
	return foldDays(perPair, keys), unm, sc.unit, nil
}

// Sum answers pnl/sum like projections.Ledger.Sum, over several quote
// currencies in the reporting currency (mixed.go).
func (r *Reader) Sum(scope pnlread.PnlScope, fromMs, toMs int64) (pnlread.SumResult, error) {
	out, err := r.sum(scope, fromMs, toMs)
	if err != nil && domain.ErrorCode(err) == domain.EUNAVAILABLE && r.fallback() != nil {
		return r.fallback().Sum(scope, fromMs, toMs)
	}
	return out, err
}

func (r *Reader) sum(scope pnlread.PnlScope, fromMs, toMs int64) (pnlread.SumResult, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	if _, err := r.overviewReady(ctx); err != nil { // the buckets of a newer schema are not this reader's
		return pnlread.SumResult{}, r.unavailable("sum", err)
	}
	_, list, err := r.pairs(ctx)
	if err != nil {
		return pnlread.SumResult{}, r.unavailable("sum", err)
	}
	sc, err := resolve(scope, list)
	if err != nil {
		return pnlread.SumResult{}, err
	}
	from, to := rangeSeconds(fromMs, toMs)
	var out pnlread.SumResult
	if sc.mixed != nil {
		out, err = r.mixedSum(ctx, *sc.mixed, fromMs, toMs)
	} else {
		out, err = r.oneQuoteSum(ctx, sc, from, to)
	}
	if err == nil {
		out.UnconvertedFees, err = r.unconvertedFees(ctx, sc.keys, from, to)
	}
	if err != nil {
		return pnlread.SumResult{}, r.unavailable("sum", err)
	}
	return out, nil
}

// oneQuoteSum is sum over pairs of one quote.
func (r *Reader) oneQuoteSum(ctx context.Context, sc scoped, from, to int64) (pnlread.SumResult, error) {
	aggs, _, err := r.rangeAggs(ctx, from, to, nil, "")
	if err != nil {
		return pnlread.SumResult{}, err
	}
	out := pnlread.SumResult{Pairs: []pnlread.PairSum{}, Unit: sc.unit}
	for _, key := range sc.keys {
		var s agg
		if a := aggs[key]; a != nil {
			s = *a
		}
		out.Pnl, out.Invested = out.Pnl.Add(decimal.Decimal(s.Pnl)), out.Invested.Add(decimal.Decimal(s.Invested))
		out.Pairs = append(out.Pairs, pnlread.PairSum{Key: key, Pnl: decimal.Number(s.Pnl), Invested: decimal.Number(s.Invested), Trades: s.Trades, Unit: sc.unit})
	}
	return out, nil
}

// Total answers pnl/total like projections.Ledger.Total.
func (r *Reader) Total(key string) (pnlread.PairTotal, error) {
	t, err := r.total(key)
	if err != nil && domain.ErrorCode(err) == domain.EUNAVAILABLE && r.fallback() != nil {
		return r.fallback().Total(key)
	}
	return t, err
}

func (r *Reader) total(key string) (pnlread.PairTotal, error) {
	q, _, err := splitKey(key)
	if err != nil {
		return pnlread.PairTotal{}, err
	}
	out := pnlread.PairTotal{Key: key, Unit: q, Method: r.Method.String()}
	ctx, cancel := r.ctx()
	defer cancel()
	p, t, err := r.pairAllTime(ctx, key)
	if err != nil {
		return out, r.unavailable("total", err)
	}
	if p == nil {
		return out, nil
	}
	out.Pnl, out.NumberOfTrades = decimal.Number(t.Pnl), t.Trades
	out.BuyCount, out.SellCount, out.Winning, out.Losing = t.Buys, t.Sells, t.Wins, t.Losses
	out.Fees, out.Invested, out.UnmatchedBaseValue = decimal.Number(t.Fees), decimal.Number(t.Invested), decimal.Number(t.Unmatched)
	out.UnrealizedPnl, out.Balance = decimal.Number(p.unrealized()), decimal.Number(p.balance)
	out.InventoryCost = decimal.Number(p.lotsCost)
	if p.lotsQty.IsPos() {
		out.ABP = decimal.Number(p.lotsCost.Div(p.lotsQty))
	}
	if out.UnconvertedFees, err = r.unconvertedFees(ctx, []string{key}, minTime, maxTime); err != nil {
		return out, r.unavailable("total", err)
	}
	return out, nil
}

// pairAllTime returns key's pair and its aggregate over all time: its row
// of pnl_overview9 (one row read by its sort key), or, before the sink's
// rows are of the current schema, the pairs table and the sum of its
// buckets. p is nil for a pair without orders.
func (r *Reader) pairAllTime(ctx context.Context, key string) (p *pairInfo, t agg, err error) {
	ok, err := r.overviewReady(ctx)
	if err != nil {
		return nil, t, err
	}
	if ok {
		p, a, err := r.pairTotal(ctx, key)
		if err != nil || p == nil {
			return nil, t, err
		}
		return p, *a, nil
	}
	byKey, _, err := r.pairs(ctx)
	if err != nil || byKey[key] == nil {
		return nil, t, err
	}
	p = byKey[key]
	aggs, _, err := r.rangeAggs(ctx, minTime, maxTime, nil, " AND exchange = ? AND pair = ?", p.exchange, p.pair)
	if err != nil {
		return nil, t, err
	}
	if a := aggs[key]; a != nil {
		t = *a
	}
	return p, t, nil
}

// AssetHistory answers assets/total like projections.Ledger.AssetHistory.
// On a ClickHouse failure it returns the Fallback's answer, or none (and
// logs the failure) without a Fallback.
func (r *Reader) AssetHistory(exchange, base string, start, end int64) []pnlread.AssetPoint {
	pts, err := r.assetHistory(exchange, base, start, end)
	if err != nil {
		r.logFailure("assets", err)
		if f := r.fallback(); f != nil {
			return f.AssetHistory(exchange, base, start, end)
		}
		return []pnlread.AssetPoint{}
	}
	return pts
}

type slotPrice struct {
	slot  int64
	price decimal.Decimal
}

// assetSnap is one BalancesObserved snapshot: its sequence number on the
// exchange, its time and the quantity held per asset (available + on order).
type assetSnap struct {
	seq  uint64
	time int64
	hold map[string]decimal.Decimal
}

// assetHistory answers AssetHistory from the snapshots, balances and
// prices tables, by the rules of projections.Ledger.AssetHistory.
func (r *Reader) assetHistory(exchange, base string, start, end int64) ([]pnlread.AssetPoint, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	if _, err := r.overviewReady(ctx); err != nil { // nor the tables of a newer schema
		return nil, err
	}
	snaps, err := r.assetSnaps(ctx, exchange, start, end)
	if err != nil || len(snaps) == 0 {
		return []pnlread.AssetPoint{}, err
	}
	pb, err := r.priceBook(ctx, exchange, slotOf(snaps[len(snaps)-1].time))
	if err != nil {
		return nil, err
	}
	out := []pnlread.AssetPoint{}
	for _, s := range snaps {
		v, unpriced := pb.value(s, base)
		out = append(out, pnlread.AssetPoint{ID: int64(s.seq), BaseKey: exchange + "/" + base, Amount: decimal.Number(v), Timestamp: s.time, Unpriced: unpriced})
	}
	return out, nil
}

// assetSnaps returns the exchange's snapshots in [start, end] (ms) in
// sequence order, with their holdings.
func (r *Reader) assetSnaps(ctx context.Context, exchange string, start, end int64) ([]*assetSnap, error) {
	rows, err := r.conn.Query(ctx, "SELECT seq, time_ms FROM "+r.db+".snapshots9 FINAL WHERE instance = ? AND exchange = ? AND time_ms >= ? AND time_ms <= ? ORDER BY seq",
		r.Instance, exchange, start, end)
	if err != nil {
		return nil, err
	}
	var snaps []*assetSnap
	bySeq := map[uint64]*assetSnap{}
	for rows.Next() {
		s := &assetSnap{hold: map[string]decimal.Decimal{}}
		if err := rows.Scan(&s.seq, &s.time); err != nil {
			rows.Close()
			return nil, err
		}
		snaps = append(snaps, s)
		bySeq[s.seq] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(snaps) == 0 {
		return nil, err
	}
	rows, err = r.conn.Query(ctx, "SELECT seq, asset, available_e12, on_order_e12, wide FROM "+r.db+".balances9 FINAL WHERE instance = ? AND exchange = ? AND seq >= ? AND seq <= ?",
		r.Instance, exchange, snaps[0].seq, snaps[len(snaps)-1].seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq uint64
		var asset, wide string
		var av, oo int64
		if err := rows.Scan(&seq, &asset, &av, &oo, &wide); err != nil {
			return nil, err
		}
		a, err := amountOf(av, "available", wide)
		if err != nil {
			return nil, err
		}
		o, err := amountOf(oo, "on_order", wide)
		if err != nil {
			return nil, err
		}
		if s, q := bySeq[seq], a.Add(o); s != nil && !q.IsZero() {
			s.hold[asset] = s.hold[asset].Add(q)
		}
	}
	return snaps, rows.Err()
}

// assetPrices are an exchange's fill prices per pair and 15-minute slot,
// for the pairs the reader knows on it.
type assetPrices struct {
	known  map[string]bool
	prices map[string][]slotPrice // by pair, slot ascending
}

// priceBook reads the exchange's prices of the slots up to lastSlot.
func (r *Reader) priceBook(ctx context.Context, exchange string, lastSlot int64) (*assetPrices, error) {
	_, list, err := r.pairs(ctx)
	if err != nil {
		return nil, err
	}
	pb := &assetPrices{known: map[string]bool{}, prices: map[string][]slotPrice{}}
	for _, p := range list {
		if p.exchange == exchange {
			pb.known[p.pair] = true
		}
	}
	rows, err := r.conn.Query(ctx, "SELECT pair, slot, price_e12, wide FROM "+r.db+".prices9 FINAL WHERE instance = ? AND exchange = ? AND slot <= ? ORDER BY pair, slot",
		r.Instance, exchange, lastSlot)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pair, wide string
		var sp slotPrice
		var p int64
		if err := rows.Scan(&pair, &sp.slot, &p, &wide); err != nil {
			return nil, err
		}
		if sp.price, err = amountOf(p, "price", wide); err != nil {
			return nil, err
		}
		pb.prices[pair] = append(pb.prices[pair], sp)
	}
	return pb, rows.Err()
}

// at returns pair's last price in a slot up to t's.
func (pb *assetPrices) at(pair string, t int64) (decimal.Decimal, bool) {
	if !pb.known[pair] {
		return decimal.Zero, false
	}
	ps := pb.prices[pair]
	slot := slotOf(t)
	i := sort.Search(len(ps), func(i int) bool { return ps[i].slot > slot })
	if i == 0 {
		return decimal.Zero, false
	}
	return ps[i-1].price, true
}

// in returns the price of asset in base at t: 1 for base itself, the pair
// base-asset, or 1 ÷ asset-base.
func (pb *assetPrices) in(asset, base string, t int64) (decimal.Decimal, bool) {
	if asset == base {
		return decimal.DecimalFromInt(1), true
	}
	if p, ok := pb.at(base+"-"+asset, t); ok {
		return p, true
	}
	if p, ok := pb.at(asset+"-"+base, t); ok && p.IsPos() {
		return decimal.DecimalFromInt(1).Div(p), true
	}
	return decimal.Zero, false
}

// value returns s's holdings valued in base, assets in name order, those
// without a price left out and returned in unpriced.
func (pb *assetPrices) value(s *assetSnap, base string) (v decimal.Decimal, unpriced []string) {
	assets := make([]string, 0, len(s.hold))
	for a := range s.hold {
		assets = append(assets, a)
	}
	sort.Strings(assets)
	for _, a := range assets {
		if p, ok := pb.in(a, base, s.time); ok {
			v = v.Add(s.hold[a].Mul(p))
		} else {
			unpriced = append(unpriced, a)
		}
	}
	return v, unpriced
}
