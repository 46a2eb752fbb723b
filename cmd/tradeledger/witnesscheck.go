package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
)

// witnessKeys are the audit commands' --witness-key VKEY (repeatable) and
// --quorum N: a checkpoint must carry the cosignatures of at least N of
// those witnesses (c2sp.org/tlog-cosignature), or the command exits 1.
type witnessKeys struct {
	keys   checkpointFiles
	quorum int
}

func (w *witnessKeys) register(fs *flag.FlagSet) {
	fs.Var(&w.keys, "witness-key", "a witness's verifier key (name+keyid+base64), or a file holding it (repeatable): the checkpoint must carry its cosignature")
	fs.IntVar(&w.quorum, "quorum", 0, "how many of the --witness-key witnesses must have cosigned (0: all of them)")
}

// verifiers returns the witnesses' verifiers: nil without --witness-key
// (and then --quorum is refused).
func (w *witnessKeys) verifiers() ([]*cosign.Verifier, error) {
	if len(w.keys) == 0 {
		if w.quorum != 0 {
			return nil, errors.New("--quorum counts the witnesses given with --witness-key VKEY: give at least one")
		}
		return nil, nil
	}
	if w.quorum < 0 || w.quorum > len(w.keys) {
		return nil, fmt.Errorf("--quorum must be from 1 to the %d witness keys given (0: all), not %d", len(w.keys), w.quorum)
	}
	var out []*cosign.Verifier
	for _, k := range w.keys {
		if b, err := os.ReadFile(k); err == nil {
			k = strings.TrimSpace(string(b))
		}
		v, err := cosign.NewVerifier(k)
		if err != nil {
			return nil, fmt.Errorf("--witness-key: %w", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// check checks the signed checkpoint msg (what, in messages) against the
// quorum and says so on out: an auditFailure (exit 1) when fewer than
// the quorum of the witnesses cosigned it or a cosignature is forged.
func (w *witnessKeys) check(what string, msg []byte, out io.Writer) error {
	vs, err := w.verifiers()
	if err != nil || vs == nil {
		return err
	}
	got, err := cosign.Quorum(normalizeCRLF(msg), vs, w.quorum)
	if err != nil {
		fmt.Fprintf(out, "NOT WITNESSED: %s: %v\n", what, err)
		return auditFailure{fmt.Errorf("%s: %v", what, err), exitTampered}
	}
	names := make([]string, len(got))
	for i, c := range got {
		names[i] = fmt.Sprintf("%s at %s", c.Witness, c.Time.Format("2006-01-02T15:04:05Z"))
	}
	quorum := w.quorum
	if quorum == 0 {
		quorum = len(vs)
	}
	fmt.Fprintf(out, "%s: cosigned by %d of the %d witnesses given (quorum %d): %s\n", what, len(got), len(vs), quorum, strings.Join(names, ", "))
	return nil
}

// checkFile is check on a checkpoint file.
func (w *witnessKeys) checkFile(file string, out io.Writer) error {
	if len(w.keys) == 0 && w.quorum == 0 {
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return auditFailure{fmt.Errorf("checkpoint %s: %w", file, err), exitUnreadable}
	}
	return w.check("checkpoint "+file, b, out)
}

// normalizeCRLF undoes a text editor's CRLF line ends in a saved note.
func normalizeCRLF(b []byte) []byte {
	return []byte(strings.ReplaceAll(string(b), "\r\n", "\n"))
}
