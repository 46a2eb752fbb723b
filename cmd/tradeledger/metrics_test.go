package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// scrape fetches url (with token, if any) and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, url, token string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q, want the text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	return resp.StatusCode, fams
}

// metricValue returns the value of the family's sample whose labels
// include want (counter, gauge or histogram count), and whether there is
// one.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// TestMetricsScrape runs serve with --metrics-listen, trades, fails a login
// and scrapes both listeners: every metric the operator's guide names is
// there with the values the log and the requests imply.
func TestMetricsScrape(t *testing.T) {
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	clock := domain.NewManualClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", ""
	m.Config.MetricsListen = "127.0.0.1:0"
	m.Logger, m.Clock, m.ManualCycles, m.ManualCheckpoints = zap.NewNop(), clock, true, true
	e := &tradingE2E{t: t, m: m, clock: clock, token: runAndLogin(t, m, "e2e trading password")}
	if status, _ := serveLogin(t, m, e2eWallet, "wrong password"); status != 401 {
		t.Fatalf("bad login = %d", status)
	}
	e.startManualPair("binance", "USDT-BTC")
	e.cycle("60000")
	e.order("trade/buy/market", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01})
	e.order("trade/buy", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01, "price": 50000})

	// The main listener wants a token.
	if status, _ := scrape(t, m.Server.URL()+"/metrics", ""); status != 401 {
		t.Fatalf("/metrics without a token = %d, want 401", status)
	}
	_, fams := scrape(t, m.Server.URL()+"/metrics", e.token)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64 // -1: present, any value
	}{
		{"tradeledger_orders_total", map[string]string{"exchange": "binance", "outcome": "placed"}, 2},
		{"tradeledger_orders_total", map[string]string{"exchange": "binance", "outcome": "filled"}, 1},
		{"tradeledger_login_failures_total", nil, 1},
		{"tradeledger_http_requests_total", map[string]string{"route": "/api/v1/auth/login", "method": "POST", "status": "401"}, 1},
		{"tradeledger_http_requests_total", map[string]string{"route": "/api/v1/auth/login", "method": "POST", "status": "200"}, 1},
		{"tradeledger_http_requests_total", map[string]string{"route": "/metrics", "method": "GET", "status": "401"}, 1},
		{"tradeledger_http_request_duration_seconds", map[string]string{"route": "/api/v1/trade/buy", "method": "POST"}, 1},
		{"tradeledger_projection_lag", nil, 0},
		{"tradeledger_log_head", nil, -1},
		{"tradeledger_append_duration_seconds", nil, -1},
		{"tradeledger_append_batch_events", nil, -1},
		{"tradeledger_fsync_duration_seconds", nil, -1},
		{"tradeledger_sse_streams_open", nil, 0},
		{"go_goroutines", nil, -1},
	} {
		got, ok := metricValue(fams, c.name, c.labels)
		if !ok {
			t.Errorf("%s%v missing", c.name, c.labels)
		} else if c.want >= 0 && got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	head, _ := m.DataDir.Store.Head(context.Background())
	if got, _ := metricValue(fams, "tradeledger_log_head", nil); got != float64(head) {
		t.Errorf("tradeledger_log_head = %v, want %d", got, head)
	}
	if got, _ := metricValue(fams, "tradeledger_append_duration_seconds", nil); got < 3 {
		t.Errorf("append_duration_seconds counted %v appends, want several", got)
	}

	// --metrics-listen serves the same without a token.
	status, fams := scrape(t, m.MetricsURL()+"/metrics", "")
	if status != 200 {
		t.Fatalf("--metrics-listen /metrics = %d", status)
	}
	if got, _ := metricValue(fams, "tradeledger_orders_total", map[string]string{"exchange": "binance", "outcome": "placed"}); got != 2 {
		t.Errorf("--metrics-listen orders placed = %v, want 2", got)
	}
}
