package http

import (
	"fmt"
	"net/http"

	"github.com/gorilla/mux"
)

// WitnessReport is what the witness client says of the latest checkpoint
// and each witness it is sent to (c2sp.org/tlog-witness); cmd fills
// Server.Witnesses with it.
type WitnessReport struct {
	// Size is the latest checkpoint's size; Cosigned how many witnesses
	// cosigned it, Quorum how many must (--witness-quorum), Missing how
	// many more are needed.
	Size      int64         `json:"size"`
	Quorum    int           `json:"quorum"`
	Cosigned  int           `json:"cosigned"`
	Missing   int           `json:"missing"`
	Message   string        `json:"message,omitempty"`
	Witnesses []WitnessInfo `json:"witnesses"`
}

// WitnessInfo is one witness: the last checkpoint it cosigned (size 0:
// none; time, ms since the epoch, its cosignature's timestamp), whether
// that is the latest, its last failure to answer, and its refusal of a
// checkpoint as inconsistent, if it stands.
type WitnessInfo struct {
	Name        string          `json:"name"`
	Key         string          `json:"key"`
	URL         string          `json:"url"`
	Size        int64           `json:"size"`
	Time        int64           `json:"time,omitempty"`
	Current     bool            `json:"current"`
	Error       string          `json:"error,omitempty"`
	NextAttempt int64           `json:"nextAttempt,omitempty"`
	Refused     *WitnessRefusal `json:"refused,omitempty"`
}

// WitnessRefusal is a witness's refusal of the checkpoint of Size records
// as inconsistent with the WitnessSize records it cosigned before (-1:
// it did not say): the log forked, was rewritten or cut under its key.
type WitnessRefusal struct {
	Size        int64  `json:"size"`
	Root        string `json:"root"`
	WitnessSize int64  `json:"witnessSize"`
	Status      int    `json:"status"`
	Reason      string `json:"reason"`
}

// witnessesHandler serves the witnesses' state (read scope) from the
// witness client's report (Server.Witnesses):
//
//	GET /api/v1/audit/witnesses   WitnessReport (witnesses empty when none is configured)
type witnessesHandler struct {
	witnesses func() WitnessReport
}

func (h *witnessesHandler) register(r *mux.Router) {
	r.Handle("/audit/witnesses", handlerFunc(h.handleWitnesses)).Methods("GET")
}

func (h *witnessesHandler) handleWitnesses(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, witnessReport(h.witnesses))
	return nil
}

// witnessReport returns the report of witnesses, its message filled; an
// empty one without witnesses.
func witnessReport(witnesses func() WitnessReport) WitnessReport {
	if witnesses == nil {
		return WitnessReport{Witnesses: []WitnessInfo{}}
	}
	rep := witnesses()
	if rep.Witnesses == nil {
		rep.Witnesses = []WitnessInfo{}
	}
	if rep.Missing > 0 && rep.Size > 0 {
		rep.Message = fmt.Sprintf("%d more witness cosignatures needed for the checkpoint of %d records: %d of %d witnesses cosigned it, the quorum is %d",
			rep.Missing, rep.Size, rep.Cosigned, len(rep.Witnesses), rep.Quorum)
	}
	return rep
}

// witnessRefusals returns /healthz's reasons: one per witness whose
// refusal stands.
func witnessRefusals(rep WitnessReport) []string {
	var out []string
	for _, w := range rep.Witnesses {
		if f := w.Refused; f != nil {
			held := "it did not say what it holds"
			if f.WitnessSize >= 0 {
				held = fmt.Sprintf("it cosigned %d records of this log before", f.WitnessSize)
			}
			out = append(out, fmt.Sprintf("witness %s refused the checkpoint of %d records as inconsistent (%s): the log forked, was rewritten or cut under its key", w.Name, f.Size, held))
		}
	}
	return out
}
