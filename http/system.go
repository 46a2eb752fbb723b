package http

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// CoreStatus says whether the bot core is started (exchange/engine: the
// system stream's last SystemStarted or SystemStopped).
type CoreStatus interface {
	Running() bool
}

// systemHandler serves system/start and system/stop, and (beyond
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
// the core follows the log, so the state survives a restart. It reads the
// core's CoreStatus and the configuration (503 without them), reads the
// config and system streams for importedAt, and sends start and stop
// through the command path.
type systemHandler struct {
	core   CoreStatus
	config ConfigReader
	log    StreamReader
	cmds   *eventstore.Commands
	clock  domain.Clock
}

func (h *systemHandler) register(r *mux.Router) {
	r.Handle("/system/start", h.handleSystem(true)).Methods("POST")
	r.Handle("/system/stop", h.handleSystem(false)).Methods("POST")
	r.Handle("/system/status", requires(h.ready, h.handleSystemStatus)).Methods("GET")
}

func (h *systemHandler) ready() error {
	if h.core == nil {
		return errNoCore
	}
	return nil
}

type systemStatusResponse struct {
	Running    bool  `json:"running"`
	ImportedAt int64 `json:"importedAt,omitempty"`
}

func (h *systemHandler) handleSystemStatus(w http.ResponseWriter, r *http.Request) error {
	resp := systemStatusResponse{Running: h.core.Running()}
	if !resp.Running {
		at, err := h.importedStopped(r.Context())
		if err != nil {
			return err
		}
		resp.ImportedAt = at
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// importedStopped returns the time (ms) of the configuration's last change
// when an import made it and no SystemStarted came after it, else 0. It
// reads the config stream's last event (the Config read model's version)
// and the system stream, which holds a few events per start and stop.
func (h *systemHandler) importedStopped(ctx context.Context) (int64, error) {
	if h.log == nil || h.config == nil {
		return 0, nil
	}
	v := h.config.Version()
	if v < 0 {
		return 0, nil
	}
	last, err := readOne(ctx, h.log, domain.StreamConfig, v)
	if err != nil || last == nil || last.Actor != domain.ActorImport {
		return 0, err
	}
	it := h.log.ReadStream(ctx, domain.StreamSystem, 0, 0)
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
func readOne(ctx context.Context, store StreamReader, stream string, v int64) (*domain.Event, error) {
	it := store.ReadStream(ctx, stream, v, 1)
	defer it.Close()
	if !it.Next() {
		return nil, it.Err()
	}
	e := it.Event()
	return &e, nil
}

func (h *systemHandler) handleSystem(start bool) handlerFunc {
	return requires(h.ready, func(w http.ResponseWriter, r *http.Request) error {
		if h.config == nil {
			return errNoConfig
		}
		_, err := eventstore.Run(r.Context(), h.cmds, eventstore.Command[bool]{
			Stream: domain.StreamSystem,
			Load: func(context.Context) (bool, domain.ExpectedVersion, error) {
				return h.core.Running(), domain.Any, nil
			},
			Decide: func(running bool) ([]domain.Event, error) {
				return domain.DecideSystem(running, start, h.clock), nil
			},
		})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, json.RawMessage(h.config.Public()))
		return nil
	})
}
