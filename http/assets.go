package http

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// assetsHandler serves the asset value history (POST assets/total) from
// the PnlReader the PNL routes read (503 without one): the value in base
// of every balance of the exchange over [start, end] (ms), at 15-minute
// resolution; see projections/assets.go for the valuation rules.
type assetsHandler struct {
	reader PnlReader
}

// ready is errNoLedger without a PnlReader.
func (h *assetsHandler) ready() error {
	if h.reader == nil {
		return errNoLedger
	}
	return nil
}

func (h *assetsHandler) register(r *mux.Router) {
	r.Handle("/assets/total", requires(h.ready, h.handleAssetsTotal)).Methods("POST")
}

type assetsTotalRequest struct {
	Exchange string `json:"exchange"`
	Base     string `json:"base"`
	Start    *int64 `json:"start"`
	End      *int64 `json:"end"`
}

func (h *assetsHandler) handleAssetsTotal(w http.ResponseWriter, r *http.Request) error {
	var req assetsTotalRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	switch {
	case req.Exchange == "":
		return domain.Errorf(domain.EINVALID, "exchange is required")
	case req.Base == "":
		return domain.Errorf(domain.EINVALID, "base is required (the currency to value in, e.g. USDT)")
	case req.Start == nil:
		return domain.Errorf(domain.EINVALID, "start is required (ms since the epoch)")
	case req.End == nil:
		return domain.Errorf(domain.EINVALID, "end is required (ms since the epoch)")
	case *req.End < *req.Start:
		return domain.Errorf(domain.EINVALID, "end must not be before start")
	}
	writeJSON(w, http.StatusOK, h.reader.AssetHistory(req.Exchange, req.Base, *req.Start, *req.End))
	return nil
}
