package clickhouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// testURL returns TRADELEDGER_TEST_CLICKHOUSE with a fresh database name,
// and drops that database when the test ends; without the variable the
// test skips, saying why.
func testURL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("TRADELEDGER_TEST_CLICKHOUSE")
	if base == "" {
		tb.Skip("TRADELEDGER_TEST_CLICKHOUSE is not set: skipping the ClickHouse integration test (.ci/clickhouse.sh start sets it)")
	}
	opts, _, err := ParseURL(base)
	if err != nil {
		tb.Fatalf("TRADELEDGER_TEST_CLICKHOUSE: %v", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	db := "tltest_" + hex.EncodeToString(rnd[:])
	tb.Cleanup(func() {
		conn, err := ch.Open(opts)
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
	})
	u := opts.Addr[0]
	return "clickhouse://" + u + "/" + db
}

// openStore returns an embedded store on a temp dir.
func openStore(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s := sqlite.NewStore(filepath.Join(tb.TempDir(), "events.db"))
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// logGen writes a deterministic trading log: orders on a few pairs, buys
// and sells at a drifting price, partial fills, fees in quote and in base,
// cancels, rejects, sells of coins never bought, balance observations, and
// unrelated events, spread over several days.
type logGen struct {
	clock  *domain.ManualClock
	seed   uint64
	nextID int64
	price  map[string]float64
}

func newLogGen() *logGen {
	return &logGen{
		clock: domain.NewManualClock(time.Date(2024, 3, 1, 21, 0, 0, 0, time.UTC)),
		seed:  42,
		price: map[string]float64{"USDT-BTC": 60000, "USDT-ETH": 3000, "BTC-ETH": 0.05},
	}
}

func (g *logGen) rand() uint64 { // xorshift: reproducible without math/rand state
	g.seed ^= g.seed << 13
	g.seed ^= g.seed >> 7
	g.seed ^= g.seed << 17
	return g.seed
}

func dec(f float64) domain.Decimal {
	d, err := domain.DecimalFromFloat(math.Round(f*1e8) / 1e8)
	if err != nil {
		panic(err)
	}
	return d
}

// orders appends n orders and returns the number of fills written.
func (g *logGen) orders(tb testing.TB, store domain.EventStore, n int) int {
	tb.Helper()
	ctx := context.Background()
	pairs := []struct{ exchange, pair string }{{"binance", "USDT-BTC"}, {"binance", "USDT-ETH"}, {"kraken", "BTC-ETH"}}
	fills := 0
	for i := 0; i < n; i++ {
		g.clock.Advance(time.Duration(7+g.rand()%90) * time.Minute)
		p := pairs[g.rand()%uint64(len(pairs))]
		g.price[p.pair] *= 1 + (float64(g.rand()%2001)-1000)/50000
		price := dec(g.price[p.pair])
		side := domain.Buy
		if g.rand()%5 >= 3 {
			side = domain.Sell
		}
		amount := dec(float64(1+g.rand()%40) / 100)
		g.nextID++
		id := g.nextID
		evs := []domain.Event{domain.NewEvent(g.clock, domain.TypeOrderRequested, domain.OrderRequested{
			OrderID: id, Exchange: p.exchange, Pair: p.pair, Side: side, Kind: domain.KindLimit,
			Amount: amount, Price: price, ClientOrderID: fmt.Sprintf("c%d", id),
		})}
		switch r := g.rand() % 10; {
		case r == 0:
			evs = append(evs, domain.NewEvent(g.clock, domain.TypeOrderRejected, domain.OrderRejected{Reason: "insufficient funds"}))
		default:
			evs = append(evs, domain.NewEvent(g.clock, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprintf("x%d", id)}))
			parts := 1 + int(g.rand()%3)
			left := amount
			quote, base, _ := domain.SplitPair(p.pair)
			for k := 0; k < parts && left > 0; k++ {
				qty := left
				if k < parts-1 {
					qty = left.DivInt(2)
				}
				if r == 1 && k == parts-1 { // cancelled with a remainder
					evs = append(evs, domain.NewEvent(g.clock, domain.TypeOrderCancelled, domain.OrderCancelled{Remaining: left}))
					break
				}
				g.clock.Advance(time.Duration(g.rand()%300) * time.Second)
				feeAsset, fee := quote, price.Mul(qty).Div(dec(1000))
				if g.rand()%3 == 0 {
					feeAsset, fee = base, qty.Div(dec(1000))
				}
				evs = append(evs, domain.NewEvent(g.clock, domain.TypeOrderFilled, domain.OrderFilled{
					FillID: fmt.Sprintf("f%d-%d", id, k), Price: price, Quantity: qty, Fee: fee, FeeAsset: feeAsset,
				}))
				left = left.Sub(qty)
				fills++
			}
		}
		if _, err := store.Append(ctx, domain.OrderStream(id), domain.NoStream, evs...); err != nil {
			tb.Fatal(err)
		}
		if i%25 == 0 {
			b := domain.NewEvent(g.clock, domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: p.exchange, Balances: []domain.AssetBalance{
				{Asset: "USDT", Available: dec(float64(10000 + g.rand()%1000)), OnOrder: dec(12.5)},
				{Asset: "BTC", Available: dec(float64(g.rand()%100) / 10)},
			}})
			if _, err := store.Append(ctx, domain.BalanceStream(p.exchange), domain.Any, b); err != nil {
				tb.Fatal(err)
			}
		}
		if i%40 == 0 { // events the sink ignores still move its checkpoint
			if _, err := store.Append(ctx, domain.StreamSystem, domain.Any, domain.NewEvent(g.clock, domain.TypeSystemStarted, domain.SystemStarted{})); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return fills
}

func head(tb testing.TB, store domain.EventStore) uint64 {
	tb.Helper()
	h, err := store.Head(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// openConn opens a plain connection to url's server for assertions.
func openConn(tb testing.TB, url string) driver.Conn {
	tb.Helper()
	opts, _, err := ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	conn, err := ch.Open(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

func TestExportBasic(t *testing.T) {
	url := testURL(t)
	store := openStore(t)
	g := newLogGen()
	nFills := g.orders(t, store, 200)

	s := NewSink(url, store)
	s.BatchRows = 50
	st, err := s.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.To, head(t, store); got != want {
		t.Fatalf("exported to %d, want head %d", got, want)
	}
	if got, want := st.Fills, int64(nFills); got != want {
		t.Fatalf("fills written = %d, want %d", got, want)
	}
	r := openConn(t, url)
	var n uint64
	if err := r.QueryRow(context.Background(), "SELECT count() FROM "+s.Database()+".fills FINAL").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != uint64(nFills) {
		t.Fatalf("fills in ClickHouse = %d, want %d", n, nFills)
	}
}
