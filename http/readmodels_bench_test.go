package http

import (
	"io"
	"math/rand"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// BenchmarkReadModelHTTP serves a Ledger of 1M orders across 50 pairs and
// reports, for GET orders/page, POST pnl/overview (["All"]) and, as the
// reference, GET /api/v1/time on the same server: p99 latency and
// throughput with 8 concurrent clients over loopback. Run once:
//
//	go test ./http -run XXX -bench ReadModelHTTP -benchtime 1x
func BenchmarkReadModelHTTP(b *testing.B) {
	const orders, pairs = 1_000_000, 50
	l := projections.NewLedger(domain.LOFO)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < orders; i++ {
		id := strconv.Itoa(i + 1)
		side := "buy"
		if rng.Intn(2) == 0 {
			side = "sell"
		}
		price := strconv.Itoa(1000+rng.Intn(200)) + ".5"
		stream := "order-" + id
		tm := t0 + int64(i)*2500
		req := domain.Event{Stream: stream, Type: domain.TypeOrderRequested, Time: tm, Position: uint64(2*i + 1), Data: []byte(`{"orderId":` + id +
			`,"exchange":"binance","pair":"USDT-C` + strconv.Itoa(i%pairs) + `","side":"` + side + `","kind":"limit","amount":"0.5","price":"` + price + `","clientOrderId":"c"}`)}
		fill := domain.Event{Stream: stream, Type: domain.TypeOrderFilled, Time: tm, Position: uint64(2*i + 2), Data: []byte(
			`{"fillId":"f","price":"` + price + `","quantity":"0.5","fee":"0.001","feeAsset":"USDT"}`)}
		if err := l.Apply(&req); err != nil {
			b.Fatal(err)
		}
		if err := l.Apply(&fill); err != nil {
			b.Fatal(err)
		}
	}
	s := NewServer()
	clock := domain.NewManualClock(time.Date(2024, 1, 30, 12, 0, 0, 0, time.UTC))
	s.Clock, s.Ledger = clock, l
	s.Auth = &Authenticator{Secret: []byte(strings.Repeat("k", 32)), TokenTTL: time.Hour, Clock: clock}
	if err := s.Open("127.0.0.1:0", ""); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	token, _ := s.Auth.IssueToken("bench")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
	}
	cases := []struct {
		name string
		f    func(r *rand.Rand)
	}{
		{"time", func(*rand.Rand) { do("GET", "/api/v1/time", "") }},
		{"orders-page", func(r *rand.Rand) {
			do("GET", "/api/v1/orders/page?key=binance%2FUSDT-C"+strconv.Itoa(r.Intn(pairs))+"&page="+strconv.Itoa(r.Intn(400))+"&pageSize=50", "")
		}},
		{"pnl-overview", func(*rand.Rand) {
			do("POST", "/api/v1/pnl/overview", `{"timezone":"Asia/Kathmandu","keys":["All"]}`)
		}},
	}
	const clients, perClient = 8, 1000
	for range b.N {
		var timeRate float64
		for _, c := range cases {
			lat := make([]time.Duration, clients*perClient)
			var wg sync.WaitGroup
			start := time.Now()
			for w := 0; w < clients; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					r := rand.New(rand.NewSource(int64(w)))
					for i := 0; i < perClient; i++ {
						t := time.Now()
						c.f(r)
						lat[w*perClient+i] = time.Since(t)
					}
				}(w)
			}
			wg.Wait()
			rate := float64(len(lat)) / time.Since(start).Seconds()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), c.name+"-p99-µs")
			b.ReportMetric(rate, c.name+"-req/s")
			if c.name == "time" {
				timeRate = rate
			} else {
				b.ReportMetric(100*rate/timeRate, c.name+"-%-of-time")
			}
		}
	}
}
