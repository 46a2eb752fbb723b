package clickhouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Reads over all time (no date range) come from pnl_overview9, the table
// the sink keeps beside the buckets: one row per pair (its aggregate over
// all time and its inventory), one per strategy, and the pairs' daily
// figures in blocks of 32 local days under every whole-hour zone offset
// and of 24 UTC hours. One query reads what an overview shows: a few rows
// per pair and month instead of every 15-minute bucket, so its cost
// follows the days shown, not the fills.
//
// A day of a zone is the run of buckets whose start falls in it, as the
// Ledger counts it. Over a stretch where the zone's offset stays o (a whole
// number of hours), local day d starts at d·86400 − o: it is day d of the
// shift-o blocks. A day during which the offset changes by an hour (a DST
// day, 23 or 25 hours long) is a day of some shift less its first hour, or
// plus the next day's first hour: beside each day block, a row holds its
// days' first hours (kind 4), read only for the blocks holding such days
// (the plan's edge days): a few rows next to each other. Other changes (two hours, or two in a day) make the
// plan sum those days from the hour blocks, which lie scattered over the
// table (each costs a read of its own). A zone whose offset stays h hours
// and q quarter-hours (a 30- or 45-minute zone) has the days of shift h,
// each moved q quarter-hours earlier: less its last q quarter-hours, plus
// the day before's (kind 5, beside the day blocks); when such a zone's
// offset changes, the days of the change are summed from the UTC days'
// buckets (kind 6, beside the hour blocks). A zone of another offset
// (local mean time) is read from the 15-minute buckets, as are reads over
// a date range.

// errUnknownTable is ClickHouse's code for a table that does not exist.
const errUnknownTable = 60

// stored returns the sink's checkpoint and the schema version of its rows
// (0 and 0 before the sink created the version table).
func (r *Reader) stored(ctx context.Context) (pos uint64, ver uint32, err error) {
	name := sinkNameOf(r.Instance, r.Method)
	err = r.conn.QueryRow(ctx, "SELECT (SELECT max(position) FROM "+r.db+".checkpoint WHERE sink = ?), (SELECT max(version) FROM "+
		r.db+".schema_version WHERE sink = ?)", name, name).Scan(&pos, &ver)
	var ex *ch.Exception
	if errors.As(err, &ex) && ex.Code == errUnknownTable {
		return 0, 0, nil
	}
	return pos, ver, err
}

// uncachedVersion makes the Versions that must not match any other.
var uncachedVersion atomic.Uint64

// Version returns the position up to which ClickHouse holds the sink's
// rows: answers are equal while it stays the same, so the HTTP server
// caches encoded overviews by it. Rows of another schema version (being
// rewritten for an upgrade, or of a newer release), a table of this
// schema found missing, or ClickHouse unreachable give a version no other
// call returns (nothing is cached then). With Checkpoint set it is the
// in-process sink's checkpoint and costs no query; else one small query.
func (r *Reader) Version() uint64 {
	if r.Checkpoint != nil {
		pos, current := r.Checkpoint()
		if !current || pos >= 1<<62 || r.schema.Load() == schemaForeign {
			return 1<<63 | uncachedVersion.Add(1)
		}
		return pos
	}
	ctx, cancel := r.ctx()
	defer cancel()
	pos, ver, err := r.stored(ctx)
	if err != nil || pos >= 1<<62 {
		return 1<<63 | uncachedVersion.Add(1)
	}
	if ok, _ := r.sawVersion(ver); !ok {
		return 1<<63 | uncachedVersion.Add(1)
	}
	return pos
}

// allTime returns the overview's data over all time in loc (with each
// pair's pnl in periods, and strategies when withStrategies), or ok false
// when pnl_overview9 cannot answer but the buckets can: rows of an older
// schema, or a zone offset it does not hold (rows of a newer schema fail
// with errForeignRows). With window ([from, to] in ms, not zero) it
// reads only the days in it (those of the periods, for an overview over a
// date range, whose own days and aggregates come from the buckets).
//
// One query: the pairs, their strategies and the daily blocks of the
// fills' span of the previous call (widened by a week each way, so that a
// live log keeps it for days), and with fees not nil the fees without a
// rate (unvaluedFees' rows, set when ok); the blocks are read again only
// when the pairs show fills outside it.
func (r *Reader) allTime(ctx context.Context, loc *time.Location, periods [][2]int64, withStrategies bool, window [2]int64, fees *[]unvaluedFee) (*overviewData, bool, error) {
	if ok, err := r.overviewReady(ctx); err != nil || !ok {
		return nil, false, err
	}
	r.spanMu.Lock()
	span := r.span
	r.spanMu.Unlock()
	var plan *zonePlan
	if span != [2]int64{} {
		p, ok := planWindow(loc, span, window)
		if !ok {
			return nil, false, nil
		}
		plan = &p
	}
	d := overviewData{byKey: map[string]*pairInfo{}, aggs: map[string]*agg{}, strat: map[string]string{}}
	days := map[string]*daySeries{}
	if err := r.readOverview(ctx, &d, days, loc, plan, true, fees); err != nil {
		return nil, false, err
	}
	if !withStrategies {
		d.strat = nil
	}
	first, last, seen := fillSpan(d.aggs)
	switch {
	case !seen:
		clear(days)
	case plan == nil || first < span[0] || last > span[1]:
		const week = 7 * dayMs
		span = [2]int64{first - week, last + week}
		r.spanMu.Lock()
		r.span = span
		r.spanMu.Unlock()
		p, ok := planWindow(loc, span, window)
		if !ok {
			return nil, false, nil
		}
		clear(days)
		if err := r.readOverview(ctx, nil, days, loc, &p, false, nil); err != nil {
			return nil, false, err
		}
	}
	d.days = days
	d.per = periodsOf(days, periods, loc)
	return &d, true, nil
}

// What a Reader knows of the sink's rows (Reader.schema).
const (
	// schemaUnknown: not asked yet, or of an older schema (being
	// rewritten): each read asks the version, and reads the buckets.
	schemaUnknown uint32 = iota
	// schemaCurrent: of SchemaVersion. Reads use pnl_overview9 without
	// asking again, until a query finds a table missing (logFailure).
	schemaCurrent
	// schemaForeign: of a newer schema, or a table of this one found
	// missing: ClickHouse cannot answer; each read asks the version again.
	schemaForeign
)

// errForeignRows is the failure of a read while the sink's rows are of a
// newer schema: the read answers EUNAVAILABLE (the Fallback's answer).
var errForeignRows = errors.New("clickhouse rows of a newer schema")

// overviewReady reports whether pnl_overview9 holds the sink's rows in the
// current schema (it may not exist yet, or be incomplete during a
// rewrite: false, and the buckets answer), or errForeignRows when they are
// of a newer one (no table may be read then). Once true, it stays true
// without a query until a read finds a table missing.
func (r *Reader) overviewReady(ctx context.Context) (bool, error) {
	if r.schema.Load() == schemaCurrent {
		return true, nil
	}
	_, ver, err := r.stored(ctx)
	if err != nil {
		return false, err
	}
	return r.sawVersion(ver)
}

// sawVersion records what the sink's recorded schema version means to
// this reader and returns it as overviewReady does. Only SchemaVersion
// itself is this reader's: a newer one may have dropped or changed the
// tables it reads, so it is errForeignRows, logged when first seen.
func (r *Reader) sawVersion(ver uint32) (bool, error) {
	switch {
	case ver == SchemaVersion:
		r.schema.Store(schemaCurrent)
		return true, nil
	case ver > SchemaVersion:
		if r.schema.Swap(schemaForeign) != schemaForeign {
			r.Logger.Warn("clickhouse rows are of a newer schema (a newer release's sink wrote them): PNL reads use the fallback",
				zap.Uint32("version", ver), zap.Uint32("schema", SchemaVersion))
		}
		return false, errForeignRows
	default:
		r.schema.Store(schemaUnknown)
		return false, nil
	}
}

// pairTotal returns key's pair row of pnl_overview9: its aggregate over all
// time and its inventory; p is nil when the pair has none (no order).
func (r *Reader) pairTotal(ctx context.Context, key string) (p *pairInfo, a *agg, err error) {
	ex, pair, err := domain.SplitPairKey(key)
	if err != nil {
		return nil, nil, err
	}
	var packed string
	err = r.conn.QueryRow(ctx, "SELECT v FROM "+r.db+".pnl_overview9 FINAL WHERE method = ? AND kind = 0 AND instance = ? AND shift = 0 AND n = 0 AND exchange = ? AND pair = ?",
		r.Method.String(), r.Instance, ex, pair).Scan(&packed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	v := unpackFigures(nil, packed)
	if len(v) != pairCols {
		return nil, nil, fmt.Errorf("pnl_overview9: pair row of %s has %d figures, want %d", key, len(v), pairCols)
	}
	p = &pairInfo{key: key, exchange: ex, pair: pair, lotsQty: v[aggCols].dec(), lotsCost: v[aggCols+1].dec(),
		last: v[aggCols+2].dec(), balance: v[aggCols+3].dec()}
	p.quote, p.base, _ = domain.SplitPair(pair)
	return p, aggOf(v), nil
}

// planWindow plans the local days of loc over span (ms), cut to window
// unless it is zero.
func planWindow(loc *time.Location, span, window [2]int64) (zonePlan, bool) {
	if window != [2]int64{} {
		span = [2]int64{max(span[0], window[0]), min(span[1], window[1])}
		if span[0] > span[1] {
			return zonePlan{}, true // no day to read
		}
	}
	return planZone(loc, span[0], span[1])
}

// readOverview reads pnl_overview9 in one query: with pairs, the pair and
// strategy rows into d; with plan, the day and hour blocks it selects into
// days (per pair, by local day number); with fees, the fees without a rate
// (fill_fees9's rows, as unvaluedFees reads them, in the same query).
func (r *Reader) readOverview(ctx context.Context, d *overviewData, days map[string]*daySeries, loc *time.Location, plan *zonePlan, pairs bool, fees *[]unvaluedFee) error {
	cond := overviewConds(plan, pairs)
	if len(cond) == 0 {
		return nil
	}
	q := "SELECT kind, shift, n, exchange, pair, v, s, position FROM " + r.db +
		".pnl_overview9 FINAL WHERE method = ? AND instance = ? AND (" + strings.Join(cond, " OR ") + ")"
	args := []any{r.Method.String(), r.Instance}
	if fees != nil {
		q += fmt.Sprintf(" UNION ALL SELECT toUInt8(%d), toInt32(0), time_ms, exchange, pair, fee_amount, fee_asset, toUInt64(0) FROM %s.fill_fees9 FINAL WHERE instance = ? AND valued = 0", kindFee, r.db)
		args = append(args, r.Instance)
	}
	rows, err := r.conn.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	sc := overviewScan{d: d, days: days, zone: pnlread.LocalDays{Loc: loc}, plan: plan, fees: fees}
	for rows.Next() {
		var row overviewRow
		var packed string
		if err := rows.Scan(&row.kind, &row.shift, &row.n, &row.exchange, &row.pair, &packed, &row.s, &row.position); err != nil {
			return err
		}
		sc.add(&row, packed)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	sc.finish()
	return nil
}

// kindFee marks readOverview's rows of fill_fees9 (no pnl_overview9 row
// is of this kind): n is the fill's time (ms), v the fee's amount and s
// its asset.
const kindFee = 255

// overviewConds returns the OR-ed conditions selecting the pnl_overview9
// rows readOverview needs: the pair and strategy rows with pairs, and
// plan's day and hour blocks, and the first hours of the blocks holding
// its edge days. The blocks are listed (n IN (…)), one condition per
// shift and kind, and one for the hours: on 18.16 a read's CPU grows
// with the conditions OR-ed more than with the rows (a 2,000,000-order
// overview's blocks as 17 ranges cost 8.0 ms of server CPU, as 3 lists
// 5.3 ms).
func overviewConds(plan *zonePlan, pairs bool) []string {
	var cond []string
	if pairs {
		cond = append(cond, "kind IN (0, 3)")
	}
	if plan == nil {
		return cond
	}
	var shifts []int32
	blocks := map[int32][]int64{}
	addBlocks := func(shift int32, from, to int64) {
		if _, ok := blocks[shift]; !ok {
			shifts = append(shifts, shift)
		}
		for n := pnlread.FloorDiv(from, dayBlock); n <= pnlread.FloorDiv(to, dayBlock); n++ {
			blocks[shift] = append(blocks[shift], n)
		}
	}
	for _, c := range plan.days {
		addBlocks(c.shift, c.from, c.to)
	}
	var lastShifts []int32
	last := map[int32][]int64{}
	for _, c := range plan.days {
		if c.quarters == 0 {
			continue
		}
		if _, ok := last[c.shift]; !ok {
			lastShifts = append(lastShifts, c.shift)
		}
		for n := pnlread.FloorDiv(c.from-1, dayBlock); n <= pnlread.FloorDiv(c.to, dayBlock); n++ {
			last[c.shift] = append(last[c.shift], n)
		}
	}
	var firstShifts []int32
	first := map[int32][]int64{}
	for _, e := range plan.edges {
		addBlocks(e.shift, e.n, e.n)
		if e.sign != 0 {
			if _, ok := first[e.shift]; !ok {
				firstShifts = append(firstShifts, e.shift)
			}
			first[e.shift] = append(first[e.shift], pnlread.FloorDiv(e.n+max(e.sign, 0), dayBlock))
		}
	}
	for _, sh := range shifts {
		cond = append(cond, fmt.Sprintf("(kind = 1 AND shift = %d AND n IN (%s))", sh, inList(blocks[sh])))
	}
	for _, sh := range firstShifts {
		cond = append(cond, fmt.Sprintf("(kind = 4 AND shift = %d AND n IN (%s))", sh, inList(first[sh])))
	}
	for _, sh := range lastShifts {
		cond = append(cond, fmt.Sprintf("(kind = 5 AND shift = %d AND n IN (%s))", sh, inList(last[sh])))
	}
	if hours := blocksOf(plan.slow, hourBlock); len(hours) > 0 {
		cond = append(cond, "(kind = 2 AND n IN ("+inList(hours)+"))")
	}
	if days := blocksOf(plan.slowQuarters, quarterBlock); len(days) > 0 {
		cond = append(cond, "(kind = 6 AND n IN ("+inList(days)+"))")
	}
	return cond
}

// blocksOf returns the numbers of the blocks of size intervals that hold
// the ranges [from, to) of intervals.
func blocksOf(ranges [][2]int64, size int64) []int64 {
	var ns []int64
	for _, r := range ranges {
		for n := pnlread.FloorDiv(r[0], size); n <= pnlread.FloorDiv(r[1]-1, size); n++ {
			ns = append(ns, n)
		}
	}
	return ns
}

// inList returns ns sorted, without repeats, comma-separated.
func inList(ns []int64) string {
	slices.Sort(ns)
	ns = slices.Compact(ns)
	b := make([]byte, 0, 8*len(ns))
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(b)
}

// overviewScan gathers readOverview's rows: pair and strategy rows into d
// (when not nil), the day and hour blocks plan selects into days.
type overviewScan struct {
	d    *overviewData
	days map[string]*daySeries
	zone pnlread.LocalDays
	plan *zonePlan
	fees *[]unvaluedFee
	list []listedPair
	v    []i128 // the figures of the row being added
}

// listedPair is a pair row and its position, by which d.list is ordered.
type listedPair struct {
	p   *pairInfo
	pos uint64
}

// add takes in one row, its figures packed; a row of a kind the scan was
// not asked for, or of an unexpected width, is skipped.
func (sc *overviewScan) add(row *overviewRow, packed string) {
	if row.kind == kindFee {
		if sc.fees != nil {
			*sc.fees = append(*sc.fees, unvaluedFee{exchange: row.exchange, pair: row.pair, asset: row.s, amount: packed, timeMs: row.n})
		}
		return
	}
	sc.v = unpackFigures(sc.v, packed)
	row.v = sc.v
	key, v := domain.PairKey(row.exchange, row.pair), row.v
	switch row.kind {
	case kindPair:
		if sc.d == nil || len(v) != pairCols {
			return
		}
		p := &pairInfo{key: key, exchange: row.exchange, pair: row.pair}
		p.quote, p.base, _ = domain.SplitPair(row.pair)
		p.lotsQty, p.lotsCost, p.last, p.balance = v[aggCols].dec(), v[aggCols+1].dec(), v[aggCols+2].dec(), v[aggCols+3].dec()
		sc.d.byKey[key] = p
		sc.list = append(sc.list, listedPair{p, row.position})
		sc.d.aggs[key] = aggOf(v)
	case kindStrategy:
		if sc.d != nil && row.s != "" {
			sc.d.strat[key] = row.s
		}
	case kindLocalDay:
		if sc.plan != nil && len(v) == dayBlock*dayCols {
			sc.addLocalDays(key, row)
		}
	case kindFirstHours:
		if sc.plan != nil && len(v) == dayBlock*dayCols {
			sc.addFirstHours(key, row)
		}
	case kindLastQuarters:
		if sc.plan != nil && len(v) == dayBlock*quarters*dayCols {
			sc.addLastQuarters(key, row)
		}
	case kindQuarterHours:
		if sc.plan != nil && len(v) == quarterBlock*dayCols {
			sc.addQuarterHours(key, row)
		}
	case kindHour:
		if sc.plan != nil && len(v) == hourBlock*dayCols {
			sc.addHours(key, row)
		}
	}
}

// series returns key's days, sized for the plan's span at first.
func (sc *overviewScan) series(key string) *daySeries {
	s := sc.days[key]
	if s == nil {
		s = newSeries(sc.plan.first(), sc.plan.last())
		sc.days[key] = s
	}
	return s
}

// addLocalDays adds a kindLocalDay block's days that the plan selects
// (the block's day n under shift o is local day n: it starts at
// n·86400 − o).
func (sc *overviewScan) addLocalDays(key string, row *overviewRow) {
	var s *daySeries
	b0, b1 := row.n*dayBlock, row.n*dayBlock+dayBlock-1
	for _, c := range sc.plan.days {
		if c.shift != row.shift || c.to < b0 || c.from > b1 {
			continue
		}
		for day := max(c.from, b0); day <= min(c.to, b1); day++ {
			if f := row.v[(day-b0)*dayCols:]; f[0] != (i128{}) {
				if s == nil {
					s = sc.series(key)
				}
				s.at(day).add(f)
			}
		}
	}
	for _, e := range sc.plan.edges {
		if e.shift == row.shift && e.n >= b0 && e.n <= b1 {
			if f := row.v[(e.n-b0)*dayCols:]; f[0] != (i128{}) {
				sc.series(key).at(e.day).add(f)
			}
		}
	}
}

// addFirstHours adds to the plan's edge days the first hours of a
// kindFirstHours block's days that they need: less day n's (sign −1), or
// plus day n+1's (sign +1).
func (sc *overviewScan) addFirstHours(key string, row *overviewRow) {
	b0, b1 := row.n*dayBlock, row.n*dayBlock+dayBlock-1
	for _, e := range sc.plan.edges {
		d := e.n + max(e.sign, 0)
		if e.sign == 0 || e.shift != row.shift || d < b0 || d > b1 {
			continue
		}
		if f := row.v[(d-b0)*dayCols:]; f[0] != (i128{}) {
			if e.sign < 0 {
				sc.series(key).at(e.day).sub(f)
			} else {
				sc.series(key).at(e.day).add(f)
			}
		}
	}
}

// addLastQuarters moves the last quarter-hours of a kindLastQuarters
// block's days to the next day, for the plan's days of a zone q
// quarter-hours ahead of their shift (dayRange.quarters): its day d is the
// shift's day d less d's last q quarter-hours, plus d−1's.
func (sc *overviewScan) addLastQuarters(key string, row *overviewRow) {
	b0, b1 := row.n*dayBlock, row.n*dayBlock+dayBlock-1
	for _, c := range sc.plan.days {
		if c.shift != row.shift || c.quarters == 0 || c.to < b0 || c.from-1 > b1 {
			continue
		}
		for d := max(c.from-1, b0); d <= min(c.to, b1); d++ {
			f := row.v[((d-b0)*quarters+c.quarters-1)*dayCols:]
			if f[0] == (i128{}) {
				continue
			}
			if d >= c.from {
				sc.series(key).at(d).sub(f)
			}
			if d < c.to {
				sc.series(key).at(d + 1).add(f)
			}
		}
	}
}

// addHours adds a kindHour block's hours that the plan selects, each to
// its local day.
func (sc *overviewScan) addHours(key string, row *overviewRow) {
	sc.addUTC(key, row, hourBlock, 3600, sc.plan.slow)
}

// addQuarterHours adds a kindQuarterHours block's buckets that the plan
// selects, each to its local day.
func (sc *overviewScan) addQuarterHours(key string, row *overviewRow) {
	sc.addUTC(key, row, quarterBlock, bucketSecs, sc.plan.slowQuarters)
}

// addUTC adds the figures of a row of size UTC intervals of secs seconds
// each (from interval row.n·size) that lie in ranges (of interval
// numbers), each to the local day of its start.
func (sc *overviewScan) addUTC(key string, row *overviewRow, size, secs int64, ranges [][2]int64) {
	for j := int64(0); j < size; j++ {
		i := row.n*size + j
		if f := row.v[j*dayCols:]; f[0] != (i128{}) && inRanges(i, ranges) {
			sc.series(key).at(sc.zone.Day(i * secs)).add(f)
		}
	}
}

// finish lists d's pairs in the order of their rows' positions.
func (sc *overviewScan) finish() {
	if sc.d == nil {
		return
	}
	sort.Slice(sc.list, func(i, j int) bool { return sc.list[i].pos < sc.list[j].pos })
	sc.d.list = make([]*pairInfo, len(sc.list))
	for i, l := range sc.list {
		sc.d.list[i] = l.p
	}
}

// aggOf reads a pair row's aggregate (bucketRow.values' order).
func aggOf(v []i128) *agg {
	a := &agg{}
	var c [aggCols]int64
	for i, x := range v[:aggCols] {
		c[i], _ = x.int64() // a count or a time; the amounts are read below
	}
	*a = agg{Trades: c[0], Buys: c[1], Sells: c[2], Wins: c[3], Losses: c[4], Evens: c[5],
		UBuys: c[6], USells: c[7], UWins: c[8], ULosses: c[9], HeroT: c[22], FuckT: c[24], FirstT: c[25], LastT: c[26]}
	m := money(a)
	for i, d := range m[:11] {
		*d = v[10+i].dec()
	}
	a.Hero, a.Fuck = v[21].dec(), v[23].dec()
	// The sink writes no unconverted fills: every closing trade is priced.
	a.Priced = a.Wins + a.Losses + a.Evens
	return a
}

// bucketCols lists pnl_buckets9's aggregate columns in bucketRow.values'
// order (trades … last_ms), then wide.
const bucketCols = `trades, buys, sells, wins, losses, evens, u_buys, u_sells, u_wins, u_losses,
 pnl_e12, profit_e12, loss_e12, fees_e12, cp_wins_e12, cp_losses_e12, buy_value_e12, sell_value_e12, volume_e12,
 unmatched_value_e12, invested_e12, hero_e12, hero_ms, fuckup_e12, fuckup_ms, first_ms, last_ms, wide`

// setAgg sets a to the aggregate of a pnl_buckets9 row: its columns v
// (bucketRow.values' order) and its wide text.
func setAgg(a *agg, v []int64, wide string) error {
	*a = agg{Trades: v[0], Buys: v[1], Sells: v[2], Wins: v[3], Losses: v[4], Evens: v[5],
		UBuys: v[6], USells: v[7], UWins: v[8], ULosses: v[9], HeroT: v[22], FuckT: v[24], FirstT: v[25], LastT: v[26]}
	m := money(a)
	for i, col := range [13]int{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23} {
		var err error
		if *m[i], err = amountOf(v[col], aggMoney[i], wide); err != nil {
			return err
		}
	}
	// The sink writes no unconverted fills: every closing trade is priced.
	a.Priced = a.Wins + a.Losses + a.Evens
	return nil
}

// fillSpan returns the first and last fill time (ms) over aggs; seen is
// false without fills.
func fillSpan(aggs map[string]*agg) (first, last int64, seen bool) {
	for _, a := range aggs {
		if a.Trades == 0 {
			continue
		}
		if !seen || a.FirstT < first {
			first = a.FirstT
		}
		if !seen || a.LastT > last {
			last = a.LastT
		}
		seen = true
	}
	return first, last, seen
}

// zonePlan says where a zone's local days are, over a span of time: the
// whole local days of each stretch of constant offset (a shift and a range
// of day numbers), and the UTC hours [from, to) of the days when its
// offset changes (or their buckets, for a zone whose offsets or changes
// are not all on whole hours).
type zonePlan struct {
	days         []dayRange
	edges        []edgeDay
	slow         [][2]int64
	slowQuarters [][2]int64 // the slow days' buckets [from, to), of a zone not on whole hours
}

// edgeDay is a local day when the zone's offset changes by an hour: day n
// of shift (seconds east of UTC) less its first hour (sign −1, a 23-hour
// day), or plus the first hour of day n+1 (sign +1, a 25-hour day), or
// just day n (sign 0).
type edgeDay struct {
	day   int64
	shift int32
	n     int64
	sign  int64
}

// dayRange is the local days from, …, to of a zone quarters quarter-hours
// (0 to 3) ahead of shift (seconds east of UTC, a whole hour): the
// shift's days, each less its last quarters quarter-hours and plus the
// previous day's (kindLastQuarters).
type dayRange struct {
	shift    int32
	from, to int64
	quarters int64
}

// first and last return the plan's first and last day number: its days
// of offset changes lie between.
func (p *zonePlan) first() int64 {
	if len(p.days) == 0 {
		return 0
	}
	d := p.days[0].from
	for _, e := range p.edges {
		d = min(d, e.day)
	}
	return d
}

func (p *zonePlan) last() int64 {
	if len(p.days) == 0 {
		return 0
	}
	d := p.days[len(p.days)-1].to
	for _, e := range p.edges {
		d = max(d, e.day)
	}
	return d
}

// inRanges reports whether i lies in one of the ranges [from, to).
func inRanges(i int64, ranges [][2]int64) bool {
	for _, r := range ranges {
		if i >= r[0] && i < r[1] {
			return true
		}
	}
	return false
}

// planZone plans the local days of loc over the fills of [first, last]
// (ms); ok is false when loc has an offset there that pnl_overview9 does
// not hold (not a whole number of quarter-hours, or beyond its shifts),
// changes offset off a whole UTC hour, or changes offset at all while one
// of its offsets is not a whole hour (the days of such a change would need
// quarter-hours the hour blocks do not hold).
func planZone(loc *time.Location, first, last int64) (zonePlan, bool) {
	lo, hi := pnlread.FloorDiv(first, 1000)-2*86400, pnlread.FloorDiv(last, 1000)+2*86400
	type seg struct {
		start, end int64
		off        int
	}
	var segs []seg
	t := time.Unix(lo, 0).In(loc)
	for len(segs) < 10_000 {
		_, off := t.Zone()
		_, e := t.ZoneBounds()
		if sh := pnlread.FloorDiv(int64(off), shiftStep) * shiftStep; off%bucketSecs != 0 || sh < minShift || sh > maxShift {
			return zonePlan{}, false
		}
		end := hi
		if !e.IsZero() && e.Unix() < hi {
			end = e.Unix()
			if end%bucketSecs != 0 {
				return zonePlan{}, false
			}
		}
		if n := len(segs); n > 0 && segs[n-1].off == off {
			segs[n-1].end = end // only the zone's name changed
		} else {
			start := lo
			if n > 0 {
				start = segs[n-1].end
			}
			segs = append(segs, seg{start, end, off})
		}
		if end >= hi {
			break
		}
		t = time.Unix(end, 0).In(loc)
	}
	// Offsets and changes on whole hours: the days of a change are read
	// by the hour (or as edge days); else by the quarter-hour.
	hours := true
	for _, s := range segs {
		if s.off%shiftStep != 0 || s.end%3600 != 0 && s.end != hi {
			hours = false
		}
	}
	var p zonePlan
	prevEnd := int64(lo) // UTC end of the previous stretch's last whole local day
	for i, s := range segs {
		off := int64(s.off)
		da := -pnlread.FloorDiv(-(s.start + off), 86400) // first local day starting at or after start
		db := pnlread.FloorDiv(s.end+off, 86400) - 1     // last local day ending at or before end
		if i == 0 {
			da = pnlread.FloorDiv(s.start+off, 86400)
		}
		if i == len(segs)-1 {
			db = pnlread.FloorDiv(s.end+off, 86400)
		}
		if da > db {
			continue // no whole day: the hours go to the slow days
		}
		if from := da*86400 - off; from > prevEnd && i > 0 {
			if hours {
				p.slow = append(p.slow, [2]int64{pnlread.FloorDiv(prevEnd, 3600), pnlread.FloorDiv(from, 3600)})
			} else {
				p.slowQuarters = append(p.slowQuarters, [2]int64{prevEnd / bucketSecs, from / bucketSecs})
			}
		}
		sh := pnlread.FloorDiv(off, shiftStep) * shiftStep
		p.days = append(p.days, dayRange{int32(sh), da, db, (off - sh) / bucketSecs})
		prevEnd = (db+1)*86400 - off
	}
	p.toEdges(pnlread.LocalDays{Loc: loc})
	return p, true
}

// toEdges replaces the slow hours by edge days when every local day they
// belong to is 23, 24 or 25 whole hours: such a day is read from the day
// blocks, not from the hour blocks scattered over the table. All or
// nothing: a day some of whose hours stay slow is never also an edge day.
// An edge day that was a stretch's first or last whole day (its offset
// changed at its start or end) is no longer read as a whole day.
func (p *zonePlan) toEdges(z pnlread.LocalDays) {
	var edges []edgeDay
	seen := map[int64]bool{}
	for _, r := range p.slow {
		es, ok := p.edgesOf(z, r)
		if !ok {
			return
		}
		for _, e := range es {
			if seen[e.day] {
				return
			}
			seen[e.day] = true
		}
		edges = append(edges, es...)
	}
	days := slices.Clone(p.days)
	for i := range days {
		c := &days[i]
		if seen[c.from] {
			c.from++
		}
		if seen[c.to] {
			c.to--
		}
		if c.from > c.to {
			return
		}
		for _, e := range edges {
			if e.day >= c.from && e.day <= c.to {
				return
			}
		}
	}
	p.days, p.edges, p.slow = days, edges, nil
}

// edgesOf returns the edge days of the local days the UTC hours [r[0],
// r[1]) belong to, or ok false when one is not an edge day.
func (p *zonePlan) edgesOf(z pnlread.LocalDays, r [2]int64) (edges []edgeDay, ok bool) {
	if r[1]-r[0] > 48 {
		return nil, false
	}
	day := func(h int64) int64 { return z.Day(h * 3600) }
	for h := r[0]; h < r[1]; h++ {
		d := day(h)
		if n := len(edges); n > 0 && edges[n-1].day == d {
			continue
		}
		x, y := h, h+1 // the day's hours [x, y)
		for x > h-26 && day(x-1) == d {
			x--
		}
		for y < h+26 && day(y) == d {
			y++
		}
		var e edgeDay
		switch y - x {
		case 23:
			e = edgeDay{day: d, sign: -1}
			x-- // day n of the shift starts an hour earlier
		case 24:
			e = edgeDay{day: d}
		case 25:
			e = edgeDay{day: d, sign: 1}
		default:
			return nil, false
		}
		// Day n of shift b (hours) starts at UTC hour 24n − b = x: b ≡ −x
		// (mod 24), one of the shifts held, preferably one the plan reads.
		b, found := int64(0), false
		for c := pnlread.FloorDiv(minShift/3600+x, 24)*24 - x; c <= maxShift/3600; c += 24 {
			if c < minShift/3600 {
				continue
			}
			if !found || p.reads(int32(c*3600)) {
				b, found = c, true
			}
		}
		if !found {
			return nil, false
		}
		e.shift, e.n = int32(b*3600), (x+b)/24
		edges = append(edges, e)
	}
	return edges, true
}

// reads reports whether the plan reads days of shift.
func (p *zonePlan) reads(shift int32) bool {
	for _, c := range p.days {
		if c.shift == shift {
			return true
		}
	}
	return false
}

// periodsOf returns each pair's pnl in each period of ps (local midnights,
// unix seconds): the pnl of its days from the first period bound's day up
// to the second's, excluded.
func periodsOf(days map[string]*daySeries, ps [][2]int64, loc *time.Location) map[string][6]decimal.Decimal {
	out := make(map[string][6]decimal.Decimal, len(days))
	if len(ps) == 0 {
		return out
	}
	z := pnlread.LocalDays{Loc: loc}
	bounds := make([][2]int64, len(ps))
	for i, p := range ps {
		bounds[i] = [2]int64{z.Day(p[0]), z.Day(p[1])}
	}
	for k, s := range days {
		var v [6]decimal.Decimal
		for i, b := range bounds {
			v[i] = s.pnl(b[0], b[1])
		}
		out[k] = v
	}
	return out
}
