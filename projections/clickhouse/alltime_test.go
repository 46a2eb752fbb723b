package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/pnlread"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// planZone: whole-hour zones read whole local days from their shift's rows
// and the days of an offset change hour by hour; zones of a constant
// offset of whole quarter-hours read their shift's days and last
// quarter-hours; other zones are refused (the reader then reads the
// buckets).
func TestPlanZone(t *testing.T) {
	ms := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMilli()
	}
	day := func(s string) int64 { return ms(s+"T00:00:00Z") / 86_400_000 }
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	// Europe/Amsterdam over 2024: CET (+1) until 31 March 01:00 UTC, CEST
	// (+2) until 27 October 01:00 UTC, CET again.
	p, ok := planZone(ams, ms("2024-02-01T12:00:00Z"), ms("2024-11-30T12:00:00Z"))
	if !ok {
		t.Fatal("Europe/Amsterdam refused")
	}
	want := []dayRange{
		{3600, day("2024-01-30"), day("2024-03-30"), 0},
		{7200, day("2024-04-01"), day("2024-10-26"), 0},
		{3600, day("2024-10-28"), day("2024-12-02"), 0},
	}
	if fmt.Sprint(p.days) != fmt.Sprint(want) {
		t.Fatalf("days %v\nwant %v", p.days, want)
	}
	// The two DST days, 23 and 25 hours, from local midnight to local
	// midnight: the +2 h shift's day less its first hour (22:00–23:00 UTC),
	// and its day plus the next day's first hour.
	wantEdges := []edgeDay{{day("2024-03-31"), 7200, day("2024-03-31"), -1}, {day("2024-10-27"), 7200, day("2024-10-27"), 1}}
	if fmt.Sprint(p.edges) != fmt.Sprint(wantEdges) || len(p.slow) != 0 {
		t.Fatalf("edges %v, slow %v; want edges %v", p.edges, p.slow, wantEdges)
	}
	for _, zn := range []string{"UTC", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati", "Etc/GMT+12"} {
		loc, _ := time.LoadLocation(zn)
		if _, ok := planZone(loc, ms("2020-01-01T00:00:00Z"), ms("2024-12-31T00:00:00Z")); !ok {
			t.Errorf("%s refused", zn)
		}
	}
	// Kathmandu (+05:45) is its +5 h shift's days, each less its last
	// three quarter-hours and plus the day before's; Marquesas (−09:30)
	// the −10 h shift's and two quarter-hours.
	for _, c := range []struct {
		zone  string
		shift int32
		q     int64
	}{{"Asia/Kathmandu", 5 * 3600, 3}, {"Asia/Kolkata", 5 * 3600, 2}, {"Pacific/Marquesas", -10 * 3600, 2}, {"Australia/Eucla", 8 * 3600, 3}} {
		loc, _ := time.LoadLocation(c.zone)
		p, ok := planZone(loc, ms("2020-01-01T00:00:00Z"), ms("2024-12-31T00:00:00Z"))
		if !ok || len(p.days) != 1 || p.days[0].shift != c.shift || p.days[0].quarters != c.q || len(p.edges)+len(p.slow) != 0 {
			t.Errorf("%s: plan %+v, %v; want one stretch of shift %d and %d quarter-hours", c.zone, p, ok, c.shift, c.q)
		}
	}
	// Adelaide (+09:30, +10:30 in summer) changes offset at 16:30 UTC:
	// the days of a change are read by the quarter-hour.
	adl, _ := time.LoadLocation("Australia/Adelaide")
	p, ok = planZone(adl, ms("2024-02-01T12:00:00Z"), ms("2024-11-30T12:00:00Z"))
	wantQ := [][2]int64{{ms("2024-04-06T13:30:00Z") / 900_000, ms("2024-04-07T14:30:00Z") / 900_000},
		{ms("2024-10-05T14:30:00Z") / 900_000, ms("2024-10-06T13:30:00Z") / 900_000}}
	if !ok || len(p.days) != 3 || p.days[1].shift != 9*3600 || p.days[1].quarters != 2 || len(p.edges)+len(p.slow) != 0 ||
		fmt.Sprint(p.slowQuarters) != fmt.Sprint(wantQ) {
		t.Errorf("Australia/Adelaide: plan %+v, %v; want three stretches and the buckets %v", p, ok, wantQ)
	}
	// Local mean time (Amsterdam before 1937) is not a whole hour either.
	if _, ok := planZone(ams, ms("1930-01-01T00:00:00Z"), ms("1931-01-01T00:00:00Z")); ok {
		t.Error("Amsterdam in 1930 accepted")
	}
}

// A database fed before pnl_overview9 existed (no schema_version either) is read from the buckets meanwhile, and the
// next sink writes every row again from the log, then records the version.
func TestSinkRebuildsOlderSchema(t *testing.T) {
	url, db, store, g := exportedLog(t, 150)
	conn := openConn(t, url)
	ctx := context.Background()
	for _, tbl := range []string{"schema_version", "pnl_overview9"} {
		if err := conn.Exec(ctx, "DROP TABLE "+db+"."+tbl); err != nil {
			t.Fatal(err)
		}
	}
	// Tables of older schemas, dropped once the rows are rewritten.
	for _, tbl := range []string{"pnl_overview", "pnl_overview3"} {
		if err := conn.Exec(ctx, "CREATE TABLE "+db+"."+tbl+" (x UInt8) ENGINE = TinyLog"); err != nil {
			t.Fatal(err)
		}
	}
	mem := ledgerOf(t, store, domain.LOFO)
	r := NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}, Quote: "USDT"}, Loc: time.UTC, Now: g.clock.Now()}
	want, _ := mem.Overview(q)
	if got, err := r.Overview(q); mustJSON(t, got, err) != mustJSON(t, want, nil) {
		t.Fatalf("overview from the older schema: %s", mustJSON(t, got, err))
	}
	if v1, v2 := r.Version(), r.Version(); v1 == v2 {
		t.Fatalf("Version of an older schema repeats (%d): answers would be cached", v1)
	}
	oldHead := head(t, store)
	g.orders(t, store, 20)
	// The sink's Checkpoint (the in-process Reader's Version) says its rows
	// are not current before it connected and while it rewrites them.
	s := NewSink(url, store)
	s.BatchRows = 50
	if _, current := s.Checkpoint(); current {
		t.Fatal("Checkpoint current before the sink connected")
	}
	rewriting := 0
	s.Progress = func(_ int64, stored, _ uint64) {
		if _, current := s.Checkpoint(); current != (stored >= oldHead) {
			t.Errorf("Checkpoint current %v at %d (rows rewritten up to %d)", current, stored, oldHead)
		}
		if stored < oldHead {
			rewriting++
		}
	}
	st, err := s.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pos, current := s.Checkpoint(); rewriting == 0 || !current || pos != head(t, store) {
		t.Fatalf("Checkpoint %d, %v after the rewrite (%d flushes during it); want %d, true", pos, current, rewriting, head(t, store))
	}
	rc := NewReader(url, domain.LOFO)
	rc.Checkpoint = s.Checkpoint
	if err := rc.Open(); err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if v1, v2 := rc.Version(), rc.Version(); v1 != v2 || v1 != head(t, store) {
		t.Fatalf("Version from the sink's Checkpoint %d, %d; want %d", v1, v2, head(t, store))
	}
	if st.Events != int64(head(t, store)) || st.Fills == 0 {
		t.Fatalf("export after the upgrade: %+v, want every event's rows written again", st)
	}
	var ver uint32
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM "+db+".schema_version WHERE sink = 'tradeledger/default/lofo'").Scan(&ver); err != nil || ver != SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", ver, err, SchemaVersion)
	}
	if v1, v2 := r.Version(), r.Version(); v1 != v2 || v1 != head(t, store) {
		t.Fatalf("Version %d, %d; want the checkpoint %d", v1, v2, head(t, store))
	}
	for _, tbl := range []string{"pnl_overview", "pnl_overview3"} {
		var left uint8
		if err := conn.QueryRow(ctx, "EXISTS TABLE "+db+"."+tbl).Scan(&left); err != nil || left != 0 {
			t.Fatalf("the replaced %s left after the upgrade (exists %d, %v)", tbl, left, err)
		}
	}
	compareReads(t, ledgerOf(t, store, domain.LOFO), r, g.clock.Now())
}

// fallbackTo makes mem r's Fallback and returns how often it was asked.
func fallbackTo(r *Reader, mem PnlSource) *atomic.Int64 {
	var used atomic.Int64
	r.Fallback = func() PnlSource { used.Add(1); return mem }
	return &used
}

// readsFrom asks r one read of each kind (overview and daily figures over
// all time and over a range, sum, total, assets) and fails unless each
// answer is mem's and came from the Fallback (fallback) or from ClickHouse.
func readsFrom(t *testing.T, r *Reader, mem PnlSource, used *atomic.Int64, now time.Time, fallback bool) {
	t.Helper()
	sc := projections.PnlScope{Keys: []string{"All"}, Quote: "USDT"}
	from, to := time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC).UnixMilli(), now.UnixMilli()
	type read struct {
		what string
		ask  func(PnlSource) string
	}
	var reads []read
	for _, rg := range [][2]int64{{0, 0}, {from, to}} {
		q := projections.OverviewQuery{Scope: sc, Loc: time.UTC, Now: now, From: rg[0], To: rg[1]}
		dq := projections.DailyQuery{Scope: sc, Loc: time.UTC, From: rg[0], To: rg[1]}
		reads = append(reads,
			read{fmt.Sprintf("overview %v", rg), func(s PnlSource) string { o, err := s.Overview(q); return mustJSON(t, o, err) }},
			read{fmt.Sprintf("daily %v", rg), func(s PnlSource) string {
				d, u, unit, err := s.Daily(dq)
				return mustJSON(t, []any{d, u, unit}, err)
			}})
	}
	reads = append(reads,
		read{"sum", func(s PnlSource) string { v, err := s.Sum(sc, from, to); return mustJSON(t, v, err) }},
		read{"total", func(s PnlSource) string { v, err := s.Total("binance/USDT-BTC"); return mustJSON(t, v, err) }},
		read{"assets", func(s PnlSource) string { return mustJSON(t, s.AssetHistory("binance", "USDT", 0, 1<<50), nil) }})
	for _, rd := range reads {
		want := rd.ask(mem)
		n := used.Load()
		got := rd.ask(r)
		if got != want {
			t.Fatalf("%s differs:\nmemory     %s\nclickhouse %s", rd.what, want, got)
		}
		if answered := used.Load() > n; answered != fallback {
			t.Fatalf("%s answered by the Fallback: %v, want %v", rd.what, answered, fallback)
		}
	}
}

// The sink's rows of a newer schema (a newer release's sink upgraded the
// database) are not this reader's: every read answers from the Fallback,
// Version caches nothing, and the reader says so once. A sink of this
// release refuses to write beside them.
func TestNewerSchemaIsNotRead(t *testing.T) {
	url, db, store, g := exportedLog(t, 120)
	conn := openConn(t, url)
	ctx := context.Background()
	recordNewerSchema(t, conn, db)
	mem := ledgerOf(t, store, domain.LOFO)
	r, logs, used := observedReader(t, url, mem)
	readsFrom(t, r, mem, used, g.clock.Now(), true)
	readsFrom(t, r, mem, used, g.clock.Now(), true)
	if v1, v2 := r.Version(), r.Version(); v1 == v2 {
		t.Fatalf("Version over a newer schema repeats (%d): answers would be cached", v1)
	}
	// The in-process sink's checkpoint (of this release's sink, say, started
	// before the upgrade) does not make them cacheable either.
	r.Checkpoint = func() (uint64, bool) { return head(t, store), true }
	if v1, v2 := r.Version(), r.Version(); v1 == v2 {
		t.Fatalf("Version from a Checkpoint over a newer schema repeats (%d)", v1)
	}
	if n := logs.Len(); n != 1 {
		t.Fatalf("%d warnings, want 1 (the newer schema, once): %v", n, logs.All())
	}

	cp := head(t, store)
	g.orders(t, store, 10)
	_, err := NewSink(url, store).Export(ctx)
	if msg := domain.ErrorMessage(err); domain.ErrorCode(err) != domain.ECONFLICT ||
		!strings.Contains(msg, fmt.Sprintf("schema version %d, newer than this release's %d", SchemaVersion+1, SchemaVersion)) {
		t.Fatalf("export over a newer schema: %v, want ECONFLICT naming both versions", err)
	}
	var pos uint64
	if err := conn.QueryRow(ctx, "SELECT max(position) FROM "+db+".checkpoint WHERE sink = 'tradeledger/default/lofo'").Scan(&pos); err != nil || pos != cp {
		t.Fatalf("checkpoint %d, %v after the refused export; want %d (unmoved)", pos, err, cp)
	}
}

// A reader that read pnl_overview9 reads it without asking the version
// again, until a query finds it missing: a newer release's sink recorded
// its version and dropped the table. That read and the next answer from the
// Fallback (one warning); once the database is this release's again (its
// sink rewrote the rows), the reader reads ClickHouse again.
func TestReaderNoticesADroppedTable(t *testing.T) {
	url, db, store, g := exportedLog(t, 120)
	mem := ledgerOf(t, store, domain.LOFO)
	r, logs, used := observedReader(t, url, mem)
	readsFrom(t, r, mem, used, g.clock.Now(), false)

	conn := openConn(t, url)
	ctx := context.Background()
	recordNewerSchema(t, conn, db)
	if err := conn.Exec(ctx, "DROP TABLE "+db+".pnl_overview9"); err != nil {
		t.Fatal(err)
	}
	readsFrom(t, r, mem, used, g.clock.Now(), true)
	readsFrom(t, r, mem, used, g.clock.Now(), true)
	if v1, v2 := r.Version(), r.Version(); v1 == v2 {
		t.Fatalf("Version with the table dropped repeats (%d): answers would be cached", v1)
	}
	if n := logs.Len(); n != 1 {
		t.Fatalf("%d warnings, want 1 (the table missing, once): %v", n, logs.All())
	}

	// The operator gives the database back to this release: without the
	// newer version's record, its sink writes every row again, under its
	// own version.
	if err := conn.Exec(ctx, "DROP TABLE "+db+".schema_version"); err != nil {
		t.Fatal(err)
	}
	g.orders(t, store, 10)
	if _, err := NewSink(url, store).Export(ctx); err != nil {
		t.Fatal(err)
	}
	mem = ledgerOf(t, store, domain.LOFO)
	used = fallbackTo(r, mem)
	readsFrom(t, r, mem, used, g.clock.Now(), false)
	if v1, v2 := r.Version(), r.Version(); v1 != v2 || v1 != head(t, store) {
		t.Fatalf("Version %d, %d after the rewrite; want the checkpoint %d", v1, v2, head(t, store))
	}
	if n := logs.Len(); n != 1 {
		t.Fatalf("%d warnings, want still 1: %v", n, logs.All())
	}
}

// Every plan puts each UTC hour of the span in its local day exactly once:
// the stretches' whole days, the edge days (a shift's day less or plus a
// first hour) and the slow hours, over zones whose offsets change at
// local midnight (Havana, Santiago), at other hours, more than once
// a year (Casablanca), by two hours (Troll) or by a day (Apia).
func TestPlanZoneCoversEachHourOnce(t *testing.T) {
	first := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	last := time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC).UnixMilli()
	h0, h1 := first/3_600_000, last/3_600_000
	edges := 0
	eachPlan(t, first, last, func(zn string, p zonePlan, z pnlread.LocalDays) {
		got := make(map[[2]int64]int) // (hour, local day) → times counted
		count := func(from, to, day, by int64) {
			for h := max(from, h0); h < min(to, h1); h++ {
				got[[2]int64{h, day}] += int(by)
			}
		}
		for _, c := range p.days {
			for d := c.from; d <= c.to; d++ {
				count(24*d-int64(c.shift)/3600, 24*d+24-int64(c.shift)/3600, d, 1)
			}
		}
		for _, e := range p.edges {
			start := 24*e.n - int64(e.shift)/3600
			count(start, start+24, e.day, 1)
			switch e.sign {
			case -1:
				count(start, start+1, e.day, -1)
			case 1:
				count(start+24, start+25, e.day, 1)
			}
		}
		for _, s := range p.slow {
			for h := s[0]; h < s[1]; h++ {
				count(h, h+1, z.Day(h*3600), 1)
			}
		}
		for h := h0; h < h1; h++ {
			d := z.Day(h * 3600)
			if n := got[[2]int64{h, d}]; n != 1 {
				t.Fatalf("%s: hour %s counted %d times in its day %d", zn, time.Unix(h*3600, 0).UTC(), n, d)
			}
			delete(got, [2]int64{h, d})
		}
		for k, n := range got {
			if n != 0 {
				t.Fatalf("%s: hour %s counted %d times in day %d, not its own", zn, time.Unix(k[0]*3600, 0).UTC(), n, k[1])
			}
		}
		edges += len(p.edges)
		t.Logf("%s: %d stretches, %d edge days, %d slow hour ranges", zn, len(p.days), len(p.edges), len(p.slow))
	}, "Europe/Amsterdam", "America/New_York", "America/Havana", "America/Santiago",
		"Africa/Casablanca", "Antarctica/Troll", "Pacific/Apia", "Australia/Sydney", "Europe/London", "UTC")
	if edges == 0 {
		t.Fatal("no edge day planned")
	}
}

// The plans of zones not on whole hours put each bucket of the span in its
// local day exactly once: the stretches' days (their shift's days, each
// less its last quarter-hours and plus the day before's) and the buckets
// of the days of a change.
func TestPlanZoneCoversEachQuarterOnce(t *testing.T) {
	first := time.Date(2014, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	last := time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC).UnixMilli()
	s0, s1 := first/900_000, last/900_000
	eachPlan(t, first, last, func(zn string, p zonePlan, z pnlread.LocalDays) {
		if len(p.edges)+len(p.slow) != 0 {
			if zn != "Europe/Amsterdam" {
				t.Errorf("%s: edge days or slow hours in a plan by the quarter-hour", zn)
			}
			return
		}
		own := make([]int, s1-s0)   // times each bucket was counted in its own day
		other := map[[2]int64]int{} // (bucket, day) → times counted in another day
		count := func(from, to, day, by int64) {
			for s := max(from, s0); s < min(to, s1); s++ {
				if z.Day(s*900) == day {
					own[s-s0] += int(by)
				} else {
					other[[2]int64{s, day}] += int(by)
				}
			}
		}
		for _, c := range p.days {
			start := func(d int64) int64 { return (d*86400 - int64(c.shift)) / 900 }
			for d := c.from; d <= c.to; d++ {
				count(start(d), start(d+1), d, 1)
			}
			for d := c.from - 1; d <= c.to && c.quarters > 0; d++ {
				if d >= c.from {
					count(start(d+1)-c.quarters, start(d+1), d, -1)
				}
				if d < c.to {
					count(start(d+1)-c.quarters, start(d+1), d+1, 1)
				}
			}
		}
		for _, q := range p.slowQuarters {
			for s := q[0]; s < q[1]; s++ {
				count(s, s+1, z.Day(s*900), 1)
			}
		}
		for i, n := range own {
			if n != 1 {
				t.Fatalf("%s: bucket %s counted %d times in its day", zn, time.Unix((s0+int64(i))*900, 0).UTC(), n)
			}
		}
		for k, n := range other {
			if n != 0 {
				t.Fatalf("%s: bucket %s counted %d times in day %d, not its own", zn, time.Unix(k[0]*900, 0).UTC(), n, k[1])
			}
		}
		t.Logf("%s: %d stretches, %d bucket ranges", zn, len(p.days), len(p.slowQuarters))
	}, "Australia/Adelaide", "America/St_Johns", "Pacific/Chatham", "Australia/Lord_Howe",
		"Asia/Tehran", "America/Caracas", "Asia/Kathmandu", "Pacific/Marquesas", "Asia/Pyongyang", "Europe/Amsterdam")
}

// eachPlan calls check with the plan of each zone over [first, last] (ms)
// and its local days; a zone refused fails the test.
func eachPlan(t *testing.T, first, last int64, check func(zone string, p zonePlan, z pnlread.LocalDays), zones ...string) {
	t.Helper()
	for _, zn := range zones {
		loc, err := time.LoadLocation(zn)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := planZone(loc, first, last)
		if !ok {
			t.Errorf("%s refused", zn)
			continue
		}
		check(zn, p, pnlread.LocalDays{Loc: loc})
	}
}

// observedReader returns an open Reader of url (closed with the test)
// answering from mem when ClickHouse cannot, the warnings it logs, and the
// count of its Fallback's uses.
func observedReader(t *testing.T, url string, mem PnlSource) (*Reader, *observer.ObservedLogs, *atomic.Int64) {
	t.Helper()
	r := NewReader(url, domain.LOFO)
	core, logs := observer.New(zap.WarnLevel)
	r.Logger = zap.New(core)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, logs, fallbackTo(r, mem)
}

// recordNewerSchema records, as a newer release's sink would, that the
// lofo sink's rows in db are of SchemaVersion+1.
func recordNewerSchema(t *testing.T, conn driver.Conn, db string) {
	t.Helper()
	q := fmt.Sprintf("INSERT INTO %s.schema_version (sink, version, updated_ms) SELECT 'tradeledger/default/lofo', %d, 0", db, SchemaVersion+1)
	if err := conn.Exec(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

// exportedLog returns a store holding the configuration and n orders
// (g adds more), exported by a sink into a new test database at url,
// named db.
func exportedLog(t *testing.T, n int) (url, db string, store *sqlite.Store, g *logGen) {
	t.Helper()
	url = testURL(t)
	_, db, _ = ParseURL(url)
	store = openStore(t)
	g = newLogGen()
	addConfig(t, store, g)
	g.orders(t, store, n)
	if _, err := NewSink(url, store).Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	return url, db, store, g
}
