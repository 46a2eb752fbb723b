package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlread"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
)

// writePairLog appends n filled orders of exchange/pair (ids from first
// on), buying twice then selling, at prices around base, into store, one
// every 90 minutes of clock.
func writePairLog(t *testing.T, store domain.EventStore, clock *domain.ManualClock, exchange, pair string, first int64, n int, base int64) {
	t.Helper()
	for i := 0; i < n; i++ {
		clock.Advance(90 * time.Minute)
		id := first + int64(i)
		side := domain.Buy
		if i%3 == 2 {
			side = domain.Sell
		}
		price := decimal.NewDecimal(base*100+int64((i*37)%41)*100+int64(i%7)*13, 2)
		qty := decimal.NewDecimal(int64(1+i%4), 1)
		quote, _, _ := domain.SplitPair(pair)
		if _, err := store.Append(context.Background(), domain.OrderStream(id), domain.NoStream,
			domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: exchange, Pair: pair,
				Side: side, Kind: domain.KindLimit, Amount: qty, Price: price, ClientOrderID: fmt.Sprint("c", id)}),
			domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint("f", id), Price: price, Quantity: qty,
				Fee: price.Mul(qty).DivInt(1000), FeeAsset: quote})); err != nil {
			t.Fatal(err)
		}
	}
}

// fleetService is one service of the fleet test: its Main, a token, and
// the clock its log was written with.
type fleetService struct {
	name  string
	m     *Main
	token string
	clock *domain.ManualClock
}

func (s *fleetService) request(t *testing.T, method, path string, body any) []byte {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.m.Server.URL()+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	return readOK(t, req)
}

// caughtUp waits until the service's read models and its sink hold the
// whole log.
func (s *fleetService) caughtUp(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	head, err := s.m.DataDir.Store.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.m.Runner.WaitFor(ctx, head); err != nil {
		t.Fatal(err)
	}
	if err := s.m.Sink.WaitFor(ctx, head); err != nil {
		t.Fatalf("%s's sink did not catch up: %v (last error %v)", s.name, err, s.m.Sink.Err())
	}
}

// ownInCurrency is a service's own pnl/overview over all its pairs, seen
// in currency as the fleet lists it: its total when the overview is in
// currency (over several quotes, converted by its own Ledger), else — its
// pairs all quoted in another currency — everything but the counts
// unconverted in that one.
func (s *fleetService) ownInCurrency(t *testing.T, currency string) (pnlread.FleetFigures, decimal.Decimal) {
	t.Helper()
	var o pnlread.Overview
	if err := json.Unmarshal(s.request(t, "POST", "/api/v1/pnl/overview", map[string]any{"timezone": "UTC", "keys": []string{"All"}}), &o); err != nil {
		t.Fatal(err)
	}
	tot := o.Total
	f := pnlread.FleetFigures{Pnl: tot.Pnl, BuyBaseValue: tot.BuyBaseValue, SellBaseValue: tot.SellBaseValue, UnmatchedBaseValue: tot.UnmatchedValue,
		NumberOfTrades: tot.NumberOfTrades, BuyCount: tot.BuyCount, SellCount: tot.SellCount, Winning: tot.Winning, Losing: tot.Losing,
		Breakeven: tot.Breakeven, Unconverted: o.Unconverted}
	if f.Unconverted == nil {
		f.Unconverted = map[string]pnlread.Unconverted{}
	}
	switch {
	case o.Unit == currency:
		return f, decimal.Decimal(tot.BuyPnl)
	case o.PerQuote == nil:
		f.Pnl, f.BuyBaseValue, f.SellBaseValue, f.UnmatchedBaseValue = decimal.Number{}, decimal.Number{}, decimal.Number{}, decimal.Number{}
		f.Unconverted = map[string]pnlread.Unconverted{o.Unit: {Pnl: tot.Pnl, Trades: tot.NumberOfTrades, UnrealizedPnl: tot.BuyPnl}}
		return f, decimal.Zero
	}
	t.Fatalf("%s answers in %s over several quotes: not comparable with the fleet in %s", s.name, o.Unit, currency)
	return f, decimal.Zero
}

// Three services write into one real ClickHouse database, each under its
// own --instance: the fleet overview, asked of any of them, lists each
// with its own pnl/overview's figures in the fleet's currency and totals
// their sum; an instance whose pairs are quoted in EUR is listed
// unconverted while its log has no EUR rate into USDT, and converted (the
// fills after the rate) once it has one, as its own overview then
// converts them. A service reading PNL from ClickHouse reads its own rows
// alone, and a log claiming a taken instance name is refused.
func TestFleetOfThreeServices(t *testing.T) {
	db := fmt.Sprintf("tltest_fleet_%d", time.Now().UnixNano()%1e9)
	url := clickhouseURL(t, db)
	t.Setenv("TRADELEDGER_PASSWORD", "fleet test password")
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	logs := []struct {
		name, exchange, pair string
		n                    int
		base                 int64
		readFrom             string
	}{
		{"alpha", "binance", "USDT-BTC", 40, 60000, "clickhouse"},
		{"beta", "kraken", "USDT-ETH", 25, 3000, "memory"},
		{"gamma", "binance", "EUR-BTC", 30, 55000, "memory"},
	}
	var fleet []*fleetService
	for _, l := range logs {
		dir := filepath.Join(t.TempDir(), l.name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		store := sqlitetest.OpenAt(t, filepath.Join(dir, "events.db"))
		clock := domain.NewManualClock(start)
		writePairLog(t, store, clock, l.exchange, l.pair, 1, l.n, l.base)
		store.Close()
		m := NewMain()
		var errb bytes.Buffer
		if err := m.ParseFlags([]string{"--data", dir, "--listen", "127.0.0.1:0", "--files-listen", "", "--clickhouse", url,
			"--instance", l.name, "--read-from", l.readFrom, "--log-level", "error"}, &Env{Stderr: &errb}); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(context.Background()); err != nil {
			t.Fatalf("%s: %v (%s)", l.name, err, errb.String())
		}
		t.Cleanup(func() { m.Close() })
		token, err := m.Server.Auth.IssueToken("fleet-test")
		if err != nil {
			t.Fatal(err)
		}
		fleet = append(fleet, &fleetService{name: l.name, m: m, token: token, clock: clock})
	}
	check := func(phase string) pnlread.FleetOverview {
		t.Helper()
		for _, s := range fleet {
			s.caughtUp(t)
		}
		var first []byte
		var o pnlread.FleetOverview
		for i, s := range fleet { // any instance answers, the same
			b := s.request(t, "GET", "/api/v1/fleet/overview?currency=USDT", nil)
			if i == 0 {
				first = b
				if err := json.Unmarshal(b, &o); err != nil {
					t.Fatal(err)
				}
			} else if !bytes.Equal(b, first) {
				t.Fatalf("%s: %s's fleet overview differs from %s's:\n%s\n%s", phase, s.name, fleet[0].name, b, first)
			}
		}
		if len(o.Instances) != 3 || o.Total.Instances != 3 {
			t.Fatalf("%s: %s", phase, first)
		}
		sum := pnlread.FleetFigures{Unconverted: map[string]pnlread.Unconverted{}}
		var sumUnr decimal.Decimal
		add := func(a *decimal.Number, b decimal.Number) {
			*a = decimal.Number(decimal.Decimal(*a).Add(decimal.Decimal(b)))
		}
		for i, s := range fleet {
			got := o.Instances[i]
			want, wantUnr := s.ownInCurrency(t, "USDT")
			if got.Name != s.name || got.Status != pnlread.FleetCurrent || got.Pnl != want.Pnl || got.NumberOfTrades != want.NumberOfTrades ||
				got.BuyCount != want.BuyCount || got.SellCount != want.SellCount || got.Winning != want.Winning || got.Losing != want.Losing ||
				got.Breakeven != want.Breakeven || got.BuyBaseValue != want.BuyBaseValue || got.SellBaseValue != want.SellBaseValue ||
				got.UnmatchedBaseValue != want.UnmatchedBaseValue || decimal.Decimal(got.UnrealizedPnl) != wantUnr ||
				!sameUnconverted(got.Unconverted, want.Unconverted) {
				t.Fatalf("%s: the fleet's %s\n%+v\nits own answer in USDT\n%+v (unrealized %v)", phase, s.name, got, want, wantUnr)
			}
			add(&sum.Pnl, want.Pnl)
			add(&sum.BuyBaseValue, want.BuyBaseValue)
			add(&sum.SellBaseValue, want.SellBaseValue)
			add(&sum.UnmatchedBaseValue, want.UnmatchedBaseValue)
			sum.NumberOfTrades += want.NumberOfTrades
			sum.Winning += want.Winning
			sum.Losing += want.Losing
			sumUnr = sumUnr.Add(wantUnr)
			for c, u := range want.Unconverted {
				x := sum.Unconverted[c]
				add(&x.Pnl, u.Pnl)
				add(&x.UnrealizedPnl, u.UnrealizedPnl)
				x.Trades += u.Trades
				sum.Unconverted[c] = x
			}
		}
		tot := o.Total
		if tot.Pnl != sum.Pnl || tot.BuyBaseValue != sum.BuyBaseValue || tot.SellBaseValue != sum.SellBaseValue ||
			tot.UnmatchedBaseValue != sum.UnmatchedBaseValue || tot.NumberOfTrades != sum.NumberOfTrades || tot.Winning != sum.Winning ||
			tot.Losing != sum.Losing || decimal.Decimal(tot.UnrealizedPnl) != sumUnr || !sameUnconverted(tot.Unconverted, sum.Unconverted) {
			t.Fatalf("%s: the fleet's total\n%+v\nthe sum of the instances' own answers\n%+v (unrealized %v)", phase, tot, sum, sumUnr)
		}
		return o
	}

	o := check("no EUR rate")
	if g := o.Instances[2]; g.Unconverted["EUR"].Trades != 30 || !decimal.Decimal(g.Pnl).IsZero() || g.NumberOfTrades != 30 {
		t.Fatalf("gamma without a rate: %+v; want its 30 fills counted, their money unconverted in EUR", g)
	}
	// The service reading PNL from ClickHouse answers from its own rows:
	// its overview is its Ledger's, not the database's three instances'.
	alpha := fleet[0]
	all := pnlread.PnlScope{Keys: []string{"All"}}
	for _, r := range [][2]int64{{0, 0}, {start.UnixMilli(), start.Add(40 * time.Hour).UnixMilli()}} {
		q := pnlread.OverviewQuery{Scope: all, Loc: time.UTC, Now: alpha.m.Clock.Now(), From: r[0], To: r[1]}
		mem, err := alpha.m.models.ledger.Overview(q)
		if err != nil {
			t.Fatal(err)
		}
		fromCH, err := alpha.m.pnlReader.Overview(q)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSONOf(t, mem), mustJSONOf(t, fromCH); a != b || mem.Total.NumberOfTrades == 0 {
			t.Fatalf("alpha's overview %v from ClickHouse differs from its Ledger's:\n%s\n%s", r, b, a)
		}
		dq := pnlread.DailyQuery{Scope: all, Loc: time.UTC, From: r[0], To: r[1]}
		md, _, _, _ := alpha.m.models.ledger.Daily(dq)
		cd, _, _, err := alpha.m.pnlReader.Daily(dq)
		if err != nil || mustJSONOf(t, md) != mustJSONOf(t, cd) {
			t.Fatalf("alpha's daily %v from ClickHouse differs from its Ledger's (%v)", r, err)
		}
	}

	// gamma reports in USDT, logs a rate EUR → USDT, trades on: the fills
	// after the rate convert, the 30 before stay unconverted; an order of
	// a USDT pair makes its own overview over all pairs one in USDT.
	gamma := fleet[2]
	var cfg struct {
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(gamma.request(t, "GET", "/api/v1/config/full", nil), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Config["bot"].(map[string]any)["REPORTING_CURRENCY"] = "USDT"
	gamma.request(t, "POST", "/api/v1/config/update", map[string]any{"data": cfg.Config})
	store := gamma.m.DataDir.Store
	gamma.clock.Advance(time.Hour)
	if _, err := store.Append(context.Background(), domain.RateStream("binance"), domain.Any, domain.NewEvent(gamma.clock, domain.TypeRateObserved,
		domain.RateObserved{Exchange: "binance", Base: "EUR", Quote: "USDT", Rate: decimal.MustDecimal("1.0825")})); err != nil {
		t.Fatal(err)
	}
	writePairLog(t, store, gamma.clock, "binance", "EUR-BTC", 31, 15, 56000)
	if _, err := store.Append(context.Background(), domain.OrderStream(99), domain.NoStream, domain.NewEvent(gamma.clock, domain.TypeOrderRequested,
		domain.OrderRequested{OrderID: 99, Exchange: "binance", Pair: "USDT-ETH", Side: domain.Buy, Kind: domain.KindLimit,
			Amount: decimal.MustDecimal("1"), Price: decimal.MustDecimal("3000"), ClientOrderID: "c99"})); err != nil {
		t.Fatal(err)
	}
	o = check("an EUR rate")
	if g := o.Instances[2]; g.Unconverted["EUR"].Trades != 30 || g.NumberOfTrades != 45 || !decimal.Decimal(g.BuyBaseValue).IsPos() {
		t.Fatalf("gamma with a rate: %+v; want 15 fills converted, the 30 before the rate unconverted", g)
	}

	// Another log claiming alpha's name is refused, loudly, and writes
	// nothing.
	dir := t.TempDir()
	writeTradingLog(t, dir, 3)
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"export", "clickhouse", "--data", dir, "--to", url, "--instance", "alpha"}, nil, &out, &errb)
	if domain.ErrorCode(err) != domain.ECONFLICT || !strings.Contains(err.Error(), `instance "alpha" belongs to another log`) {
		t.Fatalf("export of another log as alpha: %v, want ECONFLICT naming the instance", err)
	}
	if again := check("after the refused claim"); mustJSONOf(t, again.Total) != mustJSONOf(t, o.Total) {
		t.Fatal("the refused export changed the fleet's total")
	}
}

// sameUnconverted compares two Unconverted maps (empty and nil alike).
func sameUnconverted(a, b map[string]pnlread.Unconverted) bool {
	if len(a) != len(b) {
		return false
	}
	for c, x := range a {
		if y, ok := b[c]; !ok || x.Pnl != y.Pnl || x.Trades != y.Trades || x.UnrealizedPnl != y.UnrealizedPnl {
			return false
		}
	}
	return true
}

func mustJSONOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
