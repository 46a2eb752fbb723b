package http

import (
	"net/http"

	"github.com/gorilla/mux"
)

func (s *Server) registerTimeRoutes(r *mux.Router) {
	r.HandleFunc("/time", s.handleTime).Methods("GET")
}

type timeResponse struct {
	ServerTime int64 `json:"serverTime"`
}

// handleTime answers GET /api/v1/time with the server's clock in ms.
func (s *Server) handleTime(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, timeResponse{ServerTime: s.Clock.Now().UnixMilli()})
}
