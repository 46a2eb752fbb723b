package transparency

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
)

// Checkpoint is a checkpoint's body (C2SP tlog-checkpoint): the log's
// origin, the tree's size and its root hash, and an extension line when
// there is one (this log writes one only in the first checkpoint after
// an operator accepted a log cut at its end: it says so, in the signed
// text).
type Checkpoint struct {
	Origin    string
	Size      int64
	Root      tlog.Hash
	Extension string
}

// Text returns the checkpoint's body: origin, size and base64 root hash,
// each on a line of its own, then the extension line if any.
func (c Checkpoint) Text() string {
	if c.Extension != "" {
		return fmt.Sprintf("%s\n%d\n%s\n%s\n", c.Origin, c.Size, c.Root, c.Extension)
	}
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, c.Root)
}

// ParseCheckpoint reads a checkpoint's body (extension lines after the
// root are allowed; the first is Extension). A malformed one is EINVALID.
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 4 || !strings.HasSuffix(lines[2], "\n") {
		return Checkpoint{}, domain.Errorf(domain.EINVALID, "checkpoint: want an origin, a tree size and a root hash, each on its own line")
	}
	c := Checkpoint{Origin: strings.TrimSuffix(lines[0], "\n")}
	size, err := strconv.ParseInt(strings.TrimSuffix(lines[1], "\n"), 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != strings.TrimSuffix(lines[1], "\n") {
		return Checkpoint{}, domain.Errorf(domain.EINVALID, "checkpoint: the tree size %q is not a decimal integer", strings.TrimSuffix(lines[1], "\n"))
	}
	c.Size = size
	if c.Root, err = tlog.ParseHash(strings.TrimSuffix(lines[2], "\n")); err != nil {
		return Checkpoint{}, domain.Errorf(domain.EINVALID, "checkpoint: the root hash is not 32 bytes in standard base64")
	}
	if c.Origin == "" {
		return Checkpoint{}, domain.Errorf(domain.EINVALID, "checkpoint: empty origin line")
	}
	if len(lines) > 3 {
		c.Extension = strings.TrimSuffix(lines[3], "\n")
	}
	return c, nil
}

// Sign returns c signed by key as a note: c's text, a blank line, the
// signature line. c's origin must be the key's.
func (k *Key) Sign(c Checkpoint) ([]byte, error) {
	if c.Origin != k.Origin() {
		return nil, domain.Errorf(domain.EINVALID, "checkpoint of origin %s cannot be signed by the key of %s", c.Origin, k.Origin())
	}
	return note.Sign(&note.Note{Text: c.Text()}, k.signer)
}

// OpenCheckpoint checks a signed checkpoint against the verifier key vkey
// and returns its body: EINVALID when vkey is not a verifier key, the
// note is malformed or not signed by vkey, or its origin is not vkey's
// name (a checkpoint names the log its key signs for).
func OpenCheckpoint(msg []byte, vkey string) (Checkpoint, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return Checkpoint{}, domain.Errorf(domain.EINVALID, "verifier key: %v", err)
	}
	n, err := note.Open(normalizeNote(msg), note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, domain.Errorf(domain.EINVALID, "checkpoint signature: %v", err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != v.Name() {
		return Checkpoint{}, domain.Errorf(domain.EINVALID, "checkpoint origin %s is not the key's log %s", c.Origin, v.Name())
	}
	return c, nil
}

// normalizeNote undoes what a text editor or a copy from a terminal does
// to a saved note: CRLF line ends.
func normalizeNote(msg []byte) []byte {
	return bytes.ReplaceAll(msg, []byte("\r\n"), []byte("\n"))
}
