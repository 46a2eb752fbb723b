package http

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// registerSystemRoutes serves system/start and system/stop, and (beyond
// the spec) GET system/status: {running} says whether the bot core is
// started. start and stop take no
// parameters (a body, if any, is ignored) and answer the current
// configuration document with every secret masked ("********"), as
// config/full shows it. Start appends SystemStarted and stop appends
// SystemStopped to the system stream, unless the core is already in that
// state (the call is then a no-op that still answers the configuration);
// the core follows the log, so the state survives a restart. Needs s.Core
// and s.Config (503 without them).
func (s *Server) registerSystemRoutes(r *mux.Router) {
	r.HandleFunc("/system/start", s.handleSystem(true)).Methods("POST")
	r.HandleFunc("/system/stop", s.handleSystem(false)).Methods("POST")
	r.HandleFunc("/system/status", s.handleSystemStatus).Methods("GET")
}

type systemStatusResponse struct {
	Running bool `json:"running"`
}

func (s *Server) handleSystemStatus(w http.ResponseWriter, r *http.Request) {
	if err := s.coreReady(); err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, systemStatusResponse{Running: s.Core.Running()})
}

func (s *Server) handleSystem(start bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.coreReady(); err != nil {
			Error(w, r, err)
			return
		}
		if s.Config == nil {
			Error(w, r, domain.Errorf(domain.EUNAVAILABLE, "configuration is not available"))
			return
		}
		_, err := eventstore.Run(r.Context(), s.commands(), eventstore.Command[bool]{
			Stream: domain.StreamSystem,
			Load: func(context.Context) (bool, domain.ExpectedVersion, error) {
				return s.Core.Running(), domain.Any, nil
			},
			Decide: func(running bool) ([]domain.Event, error) {
				return domain.DecideSystem(running, start, s.Clock), nil
			},
		})
		if err != nil {
			Error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, json.RawMessage(s.Config.Public()))
	}
}
