package cosign

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is a checkpoint's body as c2sp.org/tlog-checkpoint defines
// it: the origin, the tree size and the root hash; extension lines are
// part of Body (a cosignature signs them) and not read.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
	// Body is the note text parsed, final newline included.
	Body []byte
}

// ParseCheckpoint reads a checkpoint body strictly: at least three
// non-empty lines, each ending in a newline; a non-empty origin; the size
// in decimal without leading zeros; the root in standard base64 of 32
// bytes; extension lines, if any, non-empty.
func ParseCheckpoint(body []byte) (Checkpoint, error) {
	if len(body) == 0 || body[len(body)-1] != '\n' {
		return Checkpoint{}, errors.New("checkpoint: the body must end with a newline")
	}
	lines := strings.Split(string(body[:len(body)-1]), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, errors.New("checkpoint: want an origin, a tree size and a root hash, each on its own line")
	}
	for i, l := range lines {
		if l == "" {
			return Checkpoint{}, fmt.Errorf("checkpoint: line %d is empty", i+1)
		}
	}
	size, err := ParseSize(lines[1])
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: tree size: %w", err)
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return Checkpoint{}, errors.New("checkpoint: the root hash is not 32 bytes in standard base64")
	}
	return Checkpoint{Origin: lines[0], Size: size, Root: root, Body: bytes.Clone(body)}, nil
}

// ParseSize reads a tree size: an ASCII decimal with no leading zeros
// (0 for an empty tree), at most 2^63-1.
func ParseSize(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, fmt.Errorf("%q is not a decimal size without leading zeros", s)
	}
	return n, nil
}

// EmptyRoot is the root hash of the empty tree (RFC 6962: the hash of
// the empty string).
var EmptyRoot = tlog.Hash{0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
	0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55}

// SplitNote splits a signed note into its text (final newline included)
// and its signature lines, at the last blank line (c2sp.org/signed-note).
func SplitNote(msg []byte) (text, sigs []byte, err error) {
	i := bytes.LastIndex(msg, []byte("\n\n"))
	if i < 0 || len(msg) == i+2 || msg[len(msg)-1] != '\n' {
		return nil, nil, errors.New("note: no signature lines after a blank line")
	}
	return msg[:i+1], msg[i+2:], nil
}
