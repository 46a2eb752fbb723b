package witness

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
)

// memLog is a log in memory built with sumdb/tlog alone, signing its
// checkpoints with a note key.
type memLog struct {
	t      testing.TB
	origin string
	signer note.Signer
	vkey   string
	hashes []tlog.Hash
	n      int64
}

func newMemLog(t testing.TB, origin string) *memLog {
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return &memLog{t: t, origin: origin, signer: s, vkey: vkey}
}

func (l *memLog) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = l.hashes[x]
	}
	return out, nil
}

// add appends n records named by prefix.
func (l *memLog) add(n int, prefix string) {
	for i := 0; i < n; i++ {
		hs, err := tlog.StoredHashes(l.n, []byte(fmt.Sprintf("%s-%d", prefix, l.n)), l)
		if err != nil {
			l.t.Fatal(err)
		}
		l.hashes = append(l.hashes, hs...)
		l.n++
	}
}

func (l *memLog) checkpoint() []byte {
	root, err := tlog.TreeHash(l.n, l)
	if err != nil {
		l.t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", l.origin, l.n, root)}, l.signer)
	if err != nil {
		l.t.Fatal(err)
	}
	return msg
}

func (l *memLog) request(old int64) []byte {
	var proof tlog.TreeProof
	if old > 0 && old < l.n {
		var err error
		if proof, err = tlog.ProveTree(l.n, old, l); err != nil {
			l.t.Fatal(err)
		}
	}
	return cosign.Request{OldSize: old, Proof: proof, Checkpoint: l.checkpoint()}.Body()
}

type testWitness struct {
	*Witness
	url string
}

func openTestWitness(t *testing.T) testWitness {
	w, err := Open(t.TempDir(), "witness.test/w1")
	if err != nil {
		t.Fatal(err)
	}
	w.Now = func() time.Time { return time.Unix(1767225600, 0) }
	srv := httptest.NewServer(w)
	t.Cleanup(func() { srv.Close(); w.Close() })
	return testWitness{w, srv.URL}
}

func (w testWitness) post(t *testing.T, body []byte) (int, string, string) {
	res, err := http.Post(w.url+"/add-checkpoint", "text/plain", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

func (w testWitness) expect(t *testing.T, what string, body []byte, status int) string {
	t.Helper()
	got, _, b := w.post(t, body)
	if got != status {
		t.Fatalf("%s: status %d (%q), want %d", what, got, b, status)
	}
	return b
}

// TestSpecExampleRequest: the tlog-witness example request, to a witness
// that does not follow example.com/behind-the-sofa (404), then to one that
// follows it with another key than the two that signed it (403: the
// signatures of unknown keys are ignored, and none is left).
func TestSpecExampleRequest(t *testing.T) {
	const example = "old 20852014\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\njrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n" +
		"5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n\n" +
		"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n" +
		"— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" +
		"— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n"
	w := openTestWitness(t)
	w.expect(t, "unknown origin", []byte(example), http.StatusNotFound)
	other := newMemLog(t, "example.com/behind-the-sofa")
	if _, err := w.AddLog(context.Background(), "", other.vkey); err != nil {
		t.Fatal(err)
	}
	w.expect(t, "signed by keys the witness does not know", []byte(example), http.StatusForbidden)
	// The example's shape is accepted once signed by the log's key: the
	// witness holds 0, so it answers 409 with its size.
	l := newMemLog(t, "log.test/a")
	if _, err := w.AddLog(context.Background(), "", l.vkey); err != nil {
		t.Fatal(err)
	}
	l.add(5, "a")
	status, ctype, body := w.post(t, l.request(3))
	if status != http.StatusConflict || ctype != cosign.SizeContentType || body != "0\n" {
		t.Fatalf("old 3 to a fresh witness: %d %q %q, want 409 text/x.tlog.size \"0\\n\"", status, ctype, body)
	}
}

// TestProtocol walks a log through every answer c2sp.org/tlog-witness
// gives.
func TestProtocol(t *testing.T) {
	ctx := context.Background()
	w := openTestWitness(t)
	l := newMemLog(t, "log.test/a")
	if origin, err := w.AddLog(ctx, "", l.vkey); err != nil || origin != "log.test/a" {
		t.Fatalf("AddLog = %q, %v", origin, err)
	}
	v, err := cosign.NewVerifier(w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	l.add(10, "a")
	sigs := w.expect(t, "first checkpoint", l.request(0), http.StatusOK)
	if !strings.HasPrefix(sigs, "— witness.test/w1 ") || strings.Count(sigs, "\n") != 1 {
		t.Fatalf("cosignature lines = %q", sigs)
	}
	cosigned := string(l.checkpoint()) + sigs // the answer added to the note
	got, err := cosign.Quorum([]byte(cosigned), []*cosign.Verifier{v}, 1)
	if err != nil || got[0].Time.Unix() != 1767225600 {
		t.Fatalf("the cosignature: %+v, %v", got, err)
	}

	status, ctype, body := w.post(t, l.request(0))
	if status != http.StatusConflict || ctype != cosign.SizeContentType || body != "10\n" {
		t.Fatalf("stale old size: %d %q %q, want 409 text/x.tlog.size \"10\\n\"", status, ctype, body)
	}
	w.expect(t, "same size, same root", l.request(10), http.StatusOK)
	l.add(7, "a")
	w.expect(t, "old size above the checkpoint's", cosign.Request{OldSize: 18, Checkpoint: l.checkpoint()}.Body(), http.StatusBadRequest)
	bad := l.request(10)
	bad = []byte(strings.Replace(string(bad), "old 10\n", "old 10\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", 1))
	w.expect(t, "a proof that does not verify", bad, http.StatusUnprocessableEntity)
	w.expect(t, "a good proof", l.request(10), http.StatusOK)
	if st, _, _ := w.Log(ctx, "log.test/a"); st.Size != 17 {
		t.Fatalf("witness holds %d, want 17", st.Size)
	}

	// A fork: the same log key signing another tree of 17, then of 20.
	fork := &memLog{t: t, origin: l.origin, signer: l.signer, vkey: l.vkey}
	fork.add(17, "b")
	w.expect(t, "another root at the size cosigned", fork.request(17), http.StatusUnprocessableEntity)
	fork.add(3, "b")
	w.expect(t, "a forked tree grown beyond", fork.request(17), http.StatusUnprocessableEntity)
	if n, _ := w.Refusals(ctx, "log.test/a"); n != 3 {
		t.Fatalf("refusals kept = %d, want 3", n)
	}

	// A signature line with the log's name and key ID that fails.
	tampered := strings.Replace(string(l.request(17)), "\n17\n", "\n18\n", 1)
	w.expect(t, "a bad signature by the log's key", []byte(tampered), http.StatusForbidden)
	w.expect(t, "garbage", []byte("hello"), http.StatusBadRequest)

	// Monitoring: the latest cosigned checkpoint, with the log's signature
	// and the witness's.
	res, err := http.Get(w.url + "/" + OriginHash("log.test/a") + "/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	lv, _ := note.NewVerifier(l.vkey)
	if n, err := note.Open(b, note.VerifierList(lv, v)); err != nil || len(n.Sigs) != 2 || !strings.Contains(n.Text, "\n17\n") {
		t.Fatalf("monitoring checkpoint %q: %v", b, err)
	}
	if res, _ := http.Get(w.url + "/" + OriginHash("log.test/none") + "/checkpoint"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("monitoring an unknown log: %d", res.StatusCode)
	}
	if res, _ := http.Get(w.url + "/add-checkpoint"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET add-checkpoint: %d", res.StatusCode)
	}
}

func TestEmptyTreeRules(t *testing.T) {
	ctx := context.Background()
	w := openTestWitness(t)
	l := newMemLog(t, "log.test/e")
	w.AddLog(ctx, "", l.vkey)
	wrong, _ := note.Sign(&note.Note{Text: "log.test/e\n0\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"}, l.signer)
	w.expect(t, "size 0 with another root", cosign.Request{Checkpoint: wrong}.Body(), http.StatusUnprocessableEntity)
	w.expect(t, "size 0 with the empty root", l.request(0), http.StatusOK)
	l.add(4, "e")
	withProof := cosign.Request{OldSize: 0, Proof: []tlog.Hash{cosign.EmptyRoot}, Checkpoint: l.checkpoint()}.Body()
	w.expect(t, "a proof with old size 0", withProof, http.StatusUnprocessableEntity)
}

// TestAtomic: requests racing from the same old size: one is cosigned,
// every other is told the new size (never a rollback).
func TestAtomic(t *testing.T) {
	ctx := context.Background()
	w := openTestWitness(t)
	l := newMemLog(t, "log.test/r")
	w.AddLog(ctx, "", l.vkey)
	var bodies [][]byte
	for i := 0; i < 8; i++ {
		l.add(1, "r")
		bodies = append(bodies, l.request(0))
	}
	var mu sync.Mutex
	ok := 0
	var wg sync.WaitGroup
	for _, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := w.AddCheckpoint(ctx, b)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			if a.Status == http.StatusOK {
				ok++
			} else if a.Status != http.StatusConflict {
				t.Errorf("status %d", a.Status)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if ok != 1 {
		t.Fatalf("%d requests from old size 0 cosigned, want 1", ok)
	}
}

func TestFilesAndName(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, ""); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Fatalf("first open without a name: %v", err)
	}
	w, err := Open(dir, "auditor.test/w")
	if err != nil {
		t.Fatal(err)
	}
	vkey := w.VerifierKey()
	w.Close()
	for _, f := range []string{DBFile, KeyFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v, want 0600", f, err, st.Mode().Perm())
		}
	}
	if _, err := Open(dir, "other.test/w"); err == nil {
		t.Fatal("renamed a witness")
	}
	w, err = Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.VerifierKey() != vkey || !strings.HasPrefix(vkey, "auditor.test/w+") {
		t.Fatalf("verifier key after reopening = %q, want %q", w.VerifierKey(), vkey)
	}
	if _, err := w.AddLog(context.Background(), "", "not a key"); err == nil {
		t.Fatal("added a log with a bad key")
	}
}

// newLoopback serves w on 127.0.0.1 until the benchmark ends.
func newLoopback(b *testing.B, w *Witness) string {
	srv := httptest.NewServer(w)
	b.Cleanup(srv.Close)
	return srv.URL
}
