package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/eventstore/esdb"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections/metrics"
)

// newMetrics creates the service's metrics before the replay: they count
// orders and failed logins from the log (a projection), and the embedded
// store reports its appends, batches and syncs to them.
func (m *Main) newMetrics() {
	m.Metrics = metrics.New()
	switch s := m.DataDir.Store.(type) {
	case *sqlite.Store:
		s.SetObserver(m.Metrics)
	case *esdb.Store: // append latency only: batching and fsync are the server's
		s.SetObserver(m.Metrics)
	}
	m.Metrics.WatchLog(m.DataDir.Store.Head, m.Runner.Position)
}

// wireMetrics serves the metrics: at /metrics on the main listener behind
// the bearer token, and, when --metrics-listen is set, without a token on
// that address (for a scraper on a private network). Call with the
// server's dependencies set, before it opens.
func (m *Main) wireMetrics(s *tlhttp.Server) {
	if m.Sink != nil {
		m.Metrics.WatchSink(m.Sink.Lag)
	}
	if s.Audit != nil {
		m.Metrics.WatchStreams(s.Audit.Streams)
	}
	if m.models.accounts != nil {
		m.Metrics.WatchDiscrepancies(m.models.accounts.Discrepancies)
	}
	s.Metrics, s.ObserveRequest = m.Metrics.Handler(), m.Metrics.ObserveRequest
}

// openMetricsListener listens on --metrics-listen, if set.
func (m *Main) openMetricsListener() error {
	if m.Config.MetricsListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.Config.MetricsListen)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Metrics.Handler())
	m.metricsLn = ln
	m.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := m.metricsSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Logger.Error("metrics listener stopped", zap.Error(err))
		}
	}()
	m.Logger.Info("serving metrics", zap.String("url", m.MetricsURL()))
	return nil
}

// MetricsURL is the base URL of the --metrics-listen listener, or "".
func (m *Main) MetricsURL() string {
	if m.metricsLn == nil {
		return ""
	}
	return "http://" + m.metricsLn.Addr().String()
}

func (m *Main) closeMetrics() {
	if m.metricsSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), tlhttp.DefaultShutdownTimeout)
		defer cancel()
		m.metricsSrv.Shutdown(ctx)
	}
}
