package cosign

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// The examples of the specifications, verbatim (C2SP/C2SP at 5ba5ee8).
const (
	// c2sp.org/tlog-cosignature, the example checkpoint with a cosignature.
	specCosigned = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n" +
		"— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" +
		"— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"
	// c2sp.org/tlog-cosignature, "Ed25519 signed message".
	specMessage = "cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
	// c2sp.org/tlog-witness, the example add-checkpoint request body.
	specRequest = "old 20852014\n" +
		"PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n" +
		"jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n" +
		"5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n" +
		"/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n" +
		"\n" +
		"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n" +
		"— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" +
		"— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n"
	// c2sp.org/signed-note, "Verifier keys": an Ed25519 note key (type 0x01).
	specNoteKey  = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
	specNoteText = "This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
)

// TestSpecCosignatureExample: the tlog-cosignature example's cosignature
// carries the timestamp of the spec's signed-message example, and the
// message we build for it is that example byte for byte.
func TestSpecCosignatureExample(t *testing.T) {
	text, sigs, err := SplitNote([]byte(specCosigned))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := ParseCheckpoint(text)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Origin != "example.com/behind-the-sofa" || cp.Size != 20852163 || cp.Root.String() != "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=" {
		t.Fatalf("checkpoint = %+v", cp)
	}
	lines := strings.Split(strings.TrimSuffix(string(sigs), "\n"), "\n")
	name, b64, _ := strings.Cut(strings.TrimPrefix(lines[1], "— "), " ")
	ts, err := Timestamp(note.Signature{Name: name, Base64: b64})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ts.Unix(), int64(1679315147); got != want {
		t.Fatalf("timestamp = %d, want %d", got, want)
	}
	if got := string(Message(uint64(ts.Unix()), text)); got != specMessage {
		t.Fatalf("message =\n%q\nwant the spec's\n%q", got, specMessage)
	}
	// The log's own signature (64 bytes after its ID) is no cosignature.
	name, b64, _ = strings.Cut(strings.TrimPrefix(lines[0], "— "), " ")
	if _, err := Timestamp(note.Signature{Name: name, Base64: b64}); err == nil {
		t.Fatal("the log's Ed25519 signature read as a cosignature")
	}
}

// TestSpecRequestExample: the tlog-witness example body parses into its
// parts and is written back byte for byte.
func TestSpecRequestExample(t *testing.T) {
	r, err := ParseRequest([]byte(specRequest))
	if err != nil {
		t.Fatal(err)
	}
	if r.OldSize != 20852014 || len(r.Proof) != 4 || r.Proof[3].String() != "/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=" {
		t.Fatalf("request = old %d, %d proof lines", r.OldSize, len(r.Proof))
	}
	if !strings.HasPrefix(string(r.Checkpoint), "example.com/behind-the-sofa\n20852163\n") {
		t.Fatalf("checkpoint = %q", r.Checkpoint)
	}
	if got := string(r.Body()); got != specRequest {
		t.Fatalf("body =\n%q\nwant\n%q", got, specRequest)
	}
}

func TestParseRequestRefuses(t *testing.T) {
	cp := "example.com/log\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— example.com/log AAAA\n"
	for name, body := range map[string]string{
		"no old line":    "20\n\n" + cp,
		"leading zero":   "old 020\n\n" + cp,
		"negative":       "old -1\n\n" + cp,
		"no blank line":  "old 1\n" + cp,
		"bad proof hash": "old 1\nnot-base64\n\n" + cp,
		"short hash":     "old 1\nAAAA\n\n" + cp,
		"64 proof lines": "old 1\n" + strings.Repeat("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", 64) + "\n" + cp,
	} {
		if _, err := ParseRequest([]byte(body)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, err := ParseRequest([]byte("old 0\n" + strings.Repeat("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", 63) + "\n" + cp)); err != nil {
		t.Errorf("63 proof lines refused: %v", err)
	}
}

func TestParseCheckpointRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"two lines":       "o\n1\n",
		"leading zero":    "o\n01\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"no final \\n":    "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=",
		"empty extension": "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\nx\n",
		"empty origin":    "\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"short root":      "o\n1\nAAAA\n",
	} {
		if _, err := ParseCheckpoint([]byte(body)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if c, err := ParseCheckpoint([]byte("o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\next\n")); err != nil || c.Root != EmptyRoot {
		t.Errorf("empty tree with an extension line: %+v, %v", c, err)
	}
}

// TestSpecNoteKeyIsNotACosigner: the signed-note example key is an
// Ed25519 note key (type 0x01), which verifies its example note but is
// refused as a witness key.
func TestSpecNoteKeyIsNotACosigner(t *testing.T) {
	v, err := note.NewVerifier(specNoteKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open([]byte(specNoteText), note.VerifierList(v)); err != nil {
		t.Fatalf("the spec's example note: %v", err)
	}
	if _, err := NewVerifier(specNoteKey); err == nil || !strings.Contains(err.Error(), "0x01") {
		t.Fatalf("NewVerifier(note key) = %v, want a refusal naming type 0x01", err)
	}
}

func TestSignVerify(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	now := time.Unix(1700000000, 0)
	s, err := NewSigner("witness.test/w1", key, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(s.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	if v.KeyHash() != s.KeyHash() || v.Name() != s.Name() {
		t.Fatal("verifier and signer disagree on the key ID")
	}
	body := "log.test/x\n5\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
	msg, err := note.Sign(&note.Note{Text: body}, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Quorum(msg, []*Verifier{v}, 1)
	if err != nil || len(got) != 1 || !got[0].Time.Equal(now) {
		t.Fatalf("Quorum = %+v, %v", got, err)
	}
	// Another body under the same signature line: refused whole.
	forged := strings.Replace(string(msg), "\n5\n", "\n6\n", 1)
	if _, err := Cosigned([]byte(forged), []*Verifier{v}); err == nil {
		t.Fatal("a cosignature moved onto another checkpoint verified")
	}
	// Not a checkpoint: not signed.
	if _, err := note.Sign(&note.Note{Text: "hello\n"}, s); err == nil {
		t.Fatal("signed a body that is not a checkpoint")
	}
	// A second witness that did not sign: quorum 2 fails, naming it.
	other, _ := NewSigner("witness.test/w2", ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32)), nil)
	v2, _ := NewVerifier(other.VerifierKey())
	if _, err := Quorum(msg, []*Verifier{v, v2}, 0); err == nil || !strings.Contains(err.Error(), "witness.test/w2") {
		t.Fatalf("quorum of all = %v, want a failure naming w2", err)
	}
}

func TestSizeAnswer(t *testing.T) {
	if got := string(FormatSize(20852014)); got != "20852014\n" {
		t.Fatalf("FormatSize = %q", got)
	}
	if n, err := ReadSizeAnswer([]byte("42\n")); n != 42 || err != nil {
		t.Fatalf("ReadSizeAnswer = %d, %v", n, err)
	}
}
