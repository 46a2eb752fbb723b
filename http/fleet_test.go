package http

import (
	"context"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// Without an analytics store the fleet routes say what they need: 503
// naming --clickhouse, as JSON (the CSV routes too).
func TestFleetRoutesWithoutClickHouse(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/api/v1/fleet/overview", "/api/v1/fleet/reports/realized?currency=USDT", "/api/v1/fleet/export/fills.csv"} {
		status, body := ts.do("GET", path, nil, ts.Token)
		if status != 503 || !strings.Contains(string(body), "--clickhouse") || !strings.Contains(string(body), `"status":"error"`) {
			t.Fatalf("GET %s without ClickHouse: %d %s; want 503 naming --clickhouse", path, status, body)
		}
	}
}

// The fleet routes over two instances in one ClickHouse database: the
// overview (default currency: this instance's reporting currency), the
// realized report, the three CSV exports, and the refusals of bad
// parameters (400 naming the parameter, before any byte of CSV).
func TestFleetRoutes(t *testing.T) {
	url := testClickHouseURL(t, "tltest_fleet")
	// Another instance: 12 orders of binance/USDT-SOL in a log of its own.
	other := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := other.Open(); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	clock := domain.NewManualClock(testEpoch.Add(-5 * 24 * time.Hour))
	for i := int64(1); i <= 12; i++ {
		clock.Advance(5 * time.Hour)
		side := domain.Buy
		if i%2 == 0 {
			side = domain.Sell
		}
		price := domain.DecimalFromInt(20 + i)
		if _, err := other.Append(context.Background(), domain.OrderStream(i), domain.NoStream,
			domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: i, Exchange: "kraken", Pair: "USDT-SOL",
				Side: side, Kind: domain.KindLimit, Amount: domain.DecimalFromInt(2), Price: price, ClientOrderID: fmt.Sprint(i)}),
			domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint(i), Price: price, Quantity: domain.DecimalFromInt(2), FeeAsset: "USDT"})); err != nil {
			t.Fatal(err)
		}
	}
	for name, store := range map[string]domain.EventStore{"other": other} {
		s := clickhouse.NewSink(url, store)
		s.Instance = name
		if _, err := s.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ts := newTestServer(t, func(ts *testServer) {
		pnlFixture(ts)
		l := projections.NewLedger(domain.LOFO)
		ts.Runner.Register(l)
		ts.Server.Ledger = l
		s := clickhouse.NewSink(url, ts.Store)
		s.Instance = "this"
		if _, err := s.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		f := clickhouse.NewFleet(url)
		if err := f.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		ts.Server.Fleet = f
	})

	status, body := ts.do("GET", "/api/v1/fleet/overview", nil, ts.Token)
	if status != 200 {
		t.Fatalf("overview: %d %s", status, body)
	}
	o := decodeBody[domain.FleetOverview](t, body)
	if o.Currency != "USDT" || o.Method != "lofo" || len(o.Instances) != 2 || o.Instances[0].Name != "other" || o.Instances[1].Name != "this" ||
		o.Instances[0].NumberOfTrades != 12 || o.Instances[1].NumberOfTrades != 60 || o.Total.NumberOfTrades != 72 || o.Total.Instances != 2 {
		t.Fatalf("overview: %s", body)
	}
	if want := domain.Decimal(o.Instances[0].Pnl).Add(domain.Decimal(o.Instances[1].Pnl)); domain.Decimal(o.Total.Pnl) != want || want.IsZero() {
		t.Fatalf("total pnl %v, want %v (the instances' sum, not 0)", o.Total.Pnl, want)
	}

	status, body = ts.do("GET", "/api/v1/fleet/reports/realized?currency=USDT&from=2020-01-01&timezone=Europe/Amsterdam", nil, ts.Token)
	if status != 200 {
		t.Fatalf("realized: %d %s", status, body)
	}
	rep := decodeBody[domain.FleetRealized](t, body)
	if len(rep.Instances) != 2 || len(rep.Instances[1].Pairs) != 2 || rep.Total.Pnl != o.Total.Pnl || rep.From == 0 {
		t.Fatalf("realized since 2020 (every fill): %s", body)
	}

	for _, c := range []struct{ path, want string }{
		{"/api/v1/fleet/overview?currency=US-DT", "currency"},
		{"/api/v1/fleet/overview?method=best", "best"},
		{"/api/v1/fleet/overview?from=2024-01-01", "from"},
		{"/api/v1/fleet/reports/realized?from=2024-02-01&to=2024-01-01", "to must be after from"},
		{"/api/v1/fleet/reports/realized?timezone=Mars/Olympus", "timezone"},
		{"/api/v1/fleet/export/fills.csv?to=yesterday", "to"},
	} {
		status, body := ts.do("GET", c.path, nil, ts.Token)
		if status != 400 || !strings.Contains(string(body), c.want) {
			t.Fatalf("GET %s: %d %s; want 400 naming %q", c.path, status, body, c.want)
		}
	}

	csvOf := func(path string) ([][]string, string) {
		t.Helper()
		resp := ts.request("GET", path, nil, map[string]string{"Authorization": bearer(ts.Token)})
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		rows, err := csv.NewReader(resp.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows, resp.Header.Get("Content-Disposition")
	}
	rows, disp := csvOf("/api/v1/fleet/export/overview.csv")
	if strings.Join(rows[0], ",") != strings.Join(FleetOverviewHeader, ",") || disp != `attachment; filename="tradeledger-fleet-overview-USDT-lofo.csv"` {
		t.Fatalf("overview.csv header %v, disposition %s", rows[0], disp)
	}
	last := rows[len(rows)-1]
	if last[0] != "(fleet)" || last[4] != "converted" || last[5] != "USDT" || last[7] != domain.Decimal(o.Total.Pnl).String() || last[14] != "72" {
		t.Fatalf("overview.csv's fleet row %v; want the total (pnl %v, 72 trades)", last, o.Total.Pnl)
	}
	rows, disp = csvOf("/api/v1/fleet/export/fills.csv?from=2020-01-01&to=2030-12-31")
	if len(rows) != 1+72 || strings.Join(rows[0], ",") != strings.Join(FleetFillsHeader, ",") ||
		disp != `attachment; filename="tradeledger-fleet-fills-USDT-lofo-2020-01-01-to-2030-12-31.csv"` {
		t.Fatalf("fills.csv: %d rows, header %v, %s; want 72 fills", len(rows), rows[0], disp)
	}
	var pnl domain.Decimal
	for _, r := range rows[1:] {
		d, err := domain.ParseDecimal(r[15])
		if err != nil {
			t.Fatal(err)
		}
		pnl = pnl.Add(d)
	}
	if pnl != domain.Decimal(o.Total.Pnl) {
		t.Fatalf("fills.csv's pnl adds up to %v, the overview's to %v", pnl, o.Total.Pnl)
	}
	rows, _ = csvOf("/api/v1/fleet/export/realized.csv")
	pairs := 0
	for _, r := range rows[1:] {
		if r[3] == "pair" {
			pairs++
		}
	}
	if strings.Join(rows[0], ",") != strings.Join(FleetRealizedHeader, ",") || pairs != 3 {
		t.Fatalf("realized.csv: header %v, %d pair rows; want 3", rows[0], pairs)
	}
}
