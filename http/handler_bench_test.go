package http

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// instantTrader answers every order at once with the next id: what is left
// of a placement is the HTTP layer's own work.
type instantTrader struct {
	Trader
	next int64
}

func (t *instantTrader) Submit(ctx context.Context, req domain.OrderRequest) (int64, error) {
	if err := req.Validate(); err != nil {
		return 0, err
	}
	t.next++
	return t.next, nil
}

// BenchmarkTradeHandler is one trade/buy through the main handler (router,
// request basics, bearer check, body decoding, answer) in process, with a
// Trader that answers at once: the HTTP layer's own CPU and allocations
// per order, without the network, the store or the engine. "nop-log" has
// no request log (as BenchmarkTradePlacementHTTP); "json-log" writes the
// production JSON log line and records request metrics, as tradeledger
// serve does.
func BenchmarkTradeHandler(b *testing.B) {
	for _, logged := range []bool{false, true} {
		name := "nop-log"
		if logged {
			name = "json-log"
		}
		b.Run(name, func(b *testing.B) {
			clock := domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			s := NewServer()
			s.Clock, s.Trader = clock, &instantTrader{}
			s.Auth = &Authenticator{Secret: bytes.Repeat([]byte{9}, 32), TokenTTL: time.Hour, Clock: clock}
			if logged {
				f, err := os.Create(filepath.Join(b.TempDir(), "log.json"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				cfg := zap.NewProductionConfig()
				cfg.Sampling = nil
				cfg.OutputPaths = []string{f.Name()}
				if s.Logger, err = cfg.Build(); err != nil {
					b.Fatal(err)
				}
				s.ObserveRequest = func(route, method string, status int, d time.Duration) {}
			}
			h := s.Handler()
			token, err := s.Auth.IssueToken("bench")
			if err != nil {
				b.Fatal(err)
			}
			body := []byte(`{"data":{"exch":"binance","pair":"USDT-BTC","amt":0.001,"price":1000}}`)
			auth := "Bearer " + token
			w := &discardWriter{h: http.Header{}}
			tmpl := httptest.NewRequest("POST", "/api/v1/trade/buy", nil)
			tmpl.Header.Set("Authorization", auth)
			tmpl.Header.Set("Content-Type", "application/json")
			tmpl.ContentLength = int64(len(body))
			rd := &bytes.Reader{}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				// A shallow copy: nothing on the way writes the request's
				// headers.
				req := *tmpl
				rd.Reset(body)
				req.Body = io.NopCloser(rd)
				clear(w.h)
				w.status = 0
				h.ServeHTTP(w, &req)
				if w.status != 200 {
					b.Fatalf("status %d", w.status)
				}
			}
			// CPU time moves less than wall time on a shared box.
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// discardWriter is a ResponseWriter that keeps the status only.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	return io.Discard.Write(b)
}
