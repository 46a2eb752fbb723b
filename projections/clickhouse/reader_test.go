package clickhouse

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/projections"
)

// ledgerOf replays the whole log into a fresh in-memory Ledger: the
// reference every ClickHouse answer must equal.
func ledgerOf(tb testing.TB, store domain.EventStore, method domain.PnlMethod) *projections.Ledger {
	tb.Helper()
	l := projections.NewLedger(method)
	it := store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	for it.Next() {
		e := it.Event()
		_ = l.Apply(&e) // events the Ledger refuses are refused by the sink too
	}
	if err := it.Err(); err != nil {
		tb.Fatal(err)
	}
	return l
}

// addConfig appends strategy assignments, one later removed.
func addConfig(tb testing.TB, store domain.EventStore, g *logGen) {
	tb.Helper()
	evs := []domain.Event{
		domain.NewEvent(g.clock, domain.TypePairAdded, domain.PairAdded{Exchange: "binance", Pair: "USDT-BTC", Strategy: "gain", Enabled: true}),
		domain.NewEvent(g.clock, domain.TypePairAdded, domain.PairAdded{Exchange: "binance", Pair: "USDT-ETH", Strategy: "stepgrid", Enabled: true}),
		domain.NewEvent(g.clock, domain.TypePairAdded, domain.PairAdded{Exchange: "kraken", Pair: "BTC-ETH", Strategy: "manual", Enabled: true}),
		domain.NewEvent(g.clock, domain.TypePairRemoved, domain.PairRemoved{Exchange: "kraken", Pair: "BTC-ETH"}),
	}
	if _, err := store.Append(context.Background(), domain.StreamConfig, domain.Any, evs...); err != nil {
		tb.Fatal(err)
	}
}

func mustJSON(tb testing.TB, v any, err error) string {
	tb.Helper()
	if err != nil {
		return "error: " + domain.ErrorCode(err) + ": " + domain.ErrorMessage(err)
	}
	b, e := json.Marshal(v)
	if e != nil {
		tb.Fatal(e)
	}
	return string(b)
}

// compareReads asks the same questions of the Ledger and the Reader and
// fails on the first answer that differs; it returns how many it compared.
func compareReads(t *testing.T, mem *projections.Ledger, chr *Reader, now time.Time) int {
	t.Helper()
	zones := []string{"UTC", "Asia/Kathmandu", "America/New_York", "Europe/Amsterdam", "America/Havana", "Pacific/Marquesas", "Asia/Kolkata", "Australia/Adelaide"}
	// Scopes over several quotes (["All"], the mixed keys, binance with its
	// EUR pair) are converted into the reporting currency by both.
	scopes := []projections.PnlScope{
		{Keys: []string{"All"}},
		{Keys: []string{"All"}, Quote: "USDT"},
		{Keys: []string{"All"}, Quote: "BTC"},
		{Keys: []string{"binance/USDT-BTC"}},
		{Keys: []string{"binance/USDT-ETH", "binance/USDT-BTC"}},
		{Keys: []string{"binance/USDT-BTC", "kraken/BTC-ETH"}},
		{Keys: []string{"kraken/BTC-ETH"}},
		{Keys: []string{"binance/USDT-XRP"}}, // never traded
		{Exchange: "binance"},
	}
	day := int64(86_400_000)
	t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	ranges := [][2]int64{{0, 0}, {t0 + 2*day + 3_600_000, t0 + 5*day}, {t0 + day/3, t0 + 9*day + 123_456}}
	n := 0
	check := func(what string, a, b string) {
		t.Helper()
		n++
		if a != b {
			t.Fatalf("%s differs:\nmemory     %s\nclickhouse %s", what, a, b)
		}
	}
	for _, zn := range zones {
		loc, err := projections.LoadZone(zn)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scopes {
			for _, rg := range ranges {
				q := projections.OverviewQuery{Scope: sc, Loc: loc, Now: now, From: rg[0], To: rg[1]}
				mo, merr := mem.Overview(q)
				co, cerr := chr.Overview(q)
				check("overview "+mustJSON(t, q.Scope, nil)+" "+zn, mustJSON(t, mo, merr), mustJSON(t, co, cerr))
				dq := projections.DailyQuery{Scope: sc, Loc: loc, From: rg[0], To: rg[1]}
				md, mu, munit, merr := mem.Daily(dq)
				cd, cu, cunit, cerr := chr.Daily(dq)
				check("daily "+zn, mustJSON(t, []any{md, mu, munit}, merr), mustJSON(t, []any{cd, cu, cunit}, cerr))
				ms, merr := mem.Sum(sc, rg[0], rg[1])
				cs, cerr := chr.Sum(sc, rg[0], rg[1])
				check("sum", mustJSON(t, ms, merr), mustJSON(t, cs, cerr))
			}
		}
	}
	for _, k := range []string{"binance/USDT-BTC", "binance/USDT-ETH", "kraken/BTC-ETH", "binance/EUR-BTC", "binance/USDT-XRP", "bad"} {
		mt, merr := mem.Total(k)
		ct, cerr := chr.Total(k)
		check("total "+k, mustJSON(t, mt, merr), mustJSON(t, ct, cerr))
	}
	for _, a := range [][2]string{{"binance", "USDT"}, {"binance", "BTC"}, {"binance", "ETH"}, {"kraken", "BTC"}, {"nowhere", "USDT"}} {
		for _, rg := range [][2]int64{{0, 1 << 50}, {t0 + day, t0 + 4*day}} {
			check("assets "+a[0]+"/"+a[1], mustJSON(t, mem.AssetHistory(a[0], a[1], rg[0], rg[1]), nil),
				mustJSON(t, chr.AssetHistory(a[0], a[1], rg[0], rg[1]), nil))
		}
	}
	return n
}

func TestReaderEqualsLedger(t *testing.T) {
	url := testURL(t)
	store := openStore(t)
	g := newLogGen()
	g.fees = true // fees in BNB (and KCS, without a rate), and an EUR pair converted through BTC
	addConfig(t, store, g)
	g.orders(t, store, 400)
	// Two weeks later, more: the days cross a 32-day block of pnl_overview9
	// (26 March 2024), and fills fall in most hours of Europe's DST days
	// (31 March, 23 hours; 27 October, 25 hours), which the reader sums
	// hour by hour.
	g.clock.Set(time.Date(2024, 3, 30, 20, 0, 0, 0, time.UTC))
	g.orders(t, store, 150)
	g.clock.Set(time.Date(2024, 10, 26, 20, 0, 0, 0, time.UTC))
	g.orders(t, store, 80)
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO} {
		s := NewSink(url, store)
		s.Method, s.BatchRows = m, 500
		if _, err := s.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := NewReader(url, m)
		if err := r.Open(); err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		mem := ledgerOf(t, store, m)
		// The log must give answers with substance, or equality proves little.
		o, err := mem.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}, Quote: "USDT"}, Loc: time.UTC, Now: g.clock.Now()})
		if err != nil || o.Total.NumberOfTrades < 100 || o.Total.Winning == 0 || o.Total.Losing == 0 || len(o.DailyHistory) < 5 {
			t.Fatalf("reference overview too thin: %+v, %v", o, err)
		}
		if all, err := mem.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: g.clock.Now()}); err != nil ||
			len(all.PerQuote) != 3 || all.UnconvertedFees["KCS"] == decimal.Number(decimal.Zero) || decimal.Decimal(all.PerQuote["EUR"].Pnl).IsZero() {
			t.Fatalf("reference overview over every quote too thin: %+v, %v", all, err)
		}
		if pts := mem.AssetHistory("binance", "USDT", 0, 1<<50); len(pts) < 3 || decimal.Decimal(pts[len(pts)-1].Amount).IsZero() {
			t.Fatalf("reference asset history too thin: %+v", pts)
		}
		n := compareReads(t, mem, r, g.clock.Now())
		if r.span == [2]int64{} {
			t.Fatal("no overview over all time was read from pnl_overview9")
		}
		t.Logf("%s: %d answers equal", m, n)
	}
}

func TestReaderOutage(t *testing.T) {
	url := testURL(t)
	opts, db, _ := ParseURL(url)
	px := newProxy(t, opts.Addr[0])
	store := openStore(t)
	g := newLogGen()
	g.orders(t, store, 50)
	if _, err := NewSink(url, store).Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	mem := ledgerOf(t, store, domain.LOFO)
	r := NewReader("clickhouse://"+px.addr()+"/"+db, domain.LOFO)
	r.Timeout = 5 * time.Second
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"binance/USDT-BTC"}}, Loc: time.UTC, Now: g.clock.Now()}
	want, _ := mem.Overview(q)
	if got, err := r.Overview(q); mustJSON(t, got, err) != mustJSON(t, want, nil) {
		t.Fatalf("overview with ClickHouse up differs: %s", mustJSON(t, got, err))
	}
	px.setDown(true)
	if _, err := r.Overview(q); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("overview with ClickHouse down: err %v, want EUNAVAILABLE", err)
	}
	if _, err := r.Total("binance/USDT-BTC"); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("total with ClickHouse down: err %v, want EUNAVAILABLE", err)
	}
	r.Fallback = func() PnlSource { return mem }
	if got, err := r.Overview(q); mustJSON(t, got, err) != mustJSON(t, want, nil) {
		t.Fatalf("overview through an outage with fallback: %s", mustJSON(t, got, err))
	}
	px.setDown(false)
	r.Fallback = nil
	if got, err := r.Overview(q); mustJSON(t, got, err) != mustJSON(t, want, nil) {
		t.Fatalf("overview after the outage: %s", mustJSON(t, got, err))
	}
}

// Date ranges read the buckets without FINAL: of a bucket's rows not merged
// yet, the one of the latest position counts, once. Each bucket gets a
// stale copy (an older position, other figures) and a repeat of its row
// (a retried insert) while merges are stopped; the answers stay the
// Ledger's.
func TestRangeReadsLatestBucket(t *testing.T) {
	url := testURL(t)
	_, db, _ := ParseURL(url)
	store := openStore(t)
	g := newLogGen()
	g.orders(t, store, 120)
	if _, err := NewSink(url, store).Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn := openConn(t, url)
	ctx := context.Background()
	if err := conn.Exec(ctx, "SYSTEM STOP MERGES "+db+".pnl_buckets9"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "SYSTEM START MERGES "+db+".pnl_buckets9")
	cols := `method, instance, exchange, pair, slot, trades, buys, sells, wins, losses, evens, u_buys, u_sells, u_wins, u_losses,
 pnl_e12, profit_e12, loss_e12, fees_e12, cp_wins_e12, cp_losses_e12, buy_value_e12, sell_value_e12, volume_e12,
 unmatched_value_e12, invested_e12, hero_e12, hero_ms, fuckup_e12, fuckup_ms, first_ms, last_ms`
	stale := strings.NewReplacer("trades,", "trades + 3,", "pnl_e12,", "pnl_e12 + 123456789,", "hero_e12,", "hero_e12 * 2,", "volume_e12,", "volume_e12 + 1,").Replace(cols)
	for _, q := range []string{
		"INSERT INTO " + db + ".pnl_buckets9 (" + cols + ", position) SELECT " + stale + ", position - 1 FROM " + db + ".pnl_buckets9 FINAL",
		"INSERT INTO " + db + ".pnl_buckets9 (" + cols + ", position) SELECT " + cols + ", position FROM " + db + ".pnl_buckets9 FINAL",
	} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mem := ledgerOf(t, store, domain.LOFO)
	sc := projections.PnlScope{Keys: []string{"All"}, Quote: "USDT"}
	from, to := time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC).UnixMilli(), g.clock.Now().UnixMilli()
	ms, merr := mem.Sum(sc, from, to)
	cs, cerr := r.Sum(sc, from, to)
	if m, c := mustJSON(t, ms, merr), mustJSON(t, cs, cerr); m != c || ms.Pnl.IsZero() {
		t.Fatalf("sum:\nmemory     %s\nclickhouse %s", m, c)
	}
	q := projections.OverviewQuery{Scope: sc, Loc: time.UTC, Now: g.clock.Now(), From: from, To: to}
	mo, merr := mem.Overview(q)
	co, cerr := r.Overview(q)
	if m, c := mustJSON(t, mo, merr), mustJSON(t, co, cerr); m != c {
		t.Fatalf("overview over a range:\nmemory     %s\nclickhouse %s", m, c)
	}
}
