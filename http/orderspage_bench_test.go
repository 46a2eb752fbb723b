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

// benchLedger returns a Ledger fed with orders synthetic orders spread over
// pairs pairs (binance/USDT-C0 …), one fill each, 2.5 s apart from
// 2024-01-01 (deterministic).
func benchLedger(b testing.TB, orders, pairs int) *projections.Ledger {
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
	return l
}

// benchServer serves l on 127.0.0.1:0 and returns a function doing an
// authorized request that must answer 200.
func benchServer(b *testing.B, l *projections.Ledger) (do func(method, path, body string)) {
	s := NewServer()
	clock := domain.NewManualClock(time.Date(2024, 1, 30, 12, 0, 0, 0, time.UTC))
	s.Clock, s.Ledger = clock, l
	s.Auth = &Authenticator{Secret: []byte(strings.Repeat("k", 32)), TokenTTL: time.Hour, Clock: clock}
	if err := s.Open("127.0.0.1:0", ""); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	token, _ := s.Auth.IssueToken("bench")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return func(method, path, body string) {
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
}

// BenchmarkOrdersPageHTTP serves GET orders/page with pageSize=100 over
// 200,000 orders (10 pairs of 20,000; random pages over the whole history)
// and, as the reference, GET /api/v1/time on the same server, 8 clients
// over loopback. The two loads alternate in rounds so that both meet the
// same machine load; it reports each one's throughput and p99 and the
// ratio of their throughputs (target ≥ 0.6, issue 19).
//
//	go test ./http -run XXX -bench OrdersPageHTTP -benchtime 1x
func BenchmarkOrdersPageHTTP(b *testing.B) {
	const orders, pairs, pageSize = 200_000, 10, 100
	do := benchServer(b, benchLedger(b, orders, pairs))
	pages := orders / pairs / pageSize
	cases := []struct {
		name string
		f    func(r *rand.Rand)
	}{
		{"time", func(*rand.Rand) { do("GET", "/api/v1/time", "") }},
		{"orders-page", func(r *rand.Rand) {
			do("GET", "/api/v1/orders/page?key=binance%2FUSDT-C"+strconv.Itoa(r.Intn(pairs))+"&page="+strconv.Itoa(r.Intn(pages))+
				"&pageSize="+strconv.Itoa(pageSize), "")
		}},
	}
	const clients, perClient, rounds = 8, 100, 16
	for range b.N {
		lat := make([][]time.Duration, len(cases))
		spent := make([]time.Duration, len(cases))
		for round := range rounds {
			for k, c := range cases {
				l := make([]time.Duration, clients*perClient)
				var wg sync.WaitGroup
				start := time.Now()
				for w := 0; w < clients; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						r := rand.New(rand.NewSource(int64(round*clients + w)))
						for i := 0; i < perClient; i++ {
							t := time.Now()
							c.f(r)
							l[w*perClient+i] = time.Since(t)
						}
					}(w)
				}
				wg.Wait()
				spent[k] += time.Since(start)
				lat[k] = append(lat[k], l...)
			}
		}
		var rates []float64
		for k, c := range cases {
			sort.Slice(lat[k], func(i, j int) bool { return lat[k][i] < lat[k][j] })
			rate := float64(len(lat[k])) / spent[k].Seconds()
			rates = append(rates, rate)
			b.ReportMetric(float64(lat[k][len(lat[k])*99/100].Microseconds()), c.name+"-p99-µs")
			b.ReportMetric(rate, c.name+"-req/s")
		}
		b.ReportMetric(rates[1]/rates[0], "page/time")
	}
}
