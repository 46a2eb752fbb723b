package main

// Measurements of issue 36's outside probes against a real `tradeledger
// serve` process (see hostile_measure_test.go for how to run them). They
// print figures and assert nothing about speed or memory.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// measureTradingLog writes n filled orders (a buy and a sell alternating,
// one an hour from 2024-05-01) into a fresh data dir initialized with the
// measurement wallet and password.
func measureTradingLog(t *testing.T, n int) string {
	data, d := openMeasureDataDir(t)
	defer d.Close()
	clock := domain.NewManualClock(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	var wg sync.WaitGroup
	evs := make([][]domain.Event, n+1)
	for i := 1; i <= n; i++ {
		clock.Advance(time.Hour)
		evs[i] = filledOrderEvents(clock, i, decimal.MustDecimal("0.1"))
	}
	next := atomic.Int64{}
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)); i <= n; i = int(next.Add(1)) {
				if _, err := d.Store.Append(context.Background(), domain.OrderStream(int64(i)), domain.NoStream, evs[i]...); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return data
}

// openMeasureDataDir opens a fresh data dir initialized with the
// measurement wallet and password; it returns its path and the open dir.
func openMeasureDataDir(t *testing.T) (string, *DataDir) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("TRADELEDGER_WALLET", measureWallet)
	t.Setenv("TRADELEDGER_PASSWORD", measurePassword)
	d, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return data, d
}

// TestMeasureAsOfBurst: 64 reads of pnl/overview, each as of another past
// time (so that none shares a build), 32 at a time, on a service of 8,000
// orders: the peak RSS while they run, their statuses, and the builds
// still under way once every client left (the service's CPU then).
func TestMeasureAsOfBurst(t *testing.T) {
	if os.Getenv("TRADELEDGER_MEASURE_BIN") == "" {
		t.Skip("TRADELEDGER_MEASURE_BIN is not set")
	}
	m := startMeasured(t, measureTradingLog(t, 8000))
	token := m.login()
	time.Sleep(2 * time.Second)
	idle := m.rss()
	var peak atomic.Int64
	peak.Store(int64(idle))
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if r := int64(m.rss()); r > peak.Load() {
				peak.Store(r)
			}
		}
	}()
	took, counts := asOfBurst(m, token, 0, 20*time.Second)
	close(stop)
	<-sampled
	t.Logf("8,000 orders, 64 as-of reads 32 at a time: RSS idle %.0f MiB, peak %d MiB; %s; statuses %v", idle, peak.Load(), took.Round(time.Millisecond), counts)

	// Clients that give up after 20 ms: do their builds go on?
	cpu0 := processCPUOf(t, m.cmd.Process.Pid)
	took, counts = asOfBurst(m, token, 1000, 20*time.Millisecond)
	cpu1 := processCPUOf(t, m.cmd.Process.Pid)
	time.Sleep(3 * time.Second)
	cpu2 := processCPUOf(t, m.cmd.Process.Pid)
	t.Logf("64 more, each client leaving after 20 ms: %s, statuses %v; service CPU while they ran %s, in the 3 s after they all left %s",
		took.Round(time.Millisecond), counts, cpu1-cpu0, cpu2-cpu1)
}

// asOfBurst sends 64 pnl/overview reads, each as of another time (from
// the offset-th hour-step on), 32 at a time, each client giving up after
// timeout, and returns how long they took and their statuses.
func asOfBurst(m *measured, token string, offset int64, timeout time.Duration) (time.Duration, map[string]int64) {
	statuses := sync.Map{}
	client := &http.Client{Timeout: timeout}
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= 64; i = next.Add(1) {
				asOf := time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC).Add(time.Duration(i+offset) * 7 * time.Hour).UnixMilli()
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/pnl/overview?asOf=%d", m.url, asOf), strings.NewReader(`{"timezone":"UTC","keys":["All"]}`))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				status := "error"
				if resp, err := client.Do(req); err == nil {
					status = fmt.Sprint(resp.StatusCode)
					if ra := resp.Header.Get("Retry-After"); ra != "" {
						status += " Retry-After " + ra
					}
					resp.Body.Close()
				}
				n, _ := statuses.LoadOrStore(status, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
		}()
	}
	wg.Wait()
	counts := map[string]int64{}
	statuses.Range(func(k, v any) bool { counts[k.(string)] = v.(*atomic.Int64).Load(); return true })
	return time.Since(start), counts
}

// processCPUOf returns the user+system CPU time of process pid so far.
func processCPUOf(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * time.Second / 100
}
