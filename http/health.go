package http

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// healthResponse is /healthz's body: ready means the store answers and the
// projections have replayed the log. Status is "ok", or "degraded" (still
// 200: reads are served) while the store's writes fail, an order needs
// attention (its pair paused), an account's balance differs from the one
// the ledger implies (a BalanceDiscrepancy not cleared) or the ClickHouse
// sink stopped for good,
// Reason saying why.
type healthResponse struct {
	Status    string `json:"status"`
	Reason    string `json:"reason,omitempty"`
	Head      uint64 `json:"head"`
	Applied   uint64 `json:"applied"`
	LagBehind uint64 `json:"lag"`
	// SinkLag is how many positions the ClickHouse sink is behind the head
	// (absent without --clickhouse); SinkError its last failure, if any.
	SinkLag   *uint64 `json:"sinkLag,omitempty"`
	SinkError string  `json:"sinkError,omitempty"`
	// Exchanges says which connector each configured exchange uses.
	Exchanges []ConnectorStatus `json:"exchanges,omitempty"`
	// Witnesses is the witness client's report (absent without
	// --witness): how many cosignatures the latest checkpoint still
	// misses, and each witness's state.
	Witnesses *WitnessReport `json:"witnesses,omitempty"`
	// Start says how the read models were built at start: from which
	// read-model snapshot (none: from the log's first event), and how many
	// events were replayed after it.
	Start healthStart `json:"start"`
}

// healthStart is /healthz's start.
type healthStart struct {
	Snapshot *healthSnapshot `json:"snapshot,omitempty"`
	Replayed int64           `json:"replayed"`
}

// healthSnapshot is the read-model snapshot a start loaded.
type healthSnapshot struct {
	File     string `json:"file"`     // its name in the data dir's snapshots/
	Position uint64 `json:"position"` // the log position it holds the state at
	Created  string `json:"created"`  // when it was written (RFC 3339)
	LoadMs   int64  `json:"loadMs"`   // reading and installing it
	// Check is where its check against the log stands: "pending",
	// "checking", "equal" (the log's state), "differed" (discarded, the
	// rebuilt state served), "failed" (could not be run); absent when
	// the service does not check.
	Check string `json:"check,omitempty"`
}

// degrade marks the answer degraded, adding why to the reasons already
// given.
func (h *healthResponse) degrade(why string) {
	if h.Reason != "" {
		why = h.Reason + "; " + why
	}
	h.Status, h.Reason = "degraded", why
}

// ConnectorStatus is one exchange's connector as /healthz shows it:
// "paper" or a real connector's name ("binance"), and why. Error is the
// exchange's last failure to answer (down, slow, rate limited), cleared by
// its next answer.
type ConnectorStatus struct {
	Exchange  string `json:"exchange"`
	Connector string `json:"connector"`
	Reason    string `json:"reason"`
	Error     string `json:"error,omitempty"`
}

// WriteHealth is what /healthz reads of a store that knows whether its
// writes fail (eventstore/sqlite: disk full, fdatasync failure, integrity
// verdict). WriteErr returns nil while appends succeed, and never blocks.
type WriteHealth interface {
	WriteErr() error
}

// writeFailure returns why the store's writes fail, for /healthz, or "".
// The integrity verdict's details (and the file's path) stay in the log.
func (s *Server) writeFailure() string {
	wh, ok := s.Store.(WriteHealth)
	if !ok {
		return ""
	}
	err := wh.WriteErr()
	switch {
	case err == nil:
		return ""
	case domain.ErrorCode(err) == domain.EINTERNAL:
		return "writes are refused: the event log failed its integrity check (details in the service log)"
	default:
		return "writes fail: " + domain.ErrorMessage(err)
	}
}

// SinkStatus is what /healthz reads of the analytics sink.
type SinkStatus interface {
	// Lag returns how many positions the sink is behind the log's head.
	Lag(ctx context.Context) (uint64, error)
	// Err returns the sink's last failure, nil once it recovered.
	Err() error
	// Stopped reports whether the sink stopped for good (ClickHouse refuses
	// its rows, or the database is another log's): it will not recover
	// without an operator, unlike a transient failure.
	Stopped() bool
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
	if reason := s.writeFailure(); reason != "" {
		resp.degrade(reason)
	}
	if s.Attention != nil {
		if why := s.Attention(); why != "" {
			resp.degrade(why)
		}
	}
	if why := s.discrepancyReason(); why != "" {
		resp.degrade(why)
	}
	if head > applied {
		resp.LagBehind = head - applied
	}
	if s.Sink != nil {
		if lag, err := s.Sink.Lag(r.Context()); err == nil {
			resp.SinkLag = &lag
		}
		if err := s.Sink.Err(); err != nil {
			resp.SinkError = "clickhouse unavailable" // details are in the log
		}
		if s.Sink.Stopped() {
			resp.SinkError = "clickhouse sink stopped: ClickHouse refuses its rows, or this service's --instance name belongs to another log (details in the service log)"
			resp.degrade(resp.SinkError)
		}
	}
	if s.Connectors != nil {
		resp.Exchanges = s.Connectors()
	}
	if s.Witnesses != nil {
		rep := s.witnessReport()
		resp.Witnesses = &rep
		for _, why := range witnessRefusals(rep) {
			resp.degrade(why)
		}
	}
	info, loaded, replayed := s.Runner.Snapshot()
	resp.Start.Replayed = replayed
	if loaded {
		resp.Start.Snapshot = &healthSnapshot{File: filepath.Base(info.Path), Position: info.Position,
			Created: info.Created.Format(time.RFC3339), LoadMs: info.Load.Milliseconds()}
	}
	if s.SnapshotCheck != nil {
		state, problem := s.SnapshotCheck()
		if resp.Start.Snapshot != nil {
			resp.Start.Snapshot.Check = state
		}
		if problem != "" {
			resp.degrade(problem)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}
