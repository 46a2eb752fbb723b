package main

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// closeClickHouse stops the sink and the reader.
func (m *Main) closeClickHouse() {
	if m.pnlReader != nil {
		m.pnlReader.Close()
	}
	if m.Sink != nil {
		m.Sink.Close()
	}
}

// openClickHouse starts the analytics sink when --clickhouse is set: it
// follows the log on its own subscription from the checkpoint ClickHouse
// holds, retries outages with backoff (the API keeps serving from memory)
// and reports its lag on /healthz. --read-from clickhouse needs it.
func (m *Main) openClickHouse(s *tlhttp.Server) error {
	switch m.Config.ReadFrom {
	case "", "memory":
	case "clickhouse":
		if m.Config.ClickHouse == "" {
			return fmt.Errorf("--read-from clickhouse needs --clickhouse URL")
		}
	default:
		return fmt.Errorf("--read-from %q: use memory or clickhouse", m.Config.ReadFrom)
	}
	if m.Config.ClickHouse == "" {
		return nil
	}
	method, err := domain.ParsePnlMethod(m.Config.PnlMethod)
	if err != nil {
		return fmt.Errorf("--pnl-method: %w", err)
	}
	sink := clickhouse.NewSink(m.Config.ClickHouse, m.DataDir.Store)
	sink.Method, sink.Logger, sink.Clock = method, m.Logger.Named("clickhouse"), m.Clock
	if err := sink.Open(); err != nil {
		return fmt.Errorf("--clickhouse: %w", err)
	}
	m.Sink = sink
	s.Sink = sink
	if m.Config.ReadFrom == "clickhouse" {
		r := clickhouse.NewReader(m.Config.ClickHouse, method)
		r.Logger = m.Logger.Named("clickhouse")
		r.Checkpoint = sink.Checkpoint // the overview cache's version without a query
		// Through an outage the PNL routes answer from memory.
		r.Fallback = func() clickhouse.PnlSource {
			if s.Ledger == nil {
				return nil
			}
			return s.Ledger
		}
		if err := r.Open(); err != nil {
			return fmt.Errorf("--clickhouse: %w", err)
		}
		m.pnlReader = r
		s.Pnl = r
	}
	m.Logger.Info("clickhouse sink started", zap.String("database", sink.Database()), zap.String("method", method.String()))
	return nil
}
