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
// started; importedAt (ms), present while the core is stopped, says the
// configuration in force came from an import then and the core has not
// been started since (an import never starts it: the dashboard shows such
// a core with what it would trade and a button to start it). start and stop take no
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
	Running    bool  `json:"running"`
	ImportedAt int64 `json:"importedAt,omitempty"`
}

func (s *Server) handleSystemStatus(w http.ResponseWriter, r *http.Request) {
	if err := s.coreReady(); err != nil {
		Error(w, r, err)
		return
	}
	resp := systemStatusResponse{Running: s.Core.Running()}
	if !resp.Running {
		at, err := s.importedStopped(r.Context())
		if err != nil {
			Error(w, r, err)
			return
		}
		resp.ImportedAt = at
	}
	writeJSON(w, http.StatusOK, resp)
}

// importedStopped returns the time (ms) of the configuration's last change
// when an import made it and no SystemStarted came after it, else 0. It
// reads the config stream's last event (the Config read model's version)
// and the system stream, which holds a few events per start and stop.
func (s *Server) importedStopped(ctx context.Context) (int64, error) {
	if s.Store == nil || s.Config == nil {
		return 0, nil
	}
	v := s.Config.Version()
	if v < 0 {
		return 0, nil
	}
	last, err := readOne(ctx, s.Store, domain.StreamConfig, v)
	if err != nil || last == nil || last.Actor != domain.ActorImport {
		return 0, err
	}
	it := s.Store.ReadStream(ctx, domain.StreamSystem, 0, 0)
	defer it.Close()
	for it.Next() {
		if e := it.Event(); e.Type == domain.TypeSystemStarted && e.Position > last.Position {
			return 0, nil
		}
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	return last.Time, nil
}

// readOne returns the event of stream at version v (nil if there is none).
func readOne(ctx context.Context, store domain.EventStore, stream string, v int64) (*domain.Event, error) {
	it := store.ReadStream(ctx, stream, v, 1)
	defer it.Close()
	if !it.Next() {
		return nil, it.Err()
	}
	e := it.Event()
	return &e, nil
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
