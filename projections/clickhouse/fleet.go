package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/fold"
)

// Fleet answers the fleet routes (domain/fleet.go) from the rows every
// instance's sink writes to one database: each instance's figures in a
// reporting currency, as that instance's own reader would answer an
// overview over all its pairs in that currency (mixed.go: pairs quoted in
// it from their own aggregates, the others from their aggregates converted
// fill by fill at the instance's own rates, pnl_conv_totals9 and
// pnl_conv_buckets9, with what had no rate listed apart in its own
// currency; unrealized pnl at the instance's latest rates), and their sum.
// The figures come from the same fold (domain/fold: fold.Mixed, fold.Total)
// as every PNL reader's; nothing is converted here, and nothing is added
// across currencies.
//
// An overview reads small tables once, in parallel — the instances'
// checkpoints and schema versions, the pairs' all-time rows, their totals
// in the currency, the latest rates, the fees without a rate — whatever the
// number of fills: its cost follows instances × pairs. A realized report
// over a range reads the range's 15-minute buckets.
//
// Only instances whose rows are current (domain.FleetCurrent: this
// schema's, not being rewritten) are read; the others are listed with
// their status. A ClickHouse failure is EUNAVAILABLE (details logged).
type Fleet struct {
	// URL is the sinks' clickhouse:// URL.
	URL string
	// Timeout bounds the queries of one answer.
	Timeout time.Duration
	// Logger is told of failed reads.
	Logger *zap.Logger

	pool
}

// NewFleet returns a Fleet reading the database at url.
func NewFleet(url string) *Fleet {
	return &Fleet{URL: url, Timeout: DefaultReadTimeout, Logger: zap.NewNop()}
}

// Open checks the URL and prepares the connection pool (it connects on
// first use).
func (f *Fleet) Open() error {
	if err := f.pool.open(f.URL, "clickhouse fleet reader"); err != nil {
		return err
	}
	if f.Logger == nil {
		f.Logger = zap.NewNop()
	}
	if f.Timeout <= 0 {
		f.Timeout = DefaultReadTimeout
	}
	return nil
}

// unavailable logs a failed read and returns EUNAVAILABLE.
func (f *Fleet) unavailable(op string, err error) error {
	if domain.ErrorCode(err) == domain.EINVALID {
		return err
	}
	f.Logger.Warn("clickhouse fleet read failed", zap.String("op", op), zap.Error(err))
	return domain.Errorf(domain.EUNAVAILABLE, "analytics store unavailable")
}

// fleetInstance is an instance as read: its status and, when current, its
// pairs (all-time aggregate and inventory), latest rates and fees without
// a rate (in the query's range).
type fleetInstance struct {
	domain.FleetInstanceInfo
	pairs []*fleetPair
	rates *fold.RateBook
	fees  map[string]domain.Number
}

// fleetPair is one pair of an instance: its all-time aggregate and
// inventory, and its totals in the query's currency when its quote
// converts into it (conv set).
type fleetPair struct {
	pairInfo
	own          agg
	conv, unconv *agg
	pos          uint64
}

// instances returns every instance of the database with the status of its
// rows of method, by name.
func (f *Fleet) instances(ctx context.Context, method domain.PnlMethod) ([]*fleetInstance, error) {
	rows, err := f.conn.Query(ctx, `SELECT sink, max(position), max(updated_ms), 0 FROM `+f.db+`.checkpoint GROUP BY sink
UNION ALL SELECT sink, 0, 0, max(version) FROM `+f.db+`.schema_version GROUP BY sink
UNION ALL SELECT concat('tradeledger/', instance, '/'), 0, 0, 0 FROM `+f.db+`.instances GROUP BY instance`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type seen struct {
		pos     uint64
		updated int64
		ver     uint32
		rows    bool
	}
	byName := map[string]*seen{}
	suffix := "/" + method.String()
	for rows.Next() {
		var sink string
		var pos uint64
		var updated int64
		var ver uint32
		if err := rows.Scan(&sink, &pos, &updated, &ver); err != nil {
			return nil, err
		}
		rest, ok := strings.CutPrefix(sink, "tradeledger/")
		if !ok {
			continue
		}
		name, m, ok := strings.Cut(rest, "/")
		if !ok || CheckInstance(name) != nil || (m != "" && "/"+m != suffix) {
			continue // a sink of schema 7 or older (tradeledger/<method>), or another method's
		}
		s := byName[name]
		if s == nil {
			s = &seen{}
			byName[name] = s
		}
		if m != "" {
			s.rows = true
			s.pos, s.updated, s.ver = max(s.pos, pos), max(s.updated, updated), max(s.ver, ver)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*fleetInstance, 0, len(byName))
	for name, s := range byName {
		in := &fleetInstance{FleetInstanceInfo: domain.FleetInstanceInfo{Name: name, Position: s.pos, UpdatedAt: s.updated}}
		switch {
		case !s.rows:
			in.Status = domain.FleetNoRows
		case s.ver == SchemaVersion:
			in.Status = domain.FleetCurrent
		case s.ver > SchemaVersion:
			in.Status = domain.FleetNewer
		default:
			in.Status = domain.FleetRewriting
		}
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// instanceKey names a pair of an instance.
type instanceKey struct {
	instance string
	pairKey
}

// pairRows reads every pair's all-time row of pnl_overview9 (kind 0) of
// method, the latest of each, by instance.
func (f *Fleet) pairRows(ctx context.Context, method domain.PnlMethod) (map[string][]*fleetPair, error) {
	rows, err := f.conn.Query(ctx, "SELECT instance, exchange, pair, v, position FROM "+f.db+
		".pnl_overview9 WHERE method = ? AND kind = 0", method.String())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	latest := map[instanceKey]*fleetPair{}
	var v []i128
	for rows.Next() {
		var k instanceKey
		var packed string
		var pos uint64
		if err := rows.Scan(&k.instance, &k.Exchange, &k.Pair, &packed, &pos); err != nil {
			return nil, err
		}
		if p := latest[k]; p != nil && p.pos >= pos {
			continue
		}
		if v = unpackFigures(v, packed); len(v) != pairCols {
			return nil, fmt.Errorf("pnl_overview9: pair row of %s %s has %d figures, want %d", k.instance, domain.PairKey(k.Exchange, k.Pair), len(v), pairCols)
		}
		p := &fleetPair{own: *aggOf(v), pos: pos}
		p.pairInfo = pairInfo{key: domain.PairKey(k.Exchange, k.Pair), exchange: k.Exchange, pair: k.Pair,
			lotsQty: v[aggCols].dec(), lotsCost: v[aggCols+1].dec(), last: v[aggCols+2].dec(), balance: v[aggCols+3].dec()}
		p.quote, p.base, _ = domain.SplitPair(k.Pair)
		latest[k] = p
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string][]*fleetPair{}
	for k, p := range latest {
		out[k.instance] = append(out[k.instance], p)
	}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i].key < ps[j].key })
	}
	return out, nil
}

// convTotalsRead is a pair's latest pnl_conv_totals9 row in a currency.
type convTotalsRead struct {
	conv, unconv agg
	ok           bool
	pos          uint64
}

// convTotals reads every pair's totals in currency to (the latest row of
// each; ok false: its quote no longer converts into to).
func (f *Fleet) convTotals(ctx context.Context, method domain.PnlMethod, to string) (map[instanceKey]*convTotalsRead, error) {
	rows, err := f.conn.Query(ctx, "SELECT instance, exchange, pair, conv, unconv, ok, position FROM "+f.db+
		".pnl_conv_totals9 WHERE method = ? AND currency = ?", method.String(), to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[instanceKey]*convTotalsRead{}
	for rows.Next() {
		var k instanceKey
		var conv, unconv string
		var ok uint8
		var pos uint64
		if err := rows.Scan(&k.instance, &k.Exchange, &k.Pair, &conv, &unconv, &ok, &pos); err != nil {
			return nil, err
		}
		if old := out[k]; old != nil && old.pos >= pos {
			continue
		}
		r := &convTotalsRead{ok: ok == 1, pos: pos}
		if r.ok {
			if r.conv, err = unpackAgg(conv); err != nil {
				return nil, err
			}
			if r.unconv, err = unpackAgg(unconv); err != nil {
				return nil, err
			}
		}
		out[k] = r
	}
	return out, rows.Err()
}

// rates reads every instance's latest rates (rates9), a book per instance.
func (f *Fleet) rates(ctx context.Context) (map[string]*fold.RateBook, error) {
	rows, err := f.conn.Query(ctx, "SELECT instance, quote, base, rate, time_ms, seq FROM "+f.db+".rates9 FINAL ORDER BY instance, seq")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*fold.RateBook{}
	for rows.Next() {
		var instance, quote, base, rate string
		var p fold.RatePoint
		if err := rows.Scan(&instance, &quote, &base, &rate, &p.T, &p.Pos); err != nil {
			return nil, err
		}
		if p.Rate, err = domain.ParseDecimal(rate); err != nil {
			return nil, err
		}
		b := out[instance]
		if b == nil {
			b = &fold.RateBook{}
			out[instance] = b
		}
		b.Observe(quote, base, p.T, p.Pos, p.Rate)
	}
	return out, rows.Err()
}

// read reads the instances and, for the current ones, their pairs with
// their totals in q.Currency, their latest rates and their fees without a
// rate in q's range.
func (f *Fleet) read(ctx context.Context, q domain.FleetQuery) ([]*fleetInstance, error) {
	var (
		wg                 sync.WaitGroup
		list               []*fleetInstance
		pairs              map[string][]*fleetPair
		conv               map[instanceKey]*convTotalsRead
		rates              map[string]*fold.RateBook
		fees               map[string]map[string]domain.Number
		e1, e2, e3, e4, e5 error
		method, currency   = q.Method, q.Currency
		from, to           = rangeSeconds(q.From, q.To)
	)
	wg.Add(5)
	go func() { defer wg.Done(); list, e1 = f.instances(ctx, method) }()
	go func() { defer wg.Done(); pairs, e2 = f.pairRows(ctx, method) }()
	go func() { defer wg.Done(); conv, e3 = f.convTotals(ctx, method, currency) }()
	go func() { defer wg.Done(); rates, e4 = f.rates(ctx) }()
	go func() { defer wg.Done(); fees, e5 = f.unconvertedFees(ctx, from, to) }()
	wg.Wait()
	if err := errors.Join(e1, e2, e3, e4, e5); err != nil {
		return nil, err
	}
	for _, in := range list {
		if in.Status != domain.FleetCurrent {
			continue
		}
		in.pairs, in.rates, in.fees = pairs[in.Name], rates[in.Name], fees[in.Name]
		if in.rates == nil {
			in.rates = &fold.RateBook{}
		}
		for _, p := range in.pairs {
			if c := conv[instanceKey{in.Name, pairKey{p.exchange, p.pair}}]; c != nil && c.ok {
				p.conv, p.unconv = &c.conv, &c.unconv
			}
		}
	}
	return list, nil
}

// unconvertedFees returns per instance the fees charged in a third asset
// that had no rate, of the fills in the slots starting in [from, to) (unix
// s), by asset (as Reader.unconvertedFees, over every pair).
func (f *Fleet) unconvertedFees(ctx context.Context, from, to int64) (map[string]map[string]domain.Number, error) {
	rows, err := f.conn.Query(ctx, "SELECT instance, time_ms, fee_asset, fee_amount FROM "+f.db+".fill_fees9 FINAL WHERE valued = 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	sum := map[string]map[string]domain.Decimal{}
	for rows.Next() {
		var instance, asset, amount string
		var t int64
		if err := rows.Scan(&instance, &t, &asset, &amount); err != nil {
			return nil, err
		}
		if start := domain.FloorDiv(t, bucketMs) * bucketSecs; start < from || start >= to {
			continue
		}
		v, err := domain.ParseDecimal(amount)
		if err != nil {
			return nil, err
		}
		if sum[instance] == nil {
			sum[instance] = map[string]domain.Decimal{}
		}
		sum[instance][asset] = sum[instance][asset].Add(v)
	}
	out := make(map[string]map[string]domain.Number, len(sum))
	for in, m := range sum {
		out[in] = make(map[string]domain.Number, len(m))
		for a, v := range m {
			out[in][a] = domain.Number(v)
		}
	}
	return out, rows.Err()
}

// checkQuery refuses a query without a currency.
func checkQuery(q domain.FleetQuery) error {
	if q.Currency == "" {
		return domain.Errorf(domain.EINVALID, "currency is required: the fleet's figures are given in one currency")
	}
	return nil
}

// Overview answers GET fleet/overview: each instance's figures over all
// time in q.Currency (q.From and q.To are not read), and the fleet's total.
func (f *Fleet) Overview(ctx context.Context, q domain.FleetQuery) (*domain.FleetOverview, error) {
	if err := checkQuery(q); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	q.From, q.To = 0, 0
	list, err := f.read(ctx, q)
	if err != nil {
		return nil, f.unavailable("fleet overview", err)
	}
	out := &domain.FleetOverview{Currency: q.Currency, Method: q.Method.String(), Instances: make([]domain.FleetInstanceView, 0, len(list)),
		Total: domain.FleetTotal{FleetFigures: emptyFigures()}}
	unrealized := domain.Zero
	for _, in := range list {
		v := domain.FleetInstanceView{FleetInstanceInfo: in.FleetInstanceInfo, FleetFigures: emptyFigures()}
		if in.Status == domain.FleetCurrent {
			m := &fold.Mixed[int64]{Unit: q.Currency}
			var unr domain.Decimal
			for _, p := range in.pairs {
				conv, unconv := p.inUnit(q.Currency, &p.own, p.conv, p.unconv)
				m.Add(p.quote, conv, unconv)
				unr = unr.Add(m.Unrealized(in.rates, p.quote, p.unrealized()))
			}
			v.Pairs, v.UnrealizedPnl = len(in.pairs), domain.Number(unr)
			v.FleetFigures = figuresOf(m)
			v.UnconvertedFees = in.fees
			out.Total.Instances++
			out.Total.Pairs += v.Pairs
			unrealized = unrealized.Add(unr)
			out.Total.Add(&v.FleetFigures)
		}
		out.Instances = append(out.Instances, v)
	}
	out.Total.UnrealizedPnl = domain.Number(unrealized)
	return out, nil
}

// inUnit returns the pair's figures in unit — its own when quoted in it,
// else its converted ones (conv, unconv) when its quote converts into
// unit, else its counts alone (its money unconverted) — as fold.Mixed takes
// them: conv in the unit, and the part without a rate in the pair's quote
// (nil when quoted in the unit).
func (p *fleetPair) inUnit(unit string, own, conv, unconv *agg) (*series, *series) {
	if p.quote == unit {
		return &series{Total: *own}, nil
	}
	if conv != nil {
		return &series{Total: *conv}, &series{Total: *unconv}
	}
	return &series{Total: own.CountsOnly()}, &series{Total: *own}
}

// figuresOf returns what m's pairs add up to over all of their slots: the
// converted figures and, per currency, what had no rate (fold.Mixed.Fold).
func figuresOf(m *fold.Mixed[int64]) domain.FleetFigures {
	var tot agg
	for _, x := range m.Conv {
		tot.Merge(&x.Total)
	}
	m.Fold(fold.MinTime, fold.MaxTime)
	t := fold.Total(&tot, domain.Zero)
	return domain.FleetFigures{Pnl: t.Pnl, Fees: domain.Number(tot.Fees), Invested: domain.Number(tot.Invested),
		BuyBaseValue: t.BuyBaseValue, SellBaseValue: t.SellBaseValue, UnmatchedBaseValue: t.UnmatchedValue,
		NumberOfTrades: t.NumberOfTrades, BuyCount: t.BuyCount, SellCount: t.SellCount, Winning: t.Winning, Losing: t.Losing,
		Breakeven: t.Breakeven, WinRate: t.WinRate, Unconverted: m.Unconverted.Result()}
}

// emptyFigures are the figures of nothing (an empty Unconverted map, so
// that every entry has one).
func emptyFigures() domain.FleetFigures {
	return domain.FleetFigures{WinRate: domain.WinRate(0, 0, 0), Unconverted: map[string]domain.Unconverted{}}
}

// Realized answers GET fleet/reports/realized: per current instance its
// pairs' realized figures over [q.From, q.To) (ms, 0: unbounded; slots
// starting in it), each in its own quote, and the instance's in
// q.Currency; the fleet's total. Over all time it reads what the overview
// reads; over a range, the range's buckets.
func (f *Fleet) Realized(ctx context.Context, q domain.FleetQuery) (*domain.FleetRealized, error) {
	if err := checkQuery(q); err != nil {
		return nil, err
	}
	if q.To != 0 && q.To <= q.From {
		return nil, domain.Errorf(domain.EINVALID, "to must be after from")
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	list, err := f.read(ctx, q)
	if err != nil {
		return nil, f.unavailable("fleet realized", err)
	}
	ranged := q.From != 0 || q.To != 0
	var own, conv, unconv map[string]*series
	if ranged {
		from, to := rangeSeconds(q.From, q.To)
		var wg sync.WaitGroup
		var e1, e2 error
		wg.Add(2)
		go func() { defer wg.Done(); own, e1 = f.rangeSlots(ctx, q.Method, from, to) }()
		go func() { defer wg.Done(); conv, unconv, e2 = f.rangeConvSlots(ctx, q.Method, q.Currency, from, to) }()
		wg.Wait()
		if err := errors.Join(e1, e2); err != nil {
			return nil, f.unavailable("fleet realized", err)
		}
	}
	out := &domain.FleetRealized{Currency: q.Currency, Method: q.Method.String(), From: q.From, To: q.To,
		Instances: make([]domain.FleetRealizedInstance, 0, len(list)), Total: domain.FleetTotal{FleetFigures: emptyFigures()}}
	for _, in := range list {
		v := domain.FleetRealizedInstance{FleetInstanceInfo: in.FleetInstanceInfo, Pairs: []domain.FleetPair{}, FleetFigures: emptyFigures()}
		if in.Status == domain.FleetCurrent {
			m := &fold.Mixed[int64]{Unit: q.Currency}
			for _, p := range in.pairs {
				o, c, u := &p.own, p.conv, p.unconv
				if ranged {
					k := instancePair(in.Name, p.key)
					o = totalOf0(own[k])
					if c != nil {
						c, u = totalOf0(conv[k]), totalOf0(unconv[k])
					}
				}
				cs, us := p.inUnit(q.Currency, o, c, u)
				m.Add(p.quote, cs, us)
				v.Pairs = append(v.Pairs, pairFigures(p.key, p.quote, o))
			}
			v.FleetFigures = figuresOf(m)
			v.UnconvertedFees = in.fees
			out.Total.Instances++
			out.Total.Pairs += len(in.pairs)
			out.Total.Add(&v.FleetFigures)
		}
		out.Instances = append(out.Instances, v)
	}
	return out, nil
}

// totalOf0 returns s's total, or a zero aggregate for no series.
func totalOf0(s *series) *agg {
	if s == nil {
		return &agg{}
	}
	return &s.Total
}

// pairFigures is a pair's entry in the realized report, in its quote.
func pairFigures(key, quote string, a *agg) domain.FleetPair {
	return domain.FleetPair{Key: key, Unit: quote, Pnl: domain.Number(a.Pnl), Fees: domain.Number(a.Fees), Invested: domain.Number(a.Invested),
		BuyBaseValue: domain.Number(a.BuyValue), SellBaseValue: domain.Number(a.SellValue), UnmatchedBaseValue: domain.Number(a.Unmatched),
		NumberOfTrades: a.Trades, Winning: a.Wins, Losing: a.Losses, Breakeven: a.Evens}
}

// rangeSlots reads every instance's buckets of method starting in [from,
// to) (unix s), the latest row of each, into a series per instance and
// pair (instancePair).
func (f *Fleet) rangeSlots(ctx context.Context, method domain.PnlMethod, from, to int64) (map[string]*series, error) {
	return bucketSlots(ctx, f.conn, f.db, "method = ? AND "+slotCond(from, to), []any{method.String()}, instancePair)
}

// rangeConvSlots reads every instance's aggregates in currency to of the
// slots starting in [from, to): part 0 (conv) and part 1 (unconv), keyed
// as rangeSlots.
func (f *Fleet) rangeConvSlots(ctx context.Context, method domain.PnlMethod, to string, fromS, toS int64) (conv, unconv map[string]*series, err error) {
	return convBucketSlots(ctx, f.conn, f.db, "method = ? AND currency = ? AND "+slotCond(fromS, toS), []any{method.String(), to}, instancePair)
}

// instancePair keys series by instance and pair key.
func instancePair(instance, key string) string { return instance + "\x00" + key }

// Fills calls each with every fill of the current instances whose trade
// time is in [q.From, q.To) (ms, 0: unbounded), by instance, pair and
// trade time, with its realized pnl under q.Method; it stops at each's
// first error and returns it. Rows are read as ClickHouse sends them:
// memory stays flat at any size.
func (f *Fleet) Fills(ctx context.Context, q domain.FleetQuery, each func(*domain.FleetFill) error) error {
	if q.To != 0 && q.To <= q.From {
		return domain.Errorf(domain.EINVALID, "to must be after from")
	}
	ictx, cancel := context.WithTimeout(ctx, f.Timeout)
	list, err := f.instances(ictx, q.Method)
	cancel()
	if err != nil {
		return f.unavailable("fleet fills", err)
	}
	var names []string
	for _, in := range list {
		if in.Status == domain.FleetCurrent {
			names = append(names, "'"+in.Name+"'") // CheckInstance: letters, digits, '.', '_', '-'
		}
	}
	if len(names) == 0 {
		return nil
	}
	cond := ""
	args := []any{q.Method.String()}
	if q.From != 0 {
		cond += " AND time_ms >= ?"
		args = append(args, q.From)
	}
	if q.To != 0 {
		cond += " AND time_ms < ?"
		args = append(args, q.To)
	}
	rows, err := f.conn.Query(ctx, `SELECT instance, exchange, pair, time_ms, order_id, fill_id, side, fee_asset, price_e12, quantity_e12,
 value_e12, fee_e12, pnl_e12, wide, position FROM `+f.db+`.fills9 FINAL WHERE method = ? AND instance IN (`+strings.Join(names, ", ")+`)`+cond+`
 ORDER BY instance, exchange, pair, time_ms, position`, args...)
	if err != nil {
		return f.unavailable("fleet fills", err)
	}
	defer rows.Close()
	var (
		x    domain.FleetFill
		v    [5]int64
		wide string
	)
	for rows.Next() {
		if err := rows.Scan(&x.Instance, &x.Exchange, &x.Pair, &x.Time, &x.OrderID, &x.FillID, &x.Side, &x.FeeAsset,
			&v[0], &v[1], &v[2], &v[3], &v[4], &wide, &x.Position); err != nil {
			return f.unavailable("fleet fills", err)
		}
		for i, d := range []*domain.Decimal{&x.Price, &x.Quantity, &x.Value, &x.Fee, &x.Pnl} {
			if *d, err = amountOf(v[i], [5]string{"price", "quantity", "value", "fee", "pnl"}[i], wide); err != nil {
				return f.unavailable("fleet fills", err)
			}
		}
		if err := each(&x); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return f.unavailable("fleet fills", err)
	}
	return nil
}
