package http

import (
	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// PnlReader is what the PNL routes (pnl.go) and assets/total (assets.go)
// read. *projections.Ledger implements it from memory; the ClickHouse
// reader (projections/clickhouse.Reader) implements it from the analytics
// tables with the same answers for the same log (serve --read-from
// clickhouse).
type PnlReader interface {
	Overview(q projections.OverviewQuery) (*projections.Overview, error)
	Daily(q projections.DailyQuery) ([]projections.DayPnl, domain.Decimal, string, error)
	Sum(scope projections.PnlScope, fromMs, toMs int64) (projections.SumResult, error)
	Total(key string) (projections.PairTotal, error)
	AssetHistory(exchange, base string, start, end int64) []projections.AssetPoint
}

var _ PnlReader = (*projections.Ledger)(nil)

// pnlReader returns Server.Pnl when set, else the in-memory Ledger; with
// neither, EUNAVAILABLE.
func (s *Server) pnlReader() (PnlReader, error) {
	if s.Pnl != nil {
		return s.Pnl, nil
	}
	l, err := s.ledger()
	if err != nil {
		return nil, err
	}
	return l, nil
}
