package http

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// Asset value history (POST assets/total): the value in base of every
// balance of the exchange over [start, end] (ms), at 15-minute resolution;
// see projections/assets.go for the valuation rules.
func (s *Server) registerAssetRoutes(r *mux.Router) {
	r.HandleFunc("/assets/total", s.handleAssetsTotal).Methods("POST")
}

type assetsTotalRequest struct {
	Exchange string `json:"exchange"`
	Base     string `json:"base"`
	Start    *int64 `json:"start"`
	End      *int64 `json:"end"`
}

func (s *Server) handleAssetsTotal(w http.ResponseWriter, r *http.Request) {
	l, err := s.pnlReader()
	if err != nil {
		Error(w, r, err)
		return
	}
	var req assetsTotalRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	switch {
	case req.Exchange == "":
		err = domain.Errorf(domain.EINVALID, "exchange is required")
	case req.Base == "":
		err = domain.Errorf(domain.EINVALID, "base is required (the currency to value in, e.g. USDT)")
	case req.Start == nil:
		err = domain.Errorf(domain.EINVALID, "start is required (ms since the epoch)")
	case req.End == nil:
		err = domain.Errorf(domain.EINVALID, "end is required (ms since the epoch)")
	case *req.End < *req.Start:
		err = domain.Errorf(domain.EINVALID, "end must not be before start")
	}
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l.AssetHistory(req.Exchange, req.Base, *req.Start, *req.End))
}
