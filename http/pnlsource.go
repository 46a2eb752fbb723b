package http

import (
	"github.com/tradeledger/tradeledger/projections"
)

// PnlReader is what the PNL routes (pnl.go) and assets/total (assets.go)
// read: the one contract, projections.PnlReader.
type PnlReader = projections.PnlReader

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
