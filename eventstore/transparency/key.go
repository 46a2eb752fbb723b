// Package transparency makes the log provable to third parties (DESIGN
// §13): the Merkle tree a store keeps over every event
// (audit.TreeStore) is served as signed checkpoints, inclusion and
// consistency proofs and hash tiles, with the Go team's own packages —
// golang.org/x/mod/sumdb/tlog for the tree, proofs and tiles,
// golang.org/x/mod/sumdb/note for the Ed25519-signed checkpoints (C2SP
// checkpoint text). Log issues checkpoints and answers proofs; FileTree
// keeps the tree of a store that does not (EventStoreDB) in local files;
// VerifyCheckpoints, VerifySince and VerifyBundle are what an auditor
// runs.
//
// The log, its tree and the checkpoint kept beside the tree tell one story
// (agreement.go): CheckAgreement finds a log cut at its end or a tree that
// no longer extends the kept checkpoint, and every command that appends
// checks it when it opens the data dir and refuses such a log;
// Log.AcceptCut goes on only on an operator's decision (serve
// --accept-truncated-log), recorded in the log. Verify is what verify and
// audit/verify answer: every chain, the tree rebuilt from the events, the
// kept checkpoint.
//
// Log issues a checkpoint as the log grows (Tick, on the injected clock),
// each recorded in the checkpoints stream through eventstore.Run; as the
// checkpoints projection it also keeps the witnesses' cosignatures of the
// last checkpoint and each witness's last answer. Hash tiles are served at
// the Go checksum database's paths and at c2sp.org/tlog-tiles's (tiles.go).
package transparency

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/tradeledger/tradeledger/domain"
)

// OriginPrefix starts the origin of every log this service makes: the
// origin names the log (C2SP checkpoint's first line) and is the name of
// the key that signs its checkpoints.
const OriginPrefix = "tradeledger/log/"

// Key signs a log's checkpoints. It holds the private key: only the
// verifier key (VerifierKey) and signatures ever leave it.
type Key struct {
	signer note.Signer
	vkey   string
}

// GenerateKey returns a new signer key (note format,
// "PRIVATE+KEY+origin+hash+base64") for a log of its own: the origin is
// OriginPrefix and 16 random bytes in hex, the log's id.
func GenerateKey(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var id [16]byte
	if _, err := io.ReadFull(r, id[:]); err != nil {
		return "", err
	}
	skey, _, err := note.GenerateKey(r, OriginPrefix+hex.EncodeToString(id[:]))
	return skey, err
}

// ParseKey reads a signer key as GenerateKey makes it (surrounding space
// ignored). The error never quotes the key.
func ParseKey(skey string) (*Key, error) {
	skey = strings.TrimSpace(skey)
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, domain.Errorf(domain.EINVALID, "checkpoint key: not an Ed25519 signer key in note format (PRIVATE+KEY+name+hash+base64)")
	}
	// The public key, for the verifier key: the signer's seed is the last
	// field (algorithm byte, then 32 bytes), whose base64 may hold '+'.
	fields := strings.SplitN(skey, "+", 5)
	raw, err := base64.StdEncoding.DecodeString(fields[len(fields)-1])
	if len(fields) != 5 || err != nil || len(raw) != 1+ed25519.SeedSize {
		return nil, domain.Errorf(domain.EINVALID, "checkpoint key: not an Ed25519 signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return nil, err
	}
	return &Key{signer: s, vkey: vkey}, nil
}

// Origin returns the log's origin: the key's name.
func (k *Key) Origin() string { return k.signer.Name() }

// VerifierKey returns the verifier key in note format
// (origin+hash+base64), which checks the checkpoints' signatures.
func (k *Key) VerifierKey() string { return k.vkey }

// NewKey returns a new key for a log of its own (GenerateKey, ParseKey).
func NewKey(r io.Reader) (*Key, error) {
	skey, err := GenerateKey(r)
	if err != nil {
		return nil, err
	}
	return ParseKey(skey)
}
