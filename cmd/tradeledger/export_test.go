package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// clickhouseURL returns TRADELEDGER_TEST_CLICKHOUSE's server with database
// db, or skips the test saying why.
func clickhouseURL(t *testing.T, db string) string {
	t.Helper()
	base := os.Getenv("TRADELEDGER_TEST_CLICKHOUSE")
	if base == "" {
		t.Skip("TRADELEDGER_TEST_CLICKHOUSE is not set: skipping the ClickHouse test (.ci/clickhouse.sh start sets it)")
	}
	opts, _, err := clickhouse.ParseURL(base)
	if err != nil {
		t.Fatalf("TRADELEDGER_TEST_CLICKHOUSE: %v", err)
	}
	t.Cleanup(func() {
		if conn, err := ch.Open(opts); err == nil {
			_ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
			conn.Close()
		}
	})
	return "clickhouse://" + opts.Addr[0] + "/" + db
}

// writeTradingLog writes n filled orders into the embedded store of dir.
func writeTradingLog(t *testing.T, dir string, n int) uint64 {
	t.Helper()
	s := sqlite.NewStore(filepath.Join(dir, "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	clock := domain.NewManualClock(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	var last uint64
	for i := 1; i <= n; i++ {
		clock.Advance(time.Hour)
		res, err := s.Append(context.Background(), domain.OrderStream(int64(i)), domain.NoStream, filledOrderEvents(clock, i, decimal.Decimal{})...)
		if err != nil {
			t.Fatal(err)
		}
		last = res.LastPosition
	}
	return last
}

// filledOrderEvents is order i, limit, of 1 on binance USDT-BTC at
// 100 + i%7 (a buy when i is odd, a sell when even), and its whole fill at
// that price with fee in USDT, both at clock's time.
func filledOrderEvents(clock domain.Clock, i int, fee decimal.Decimal) []domain.Event {
	side := domain.Buy
	if i%2 == 0 {
		side = domain.Sell
	}
	price := decimal.DecimalFromInt(int64(100 + i%7))
	return []domain.Event{
		domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: int64(i), Exchange: "binance", Pair: "USDT-BTC",
			Side: side, Kind: domain.KindLimit, Amount: decimal.DecimalFromInt(1), Price: price, ClientOrderID: fmt.Sprint(i)}),
		domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint(i), Price: price, Quantity: decimal.DecimalFromInt(1),
			Fee: fee, FeeAsset: "USDT"}),
	}
}

func TestExportClickHouse(t *testing.T) {
	db := fmt.Sprintf("tltest_export_%d", time.Now().UnixNano()%1e9)
	url := clickhouseURL(t, db)
	dir := t.TempDir()
	writeTradingLog(t, dir, 40)
	var out, errb bytes.Buffer
	if err := Run(context.Background(), []string{"export", "clickhouse", "--data", dir, "--to", url}, nil, &out, &errb); err != nil {
		t.Fatalf("export: %v (%s)", err, errb.String())
	}
	if !strings.Contains(out.String(), "(40 fills)") || !strings.Contains(out.String(), "database "+db) {
		t.Fatalf("summary line %q: want 40 fills into %s", out.String(), db)
	}
	// Again: resumes from ClickHouse's checkpoint, writes nothing.
	out.Reset()
	if err := Run(context.Background(), []string{"export", "clickhouse", "--data", dir, "--to", url}, nil, &out, &errb); err != nil {
		t.Fatalf("second export: %v", err)
	}
	if m := regexp.MustCompile(`^exported positions (\d+)\.\.(\d+) `).FindStringSubmatch(out.String()); m == nil || m[1] != m[2] ||
		!strings.Contains(out.String(), ": 0 rows") {
		t.Fatalf("second export %q: want an empty range and 0 rows", out.String())
	}
	if err := Run(context.Background(), []string{"export", "parquet"}, nil, &out, &errb); err == nil {
		t.Fatal("export parquet accepted")
	}
}

func TestServeReportsSinkLag(t *testing.T) {
	db := fmt.Sprintf("tltest_serve_%d", time.Now().UnixNano()%1e9)
	url := clickhouseURL(t, db)
	dir := t.TempDir()
	writeTradingLog(t, dir, 10)
	m := NewMain()
	var errb bytes.Buffer
	if err := m.ParseFlags([]string{"--data", dir, "--listen", "127.0.0.1:0", "--files-listen", "", "--clickhouse", url,
		"--read-from", "clickhouse", "--log-level", "error"}, &Env{Stderr: &errb}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	head, err := m.DataDir.Store.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Sink.WaitFor(ctx, head); err != nil {
		t.Fatalf("sink did not catch up: %v", err)
	}
	resp, err := http.Get(m.Server.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		SinkLag *uint64 `json:"sinkLag"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if h.SinkLag == nil || *h.SinkLag != 0 {
		t.Fatalf("healthz sinkLag = %v, want 0", h.SinkLag)
	}
}

// lineWatch is a stderr that reports, once, when a written line contains
// want.
type lineWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestExportSaysWhatItWaitsFor: export clickhouse against a port where
// nothing listens says where it connects and shows each retry with its
// reason at once (not after the backoff has grown); interrupted, it says
// what it was waiting for.
func TestExportSaysWhatItWaitsFor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	dir := t.TempDir()
	writeTradingLog(t, dir, 1)
	errw := &lineWatch{want: "attempt\": 2", seen: make(chan struct{})}
	seen := errw.seen
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"export", "clickhouse", "--data", dir, "--to", "clickhouse://" + addr + "/tltest"}, nil, io.Discard, errw)
	}()
	select {
	case <-seen:
	case err := <-done:
		t.Fatalf("export ended (%v) before its second retry; stderr:\n%s", err, errw)
	case <-time.After(time.Minute): // the retries are 100 ms apart
		cancel()
		t.Fatalf("no second retry shown in a minute; stderr:\n%s", errw)
	}
	cancel()
	err = <-done
	out := errw.String()
	if !strings.Contains(out, "connecting to ClickHouse at "+addr+", database tltest") {
		t.Errorf("stderr does not say where it connects:\n%s", out)
	}
	if !strings.Contains(out, "clickhouse unavailable, retrying") || !strings.Contains(out, "connection refused") {
		t.Errorf("stderr does not show the retries and why:\n%s", out)
	}
	if err == nil || !strings.Contains(errorLine(err), "interrupted while waiting for ClickHouse at "+addr) {
		t.Errorf("interrupted export: %v, want it to say it was waiting for ClickHouse at %s", err, addr)
	}
}
