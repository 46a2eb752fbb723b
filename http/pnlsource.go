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

// pnlReaderAt is pnlReader for a request that may name asOf and method
// (asof.go): the live reader when it names neither (or the live method),
// else the Ledger of the past state, marked on w. now is the instant the
// answer speaks of: the server's clock or asOf.
func (s *Server) pnlReaderAt(w http.ResponseWriter, r *http.Request) (PnlReader, time.Time, error) {
	q := r.URL.Query()
	asOf, err := s.queryAsOf(q)
	if err != nil {
		return nil, time.Time{}, err
	}
	method, named, err := queryMethod(q)
	if err != nil {
		return nil, time.Time{}, err
	}
	live := s.liveMethod()
	if asOf == 0 && (!named || method == live) {
		l, err := s.pnlReader()
		return l, s.Clock.Now(), err
	}
	if !named {
		method = live
	}
	st, err := s.pastState(r, asOf, method)
	if err != nil {
		return nil, time.Time{}, err
	}
	markAsOf(w, asOf)
	if asOf == 0 {
		return st.Ledger, s.Clock.Now(), nil
	}
	return st.Ledger, time.UnixMilli(asOf), nil
}
