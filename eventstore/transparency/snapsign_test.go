package transparency_test

import (
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// TestSnapshotSignature: a snapshot's text signed by the log's key
// verifies with it; another key's signature, a signature over another
// text, none, and a signed checkpoint are refused, each saying why; the
// key signs no text that is not a snapshot's.
func TestSnapshotSignature(t *testing.T) {
	key, other := newKey(t), newKey(t)
	text := []byte("tradeledger read-model snapshot\nformat 2\nposition 7\n")
	sig, err := key.SignSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	if err := key.VerifySnapshot(text, sig); err != nil {
		t.Fatalf("own signature: %v", err)
	}
	if err := transparency.VerifySnapshotNote(key.VerifierKey(), text, sig); err != nil {
		t.Fatalf("with the verifier key alone: %v", err)
	}
	otherSig, _ := other.SignSnapshot(text)
	edited := []byte(strings.Replace(string(text), "7", "8", 1))
	cp, err := key.Sign(transparency.Checkpoint{Origin: key.Origin(), Size: 0})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		text, sig []byte
		want      string
	}{
		"another key":  {text, otherSig, "signed by a key named"},
		"another text": {edited, sig, "covers another index"},
		"unsigned":     {text, nil, "not signed"},
		"a checkpoint": {text, cp, "covers another index"},
		"garbage":      {text, []byte("not a note"), "does not verify"},
	} {
		err := key.VerifySnapshot(c.text, c.sig)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	if _, err := key.SignSnapshot([]byte(key.Origin() + "\n5\nAAAA\n")); err == nil {
		t.Fatal("the key signed a checkpoint's text as a snapshot")
	}
}
