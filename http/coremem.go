package http

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// CoreMemory is the core memory of active pairs (exchange/engine.Scheduler):
// Memory a pair's as held (only the named elements when given), Snapshot
// a pair's flat map for front ends, Snapshots every active pair's by
// "<exchange>/<pair>" (ENOTFOUND for a pair unknown or not active).
type CoreMemory interface {
	Memory(exchange, pair string, elements ...string) (map[string]any, error)
	Snapshot(exchange, pair string) (map[string]any, error)
	Snapshots() map[string]map[string]any
}

// coreMemoryHandler serves the core memory of active pairs from a
// CoreMemory (503 without one):
//
//	POST coremem                                    {"<exchange>/<pair>": snapshot, …} for every active pair
//	POST coremem/single {exchange, pair}            the pair's snapshot
//	POST coremem/raw {exchange, pair, elements?}    the pair's core memory as held, only the named
//	                                                elements when given (names that do not exist are left out)
//
// Snapshots are flat maps for front ends: the raw values plus BaseValue,
// UnrealizedPnl and Running (exchange/engine memory.go documents every key). Prices and
// amounts are JSON numbers. Unknown or inactive pairs are 404.
type coreMemoryHandler struct {
	memory CoreMemory
}

func (h *coreMemoryHandler) register(r *mux.Router) {
	r.Handle("/coremem", requires(h.ready, h.handleCoreMemory)).Methods("POST")
	r.Handle("/coremem/single", handlerFunc(h.handleCoreMemorySingle)).Methods("POST")
	r.Handle("/coremem/raw", handlerFunc(h.handleCoreMemoryRaw)).Methods("POST")
}

func (h *coreMemoryHandler) ready() error {
	if h.memory == nil {
		return errNoCore
	}
	return nil
}

func (h *coreMemoryHandler) handleCoreMemory(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, h.memory.Snapshots())
	return nil
}

func (h *coreMemoryHandler) handleCoreMemorySingle(w http.ResponseWriter, r *http.Request) error {
	var body exchangePairBody
	if err := decodeExchangePair(r, &body); err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	snap, err := h.memory.Snapshot(body.Exchange, body.Pair)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, snap)
	return nil
}

type coreMemoryRawRequest struct {
	exchangePairBody
	Elements []string `json:"elements"`
}

func (h *coreMemoryHandler) handleCoreMemoryRaw(w http.ResponseWriter, r *http.Request) error {
	var body coreMemoryRawRequest
	if err := decodeExchangePair(r, &body); err != nil {
		return err
	}
	for i, e := range body.Elements {
		if e == "" {
			return domain.Errorf(domain.EINVALID, "field elements[%d] must be a non-empty string", i)
		}
	}
	if err := h.ready(); err != nil {
		return err
	}
	m, err := h.memory.Memory(body.Exchange, body.Pair, body.Elements...)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}
