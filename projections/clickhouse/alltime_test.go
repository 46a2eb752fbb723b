package clickhouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// planZone: whole-hour zones read whole local days from their shift's rows
// and the days of an offset change hour by hour; other zones are refused
// (the reader then reads the buckets).
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
		{3600, day("2024-01-30"), day("2024-03-30")},
		{7200, day("2024-04-01"), day("2024-10-26")},
		{3600, day("2024-10-28"), day("2024-12-02")},
	}
	if fmt.Sprint(p.days) != fmt.Sprint(want) {
		t.Fatalf("days %v\nwant %v", p.days, want)
	}
	// The two DST days, 23 and 25 hours, from local midnight to local midnight.
	h := func(s string) int64 { return ms(s) / 3_600_000 }
	wantSlow := [][2]int64{{h("2024-03-30T23:00:00Z"), h("2024-03-31T22:00:00Z")}, {h("2024-10-26T22:00:00Z"), h("2024-10-27T23:00:00Z")}}
	if fmt.Sprint(p.slow) != fmt.Sprint(wantSlow) {
		t.Fatalf("slow %v, want %v", p.slow, wantSlow)
	}
	for _, zn := range []string{"UTC", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati", "Etc/GMT+12"} {
		loc, _ := time.LoadLocation(zn)
		if _, ok := planZone(loc, ms("2020-01-01T00:00:00Z"), ms("2024-12-31T00:00:00Z")); !ok {
			t.Errorf("%s refused", zn)
		}
	}
	for _, zn := range []string{"Asia/Kathmandu", "Asia/Kolkata", "Australia/Adelaide"} {
		loc, _ := time.LoadLocation(zn)
		if _, ok := planZone(loc, ms("2020-01-01T00:00:00Z"), ms("2024-12-31T00:00:00Z")); ok {
			t.Errorf("%s accepted: its offsets are not whole hours", zn)
		}
	}
	// Local mean time (Amsterdam before 1937) is not a whole hour either.
	if _, ok := planZone(ams, ms("1930-01-01T00:00:00Z"), ms("1931-01-01T00:00:00Z")); ok {
		t.Error("Amsterdam in 1930 accepted")
	}
}

// A database fed before pnl_overview existed (no schema_version either) is read from the buckets meanwhile, and the
// next sink writes every row again from the log, then records the version.
func TestSinkRebuildsOlderSchema(t *testing.T) {
	url := testURL(t)
	_, db, _ := ParseURL(url)
	store := openStore(t)
	g := newLogGen()
	addConfig(t, store, g)
	g.orders(t, store, 150)
	if _, err := NewSink(url, store).Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn := openConn(t, url)
	ctx := context.Background()
	for _, tbl := range []string{"schema_version", "pnl_overview"} {
		if err := conn.Exec(ctx, "DROP TABLE "+db+"."+tbl); err != nil {
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
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM "+db+".schema_version WHERE sink = 'tradeledger/lofo'").Scan(&ver); err != nil || ver != SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", ver, err, SchemaVersion)
	}
	if v1, v2 := r.Version(), r.Version(); v1 != v2 || v1 != head(t, store) {
		t.Fatalf("Version %d, %d; want the checkpoint %d", v1, v2, head(t, store))
	}
	compareReads(t, ledgerOf(t, store, domain.LOFO), r, g.clock.Now())
}
