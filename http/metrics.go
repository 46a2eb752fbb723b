package http

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// register serves the operator's probes:
//
//	GET /healthz   alive and answering: the service's state (no auth, health.go)
//	GET /readyz    200 once the replay has caught up, the Merkle tree covers the log and the store accepts writes, else 503 (no auth)
func (h *healthHandler) register(r *mux.Router) {
	r.Handle("/healthz", handlerFunc(h.handleHealth)).Methods("GET")
	r.Handle("/readyz", handlerFunc(h.handleReady)).Methods("GET")
}

// opsHandler serves, beside the probes:
//
//	GET /metrics   the Prometheus metrics (bearer token), when Metrics is set
//	GET /api/v1/openapi.json   the OpenAPI document (no auth, openapi.go)
type opsHandler struct {
	metrics http.Handler
}

func (h *opsHandler) register(r *mux.Router, requireToken mux.MiddlewareFunc) {
	r.HandleFunc("/api/v1/openapi.json", handleOpenAPI).Methods("GET")
	if h.metrics != nil {
		r.Handle("/metrics", requireToken(h.metrics)).Methods("GET")
	}
}

// observeRequest reports a request to ObserveRequest under its route's
// template ("unmatched" when no route matched).
func (s *Server) observeRequest(r *http.Request, status int, d time.Duration) {
	if s.ObserveRequest == nil {
		return
	}
	route := "unmatched"
	if cr := mux.CurrentRoute(r); cr != nil {
		if t, err := cr.GetPathTemplate(); err == nil {
			route = t
		}
	}
	if status == 0 {
		status = http.StatusOK
	}
	s.ObserveRequest(route, r.Method, status, d)
}

// Streams returns how many live event streams are open.
func (a *Audit) Streams() int {
	if a == nil {
		return 0
	}
	return int(a.streams.Load())
}

// OnVerifyFailure makes f hear of every audit/verify that found the log
// faulty (the webhooks' verifyFailures). Safe to call while serving.
func (a *Audit) OnVerifyFailure(f func(domain.VerifySummary)) { a.onFailure.Store(&f) }

func (a *Audit) verifyFailed(sum domain.VerifySummary) {
	if f := a.onFailure.Load(); f != nil {
		(*f)(sum)
	}
}

// writable is what /readyz asks of a store that can tell (the embedded
// one): nil when it accepts writes now.
type writable interface{ Writable() error }

type readyResponse struct {
	Status  string `json:"status"`
	Head    uint64 `json:"head"`
	Applied uint64 `json:"applied"`
}

// handleReady answers GET /readyz: 200 {"status":"ready"} when the
// projections have applied the whole log as of the request and the store
// accepts writes; otherwise 503 with the error body, whose message says
// which. Unlike /healthz (alive and answering), a load balancer should send
// traffic only to a ready server.
func (h *healthHandler) handleReady(w http.ResponseWriter, r *http.Request) error {
	notReady := func(msg string) error {
		writeError(w, r, http.StatusServiceUnavailable, msg) // a probe's answer: not logged
		return nil
	}
	if h.store == nil || h.runner == nil {
		return notReady("not ready: the event store is not open")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	head, err := h.store.Head(ctx)
	if err != nil {
		return notReady("not ready: the event store does not answer")
	}
	if applied := h.runner.Position(); applied < head {
		return notReady("not ready: the projections are catching up with the log")
	}
	if h.tlog != nil {
		if err := h.tlog.Ready(); err != nil {
			return notReady("not ready: " + domain.ErrorMessage(err))
		}
	}
	if st, ok := h.store.(writable); ok {
		if err := st.Writable(); err != nil {
			msg := "not ready: the event store does not accept writes"
			if domain.ErrorCode(err) == domain.EUNAVAILABLE {
				msg += " (" + domain.ErrorMessage(err) + ")"
			}
			return notReady(msg)
		}
	}
	writeJSON(w, http.StatusOK, readyResponse{Status: "ready", Head: head, Applied: h.runner.Position()})
	return nil
}
