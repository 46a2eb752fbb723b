package witness

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
)

// publicOnly is a crypto.Signer that holds only a public key: torchwood
// makes its cosignature verifier from a signer.
type publicOnly ed25519.PublicKey

func (p publicOnly) Public() crypto.PublicKey { return ed25519.PublicKey(p) }
func (publicOnly) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("verification only")
}

// TestTorchwoodVerifiesOurCosignatures: an independent implementation of
// c2sp.org/tlog-cosignature (filippo.io/torchwood) derives the same
// verifier key from our witness's public key and verifies its
// cosignatures and their timestamps; and ours verifies torchwood's.
func TestTorchwoodVerifiesOurCosignatures(t *testing.T) {
	ctx := context.Background()
	w := openTestWitness(t)
	l := newMemLog(t, "log.test/tw")
	w.AddLog(ctx, "", l.vkey)
	l.add(33, "tw")
	sigs := w.expect(t, "first checkpoint", l.request(0), http.StatusOK)

	v, err := cosign.NewVerifier(w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	pub := ed25519.PublicKey(v.PublicKey())
	ts, err := torchwood.NewCosignatureSigner(w.Name(), publicOnly(pub))
	if err != nil {
		t.Fatal(err)
	}
	theirs := ts.Verifier()
	if theirs.String() != w.VerifierKey() {
		t.Fatalf("torchwood's verifier key %s, ours %s", theirs.String(), w.VerifierKey())
	}
	n, err := note.Open(append(l.checkpoint(), sigs...), note.VerifierList(theirs))
	if err != nil || len(n.Sigs) != 1 {
		t.Fatalf("torchwood does not verify our cosignature: %v", err)
	}
	when, err := torchwood.CosignatureTimestamp(n.Sigs[0])
	if err != nil || when != w.Now().Unix() {
		t.Fatalf("torchwood reads the timestamp %d (%v), want %d", when, err, w.Now().Unix())
	}

	// The other way: torchwood's cosigner, our verifier.
	_, key, _ := ed25519.GenerateKey(nil)
	signer, err := torchwood.NewCosignatureSigner("torchwood.test/w", key)
	if err != nil {
		t.Fatal(err)
	}
	cp := l.checkpoint()
	text, _, _ := cosign.SplitNote(cp)
	msg, err := note.Sign(&note.Note{Text: string(text)}, signer)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := cosign.NewVerifier(signer.Verifier().String())
	if err != nil {
		t.Fatal(err)
	}
	got, err := cosign.Quorum(msg, []*cosign.Verifier{ours}, 1)
	if err != nil || !strings.HasPrefix(got[0].Line, "— torchwood.test/w ") {
		t.Fatalf("our verifier on torchwood's cosignature: %+v %v", got, err)
	}
}
