package http

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
)

// TransparencyLog is the provable side of the log (DESIGN §13): signed
// checkpoints of the Merkle tree over every event, proofs against them,
// and the tree's hash tiles. cmd fills it with a transparency.Log.
type TransparencyLog interface {
	// Ready is nil once the tree covers the log; before, an
	// EUNAVAILABLE error saying how far its first build is.
	Ready() error
	// Latest returns the last signed checkpoint (ok false before the
	// first), LatestTime when it was recorded.
	Latest() (c domain.CheckpointSigned, ok bool)
	LatestTime() time.Time
	// VerifierKey is the checkpoints' verifier key in note format.
	VerifierKey() string
	// ProveInclusion returns record index's leaf hash and its inclusion
	// proof in the tree of size records (EINVALID outside the tree).
	ProveInclusion(ctx context.Context, index, size int64) (tlog.Hash, tlog.RecordProof, error)
	// ProveConsistency returns the proof that the tree of from records
	// is a prefix of the tree of to records (EINVALID outside the tree).
	ProveConsistency(ctx context.Context, from, to int64) (tlog.TreeProof, error)
	// Record returns the event of record index (ENOTFOUND beyond the
	// tree).
	Record(ctx context.Context, index int64) (domain.Event, error)
	// Tile returns the hash tile at a tlog.Tile path (ENOTFOUND for
	// another path or a tile beyond the tree).
	Tile(ctx context.Context, path string) ([]byte, error)
	// TilesTile returns the hash tile or entry bundle at a
	// c2sp.org/tlog-tiles path after "tile/" (ENOTFOUND for another path
	// or one beyond the tree).
	TilesTile(ctx context.Context, path string) ([]byte, error)
	// WriteOrderBundle writes the proof bundle of order id as JSON
	// (ENOTFOUND for an unknown order); it may issue a checkpoint first,
	// when none covers the order's last event.
	WriteOrderBundle(ctx context.Context, id int64, w io.Writer) error
}

// tlogHandler serves the transparency log from a TransparencyLog (503
// without one), with the witnesses' report (witnesses.go) when there is
// one: the proofs for third parties under /api/v1 (read scope, this
// file), and the tree's tiles for mirrors under /tlog (tlog.go):
//
//	GET /api/v1/audit/checkpoint          the last signed checkpoint, text/plain, exact bytes
//	                                      (Accept: application/json: with its size, root, time and key)
//	GET /api/v1/audit/checkpoint/key      the verifier key in note format
//	GET /api/v1/audit/proof/inclusion     ?index=I&size=N: record I's leaf hash and inclusion proof
//	GET /api/v1/audit/proof/consistency   ?from=N1&to=N2: the consistency proof
//	GET /api/v1/audit/record              ?index=I: the event of record I, as audit/events shows it
//	GET /api/v1/audit/proof/order         ?id=ID: the order's proof bundle
//
// They answer 503 until the tree covers the log (Ready).
type tlogHandler struct {
	tlog TransparencyLog
	// witnesses, when set, reports the witnesses (Server.Witnesses).
	witnesses func() WitnessReport
}

func (h *tlogHandler) registerProofs(r *mux.Router) {
	r.Handle("/audit/checkpoint", handlerFunc(h.handleCheckpoint)).Methods("GET")
	r.Handle("/audit/checkpoint/key", handlerFunc(h.handleCheckpointKey)).Methods("GET")
	r.Handle("/audit/proof/inclusion", requires(h.ready, h.handleInclusionProof)).Methods("GET")
	r.Handle("/audit/proof/consistency", requires(h.ready, h.handleConsistencyProof)).Methods("GET")
	r.Handle("/audit/record", requires(h.ready, h.handleRecord)).Methods("GET")
	r.Handle("/audit/proof/order", requires(h.ready, h.handleOrderProof)).Methods("GET")
}

// errNoTlog is the answer of the transparency log's routes on a server
// without one.
var errNoTlog = domain.Errorf(domain.EUNAVAILABLE, "the transparency log is not configured")

func (h *tlogHandler) ready() error {
	if h.tlog == nil {
		return errNoTlog
	}
	return h.tlog.Ready()
}

// checkpointStatus is audit/checkpoint as JSON: whether the tree covers
// the log (and if not, how far its build is), the verifier key, and the
// last checkpoint (null before the first).
type checkpointStatus struct {
	Ready      bool            `json:"ready"`
	Message    string          `json:"message,omitempty"`
	Key        string          `json:"key"`
	Checkpoint *checkpointInfo `json:"checkpoint"`
	// Witnesses is the witness client's report (absent without
	// --witness).
	Witnesses *WitnessReport `json:"witnesses,omitempty"`
}

// checkpointInfo is a checkpoint's fields, when it was recorded, and the
// signed note itself.
type checkpointInfo struct {
	Origin string `json:"origin"`
	Size   int64  `json:"size"`
	Root   string `json:"root"`
	Time   int64  `json:"time"` // ms since the epoch
	Note   string `json:"note"`
}

// handleCheckpoint answers the last signed checkpoint: the note's exact
// bytes as text/plain (404 before the first, 503 while the tree is being
// built), or, for a client that accepts JSON and not plain text, a
// checkpointStatus, always 200 (a dashboard shows what there is).
func (h *tlogHandler) handleCheckpoint(w http.ResponseWriter, r *http.Request) error {
	if h.tlog == nil {
		return errNoTlog
	}
	ready := h.tlog.Ready()
	c, ok := h.tlog.Latest()
	if wantsJSON(r) {
		st := checkpointStatus{Ready: ready == nil, Key: h.tlog.VerifierKey()}
		if ready != nil {
			st.Message = domain.ErrorMessage(ready)
		}
		if h.witnesses != nil {
			rep := witnessReport(h.witnesses)
			st.Witnesses = &rep
		}
		if ok {
			st.Checkpoint = &checkpointInfo{Origin: c.Origin, Size: c.Size, Root: c.Root, Time: h.tlog.LatestTime().UnixMilli(), Note: c.Note}
		}
		writeJSON(w, http.StatusOK, st)
		return nil
	}
	if ready != nil {
		return ready
	}
	if !ok {
		return domain.Errorf(domain.ENOTFOUND, "no checkpoint signed yet")
	}
	writeText(w, c.Note)
	return nil
}

// wantsJSON reports whether r's Accept names application/json and not
// text/plain.
func wantsJSON(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/plain")
}

// handleCheckpointKey answers the verifier key (note format, a newline
// after it). It is served while the tree is being built.
func (h *tlogHandler) handleCheckpointKey(w http.ResponseWriter, r *http.Request) error {
	if h.tlog == nil {
		return errNoTlog
	}
	writeText(w, h.tlog.VerifierKey()+"\n")
	return nil
}

// queryTwo reads the required non-negative integer parameters a and b.
func queryTwo(r *http.Request, a, b string) (int64, int64, error) {
	q := r.URL.Query()
	x, err := queryInt64(q, a, 0, maxInt)
	if err != nil {
		return 0, 0, err
	}
	y, err := queryInt64(q, b, 0, maxInt)
	return x, y, err
}

// inclusionResponse is a record's inclusion proof: tlog.CheckRecord(proof,
// size, root, index, recordHash) holds for the root of a checkpoint of
// size records. Hashes in standard base64 (tlog.Hash's JSON).
type inclusionResponse struct {
	Index      int64       `json:"index"`
	Size       int64       `json:"size"`
	RecordHash tlog.Hash   `json:"recordHash"`
	Proof      []tlog.Hash `json:"proof"`
}

func (h *tlogHandler) handleInclusionProof(w http.ResponseWriter, r *http.Request) error {
	index, size, err := queryTwo(r, "index", "size")
	if err != nil {
		return err
	}
	leaf, proof, err := h.tlog.ProveInclusion(r.Context(), index, size)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, inclusionResponse{Index: index, Size: size, RecordHash: leaf, Proof: proof})
	return nil
}

// consistencyResponse proves the tree of from records a prefix of the
// tree of to records: tlog.CheckTree(proof, to, rootTo, from, rootFrom).
type consistencyResponse struct {
	From  int64       `json:"from"`
	To    int64       `json:"to"`
	Proof []tlog.Hash `json:"proof"`
}

func (h *tlogHandler) handleConsistencyProof(w http.ResponseWriter, r *http.Request) error {
	from, to, err := queryTwo(r, "from", "to")
	if err != nil {
		return err
	}
	proof, err := h.tlog.ProveConsistency(r.Context(), from, to)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, consistencyResponse{From: from, To: to, Proof: proof})
	return nil
}

// handleRecord answers the event of record index as audit/events shows
// it (secrets masked: a redacted event's hash no longer matches its
// shown data, by design).
func (h *tlogHandler) handleRecord(w http.ResponseWriter, r *http.Request) error {
	index, err := queryInt64(r.URL.Query(), "index", 0, maxInt)
	if err != nil {
		return err
	}
	e, err := h.tlog.Record(r.Context(), index)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, redact(e))
	return nil
}

// handleOrderProof answers the proof bundle of order id: every event of
// the order with its inclusion proof, and the signed checkpoint they are
// proven against (`tradeledger verify-proof` checks it). When no
// checkpoint covers the order's last event yet, one is issued first.
func (h *tlogHandler) handleOrderProof(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query().Get("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return domain.Errorf(domain.EINVALID, "id must be an order id (a positive integer), not %q", v)
	}
	var buf bytes.Buffer
	if err := h.tlog.WriteOrderBundle(r.Context(), id, &buf); err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", `attachment; filename="order-`+strconv.FormatInt(id, 10)+`.proof.json"`)
	writeBody(w, http.StatusOK, buf.Bytes())
	return nil
}
