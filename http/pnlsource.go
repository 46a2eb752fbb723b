package http

import (
	"net/http"
	"time"

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

// pnlReaderAt is pnlReader for a request that names asOf and method as p
// (asof.go): the live reader when it names neither (or the live method),
// else the Ledger of the past state, marked on w. now is the instant the
// answer speaks of: the server's clock or asOf.
func (s *Server) pnlReaderAt(w http.ResponseWriter, r *http.Request, p pastRead) (PnlReader, time.Time, error) {
	live := s.liveMethod()
	if !p.past && (!p.named || p.method == live) {
		l, err := s.pnlReader()
		return l, s.Clock.Now(), err
	}
	method := p.method
	if !p.named {
		method = live
	}
	st, err := s.pastState(r, p, method)
	if err != nil {
		return nil, time.Time{}, err
	}
	markAsOf(w, p)
	if !p.past {
		return st.Ledger, s.Clock.Now(), nil
	}
	return st.Ledger, time.UnixMilli(p.asOf), nil
}
