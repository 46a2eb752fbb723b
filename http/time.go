package http

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// timeHandler serves GET /api/v1/time from the server's clock.
type timeHandler struct {
	clock domain.Clock
}

func (h *timeHandler) register(r *mux.Router) {
	r.Handle("/time", handlerFunc(h.handleTime)).Methods("GET")
}

type timeResponse struct {
	ServerTime int64 `json:"serverTime"`
}

// handleTime answers GET /api/v1/time with the server's clock in ms.
func (h *timeHandler) handleTime(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, timeResponse{ServerTime: h.clock.Now().UnixMilli()})
	return nil
}
