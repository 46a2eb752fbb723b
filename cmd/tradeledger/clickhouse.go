package main

import (
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// closeClickHouse stops the sink and the readers.
func (m *Main) closeClickHouse() {
	if m.pnlReader != nil {
		m.pnlReader.Close()
	}
	if m.fleet != nil {
		m.fleet.Close()
	}
	if m.Sink != nil {
		m.Sink.Close()
	}
}

// openClickHouse starts the analytics sink when --clickhouse is set: it
// follows the log on its own subscription from the checkpoint ClickHouse
// holds, retries outages with backoff (the API keeps serving from memory)
// and reports its lag on /healthz. Its rows are tagged with --instance
// (fleetInstance), so that several services share one database; the
// fleet routes read them all (clickhouse.Fleet). --read-from clickhouse
// needs it, and reads this instance's rows alone.
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
	instance, log, err := fleetInstance(m.Config.Instance, m.DataDir.CheckpointKey)
	if err != nil {
		return err
	}
	sink := clickhouse.NewSink(m.Config.ClickHouse, m.DataDir.Store)
	sink.Method, sink.Logger, sink.Clock = method, m.Logger.Named("clickhouse"), m.Clock
	sink.Instance, sink.Log = instance, log
	if err := sink.Open(); err != nil {
		return fmt.Errorf("--clickhouse: %w", err)
	}
	m.Sink = sink
	s.Sink = sink
	fleet := clickhouse.NewFleet(m.Config.ClickHouse)
	fleet.Logger = m.Logger.Named("clickhouse")
	if err := fleet.Open(); err != nil {
		return fmt.Errorf("--clickhouse: %w", err)
	}
	m.fleet = fleet
	s.Fleet = fleet
	if m.Config.ReadFrom == "clickhouse" {
		r := clickhouse.NewReader(m.Config.ClickHouse, method)
		r.Instance = instance
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
	m.Logger.Info("clickhouse sink started", zap.String("database", sink.Database()), zap.String("instance", instance),
		zap.String("method", method.String()))
	return nil
}

// fleetInstance returns the name this service's rows carry in a ClickHouse
// database several services share — name when given, else the id of the
// log's origin (the name its checkpoints are signed under, without
// transparency.OriginPrefix) — and the log's identity its sink claims the
// name with (the origin). A name that is not one (clickhouse.CheckInstance)
// is EINVALID naming --instance.
func fleetInstance(name string, key *transparency.Key) (instance, log string, err error) {
	log = key.Origin()
	if name == "" {
		name = strings.TrimPrefix(log, transparency.OriginPrefix)
	}
	if err := clickhouse.CheckInstance(name); err != nil {
		return "", "", domain.Errorf(domain.EINVALID, "--instance: %s", domain.ErrorMessage(err))
	}
	return name, log, nil
}
