package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
	"github.com/tradeledger/tradeledger/eventstore/transparency/witness"
	"github.com/tradeledger/tradeledger/eventstore/transparency/witnesses"
)

// testWitness is our witness on 127.0.0.1, as an auditor runs it.
type testWitness struct {
	w   *witness.Witness
	url string
}

func startTestWitness(t *testing.T, name string) testWitness {
	t.Helper()
	w, err := witness.Open(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	t.Cleanup(func() { srv.Close(); w.Close() })
	return testWitness{w: w, url: srv.URL}
}

func (tw testWitness) flag(t *testing.T) witnesses.Witness {
	w, err := witnesses.ParseWitness(tw.w.VerifierKey() + " " + tw.url)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// witnessedService is serve with --witness, on a manual clock.
type witnessedService struct {
	*tradingE2E
}

func startWitnessedService(t *testing.T, dir string, ws ...testWitness) witnessedService {
	m, clock, token := startTlogMainWith(t, dir, zap.NewNop(), func(m *Main) {
		for _, w := range ws {
			m.Config.Witnesses = append(m.Config.Witnesses, w.flag(t))
		}
	})
	for _, w := range ws {
		if _, err := w.w.AddLog(context.Background(), "", m.DataDir.CheckpointKey.VerifierKey()); err != nil {
			t.Fatal(err)
		}
	}
	return witnessedService{&tradingE2E{t: t, m: m, clock: clock, token: token}}
}

// grow adds a pair (a few events), moves the clock past the checkpoint
// interval, issues a checkpoint and sends it to the witnesses.
func (s witnessedService) grow(pair string) {
	s.t.Helper()
	if status, out := s.post("config/pair/add", map[string]any{"pair": pair, "exchange": "binance", "settings": map[string]any{"strategy": "manual"}}, ""); status != 200 {
		s.t.Fatalf("pair/add = %d %v", status, out)
	}
	if last := s.m.Tlog.LatestTime(); last.After(s.clock.Now()) { // a restart's clock starts over
		s.clock.Set(last)
	}
	s.clock.Advance(2 * s.m.Config.CheckpointInterval)
	if issued, err := s.m.Tlog.Tick(context.Background()); !issued || err != nil {
		s.t.Fatalf("checkpoint: issued=%v %v", issued, err)
	}
	s.m.Witnesses.Tick(context.Background())
}

func (s witnessedService) health() (status, reason string, missing int) {
	s.t.Helper()
	code, body := serveGet(s.t, s.m, "/healthz", "")
	var h struct {
		Status, Reason string
		Witnesses      struct{ Missing int }
	}
	if code != 200 || json.Unmarshal([]byte(body), &h) != nil {
		s.t.Fatalf("healthz = %d %s", code, body)
	}
	return h.Status, h.Reason, h.Witnesses.Missing
}

func (s witnessedService) checkpointNote() []byte {
	s.t.Helper()
	code, body := serveGet(s.t, s.m, "/tlog/checkpoint", "")
	if code != 200 {
		s.t.Fatalf("/tlog/checkpoint = %d %s", code, body)
	}
	return []byte(body)
}

// TestWitnessedCheckpoints: the service and two of our witnesses; each
// checkpoint is served with both cosignatures, which verify with the
// witnesses' keys; with one witness down the checkpoint is served with
// what it has and /healthz says one is missing.
func TestWitnessedCheckpoints(t *testing.T) {
	w1, w2 := startTestWitness(t, "auditor.test/one"), startTestWitness(t, "auditor.test/two")
	s := startWitnessedService(t, "", w1, w2)
	s.grow("USDT-BTC")
	note := s.checkpointNote()
	vs := []*cosign.Verifier{w1.flag(t).Verifier, w2.flag(t).Verifier}
	got, err := cosign.Quorum(note, vs, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("served checkpoint %s: %v", note, err)
	}
	if status, _, missing := s.health(); status != "ok" || missing != 0 {
		t.Fatalf("healthz %s, %d missing", status, missing)
	}
	// The checkpoints stream says who cosigned which size.
	it := s.m.DataDir.Store.ReadStream(context.Background(), domain.StreamCheckpoints, 0, 0)
	cosigned := map[string]int64{}
	for it.Next() {
		if e := it.Event(); e.Type == domain.TypeCheckpointCosigned {
			var c domain.CheckpointCosigned
			e.Decode(&c)
			cosigned[c.Witness] = c.Size
		}
	}
	it.Close()
	latest, _ := s.m.Tlog.Latest()
	if cosigned["auditor.test/one"] != latest.Size || cosigned["auditor.test/two"] != latest.Size {
		t.Fatalf("CheckpointCosigned events %v, want both at %d", cosigned, latest.Size)
	}
	var rep struct {
		Witnesses []struct {
			Name    string
			Size    int64
			Time    int64
			Current bool
		}
	}
	status, out := s.get("audit/witnesses")
	b, _ := json.Marshal(out)
	json.Unmarshal(b, &rep)
	if status != 200 || len(rep.Witnesses) != 2 || !rep.Witnesses[0].Current || rep.Witnesses[1].Size != latest.Size || rep.Witnesses[1].Time == 0 {
		t.Fatalf("audit/witnesses = %d %s", status, b)
	}

	// The second witness goes down: the next checkpoint is served with
	// the first's cosignature, one missing.
	s.m.Witnesses.Witnesses[1].URL = "http://127.0.0.1:1" // nothing listens there
	s.grow("USDT-ETH")
	note = s.checkpointNote()
	if got, err := cosign.Quorum(note, vs, 1); err != nil || len(got) != 1 || got[0].Witness != "auditor.test/one" {
		t.Fatalf("with one witness down: %v %v", got, err)
	}
	if status, _, missing := s.health(); status != "ok" || missing != 1 {
		t.Fatalf("healthz with one witness down: %s, %d missing, want ok and 1", status, missing)
	}
}

// TestForkedDataDirRefused: a data dir copied, both copies grown
// otherwise under the same key: the witness cosigns the first and
// refuses the second, whose /healthz is degraded naming the witness and
// the sizes, whose metric and webhook say so, and whose checkpoint fails
// verify --quorum 1.
func TestForkedDataDirRefused(t *testing.T) {
	w := startTestWitness(t, "auditor.test/one")
	dirA := filepath.Join(t.TempDir(), "a")
	a := startWitnessedService(t, dirA, w)
	a.grow("USDT-BTC")
	a.m.Close()
	dirB := filepath.Join(t.TempDir(), "b")
	copyDir(t, dirA, dirB)

	a = startWitnessedService(t, dirA, w)
	b := startWitnessedService(t, dirB, w)
	hooks := make(chan []byte, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hooks <- body
	}))
	defer hook.Close()
	_, full := b.get("config/full")
	cfg := full["config"].(map[string]any)
	cfg["notifications"] = map[string]any{"webhooks": []any{map[string]any{"url": hook.URL, "events": []any{"witnessRefusals"}}}}
	if status, out := b.post("config/update", map[string]any{"data": cfg}, ""); status != 200 {
		t.Fatalf("config/update = %d %v", status, out)
	}

	a.grow("USDT-ETH")
	aNote := a.checkpointNote()
	vkey := w.w.VerifierKey()
	if _, err := cosign.Quorum(aNote, []*cosign.Verifier{w.flag(t).Verifier}, 1); err != nil {
		t.Fatalf("the first copy's checkpoint: %v", err)
	}
	b.grow("USDT-LTC")
	b.grow("USDT-XRP") // larger than a's: the witness checks a proof from its size
	bNote := b.checkpointNote()
	if got, _ := cosign.Cosigned(bNote, []*cosign.Verifier{w.flag(t).Verifier}); len(got) != 0 {
		t.Fatalf("the fork's checkpoint was cosigned: %s", bNote)
	}
	aLatest, _ := a.m.Tlog.Latest()
	status, reason, _ := b.health()
	if status != "degraded" || !strings.Contains(reason, "auditor.test/one") || !strings.Contains(reason, "inconsistent") ||
		!strings.Contains(reason, strconv.FormatInt(aLatest.Size, 10)) {
		t.Fatalf("fork's healthz: %s %q, want degraded naming the witness and the size %d it holds", status, reason, aLatest.Size)
	}
	if status, _, _ := a.health(); status != "ok" {
		t.Fatalf("the first copy's healthz: %s", status)
	}
	code, metrics := serveGet(t, b.m, "/metrics", b.token)
	if code != 200 || !strings.Contains(metrics, `tradeledger_witness_refused{witness="auditor.test/one"} 1`) {
		t.Fatalf("metrics: %d, no tradeledger_witness_refused 1", code)
	}
	select {
	case body := <-hooks:
		if !strings.Contains(string(body), `"type":"WitnessRefused"`) || !strings.Contains(string(body), "auditor.test/one") {
			t.Fatalf("webhook body %s", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook for the refusal")
	}

	// Auditors: the fork's checkpoint fails verify --quorum 1, the first's
	// passes.
	files := t.TempDir()
	aFile, bFile := filepath.Join(files, "a.checkpoint"), filepath.Join(files, "b.checkpoint")
	os.WriteFile(aFile, aNote, 0o644)
	os.WriteFile(bFile, bNote, 0o644)
	a.m.Close()
	b.m.Close()
	var out strings.Builder
	err := Run(context.Background(), []string{"verify", "--data", dirB, "--checkpoint", bFile, "--witness-key", vkey, "--quorum", "1"}, strings.NewReader(""), &out, io.Discard)
	var ec exitCode
	if !errors.As(err, &ec) || ec != exitTampered || !strings.Contains(out.String(), "NOT WITNESSED") {
		t.Fatalf("verify --quorum 1 on the fork's checkpoint: %v (exit %d)\n%s", err, ec, out.String())
	}
	out.Reset()
	if err := Run(context.Background(), []string{"verify", "--data", dirA, "--checkpoint", aFile, "--witness-key", vkey, "--quorum", "1"}, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatalf("verify --quorum 1 on the first copy's checkpoint: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "cosigned by 1 of the 1 witnesses") {
		t.Fatalf("verify said %s", out.String())
	}
	out.Reset()
	if err := Run(context.Background(), []string{"verify", "--data", dirA, "--since", aFile, "--witness-key", vkey}, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatalf("verify --since with the witness key: %v\n%s", err, out.String())
	}
}

// TestVerifyProofWitnessed: verify-proof --witness-key passes a bundle
// whose checkpoint our witness cosigned, and fails (exit 1) the same
// bundle without the cosignature, or with a quorum above the keys given.
func TestVerifyProofWitnessed(t *testing.T) {
	dir, _ := auditLog(t)
	key, _, _ := auditRun(t, "checkpoint", "key", "--data", dir)
	key = strings.TrimSpace(key)
	file := filepath.Join(t.TempDir(), "order-1.proof.json")
	if _, errOut, code := auditRun(t, "proof", "--data", dir, "--order", "1", "--out", file); code != 0 {
		t.Fatalf("proof: %s", errOut)
	}
	w := startTestWitness(t, "auditor.test/one")
	if _, err := w.w.AddLog(context.Background(), "", key); err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	raw, _ := os.ReadFile(file)
	json.Unmarshal(raw, &b)
	note := b["checkpoint"].(string)
	a, err := w.w.AddCheckpoint(context.Background(), cosign.Request{Checkpoint: []byte(note)}.Body())
	if err != nil || a.Status != http.StatusOK {
		t.Fatalf("witness: %d %s %v", a.Status, a.Body, err)
	}
	b["checkpoint"] = note + string(a.Body)
	cosigned := filepath.Join(t.TempDir(), "cosigned.proof.json")
	out, _ := json.Marshal(b)
	os.WriteFile(cosigned, out, 0o644)
	vkey := w.w.VerifierKey()
	if out, errOut, code := auditRun(t, "verify-proof", cosigned, "--key", key, "--witness-key", vkey); code != 0 || !strings.Contains(out, "cosigned by 1 of the 1 witnesses") {
		t.Fatalf("cosigned bundle: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := auditRun(t, "verify-proof", file, "--key", key, "--witness-key", vkey, "--quorum", "1"); code != 1 || !strings.Contains(out, "NOT WITNESSED") {
		t.Fatalf("bundle without the cosignature: exit %d\n%s", code, out)
	}
	if _, errOut, code := auditRun(t, "verify-proof", cosigned, "--key", key, "--witness-key", vkey, "--quorum", "2"); code == 0 || !strings.Contains(errOut, "--quorum") {
		t.Fatalf("quorum above the keys: exit %d %s", code, errOut)
	}
	if _, errOut, code := auditRun(t, "verify-proof", cosigned, "--key", key, "--quorum", "1"); code == 0 || !strings.Contains(errOut, "--witness-key") {
		t.Fatalf("--quorum without keys: exit %d %s", code, errOut)
	}
}

// TestWitnessFlagEnv: TRADELEDGER_WITNESS holds one witness per line;
// a bad one is refused naming what is wrong.
func TestWitnessFlagEnv(t *testing.T) {
	w1, w2 := startTestWitness(t, "auditor.test/one"), startTestWitness(t, "auditor.test/two")
	t.Setenv("TRADELEDGER_WITNESS", w1.w.VerifierKey()+" "+w1.url+"\n\n"+w2.w.VerifierKey()+" "+w2.url+"\n")
	t.Setenv("TRADELEDGER_WITNESS_QUORUM", "1")
	m := NewMain()
	if err := m.ParseFlags(nil, &Env{Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if len(m.Config.Witnesses) != 2 || m.Config.Witnesses[1].Name() != "auditor.test/two" || m.Config.WitnessQuorum != 1 {
		t.Fatalf("witnesses %v, quorum %d", m.Config.Witnesses, m.Config.WitnessQuorum)
	}
	t.Setenv("TRADELEDGER_WITNESS", "not-a-key http://127.0.0.1:1")
	if err := NewMain().ParseFlags(nil, &Env{Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "TRADELEDGER_WITNESS") {
		t.Fatalf("a bad witness: %v", err)
	}
}

// TestWitnessCommands: witness key makes the witness at its first start
// (a name needed then), add-log follows a log by its key, and witness
// serve answers add-checkpoint until its context ends.
func TestWitnessCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "witness")
	if _, errOut, code := auditRun(t, "witness", "key", "--data", dir); code == 0 || !strings.Contains(errOut, "--name") {
		t.Fatalf("first start without a name: exit %d %s", code, errOut)
	}
	vkey, errOut, code := auditRun(t, "witness", "key", "--data", dir, "--name", "auditor.test/cli")
	if code != 0 || !strings.HasPrefix(vkey, "auditor.test/cli+") {
		t.Fatalf("witness key: exit %d %q %s", code, vkey, errOut)
	}
	if again, _, _ := auditRun(t, "witness", "key", "--data", dir); again != vkey {
		t.Fatalf("the key changed: %q, then %q", vkey, again)
	}
	logDir, _ := auditLog(t)
	logKey, _, _ := auditRun(t, "checkpoint", "key", "--data", logDir)
	if _, errOut, code := auditRun(t, "witness", "add-log", "--data", dir, "--key", "not a key"); code == 0 || !strings.Contains(errOut, "--key") {
		t.Fatalf("add-log with a bad key: exit %d %s", code, errOut)
	}
	out, errOut, code := auditRun(t, "witness", "add-log", "--data", dir, "--key", strings.TrimSpace(logKey))
	if code != 0 || !strings.Contains(out, "follows the log tradeledger/log/") {
		t.Fatalf("add-log: exit %d %s%s", code, out, errOut)
	}
	note, _, _ := auditRun(t, "checkpoint", "--data", logDir)

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"witness", "serve", "--data", dir, "--listen", "127.0.0.1:0"}, strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil || !strings.Contains(line, "serving on http://127.0.0.1:") {
		t.Fatalf("witness serve said %q (%v)", line, err)
	}
	url := strings.Fields(line[strings.Index(line, "http://"):])[0]
	res, err := http.Post(url+"/add-checkpoint", "text/plain", strings.NewReader(string(cosign.Request{Checkpoint: []byte(note)}.Body())))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(string(body), "— auditor.test/cli ") {
		t.Fatalf("add-checkpoint: %d %s", res.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("witness serve after its context ended: %v", err)
	}
}
