// Package cosign holds the formats witnessing is made of, written to the
// public specifications and nothing else: cosignature/v1 note signatures
// (c2sp.org/tlog-cosignature, Ed25519, signature type 0x04), the
// checkpoint body a witness reads (c2sp.org/tlog-checkpoint), and the
// bodies of the add-checkpoint call (c2sp.org/tlog-witness). Both sides
// use it: the witness client that collects cosignatures for the log's
// checkpoints (package witnesses) and the witness an auditor runs
// (package witness). Standard library and golang.org/x/mod/sumdb only.
package cosign

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
)

// AlgCosignatureV1 is the signed-note signature type of Ed25519
// cosignatures (c2sp.org/signed-note, "Signature types").
const AlgCosignatureV1 = 0x04

// sigSize is a cosignature's size after its key ID: the timestamp (8
// bytes, big endian) and the Ed25519 signature.
const sigSize = 8 + ed25519.SignatureSize

// ValidName reports whether name may name a key (c2sp.org/signed-note):
// non-empty UTF-8 without Unicode spaces or plus signs.
func ValidName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// KeyID returns the key ID of an Ed25519 cosigner: the first four bytes
// of SHA-256(name || "\n" || 0x04 || public key), big endian.
func KeyID(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', AlgCosignatureV1})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// Message returns the message a cosignature/v1 signs: the header line,
// the timestamp line, and the checkpoint's whole note body (final newline
// included, signature lines not).
func Message(timestamp uint64, body []byte) []byte {
	return append(fmt.Appendf(nil, "cosignature/v1\ntime %d\n", timestamp), body...)
}

// Signer makes cosignature/v1 signatures: a note.Signer, so that
// note.Sign(&note.Note{Text: checkpoint body}, signer) returns the
// checkpoint with its cosignature line. It signs only well-formed
// checkpoint bodies.
type Signer struct {
	name string
	id   uint32
	key  ed25519.PrivateKey
	// Now is the clock the timestamps are read from.
	Now func() time.Time
}

// NewSigner returns the cosigner name with key (EINVALID-like error for a
// bad name); its timestamps come from now.
func NewSigner(name string, key ed25519.PrivateKey, now func() time.Time) (*Signer, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("cosigner name %q: it must be non-empty, without spaces or '+'", name)
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, errors.New("cosigner key: not an Ed25519 private key")
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{name: name, id: KeyID(name, key.Public().(ed25519.PublicKey)), key: key, Now: now}, nil
}

// Name implements note.Signer.
func (s *Signer) Name() string { return s.name }

// KeyHash implements note.Signer: the key ID.
func (s *Signer) KeyHash() uint32 { return s.id }

// Sign implements note.Signer: the timestamp (seconds since the epoch,
// big endian) and the Ed25519 signature of Message(timestamp, msg). msg
// must be a checkpoint body.
func (s *Signer) Sign(msg []byte) ([]byte, error) {
	if _, err := ParseCheckpoint(msg); err != nil {
		return nil, err
	}
	t := s.Now().Unix()
	if t <= 0 {
		return nil, errors.New("cosignature: the clock is before 1970")
	}
	sig := binary.BigEndian.AppendUint64(make([]byte, 0, sigSize), uint64(t))
	return append(sig, ed25519.Sign(s.key, Message(uint64(t), msg))...), nil
}

// VerifierKey returns the cosigner's verifier key (c2sp.org/signed-note):
// name+hex(key ID)+base64(0x04 || public key).
func (s *Signer) VerifierKey() string {
	return FormatVerifierKey(s.name, s.key.Public().(ed25519.PublicKey))
}

// FormatVerifierKey returns the verifier key of cosigner name with pub.
func FormatVerifierKey(name string, pub ed25519.PublicKey) string {
	return fmt.Sprintf("%s+%08x+%s", name, KeyID(name, pub), base64.StdEncoding.EncodeToString(append([]byte{AlgCosignatureV1}, pub...)))
}

// Verifier checks cosignature/v1 signatures of one cosigner: a
// note.Verifier, for note.Open.
type Verifier struct {
	name string
	id   uint32
	pub  ed25519.PublicKey
	vkey string
}

// NewVerifier reads a cosigner's verifier key
// (name+hex(key ID)+base64(0x04 || 32-byte Ed25519 key)). The key may
// hold '+' (base64): the key is split at its first two. An error says
// what is wrong; a key of another signature type (an ordinary Ed25519
// note key, 0x01) is refused by name.
func NewVerifier(vkey string) (*Verifier, error) {
	vkey = strings.TrimSpace(vkey)
	name, rest, ok1 := strings.Cut(vkey, "+")
	id16, key64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 || !ValidName(name) {
		return nil, fmt.Errorf("witness key %q: want name+keyid+base64key", vkey)
	}
	id, err := strconv.ParseUint(id16, 16, 32)
	if err != nil || len(id16) != 8 {
		return nil, fmt.Errorf("witness key %s: the key ID %q is not 8 hex digits", name, id16)
	}
	key, err := base64.StdEncoding.DecodeString(key64)
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("witness key %s: the key is not base64", name)
	}
	if key[0] != AlgCosignatureV1 {
		return nil, fmt.Errorf("witness key %s: signature type 0x%02x, not a cosignature/v1 key (0x04)", name, key[0])
	}
	if len(key) != 1+ed25519.PublicKeySize {
		return nil, fmt.Errorf("witness key %s: not a 32-byte Ed25519 key", name)
	}
	pub := ed25519.PublicKey(key[1:])
	if KeyID(name, pub) != uint32(id) {
		return nil, fmt.Errorf("witness key %s: the key ID %s does not match the key", name, id16)
	}
	return &Verifier{name: name, id: uint32(id), pub: pub, vkey: vkey}, nil
}

// Name implements note.Verifier.
func (v *Verifier) Name() string { return v.name }

// KeyHash implements note.Verifier.
func (v *Verifier) KeyHash() uint32 { return v.id }

// Verify implements note.Verifier: sig (after the key ID) is a timestamp
// and an Ed25519 signature of Message(timestamp, msg).
func (v *Verifier) Verify(msg, sig []byte) bool {
	if len(sig) != sigSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	if t > math.MaxInt64 {
		return false
	}
	return ed25519.Verify(v.pub, Message(t, msg), sig[8:])
}

// String returns the verifier key as given.
func (v *Verifier) String() string { return v.vkey }

// Timestamp returns a cosignature's time (the witness's clock when it
// signed), from a note signature whose Base64 is key ID || timestamp ||
// signature.
func Timestamp(sig note.Signature) (time.Time, error) {
	b, err := base64.StdEncoding.DecodeString(sig.Base64)
	if err != nil || len(b) != 4+sigSize {
		return time.Time{}, errors.New("not a cosignature/v1 signature")
	}
	t := binary.BigEndian.Uint64(b[4:])
	if t > math.MaxInt64 {
		return time.Time{}, errors.New("cosignature timestamp beyond 2^63-1")
	}
	return time.Unix(int64(t), 0).UTC(), nil
}

// SignatureLine returns sig as a note signature line: "— name base64\n".
func SignatureLine(sig note.Signature) string {
	return "— " + sig.Name + " " + sig.Base64 + "\n"
}

// PublicKey returns the cosigner's Ed25519 public key.
func (v *Verifier) PublicKey() ed25519.PublicKey { return v.pub }
