package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// tickingClock moves a millisecond forward at every reading: time passes
// between any two stamps, as it does on a busy machine, but the same way
// at every run.
type tickingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

// steppedClock is a ManualClock-like clock a test can move in either
// direction; it also ticks a millisecond at every reading.
type steppedClock struct{ tickingClock }

func (c *steppedClock) Step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// startLoadMain starts the serve wiring on clock with one cycling pair
// (binance USDT-BTC) and returns it with a token.
func startLoadMain(t *testing.T, clock domain.Clock) (*Main, string) {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "load test password")
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", "127.0.0.1:0"
	m.Logger, m.Clock, m.ManualCycles, m.ManualCheckpoints = zap.NewNop(), clock, true, true
	token := runAndLogin(t, m, "load test password")
	c := loadClient{m: m, token: token, hc: http.DefaultClient}
	if status, out := c.post(t, "config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": map[string]any{"strategy": "manual", "DELAY": 1}}); status != 200 {
		t.Fatalf("config/pair/add = %d %s", status, out)
	}
	if status, out := c.post(t, "system/start", nil); status != 200 {
		t.Fatalf("system/start = %d %s", status, out)
	}
	if n := m.Engine.Scheduler.Cycle(context.Background()); n != 1 {
		t.Fatalf("cycled %d pairs, want 1", n)
	}
	return m, token
}

type loadClient struct {
	m     *Main
	token string
	hc    *http.Client
}

// post sends a JSON body with the token; it returns the status and body.
// It may run on any goroutine: failures are returned, not fatal.
func (c loadClient) send(path string, body any) (int, string, error) {
	resp, err := c.hc.Do(apiPost(c.m, c.token, path, body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), err
}

func (c loadClient) post(t *testing.T, path string, body any) (int, string) {
	t.Helper()
	status, out, err := c.send(path, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, out
}

// verifyLive checks the live log through GET /api/v1/audit/verify.
func verifyLive(t *testing.T, m *Main, token string) audit.VerifySummary {
	t.Helper()
	status, body := serveGet(t, m, "/api/v1/audit/verify", token)
	var sum audit.VerifySummary
	if err := json.Unmarshal([]byte(body), &sum); status != 200 || err != nil {
		t.Fatalf("audit/verify = %d %v: %s", status, err, body)
	}
	return sum
}

// Issue 13 §1: market orders under load from 8 concurrent clients through
// HTTP leave a log that verifies. The clock moves between any two stamps,
// so an exchange fill time earlier than the order's OrderAccepted (stamped
// after PlaceOrder returned) would show as a stream going back in time.
func TestVerifyAfterConcurrentMarketOrders(t *testing.T) {
	const clients, orders = 8, 10_000
	m, token := startLoadMain(t, &tickingClock{now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)})
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	c := loadClient{m: m, token: token, hc: &http.Client{Transport: tr}}

	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < orders; i += clients {
				side := "buy"
				if i%2 == 1 {
					side = "sell"
				}
				status, out, err := c.send("trade/"+side+"/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.0001}})
				if err != nil || status != 200 {
					errs <- fmt.Errorf("order %d: %d %s %v", i, status, out, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	sum := verifyLive(t, m, token)
	if !sum.OK || sum.FaultCount != 0 {
		t.Fatalf("log of %d market orders: %d faults, the first %v", orders, sum.FaultCount, sum.Faults)
	}
	// Every order was requested, accepted and filled in its own stream.
	fills := 0
	it := m.DataDir.Store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	for it.Next() {
		if e := it.Event(); e.Type == domain.TypeOrderFilled {
			var f domain.OrderFilled
			if err := e.Decode(&f); err != nil || f.ExchangeTime <= 0 || f.ExchangeTime > e.Time {
				t.Fatalf("fill %s/%d: exchangeTime %d, envelope time %d (%v)", e.Stream, e.Version, f.ExchangeTime, e.Time, err)
			}
			fills++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if fills < orders || sum.Streams < orders {
		t.Fatalf("%d fills in %d streams, want one per order (%d)", fills, sum.Streams, orders)
	}
}

// Issue 13 §1: a clock that steps backwards mid-stream does not make the
// log look tampered: the envelope time of an order's later events is held
// at its earlier ones'.
func TestVerifyAfterClockStepsBack(t *testing.T) {
	clock := &steppedClock{tickingClock{now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}}
	m, token := startLoadMain(t, clock)
	c := loadClient{m: m, token: token, hc: http.DefaultClient}
	status, out := c.post(t, "trade/buy", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 30000}})
	if status != 200 {
		t.Fatalf("limit buy = %d %s", status, out)
	}
	var ack struct{ ID int64 }
	json.Unmarshal([]byte(out), &ack)

	clock.Step(-time.Hour) // NTP, a VM restored, an operator: the clock goes back
	// A token issued "in the future" is refused: log in again.
	if status, c.token = serveLogin(t, m, e2eWallet, "load test password"); status != 200 {
		t.Fatalf("login after the step = %d", status)
	}
	token = c.token
	if status, out := c.post(t, "trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "id": strconv.FormatInt(ack.ID, 10), "price": 30000, "type": "limit"}}); status != 200 {
		t.Fatalf("trade/cancel = %d %s", status, out)
	}
	if status, out := c.post(t, "config/pair/add", map[string]any{"pair": "USDT-ETH", "exchange": "binance", "settings": map[string]any{"strategy": "manual"}}); status != 200 {
		t.Fatalf("config/pair/add = %d %s", status, out)
	}
	if status, out := c.post(t, "trade/buy/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001}}); status != 200 {
		t.Fatalf("market buy = %d %s", status, out)
	}

	if sum := verifyLive(t, m, token); !sum.OK {
		t.Fatalf("after a clock step back: %d faults, the first %v", sum.FaultCount, sum.Faults)
	}
	// The cancel happened an hour "before" the order by the clock; its
	// events carry the order's last time instead.
	it := m.DataDir.Store.ReadStream(context.Background(), domain.OrderStream(ack.ID), 0, 0)
	defer it.Close()
	var last int64
	n := 0
	for it.Next() {
		e := it.Event()
		if e.Time < last {
			t.Fatalf("%s/%d at %d, before %d", e.Stream, e.Version, e.Time, last)
		}
		last = e.Time
		n++
	}
	if n != 4 { // requested, accepted, cancel requested, cancelled
		t.Fatalf("%d events in the order's stream, want 4", n)
	}
}
