package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tradeledger/tradeledger/domain"
)

// Reads over all time (no date range) come from the small tables the sink
// keeps beside the buckets: pnl_totals (one row per pair), pnl_local_days
// (one row per pair and local day, for every whole-hour zone offset) and,
// for the few local days when a zone's offset changes, pnl_hours. They
// read a row per pair and day instead of every 15-minute bucket (with
// FINAL), so their cost follows the days shown, not the fills.
//
// A day of a zone is the run of buckets whose start falls in it, as the
// Ledger counts it. Over a stretch where the zone's offset stays o (a whole
// number of hours), local day d starts at d·86400 − o: it is the row (o, d)
// of pnl_local_days. A day during which the offset changes (a DST day, 23
// or 25 hours long) is made of whole UTC hours, each within one local day:
// it is summed from pnl_hours. A zone with another offset over the fills'
// span (a 30- or 45-minute zone, or local mean time) is read from the
// buckets as before, as are reads over a date range.

// errUnknownTable is ClickHouse's code for a table that does not exist.
const errUnknownTable = 60

// stored returns the sink's checkpoint and the schema version of its rows
// (0 and 0 before the sink created the version table).
func (r *Reader) stored(ctx context.Context) (pos uint64, ver uint32, err error) {
	name := sinkNameOf(r.Method)
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
// caches encoded overviews by it. Rows being rewritten for a schema
// upgrade, or ClickHouse unreachable, give a version no other call returns
// (nothing is cached then).
func (r *Reader) Version() uint64 {
	ctx, cancel := r.ctx()
	defer cancel()
	pos, ver, err := r.stored(ctx)
	if err != nil || ver < SchemaVersion || pos >= 1<<62 {
		return 1<<63 | uncachedVersion.Add(1)
	}
	return pos
}

// allTime returns the overview's data over all time in loc (with each
// pair's pnl in periods, and strategies when withStrategies), or ok false
// when the small tables cannot answer: rows of an older schema, or a zone
// offset they do not hold.
//
// One round of queries: the local days are read for the fills' span of the
// previous call (widened by a week each way, so that a live log keeps it
// for days) beside the pairs and totals, and read again only when the
// totals show fills outside it.
func (r *Reader) allTime(ctx context.Context, loc *time.Location, periods [][2]int64, withStrategies bool) (*overviewData, bool, error) {
	var (
		wg                 sync.WaitGroup
		d                  overviewData
		ver                uint32
		days               map[string]map[string]*dayAgg
		daysOK             bool
		e1, e2, e3, e4, e5 error
	)
	upgraded := r.upgraded.Load()
	if !upgraded {
		wg.Add(1)
		go func() { defer wg.Done(); _, ver, e1 = r.stored(ctx) }()
	}
	wg.Add(2)
	go func() { defer wg.Done(); d.byKey, d.list, e2 = r.pairs(ctx) }()
	go func() { defer wg.Done(); d.aggs, e3 = r.totals(ctx) }()
	if withStrategies {
		wg.Add(1)
		go func() { defer wg.Done(); d.strat, e4 = r.strategies(ctx) }()
	}
	r.spanMu.Lock()
	span := r.span
	r.spanMu.Unlock()
	if upgraded && span != [2]int64{} {
		wg.Add(1)
		go func() { defer wg.Done(); days, daysOK, e5 = r.localDays(ctx, loc, span[0], span[1]) }()
	}
	wg.Wait()
	if !upgraded && e1 == nil {
		if ver < SchemaVersion {
			return nil, false, nil // the tables may not exist yet
		}
		r.upgraded.Store(true)
	}
	if err := errors.Join(e1, e2, e3, e4, e5); err != nil {
		return nil, false, err
	}
	first, last, seen := fillSpan(d.aggs)
	switch {
	case !seen:
		days, daysOK = map[string]map[string]*dayAgg{}, true
	case days == nil || first < span[0] || last > span[1]:
		const week = 7 * dayMs
		span = [2]int64{first - week, last + week}
		r.spanMu.Lock()
		r.span = span
		r.spanMu.Unlock()
		if days, daysOK, e5 = r.localDays(ctx, loc, span[0], span[1]); e5 != nil {
			return nil, false, e5
		}
	}
	if !daysOK {
		return nil, false, nil
	}
	d.days = days
	d.per = periodsOf(days, periods, loc)
	return &d, true, nil
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

// totals returns each pair's aggregate over all time.
func (r *Reader) totals(ctx context.Context) (map[string]*agg, error) {
	rows, err := r.conn.Query(ctx, `SELECT exchange, pair, trades, buys, sells, wins, losses, evens, u_buys, u_sells, u_wins, u_losses,
 pnl_e8, profit_e8, loss_e8, fees_e8, cp_wins_e8, cp_losses_e8, buy_value_e8, sell_value_e8, volume_e8, unmatched_value_e8, invested_e8,
 first_ms, last_ms, hero_e8, hero_ms, fuckup_e8, fuckup_ms
FROM `+r.db+`.pnl_totals FINAL WHERE method = ?`, r.Method.String())
	if err != nil {
		return nil, err
	}
	return scanAggs(rows)
}

// scanAggs reads rows of (exchange, pair, the aggregate's columns in the
// order of aggs' query) by pair key.
func scanAggs(rows driver.Rows) (map[string]*agg, error) {
	defer rows.Close()
	out := map[string]*agg{}
	for rows.Next() {
		var ex, pair string
		var a agg
		var money [13]int64 // the e8 sums, in the order selected
		if err := rows.Scan(&ex, &pair, &a.Trades, &a.Buys, &a.Sells, &a.Wins, &a.Losses, &a.Evens,
			&a.UBuys, &a.USells, &a.UWins, &a.ULosses,
			&money[0], &money[1], &money[2], &money[3], &money[4], &money[5], &money[6], &money[7], &money[8],
			&money[9], &money[10], &a.FirstT, &a.LastT, &money[11], &a.HeroT, &money[12], &a.FuckT); err != nil {
			return nil, err
		}
		for i, d := range []*domain.Decimal{&a.Pnl, &a.Profit, &a.Loss, &a.Fees, &a.CpWins, &a.CpLosses,
			&a.BuyValue, &a.SellValue, &a.Volume, &a.Unmatched, &a.Invested, &a.Hero, &a.Fuck} {
			*d = domain.Decimal(money[i])
		}
		// The sink writes no unconverted fills: every closing trade is priced.
		a.Priced = a.Wins + a.Losses + a.Evens
		out[domain.PairKey(ex, pair)] = &a
	}
	return out, rows.Err()
}

// zonePlan says where a zone's local days are, over a span of time: the
// condition selecting their rows of pnl_local_days, and the UTC hours
// [from, to) of the days when its offset changes.
type zonePlan struct {
	cond []string
	slow [][2]int64
}

// planZone plans the local days of loc over the fills of [first, last]
// (ms); ok is false when loc has an offset there that pnl_local_days does
// not hold, or changes offset off a whole UTC hour.
func planZone(loc *time.Location, first, last int64) (zonePlan, bool) {
	lo, hi := floorDiv(first, 1000)-2*86400, floorDiv(last, 1000)+2*86400
	type seg struct {
		start, end int64
		off        int
	}
	var segs []seg
	t := time.Unix(lo, 0).In(loc)
	for len(segs) < 10_000 {
		_, off := t.Zone()
		_, e := t.ZoneBounds()
		if off%shiftStep != 0 || off < minShift || off > maxShift {
			return zonePlan{}, false
		}
		end := hi
		if !e.IsZero() && e.Unix() < hi {
			end = e.Unix()
			if end%3600 != 0 {
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
	var p zonePlan
	prevEnd := int64(lo) // UTC end of the previous stretch's last whole local day
	for i, s := range segs {
		off := int64(s.off)
		da := -floorDiv(-(s.start + off), 86400) // first local day starting at or after start
		db := floorDiv(s.end+off, 86400) - 1     // last local day ending at or before end
		if i == 0 {
			da = floorDiv(s.start+off, 86400)
		}
		if i == len(segs)-1 {
			db = floorDiv(s.end+off, 86400)
		}
		if da > db {
			continue // no whole day: the hours go to the slow days
		}
		if from := da*86400 - off; from > prevEnd && i > 0 {
			p.slow = append(p.slow, [2]int64{floorDiv(prevEnd, 3600), floorDiv(from, 3600)})
		}
		p.cond = append(p.cond, fmt.Sprintf("(shift = %d AND day >= %d AND day <= %d)", s.off, da, db))
		prevEnd = (db+1)*86400 - off
	}
	return p, true
}

// localDays returns per pair and local day (YYYY-MM-DD in loc) the daily
// figures of the fills in [first, last] (ms), from pnl_local_days and
// pnl_hours in one query; ok is false when planZone refuses loc there.
func (r *Reader) localDays(ctx context.Context, loc *time.Location, first, last int64) (map[string]map[string]*dayAgg, bool, error) {
	p, ok := planZone(loc, first, last)
	if !ok {
		return nil, false, nil
	}
	out := map[string]map[string]*dayAgg{}
	var parts []string
	if len(p.cond) > 0 {
		parts = append(parts, "SELECT 0 AS k, exchange, pair, day AS n, trades, volume_e8, pnl_e8, unmatched_value_e8, invested_e8 FROM "+
			r.db+".pnl_local_days FINAL WHERE method = ? AND ("+strings.Join(p.cond, " OR ")+")")
	}
	if len(p.slow) > 0 {
		var cond []string
		for _, s := range p.slow {
			cond = append(cond, fmt.Sprintf("(hour >= %d AND hour < %d)", s[0], s[1]))
		}
		parts = append(parts, "SELECT 1 AS k, exchange, pair, hour AS n, trades, volume_e8, pnl_e8, unmatched_value_e8, invested_e8 FROM "+
			r.db+".pnl_hours FINAL WHERE method = ? AND ("+strings.Join(cond, " OR ")+")")
	}
	if len(parts) == 0 {
		return out, true, nil
	}
	args := make([]any, len(parts))
	for i := range args {
		args[i] = r.Method.String()
	}
	rows, err := r.conn.Query(ctx, strings.Join(parts, " UNION ALL "), args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var k uint8
		var ex, pair string
		var n int64
		a := &dayAgg{}
		if err := rows.Scan(&k, &ex, &pair, &n, &a.Trades, &a.Volume, &a.Pnl, &a.Unmatched, &a.Invested); err != nil {
			return nil, false, err
		}
		var date string
		if k == 0 { // a local day number
			date = time.Unix(n*86400, 0).UTC().Format(time.DateOnly)
		} else { // a UTC hour, whole in one local day
			date = time.Unix(n*3600, 0).In(loc).Format(time.DateOnly)
		}
		key := domain.PairKey(ex, pair)
		m := out[key]
		if m == nil {
			m = map[string]*dayAgg{}
			out[key] = m
		}
		if o := m[date]; o != nil {
			o.Trades += a.Trades
			o.Volume += a.Volume
			o.Pnl += a.Pnl
			o.Unmatched += a.Unmatched
			o.Invested += a.Invested
		} else {
			m[date] = a
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// periodsOf returns each pair's pnl in each period of ps (local midnights,
// unix seconds): the pnl of its days from the first period bound's date up
// to the second's, excluded.
func periodsOf(days map[string]map[string]*dayAgg, ps [][2]int64, loc *time.Location) map[string][6]int64 {
	out := map[string][6]int64{}
	if len(ps) == 0 {
		return out
	}
	bounds := make([][2]string, len(ps))
	for i, p := range ps {
		bounds[i] = [2]string{time.Unix(p[0], 0).In(loc).Format(time.DateOnly), time.Unix(p[1], 0).In(loc).Format(time.DateOnly)}
	}
	for k, m := range days {
		var v [6]int64
		for date, a := range m {
			for i, b := range bounds {
				if date >= b[0] && date < b[1] {
					v[i] += a.Pnl
				}
			}
		}
		out[k] = v
	}
	return out
}
