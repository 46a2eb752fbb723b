package http

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// registerCoreMemoryRoutes serves the core memory of active pairs (s.Core;
// 503 without it):
//
//	POST coremem                                    {"<exchange>/<pair>": snapshot, …} for every active pair
//	POST coremem/single {exchange, pair}            the pair's snapshot
//	POST coremem/raw {exchange, pair, elements?}    the pair's core memory as held, only the named
//	                                                elements when given (names that do not exist are left out)
//
// Snapshots are flat maps for front ends: the raw values plus BaseValue,
// UnrealizedPnl and Running (exchange/engine memory.go documents every key). Prices and
// amounts are JSON numbers. Unknown or inactive pairs are 404.
func (s *Server) registerCoreMemoryRoutes(r *mux.Router) {
	r.HandleFunc("/coremem", s.handleCoreMemory).Methods("POST")
	r.HandleFunc("/coremem/single", s.handleCoreMemorySingle).Methods("POST")
	r.HandleFunc("/coremem/raw", s.handleCoreMemoryRaw).Methods("POST")
}

func (s *Server) handleCoreMemory(w http.ResponseWriter, r *http.Request) {
	if err := s.coreReady(); err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Core.Snapshots())
}

func (s *Server) handleCoreMemorySingle(w http.ResponseWriter, r *http.Request) {
	var body exchangePairBody
	if err := decodeJSON(r, &body, false); err != nil {
		Error(w, r, err)
		return
	}
	if err := body.validate(); err != nil {
		Error(w, r, err)
		return
	}
	if err := s.coreReady(); err != nil {
		Error(w, r, err)
		return
	}
	snap, err := s.Core.Snapshot(body.Exchange, body.Pair)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

type coreMemoryRawRequest struct {
	exchangePairBody
	Elements []string `json:"elements"`
}

func (s *Server) handleCoreMemoryRaw(w http.ResponseWriter, r *http.Request) {
	var body coreMemoryRawRequest
	if err := decodeJSON(r, &body, false); err != nil {
		Error(w, r, err)
		return
	}
	if err := body.validate(); err != nil {
		Error(w, r, err)
		return
	}
	for i, e := range body.Elements {
		if e == "" {
			Error(w, r, domain.Errorf(domain.EINVALID, "field elements[%d] must be a non-empty string", i))
			return
		}
	}
	if err := s.coreReady(); err != nil {
		Error(w, r, err)
		return
	}
	m, err := s.Core.Memory(body.Exchange, body.Pair, body.Elements...)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}
