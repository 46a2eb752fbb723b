package main

// Measurements against a real `tradeledger serve` process (issue 13 §5's
// figures, and its mixed load followed by verify). They run only when
// TRADELEDGER_MEASURE_BIN names a built binary, take minutes, sleep on
// purpose and print figures; they assert nothing about speed:
//
//	go build -o /tmp/tl ./cmd/tradeledger
//	TRADELEDGER_MEASURE_BIN=/tmp/tl go test -run 'TestMeasure' -v -timeout 10m ./cmd/tradeledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

const (
	measureWallet   = "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8"
	measurePassword = "measure password"
)

// measured is a serve process started from TRADELEDGER_MEASURE_BIN.
type measured struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	addr string
	data string
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startMeasured starts the binary on data (already filled, or fresh).
func startMeasured(t *testing.T, data string) *measured {
	bin := os.Getenv("TRADELEDGER_MEASURE_BIN")
	if bin == "" {
		t.Skip("TRADELEDGER_MEASURE_BIN is not set: measurements against a real serve process are skipped")
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", addr, "--files-listen", "", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "TRADELEDGER_WALLET="+measureWallet, "TRADELEDGER_PASSWORD="+measurePassword)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &measured{t: t, cmd: cmd, url: "http://" + addr, addr: addr, data: data}
	t.Cleanup(m.stop)
	for end := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(m.url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(end) {
			t.Fatal("serve did not come up")
		}
	}
	return m
}

func (m *measured) stop() {
	if m.cmd.Process != nil && m.cmd.ProcessState == nil {
		m.cmd.Process.Signal(syscall.SIGTERM)
		m.cmd.Wait()
	}
}

// rss returns the process's resident set in MiB (/proc/PID/status).
func (m *measured) rss() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		m.t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

func (m *measured) login() string {
	enc, err := secrets.EncryptLoginPassword(measurePassword, measureWallet)
	if err != nil {
		m.t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"password": enc})
	resp, err := http.Post(m.url+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&out)
	if out.Token == "" {
		m.t.Fatalf("login = %d", resp.StatusCode)
	}
	return out.Token
}

// fillLog writes n events of about size bytes into a fresh data dir.
func fillLog(t *testing.T, n, size int) string {
	data, d := openMeasureDataDir(t)
	defer d.Close()
	pad := strings.Repeat("x", size)
	for i := 0; i < n; i += 500 {
		evs := make([]domain.Event, 0, 500)
		for j := i; j < min(n, i+500); j++ {
			e := domain.NewEvent(domain.SystemClock{}, "Padded", map[string]any{"i": j, "pad": pad})
			e.Actor = "measure"
			evs = append(evs, e)
		}
		if _, err := d.Store.Append(context.Background(), fmt.Sprintf("pad-%d", i/500), domain.Any, evs...); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// TestMeasureStalledStreams: RSS of serve with 200 event-stream consumers
// that read the response headers and then nothing, each from position 0
// of a 20,000-event log.
func TestMeasureStalledStreams(t *testing.T) {
	if os.Getenv("TRADELEDGER_MEASURE_BIN") == "" {
		t.Skip("TRADELEDGER_MEASURE_BIN is not set")
	}
	m := startMeasured(t, fillLog(t, 20000, 300))
	tokens := make([]string, 25) // 8 streams per token at most
	for i := range tokens {
		tokens[i] = m.login()
	}
	time.Sleep(2 * time.Second)
	t.Logf("RSS idle: %.1f MiB", m.rss())
	var conns []net.Conn
	refused := 0
	for i := 0; i < 200; i++ {
		d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}}
		c, err := d.Dial("tcp", m.addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /api/v1/events/stream?from=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", tokens[i%len(tokens)])
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
		if err != nil || resp.StatusCode != 200 {
			refused++
		}
		conns = append(conns, c) // never read again
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var elapsed time.Duration
	for _, at := range []time.Duration{10 * time.Second, 45 * time.Second} {
		time.Sleep(at - elapsed)
		elapsed = at
		t.Logf("RSS with 200 stalled consumers, %v after they stalled: %.1f MiB (refused: %d)", at, m.rss(), refused)
	}
}

// TestMeasureSlowBodies: 100 connections each send a POST's headers
// (Content-Length 1000) and then one body byte per second; after 30 s,
// how many are still open?
func TestMeasureSlowBodies(t *testing.T) {
	if os.Getenv("TRADELEDGER_MEASURE_BIN") == "" {
		t.Skip("TRADELEDGER_MEASURE_BIN is not set")
	}
	m := startMeasured(t, fillLog(t, 0, 0))
	token := m.login()
	var open atomic.Int64
	var answered sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		c, err := net.Dial("tcp", m.addr)
		if err != nil {
			t.Fatal(err)
		}
		open.Add(1)
		fmt.Fprintf(c, "POST /api/v1/config/update HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n", token)
		closed := make(chan struct{})
		wg.Add(2)
		go func() { // reads until the server closes
			defer wg.Done()
			defer close(closed)
			b, _ := io.ReadAll(c)
			if len(b) > 12 {
				answered.Store(string(b[9:12]), true)
			}
			open.Add(-1)
		}()
		go func() { // trickles the body
			defer wg.Done()
			for {
				select {
				case <-stop:
					c.Close()
					return
				case <-closed:
					return
				case <-time.After(time.Second):
					c.Write([]byte(" "))
				}
			}
		}()
	}
	time.Sleep(30 * time.Second)
	var statuses []string
	answered.Range(func(k, _ any) bool { statuses = append(statuses, k.(string)); return true })
	t.Logf("slow-body connections still held by the server after 30 s: %d of 100 (statuses answered: %v)", open.Load(), statuses)
	close(stop)
	wg.Wait()
}

// TestMeasureMixedLoadThenVerify: 8 clients for 20 s, each a random mix of
// reads (orders/page, pnl/overview, balances, time, healthz, audit/events)
// and writes (market and limit orders, cancels, config pair add/remove);
// then `tradeledger verify` runs on the live log while serve still runs.
func TestMeasureMixedLoadThenVerify(t *testing.T) {
	if os.Getenv("TRADELEDGER_MEASURE_BIN") == "" {
		t.Skip("TRADELEDGER_MEASURE_BIN is not set")
	}
	m := startMeasured(t, fillLog(t, 0, 0))
	token := m.login()
	do := func(method, path string, body any) (int, map[string]any) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, m.url+"/api/v1/"+path, rd)
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		out := map[string]any{}
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	for _, pair := range []string{"USDT-BTC", "USDT-ETH"} {
		if s, out := do("POST", "config/pair/add", map[string]any{"pair": pair, "exchange": "binance", "settings": map[string]any{"strategy": "manual", "DELAY": 1}}); s != 200 {
			t.Fatalf("pair add %s = %d %v", pair, s, out)
		}
	}
	if s, out := do("POST", "system/start", nil); s != 200 {
		t.Fatalf("system/start = %d %v", s, out)
	}
	for end := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) { // the first cycle
		if s, _ := do("POST", "trade/buy/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.0001}}); s == 200 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the core never cycled")
		}
	}
	var reads, writes, errs5xx atomic.Int64
	statuses := sync.Map{}
	end := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			var lastLimit string
			for time.Now().Before(end) {
				pair := []string{"USDT-BTC", "USDT-ETH"}[rng.Intn(2)]
				var s int
				var out map[string]any
				switch k := rng.Intn(10); {
				case k < 4:
					switch rng.Intn(5) {
					case 0:
						s, out = do("GET", "orders/page?key=binance%2F"+pair+"&page=0&pageSize=50", nil)
					case 1:
						s, out = do("POST", "pnl/overview", map[string]any{"timezone": "UTC", "keys": []string{"binance/" + pair}})
					case 2:
						s, out = do("POST", "balances", map[string]any{})
					case 3:
						s, out = do("GET", "time", nil)
					default:
						s, out = do("GET", "audit/events?limit=100", nil)
					}
					reads.Add(1)
				case k < 7:
					s, out = do("POST", "trade/"+[]string{"buy", "sell"}[rng.Intn(2)]+"/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": pair, "amt": 0.0001}})
					writes.Add(1)
				case k < 9:
					if lastLimit != "" && rng.Intn(2) == 0 {
						s, out = do("POST", "trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "id": lastLimit, "type": "limit"}})
						lastLimit = ""
					} else {
						s, out = do("POST", "trade/buy", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.0001, "price": 1000}})
						if id, ok := out["id"].(float64); ok {
							lastLimit = strconv.FormatInt(int64(id), 10)
						}
					}
					writes.Add(1)
				default:
					name := fmt.Sprintf("USDT-X%d", seed)
					if rng.Intn(2) == 0 {
						s, out = do("POST", "config/pair/add", map[string]any{"pair": name, "exchange": "binance", "settings": map[string]any{"strategy": "manual", "enabled": false}})
					} else {
						s, out = do("POST", "config/pair/remove", map[string]any{"pair": name, "exchange": "binance"})
					}
					writes.Add(1)
				}
				n, _ := statuses.LoadOrStore(s, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
				if s >= 500 || s == 0 {
					errs5xx.Add(1)
					t.Logf("%d %v", s, out)
				}
			}
		}(int64(c + 1))
	}
	wg.Wait()
	counts := map[int]int64{}
	statuses.Range(func(k, v any) bool { counts[k.(int)] = v.(*atomic.Int64).Load(); return true })
	t.Logf("20 s, 8 clients: %d reads, %d writes, statuses %v, 5xx/transport errors %d", reads.Load(), writes.Load(), counts, errs5xx.Load())
	out, err := exec.Command(os.Getenv("TRADELEDGER_MEASURE_BIN"), "verify", "--data", m.data).CombinedOutput()
	t.Logf("verify on the live log (serve still running): err=%v\n%s", err, out)
	if err != nil {
		t.Errorf("verify failed on the live log")
	}
}
