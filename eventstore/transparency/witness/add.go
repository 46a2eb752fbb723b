package witness

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
)

// Answer is the witness's answer to an add-checkpoint request: an HTTP
// status and its body (text/x.tlog.size for 409; the cosignature lines
// for 200; a message otherwise).
type Answer struct {
	Status int
	Body   []byte
	// Size is the witness's own size of the log for a 409.
	Size int64
}

func refuse(status int, format string, args ...any) Answer {
	return Answer{Status: status, Body: fmt.Appendf(nil, format+"\n", args...)}
}

// AddCheckpoint answers an add-checkpoint request body as
// c2sp.org/tlog-witness says: 400 for a malformed request or an old size
// above the checkpoint's; 404 for a log it does not follow; 403 when no
// signature of the log's keys is on the checkpoint, or one fails; 409
// (Size set) when the old size is not the one it last cosigned; 422 for an
// empty tree with another root, a proof where none may be, a consistency
// proof that does not verify, or the same size with another root. Only
// then does it record the checkpoint and answer 200 with its
// cosignature. The error is for the database alone.
func (w *Witness) AddCheckpoint(ctx context.Context, body []byte) (Answer, error) {
	req, err := cosign.ParseRequest(body)
	if err != nil {
		return refuse(http.StatusBadRequest, "%v", err), nil
	}
	origin, _, _ := bytes.Cut(req.Checkpoint, []byte("\n"))
	keys, err := w.keys(ctx, string(origin))
	if err != nil {
		return Answer{}, err
	}
	if len(keys) == 0 {
		return refuse(http.StatusNotFound, "unknown log origin %q", origin), nil
	}
	n, err := note.Open(req.Checkpoint, note.VerifierList(keys...))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return refuse(http.StatusForbidden, "no signature by a key of %s on the checkpoint", origin), nil
	case errors.As(err, &invalid):
		return refuse(http.StatusForbidden, "the signature of %s (key ID %08x) does not verify", invalid.Name, invalid.Hash), nil
	case err != nil:
		return refuse(http.StatusBadRequest, "the checkpoint is not a signed note: %v", err), nil
	}
	cp, err := cosign.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return refuse(http.StatusBadRequest, "%v", err), nil
	}
	if req.OldSize > cp.Size {
		return refuse(http.StatusBadRequest, "old size %d is above the checkpoint's %d", req.OldSize, cp.Size), nil
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	st, ok, err := w.Log(ctx, cp.Origin)
	if err != nil {
		return Answer{}, err
	}
	if !ok {
		return refuse(http.StatusNotFound, "unknown log origin %q", cp.Origin), nil
	}
	if req.OldSize != st.Size {
		return Answer{Status: http.StatusConflict, Body: cosign.FormatSize(st.Size), Size: st.Size}, nil
	}
	if reason := consistency(req, cp, st); reason != "" {
		if err := w.keepRefusal(ctx, cp.Origin, http.StatusUnprocessableEntity, reason, body); err != nil {
			return Answer{}, err
		}
		return refuse(http.StatusUnprocessableEntity, "%s", reason), nil
	}
	signed, err := note.Sign(&note.Note{Text: n.Text}, w.signer)
	if err != nil {
		return Answer{}, err
	}
	_, ours, err := cosign.SplitNote(signed)
	if err != nil {
		return Answer{}, err
	}
	// The note kept (and served to monitors): the log's verified
	// signatures and ours.
	var kept bytes.Buffer
	kept.WriteString(n.Text)
	kept.WriteByte('\n')
	for _, s := range n.Sigs {
		kept.WriteString(cosign.SignatureLine(s))
	}
	kept.Write(ours)
	res, err := w.db.ExecContext(ctx, `UPDATE logs SET size = ?, root = ?, note = ?, updated = ? WHERE origin = ? AND size = ?`,
		cp.Size, cp.Root.String(), kept.String(), w.Now().Unix(), cp.Origin, req.OldSize)
	if err != nil {
		return Answer{}, err
	}
	if changed, err := res.RowsAffected(); err != nil || changed != 1 {
		// Another process moved the log meanwhile: tell its size.
		st, _, err2 := w.Log(ctx, cp.Origin)
		if err2 != nil {
			return Answer{}, err2
		}
		return Answer{Status: http.StatusConflict, Body: cosign.FormatSize(st.Size), Size: st.Size}, err
	}
	return Answer{Status: http.StatusOK, Body: ours}, nil
}

// consistency returns why cp cannot follow the stored state st with req's
// proof ("" when it can).
func consistency(req cosign.Request, cp cosign.Checkpoint, st LogState) string {
	switch {
	case cp.Size == 0 && cp.Root != cosign.EmptyRoot:
		return "a checkpoint of size 0 must have the empty tree's root"
	case req.OldSize == 0 && len(req.Proof) > 0:
		return "no consistency proof may come with old size 0"
	case req.OldSize == cp.Size && (cp.Root != st.Root || len(req.Proof) > 0):
		return fmt.Sprintf("the checkpoint of %d records has root %s, not the %s cosigned before: the log forked", cp.Size, cp.Root, st.Root)
	case req.OldSize > 0 && req.OldSize < cp.Size:
		if err := tlog.CheckTree(req.Proof, cp.Size, cp.Root, req.OldSize, st.Root); err != nil {
			return fmt.Sprintf("the consistency proof from the %d records cosigned (root %s) to %d does not verify: %v", req.OldSize, st.Root, cp.Size, err)
		}
	}
	return ""
}

// keys returns the verifiers of origin's keys (none: not followed).
func (w *Witness) keys(ctx context.Context, origin string) ([]note.Verifier, error) {
	rows, err := w.db.QueryContext(ctx, `SELECT vkey FROM keys WHERE origin = ?`, origin)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []note.Verifier
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		v, err := note.NewVerifier(k)
		if err != nil {
			return nil, fmt.Errorf("witness database: key %q of %s: %v", k, origin, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// keepRefusal records a refused request whose signature verified.
func (w *Witness) keepRefusal(ctx context.Context, origin string, status int, reason string, body []byte) error {
	_, err := w.db.ExecContext(ctx, `INSERT INTO refusals (origin, time, status, reason, request) VALUES (?, ?, ?, ?, ?)`,
		origin, w.Now().Unix(), status, reason, string(body))
	return err
}

// Refusals returns how many requests for origin were refused as
// inconsistent with what the witness cosigned.
func (w *Witness) Refusals(ctx context.Context, origin string) (int, error) {
	var n int
	err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM refusals WHERE origin = ?`, origin).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
