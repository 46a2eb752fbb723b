package transparency

import (
	"bytes"
	"errors"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/tradeledger/tradeledger/domain"
)

// Read-model snapshots (DESIGN §16) are signed by the log's key, so that a
// snapshot file edited by someone without it is refused where it is read
// (projections.Snapshots). The signed text is the snapshot's index
// (snap.Header.SignedText), whose first line is never a log's origin: a
// snapshot's signature cannot pass for a checkpoint of the log, nor a
// checkpoint's for a snapshot (OpenSnapshotNote checks the text is the
// one asked for, byte for byte).

// snapshotTextHead starts every snapshot text the key signs (domain/snap's
// SignedText); a text that does not start with it is not signed.
const snapshotTextHead = "tradeledger read-model snapshot\n"

// SignSnapshot returns text, a snapshot's index text, signed by the key as
// a note (the text, a blank line, the signature line). EINVALID for a
// text that is not a snapshot's, so that this key signs nothing else
// through it.
func (k *Key) SignSnapshot(text []byte) ([]byte, error) {
	if !bytes.HasPrefix(text, []byte(snapshotTextHead)) {
		return nil, domain.Errorf(domain.EINVALID, "not a snapshot's text: refusing to sign it with the log's key")
	}
	return note.Sign(&note.Note{Text: string(text)}, k.signer)
}

// VerifySnapshot checks that signed is text signed by this key's log
// (SignSnapshot): EINVALID, saying why, when it is not a note, is signed
// by another key or none, or signs another text (a file whose index was
// changed after it was signed).
func (k *Key) VerifySnapshot(text, signed []byte) error {
	return VerifySnapshotNote(k.vkey, text, signed)
}

// VerifySnapshotNote is VerifySnapshot for a verifier key alone.
func VerifySnapshotNote(vkey string, text, signed []byte) error {
	if len(signed) == 0 {
		return domain.Errorf(domain.EINVALID, "the snapshot is not signed")
	}
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return domain.Errorf(domain.EINVALID, "verifier key: %v", err)
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		if errors.As(err, &unverified) && len(unverified.Note.UnverifiedSigs) > 0 {
			s := unverified.Note.UnverifiedSigs[0]
			return domain.Errorf(domain.EINVALID, "the snapshot is signed by a key named %s (hash %08x), not by this log's key %s (hash %08x)",
				s.Name, s.Hash, v.Name(), v.KeyHash())
		}
		return domain.Errorf(domain.EINVALID, "the snapshot's signature does not verify with this log's key %s: %v", v.Name(), err)
	}
	if n.Text != string(text) {
		return domain.Errorf(domain.EINVALID, "the snapshot's signature by %s covers another index: the file was changed after it was signed", v.Name())
	}
	return nil
}
