package http

import (
	"net/http"
)

// healthResponse is /healthz's body: ready means the store answers and the
// projections have replayed the log.
type healthResponse struct {
	Status    string `json:"status"`
	Head      uint64 `json:"head"`
	Applied   uint64 `json:"applied"`
	LagBehind uint64 `json:"lag"`
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.Store == nil || s.Runner == nil {
		writeError(w, r, http.StatusServiceUnavailable, "not ready")
		return
	}
	head, err := s.Store.Head(r.Context())
	if err != nil {
		Error(w, r, err)
		return
	}
	applied := s.Runner.Position()
	resp := healthResponse{Status: "ok", Head: head, Applied: applied}
	if head > applied {
		resp.LagBehind = head - applied
	}
	writeJSON(w, http.StatusOK, resp)
}
