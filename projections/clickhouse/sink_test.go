package clickhouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

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
	// fees adds an EUR pair (converted into USDT through BTC), fees in
	// BNB at RateObserved rates and, rarely, fees in KCS (no rate).
	fees bool
}

func newLogGen() *logGen {
	return &logGen{
		clock: domain.NewManualClock(time.Date(2024, 3, 1, 21, 0, 0, 0, time.UTC)),
		seed:  42,
		price: map[string]float64{"USDT-BTC": 60000, "USDT-ETH": 3000, "BTC-ETH": 0.05, "EUR-BTC": 55000, "BNB": 500},
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
	if g.fees {
		pairs = append(pairs, struct{ exchange, pair string }{"binance", "EUR-BTC"})
	}
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
			for k := 0; k < parts && left.IsPos(); k++ {
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
				switch x := g.rand() % 30; {
				case x < 10:
					feeAsset, fee = base, qty.Div(dec(1000))
				case g.fees && x < 18 && quote == "USDT":
					feeAsset, fee = "BNB", price.Mul(qty).Div(dec(1000*g.price["BNB"]))
				case g.fees && x < 18 && quote == "BTC":
					feeAsset, fee = "BNB", qty.Div(dec(1000))
				case g.fees && x == 18:
					feeAsset, fee = "KCS", dec(0.5)
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
		if g.fees && i%6 == 0 {
			g.price["BNB"] *= 1 + (float64(g.rand()%2001)-1000)/50000
			r := domain.NewEvent(g.clock, domain.TypeRateObserved, domain.RateObserved{Exchange: "binance", Base: "BNB", Quote: "USDT", Rate: dec(g.price["BNB"])})
			if _, err := store.Append(ctx, domain.RateStream("binance"), domain.Any, r); err != nil {
				tb.Fatal(err)
			}
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
	if err := r.QueryRow(context.Background(), "SELECT count() FROM "+s.Database()+".fills9 FINAL").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != uint64(nFills) {
		t.Fatalf("fills in ClickHouse = %d, want %d", n, nFills)
	}
}

// proxy is a TCP forwarder to ClickHouse that a test can switch off (every
// connection cut, new ones refused) and on again: a real outage of the
// server as the sink sees it, without touching the server.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newProxy(tb testing.TB, target string) *proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.serve()
	tb.Cleanup(func() { ln.Close(); p.setDown(true) })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { io.Copy(u, c); u.Close() }()
		go func() { io.Copy(c, u); c.Close() }()
	}
}

// setDown cuts every connection and refuses new ones (true), or accepts
// them again (false).
func (p *proxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// e12Text returns the decimal text of a count n of 10^-12 (an integer's
// text): its point 12 digits from the right.
func e12Text(n string) []byte {
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	if len(n) <= domain.DecimalPlaces {
		n = strings.Repeat("0", domain.DecimalPlaces+1-len(n)) + n
	}
	b := []byte(n[:len(n)-domain.DecimalPlaces] + "." + n[len(n)-domain.DecimalPlaces:])
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return b
}

// chTotals are the figures a dashboard reads, straight from the tables.
type chTotals struct {
	fills, fillsRaw, orders, balances uint64
	pnl, volume, fees                 domain.Decimal
	dailyPnl, dailyVolume             domain.Decimal
	dailyTrades                       uint64
	checkpoint                        uint64
}

func readTotals(tb testing.TB, conn driver.Conn, db, method string) chTotals {
	tb.Helper()
	ctx := context.Background()
	var t chTotals
	q := func(query string, dest ...any) {
		tb.Helper()
		if err := conn.QueryRow(ctx, query).Scan(dest...); err != nil {
			tb.Fatalf("%s: %v", query, err)
		}
	}
	// The sums as decimal text of Decimal128 sums, in units of 10^-12 (this
	// log's amounts all fit the Int64 columns: no wide text).
	sums := func(query string, dest ...*domain.Decimal) {
		tb.Helper()
		text := make([]string, len(dest))
		var wide uint64
		var args []any
		for i := range text {
			args = append(args, &text[i])
		}
		q(query, append(args, &wide)...)
		if wide != 0 {
			tb.Fatalf("%s: %d rows with wide amounts", query, wide)
		}
		for i, d := range dest {
			u, ok := parseUnits(e12Text(text[i]))
			if !ok {
				tb.Fatalf("%s: sum %q", query, text[i])
			}
			*d = u.dec()
		}
	}
	sum := func(col string) string { return "toString(sum(toDecimal128(" + col + ", 0)))" }
	q("SELECT count() FROM "+db+".fills9 FINAL WHERE method = '"+method+"'", &t.fills)
	sums("SELECT "+sum("pnl_e12")+", "+sum("value_e12")+", "+sum("fee_e12")+", countIf(wide != '') FROM "+db+
		".fills9 FINAL WHERE method = '"+method+"'", &t.pnl, &t.volume, &t.fees)
	q("SELECT count() FROM "+db+".fills9 WHERE method = '"+method+"'", &t.fillsRaw)
	q("SELECT count() FROM "+db+".orders9 FINAL", &t.orders)
	q("SELECT count() FROM "+db+".balances9 FINAL", &t.balances)
	q("SELECT toUInt64(sum(trades)) FROM "+db+".pnl_daily9 FINAL WHERE method = '"+method+"'", &t.dailyTrades)
	sums("SELECT "+sum("pnl_e12")+", "+sum("volume_e12")+", countIf(wide != '') FROM "+db+
		".pnl_daily9 FINAL WHERE method = '"+method+"'", &t.dailyPnl, &t.dailyVolume)
	q("SELECT max(position) FROM "+db+".checkpoint", &t.checkpoint)
	return t
}

// referenceTotals folds the whole log through a fresh state: what the
// tables must hold once the sink has caught up.
func referenceTotals(tb testing.TB, store domain.EventStore, method domain.PnlMethod) (chTotals, *batch) {
	tb.Helper()
	st := newState(method)
	b := newBatch()
	it := store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	var t chTotals
	for it.Next() {
		e := it.Event()
		if err := st.apply(&e, b); err != nil {
			tb.Fatal(err)
		}
		t.checkpoint = e.Position
	}
	if err := it.Err(); err != nil {
		tb.Fatal(err)
	}
	st.settle(t.checkpoint, b) // the pairs made dirty (a late fill, new targets) folded again, as before a flush
	t.fills, t.orders, t.balances = uint64(len(b.fills)), uint64(len(b.orders)), uint64(len(b.balances))
	for _, f := range b.fills {
		t.pnl = t.pnl.Add(f.Pnl)
		t.volume = t.volume.Add(f.Value)
		t.fees = t.fees.Add(f.Fee)
	}
	t.dailyPnl, t.dailyVolume, t.dailyTrades = t.pnl, t.volume, t.fills
	return t, b
}

func TestSinkCrashBetweenRowsAndCheckpoint(t *testing.T) {
	url := testURL(t)
	store := openStore(t)
	g := newLogGen()
	g.orders(t, store, 300)
	crashAt := head(t, store) / 2

	// First run: crash right after the rows of a flush past the middle of
	// the log are stored, before its checkpoint is.
	a := NewSink(url, store)
	a.BatchRows, a.FlushInterval = 120, 20*time.Millisecond
	crashed := make(chan uint64, 1)
	a.afterRows = func(pos uint64) error {
		if pos >= crashAt {
			crashed <- pos
			return errStop
		}
		return nil
	}
	if err := a.Open(); err != nil {
		t.Fatal(err)
	}
	crashPos := <-crashed
	a.Close()
	conn := openConn(t, url)
	db := a.Database()
	mid := readTotals(t, conn, db, "lofo")
	if mid.checkpoint >= crashPos || mid.checkpoint == 0 {
		t.Fatalf("checkpoint after crash = %d, want > 0 and below the crashed flush's %d", mid.checkpoint, crashPos)
	}

	// The log goes on while the sink is down.
	g.orders(t, store, 150)
	want, _ := referenceTotals(t, store, domain.LOFO)

	// Second run resumes from ClickHouse's checkpoint and writes the
	// crashed flush's rows again.
	b := NewSink(url, store)
	b.BatchRows, b.FlushInterval = 120, 20*time.Millisecond
	if err := b.Open(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.WaitFor(ctx, want.checkpoint); err != nil {
		t.Fatalf("sink did not catch up to %d: %v (stored %d)", want.checkpoint, err, b.Stored())
	}
	if lag, err := b.Lag(ctx); err != nil || lag != 0 {
		t.Fatalf("lag = %d, %v; want 0", lag, err)
	}
	got := readTotals(t, conn, db, "lofo")
	if got.fillsRaw < got.fills {
		t.Fatalf("raw fill rows %d < distinct %d", got.fillsRaw, got.fills)
	}
	got.fillsRaw = 0
	if got != want {
		t.Fatalf("ClickHouse totals after crash and restart:\n got %+v\nwant %+v", got, want)
	}
	// And every PNL read from ClickHouse equals the in-memory Ledger's.
	r := NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	compareReads(t, ledgerOf(t, store, domain.LOFO), r, g.clock.Now())
}

func TestSinkWaitsOutAnOutage(t *testing.T) {
	url := testURL(t)
	opts, db, _ := ParseURL(url)
	px := newProxy(t, opts.Addr[0])
	store := openStore(t)
	g := newLogGen()
	g.orders(t, store, 60)

	s := NewSink("clickhouse://"+px.addr()+"/"+db, store)
	s.BatchRows, s.FlushInterval = 60, 20*time.Millisecond
	var logs *observer.ObservedLogs
	s.Logger, logs = observedLogger()
	// The injected sleeper records the backoff and ends the outage after
	// the fourth wait: no real waiting, no timing in the assertions.
	var waits []time.Duration
	var wmu sync.Mutex
	var stoppedInOutage atomic.Bool // a transient failure is not a stop
	s.Sleep = func(ctx context.Context, d time.Duration) error {
		if s.Stopped() {
			stoppedInOutage.Store(true)
		}
		wmu.Lock()
		waits = append(waits, d)
		if len(waits) == 4 {
			px.setDown(false)
		}
		wmu.Unlock()
		return ctx.Err()
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.WaitFor(ctx, head(t, store)); err != nil {
		t.Fatal(err)
	}

	// Outage: the log grows while ClickHouse is unreachable.
	px.setDown(true)
	g.orders(t, store, 120)
	want, _ := referenceTotals(t, store, domain.LOFO)
	if err := s.WaitFor(ctx, want.checkpoint); err != nil {
		t.Fatalf("sink did not catch up after the outage: %v (stored %d)", err, s.Stored())
	}
	wmu.Lock()
	got := append([]time.Duration(nil), waits...)
	wmu.Unlock()
	if len(got) < 4 {
		t.Fatalf("sink waited %d times, want ≥ 4 (retries with backoff)", len(got))
	}
	for i := 1; i < 4; i++ {
		if got[i] != 2*got[i-1] {
			t.Fatalf("backoff waits %v: want each twice the previous", got[:4])
		}
	}
	if s.Err() != nil {
		t.Fatalf("Err after recovery = %v, want nil", s.Err())
	}
	if stoppedInOutage.Load() {
		t.Fatal("Stopped during the outage: a transient failure was taken for a refusal")
	}
	if n := logs.FilterMessageSnippet("retrying (a transient failure)").Len(); n < 4 {
		t.Fatalf("%d warnings saying the sink retries a transient failure, want ≥ 4: %v", n, logs.All())
	}
	tot := readTotals(t, openConn(t, url), db, "lofo")
	tot.fillsRaw = 0
	if tot != want {
		t.Fatalf("totals after outage:\n got %+v\nwant %+v", tot, want)
	}
}

// Services share one database by instance name: two logs exported as two
// instances each read back as their own Ledger, whatever the other wrote;
// a log claiming an instance another log owns is refused (ECONFLICT naming
// the instance) and writes nothing; the first claim owns a name even when a
// later one was written first (two services starting at once).
func TestInstancesShareADatabase(t *testing.T) {
	url := testURL(t)
	_, db, _ := ParseURL(url)
	stores := map[string]*sqlite.Store{}
	gens := map[string]*logGen{}
	for name, n := range map[string]int{"alpha": 70, "beta": 25} {
		store := openStore(t)
		g := newLogGen()
		g.fees = name == "alpha"
		addConfig(t, store, g)
		g.orders(t, store, n)
		s := NewSink(url, store)
		s.Instance = name
		if _, err := s.Export(context.Background()); err != nil {
			t.Fatalf("export %s: %v", name, err)
		}
		stores[name], gens[name] = store, g
	}
	for name, store := range stores {
		r := NewReader(url, domain.LOFO)
		r.Instance = name
		if err := r.Open(); err != nil {
			t.Fatal(err)
		}
		compareReads(t, ledgerOf(t, store, domain.LOFO), r, gens[name].clock.Now())
		r.Close()
	}
	conn := openConn(t, url)
	ctx := context.Background()
	checkpoint := func(instance string) uint64 {
		var pos uint64
		if err := conn.QueryRow(ctx, "SELECT max(position) FROM "+db+".checkpoint WHERE sink = ?", sinkNameOf(instance, domain.LOFO)).Scan(&pos); err != nil {
			t.Fatal(err)
		}
		return pos
	}
	before := checkpoint("alpha")
	s := NewSink(url, stores["beta"])
	s.Instance = "alpha"
	if _, err := s.Export(ctx); domain.ErrorCode(err) != domain.ECONFLICT || !strings.Contains(err.Error(), `instance "alpha" belongs to another log`) {
		t.Fatalf("export of beta's log as alpha: %v, want ECONFLICT naming the instance", err)
	}
	if after := checkpoint("alpha"); after != before {
		t.Fatalf("alpha's checkpoint moved from %d to %d under a refused sink", before, after)
	}
	// A claim written later but dated earlier owns the name: the sink of
	// the log that claimed it first in time is the one that goes on.
	if err := conn.Exec(ctx, "INSERT INTO "+db+".instances (instance, log, claimed_ms) SELECT 'gamma', 'log-y', 2000"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "INSERT INTO "+db+".instances (instance, log, claimed_ms) SELECT 'gamma', 'log-x', 1000"); err != nil {
		t.Fatal(err)
	}
	for log, want := range map[string]string{"log-y": domain.ECONFLICT, "log-x": ""} {
		s := NewSink(url, stores["beta"])
		s.Instance, s.Log = "gamma", log
		if _, err := s.Export(ctx); domain.ErrorCode(err) != want {
			t.Fatalf("export of %s as gamma: %v, want %q", log, err, want)
		}
	}
	bad := NewSink(url, stores["beta"])
	bad.Instance = "a/b"
	if _, err := bad.Export(ctx); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("instance a/b: %v, want EINVALID", err)
	}
}

// A refusal a retry would meet again (here: a table lacking a column the
// sink writes) stops Export at once with ClickHouse's reason, without a
// retry, and the checkpoint stays; a sink following the log stops too and
// keeps reporting it, as it does a database of a newer schema.
func TestSinkStopsOnARefusal(t *testing.T) {
	url, db, store, g := exportedLog(t, 60)
	conn := openConn(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.Exec(ctx, "ALTER TABLE "+db+".fills9 DROP COLUMN wide"); err != nil {
		t.Fatal(err)
	}
	cp := head(t, store)
	g.orders(t, store, 20)
	var waits atomic.Int64
	sleep := func(ctx context.Context, d time.Duration) error { waits.Add(1); return ctx.Err() }

	s := NewSink(url, store)
	s.Sleep = sleep
	_, err := s.Export(ctx)
	var re *RefusedError
	var ex *ch.Exception
	if !errors.As(err, &re) || !errors.As(err, &ex) || re.Op != "flush" || ctx.Err() != nil {
		t.Fatalf("export into a table lacking a column: %v (ctx %v), want a RefusedError of the flush with ClickHouse's exception", err, ctx.Err())
	}
	if n := waits.Load(); n != 0 {
		t.Fatalf("export retried %d times, want none", n)
	}
	if !strings.Contains(err.Error(), "wide") || !errors.As(s.Err(), &re) {
		t.Fatalf("error %q does not name the column, or Err = %v", err, s.Err())
	}
	var pos uint64
	if err := conn.QueryRow(ctx, "SELECT max(position) FROM "+db+".checkpoint WHERE sink = 'tradeledger/default/lofo'").Scan(&pos); err != nil || pos != cp {
		t.Fatalf("checkpoint %d, %v after the refusal; want %d (unmoved)", pos, err, cp)
	}

	follow := func(want func(error) bool) {
		t.Helper()
		f := NewSink(url, store)
		f.Sleep = sleep
		logger, logs := observedLogger()
		f.Logger = logger
		if err := f.Open(); err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		select {
		case <-f.done:
		case <-ctx.Done():
			t.Fatalf("the sink goes on after a refusal (Err %v)", f.Err())
		}
		if err := f.Err(); !want(err) || !f.Stopped() {
			t.Fatalf("Err of the stopped sink = %v, Stopped %v", err, f.Stopped())
		}
		if n := waits.Load(); n != 0 {
			t.Fatalf("the sink retried %d times, want none", n)
		}
		if e := logs.FilterMessageSnippet("clickhouse sink stopped").All(); len(e) != 1 {
			t.Fatalf("logs %v, want one saying the sink stopped", logs.All())
		}
	}
	follow(func(err error) bool { return errors.As(err, &re) })
	recordNewerSchema(t, conn, db)
	follow(func(err error) bool { return domain.ErrorCode(err) == domain.ECONFLICT })
}

// Network failures and a busy server may pass (retried); an exception
// refusing the rows does not; a dropped table ends the run.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}, transient},
		{fmt.Errorf("insert into fills9: %w", io.EOF), transient},
		{fmt.Errorf("insert: %w", &ch.Exception{Code: 241, Message: "Memory limit exceeded"}), transient},
		{fmt.Errorf("insert: %w", &ch.Exception{Code: 16, Message: "There is no column with name wide"}), refused},
		{fmt.Errorf("insert: %w", &ch.Exception{Code: 60, Message: "Table x doesn't exist"}), schemaGone},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// observedLogger returns a logger of warnings and errors and what it logged.
func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.WarnLevel)
	return zap.New(core), logs
}

// A database fed by a release before instances (schema 7: its sink's
// checkpoint and version under tradeledger/<method>, tables orders7 …) is
// taken over by the instance-tagged schema: the sink finds nothing of its
// instance, writes every row from the log's start, records its version
// and drops the schema-7 tables; the reader then answers as the Ledger.
func TestSinkUpgradesASchema7Database(t *testing.T) {
	url := testURL(t)
	_, db, _ := ParseURL(url)
	conn := openConn(t, url)
	ctx := context.Background()
	store := openStore(t)
	g := newLogGen()
	addConfig(t, store, g)
	g.orders(t, store, 60)
	h := head(t, store)
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + db,
		"CREATE TABLE " + db + ".orders7 (order_id Int64, position UInt64) ENGINE = ReplacingMergeTree(position) ORDER BY order_id",
		"CREATE TABLE " + db + ".pnl_overview8 (method String, position UInt64) ENGINE = ReplacingMergeTree(position) ORDER BY method",
		"CREATE TABLE " + db + ".checkpoint (sink String, position UInt64, updated_ms Int64) ENGINE = ReplacingMergeTree(position) ORDER BY sink",
		"CREATE TABLE " + db + ".schema_version (sink String, version UInt32, updated_ms Int64) ENGINE = ReplacingMergeTree(version) ORDER BY sink",
		fmt.Sprintf("INSERT INTO %s.checkpoint (sink, position, updated_ms) SELECT 'tradeledger/lofo', %d, 0", db, h),
		"INSERT INTO " + db + ".schema_version (sink, version, updated_ms) SELECT 'tradeledger/lofo', 7, 0",
	} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	st, err := NewSink(url, store).Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.From != 0 || st.Events != int64(h) || st.Fills == 0 {
		t.Fatalf("export over a schema-7 database: %+v; want every event's rows written from position 0", st)
	}
	for _, tbl := range []string{"orders7", "pnl_overview8"} {
		var left uint8
		if err := conn.QueryRow(ctx, "EXISTS TABLE "+db+"."+tbl).Scan(&left); err != nil || left != 0 {
			t.Fatalf("schema 7's %s left after the upgrade (exists %d, %v)", tbl, left, err)
		}
	}
	r := NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	compareReads(t, ledgerOf(t, store, domain.LOFO), r, g.clock.Now())
}
