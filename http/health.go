package http

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
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

// ProjectionRunner is the runner that keeps the read models
// (projections.Runner), as cmd fills Server.Runner with it: the writes
// wait on it (read-your-writes), /healthz and /readyz read how far it is
// and how it started.
type ProjectionRunner interface {
	// WaitFor returns once the read models applied every event up to pos
	// (ctx's error if it ends first).
	WaitFor(ctx context.Context, pos uint64) error
	// Position returns the position of the last event applied.
	Position() uint64
	// Snapshot says how the read models were built at start: the
	// read-model snapshot loaded (loaded false: none) and how many events
	// were replayed after it.
	Snapshot() (info projections.SnapshotInfo, loaded bool, replayed int64)
}

// LogHead is the log's last committed position (domain.EventStore's Head).
type LogHead interface {
	Head(ctx context.Context) (uint64, error)
}

// healthHandler serves /healthz and /readyz from what each part of the
// service says of itself: the store (its head; WriteHealth and writable
// when it can tell), the runner, and, each when set, the transparency
// log's readiness, the analytics sink, the connectors, the orders that
// need attention, the open balance discrepancies, the witnesses and the
// check of the start's snapshot. Without the store or the runner both
// answer 503.
type healthHandler struct {
	store         LogHead
	runner        ProjectionRunner
	tlog          interface{ Ready() error }
	sink          SinkStatus
	connectors    func() []ConnectorStatus
	attention     func() string
	reconciler    Reconciler
	witnesses     func() WitnessReport
	snapshotCheck func() (state, problem string)
}

// writeFailure returns why the store's writes fail, for /healthz, or "".
// The integrity verdict's details (and the file's path) stay in the log.
func (h *healthHandler) writeFailure() string {
	wh, ok := h.store.(WriteHealth)
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

func (h *healthHandler) handleHealth(w http.ResponseWriter, r *http.Request) error {
	if h.store == nil || h.runner == nil {
		writeError(w, r, http.StatusServiceUnavailable, "not ready")
		return nil
	}
	head, err := h.store.Head(r.Context())
	if err != nil {
		return err
	}
	applied := h.runner.Position()
	resp := healthResponse{Status: "ok", Head: head, Applied: applied}
	if reason := h.writeFailure(); reason != "" {
		resp.degrade(reason)
	}
	if h.attention != nil {
		if why := h.attention(); why != "" {
			resp.degrade(why)
		}
	}
	if why := discrepancyReason(h.reconciler); why != "" {
		resp.degrade(why)
	}
	if head > applied {
		resp.LagBehind = head - applied
	}
	if h.sink != nil {
		if lag, err := h.sink.Lag(r.Context()); err == nil {
			resp.SinkLag = &lag
		}
		if err := h.sink.Err(); err != nil {
			resp.SinkError = "clickhouse unavailable" // details are in the log
		}
		if h.sink.Stopped() {
			resp.SinkError = "clickhouse sink stopped: ClickHouse refuses its rows, or this service's --instance name belongs to another log (details in the service log)"
			resp.degrade(resp.SinkError)
		}
	}
	if h.connectors != nil {
		resp.Exchanges = h.connectors()
	}
	if h.witnesses != nil {
		rep := witnessReport(h.witnesses)
		resp.Witnesses = &rep
		for _, why := range witnessRefusals(rep) {
			resp.degrade(why)
		}
	}
	info, loaded, replayed := h.runner.Snapshot()
	resp.Start.Replayed = replayed
	if loaded {
		resp.Start.Snapshot = &healthSnapshot{File: filepath.Base(info.Path), Position: info.Position,
			Created: info.Created.Format(time.RFC3339), LoadMs: info.Load.Milliseconds()}
	}
	if h.snapshotCheck != nil {
		state, problem := h.snapshotCheck()
		if resp.Start.Snapshot != nil {
			resp.Start.Snapshot.Check = state
		}
		if problem != "" {
			resp.degrade(problem)
		}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
