package http

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// pnlFixture appends a small trading history: buys and sells on two pairs
// over several days, fees in quote and base, and balance snapshots.
func pnlFixture(ts *testServer) {
	clock := domain.NewManualClock(testEpoch.Add(-10 * 24 * time.Hour))
	for i := int64(1); i <= 60; i++ {
		clock.Advance(time.Duration(3+i%5) * time.Hour)
		pair := "USDT-BTC"
		if i%3 == 0 {
			pair = "USDT-ETH"
		}
		side := domain.Buy
		if i%4 >= 2 {
			side = domain.Sell
		}
		price := domain.DecimalFromInt(1000 + (i*37)%200)
		qty := domain.MustDecimal("0.25")
		fee, feeAsset := price.Mul(qty).DivInt(1000), "USDT"
		if i%5 == 0 {
			fee, feeAsset = qty.DivInt(1000), pair[5:]
		}
		if _, err := ts.Store.Append(context.Background(), domain.OrderStream(i), domain.NoStream,
			domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: i, Exchange: "binance", Pair: pair,
				Side: side, Kind: domain.KindLimit, Amount: qty, Price: price, ClientOrderID: fmt.Sprint(i)}),
			domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint(i), Price: price, Quantity: qty, Fee: fee, FeeAsset: feeAsset})); err != nil {
			ts.t.Fatal(err)
		}
		if i%7 == 0 {
			ts.appendEvent(domain.BalanceStream("binance"), domain.NewEvent(clock, domain.TypeBalancesObserved, domain.BalancesObserved{
				Exchange: "binance", Balances: []domain.AssetBalance{{Asset: "USDT", Available: domain.DecimalFromInt(5000 + i)}, {Asset: "BTC", Available: domain.MustDecimal("0.3")}},
			}))
		}
	}
}

// TestPnlRoutesFromClickHouse serves the same log twice, from memory and
// with --read-from clickhouse, and compares the bodies of every PNL route
// and assets/total.
func TestPnlRoutesFromClickHouse(t *testing.T) {
	url := testClickHouseURL(t, "tltest_http")
	serve := func(fromClickHouse bool) *testServer {
		return newTestServer(t, func(ts *testServer) {
			pnlFixture(ts)
			l := projections.NewLedger(domain.LOFO)
			ts.Runner.Register(l)
			ts.Server.Ledger = l
			if !fromClickHouse {
				return
			}
			if _, err := clickhouse.NewSink(url, ts.Store).Export(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := clickhouse.NewReader(url, domain.LOFO)
			if err := r.Open(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = r.Close()
			})
			ts.Server.Pnl = r
		})
	}
	mem, chs := serve(false), serve(true)
	start, end := testEpoch.Add(-9*24*time.Hour).UnixMilli(), testEpoch.UnixMilli()
	for i, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/v1/pnl/overview", map[string]any{"timezone": "Europe/Amsterdam", "keys": []string{"All"}}},
		{"POST", "/api/v1/pnl/overview", map[string]any{"timezone": "Asia/Kathmandu", "keys": []string{"binance/USDT-ETH"}, "dateRange": map[string]any{"startDate": start, "endDate": end}}},
		{"GET", fmt.Sprintf("/api/v1/pnl/daily?key=binance%%2FUSDT-BTC&startTimestamp=%d&endTimestamp=%d", start, end), nil},
		{"GET", fmt.Sprintf("/api/v1/pnl/daily/paginated?key=binance%%2FUSDT-BTC&pageNum=1&pageSize=3&endTime=%d", end), nil},
		{"GET", fmt.Sprintf("/api/v1/pnl/sum?exchange=binance&startTimestamp=%d&endTimestamp=%d", start, end), nil},
		{"GET", "/api/v1/pnl/total?key=binance%2FUSDT-BTC", nil},
		{"POST", "/api/v1/assets/total", map[string]any{"exchange": "binance", "base": "USDT", "start": 0, "end": end}},
	} {
		ms, mb := mem.do(c.method, c.path, c.body, mem.Token)
		cs, cb := chs.do(c.method, c.path, c.body, chs.Token)
		if ms != 200 || cs != ms || string(cb) != string(mb) {
			t.Fatalf("%s %s:\nmemory     %d %s\nclickhouse %d %s", c.method, c.path, ms, mb, cs, cb)
		}
		if i == 0 { // the fixture must show up, or equality proves little
			type overview struct {
				Total struct {
					NumberOfTrades, Winning int64
				}
				DailyHistory []any
			}
			if o := decodeBody[overview](t, cb); o.Total.NumberOfTrades != 60 || o.Total.Winning == 0 || len(o.DailyHistory) < 5 {
				t.Fatalf("overview of the fixture too thin: %s", cb)
			}
		}
	}
}

// testClickHouseURL returns TRADELEDGER_TEST_CLICKHOUSE's server with a
// new database named from prefix, dropped when the test ends, or skips the
// test saying why.
func testClickHouseURL(t *testing.T, prefix string) string {
	t.Helper()
	base := os.Getenv("TRADELEDGER_TEST_CLICKHOUSE")
	if base == "" {
		t.Skip("TRADELEDGER_TEST_CLICKHOUSE is not set: skipping the ClickHouse test (.ci/clickhouse.sh start sets it)")
	}
	opts, _, err := clickhouse.ParseURL(base)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("clickhouse://%s/%s_%d", opts.Addr[0], prefix, time.Now().UnixNano()%1e9)
	t.Cleanup(func() { dropDatabase(url) })
	return url
}

func dropDatabase(url string) {
	opts, db, err := clickhouse.ParseURL(url)
	if err != nil {
		return
	}
	conn, err := ch.Open(opts)
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
}

// The overview cache belongs to its Server: a body is reused only for the
// same reader at the same version.
func TestOverviewBodyCache(t *testing.T) {
	var c bodyCache // the zero value is ready
	a, b := projections.NewLedger(domain.LOFO), projections.NewLedger(domain.LOFO)
	c.put("k", a, 1, []byte("A"))
	if body, ok := c.get("k", a, 1); !ok || string(body) != "A" {
		t.Fatalf("same reader and version: %q %v", body, ok)
	}
	if _, ok := c.get("k", b, 1); ok {
		t.Fatal("another reader at the same version got the cached body")
	}
	if _, ok := c.get("k", a, 2); ok {
		t.Fatal("a newer version got the cached body")
	}
}
