package cosign

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Cosignature is one witness's verified cosignature of a checkpoint.
type Cosignature struct {
	// Witness is the cosigner's name, Key its verifier key.
	Witness, Key string
	// Time is the cosignature's timestamp.
	Time time.Time
	// Line is the signature line, "— name base64\n".
	Line string
}

// Cosigned returns the cosignatures in the signed checkpoint msg made by
// the witnesses (one each at most), in the order of witnesses. Other
// signatures (the log's own, unknown witnesses') are ignored, as
// c2sp.org/signed-note says. An error means msg is not a signed note, or
// a signature line that names one of the witnesses with its key ID does
// not verify (the note is then refused whole).
func Cosigned(msg []byte, witnesses []*Verifier) ([]Cosignature, error) {
	list := make([]note.Verifier, len(witnesses))
	for i, w := range witnesses {
		list[i] = w
	}
	n, err := note.Open(msg, note.VerifierList(list...))
	var unverified *note.UnverifiedNoteError
	switch {
	case errors.As(err, &unverified):
		return nil, nil // no witness signed it
	case err != nil:
		var bad *note.InvalidSignatureError
		if errors.As(err, &bad) {
			return nil, fmt.Errorf("the cosignature of %s (key ID %08x) does not verify", bad.Name, bad.Hash)
		}
		return nil, fmt.Errorf("not a signed note: %v", err)
	}
	var out []Cosignature
	for _, w := range witnesses {
		for _, s := range n.Sigs {
			if s.Name != w.Name() || s.Hash != w.KeyHash() {
				continue
			}
			t, err := Timestamp(s)
			if err != nil {
				return nil, err
			}
			out = append(out, Cosignature{Witness: w.Name(), Key: w.String(), Time: t, Line: SignatureLine(s)})
			break
		}
	}
	return out, nil
}

// Quorum checks that at least quorum of witnesses cosigned msg, and
// returns their cosignatures; the error names how many did and which did
// not. quorum ≤ 0 means all of them.
func Quorum(msg []byte, witnesses []*Verifier, quorum int) ([]Cosignature, error) {
	if quorum <= 0 || quorum > len(witnesses) {
		if quorum > len(witnesses) {
			return nil, fmt.Errorf("a quorum of %d needs at least as many witness keys, not %d", quorum, len(witnesses))
		}
		quorum = len(witnesses)
	}
	got, err := Cosigned(msg, witnesses)
	if err != nil {
		return got, err
	}
	if len(got) >= quorum {
		return got, nil
	}
	var missing []string
	for _, w := range witnesses {
		found := false
		for _, c := range got {
			found = found || c.Key == w.String()
		}
		if !found {
			missing = append(missing, w.Name())
		}
	}
	return got, fmt.Errorf("%d of the %d witnesses cosigned it, fewer than the quorum of %d (not cosigned by %v)", len(got), len(witnesses), quorum, missing)
}
