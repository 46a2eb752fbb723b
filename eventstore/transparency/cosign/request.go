package cosign

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// MaxProofLines is the most consistency-proof lines an add-checkpoint
// request may carry (c2sp.org/tlog-witness).
const MaxProofLines = 63

// SizeContentType is the Content-Type of a 409 answer to add-checkpoint:
// the witness's own size of the log, in decimal, and a newline.
const SizeContentType = "text/x.tlog.size"

// Request is an add-checkpoint request (c2sp.org/tlog-witness): the size
// of the checkpoint the witness last cosigned for the log (0 for none),
// the consistency proof from it to the new checkpoint, and the signed
// checkpoint itself.
type Request struct {
	OldSize    int64
	Proof      []tlog.Hash
	Checkpoint []byte
}

// Body returns the request's body: "old N", a line per proof hash
// (base64), an empty line, the checkpoint.
func (r Request) Body() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", r.OldSize)
	for _, h := range r.Proof {
		b.WriteString(h.String())
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(r.Checkpoint)
	return b.Bytes()
}

// ErrMalformed marks a request that is not an add-checkpoint body (the
// witness answers 400).
var ErrMalformed = errors.New("malformed add-checkpoint request")

// ParseRequest reads an add-checkpoint body strictly: the old size line,
// at most MaxProofLines base64 hashes, an empty line, then the
// checkpoint (not checked here: the witness opens it with the log's
// keys). Errors wrap ErrMalformed.
func ParseRequest(body []byte) (Request, error) {
	head, note, ok := bytes.Cut(body, []byte("\n\n"))
	if !ok {
		return Request{}, fmt.Errorf("%w: no empty line before the checkpoint", ErrMalformed)
	}
	lines := strings.Split(string(head), "\n")
	size, ok := strings.CutPrefix(lines[0], "old ")
	if !ok {
		return Request{}, fmt.Errorf("%w: the first line must be \"old N\"", ErrMalformed)
	}
	old, err := ParseSize(size)
	if err != nil {
		return Request{}, fmt.Errorf("%w: old size: %v", ErrMalformed, err)
	}
	proof := lines[1:]
	if len(proof) > MaxProofLines {
		return Request{}, fmt.Errorf("%w: %d consistency proof lines, at most %d", ErrMalformed, len(proof), MaxProofLines)
	}
	r := Request{OldSize: old, Proof: make([]tlog.Hash, len(proof)), Checkpoint: note}
	for i, l := range proof {
		if r.Proof[i], err = tlog.ParseHash(l); err != nil {
			return Request{}, fmt.Errorf("%w: proof line %d is not a base64 hash", ErrMalformed, i+1)
		}
	}
	return r, nil
}

// FormatSize is a 409 answer's body: n in decimal and a newline.
func FormatSize(n int64) []byte { return append(strconv.AppendInt(nil, n, 10), '\n') }

// ReadSizeAnswer reads a 409 answer's body: a decimal size and a newline
// (a missing newline is tolerated).
func ReadSizeAnswer(body []byte) (int64, error) {
	return ParseSize(strings.TrimSuffix(string(body), "\n"))
}
