package witnesses_test

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
	"github.com/tradeledger/tradeledger/eventstore/transparency/witnesses"
)

// litewitnessModule is the independent implementation of
// c2sp.org/tlog-witness this client is tested against: Filippo
// Valsorda's litewitness, built from the module proxy.
const litewitnessModule = "filippo.io/torchwood/cmd/litewitness@v0.6.1"

// buildLitewitness installs litewitness into a temporary directory. A
// build that cannot be done (no module proxy and no module cache) skips
// the test, saying so, except in CI, where it fails.
func buildLitewitness(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		msg := "cannot build " + litewitnessModule + ": no go command on PATH"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bin := t.TempDir()
	cmd := exec.Command(goBin, "install", litewitnessModule)
	cmd.Dir = bin // outside this module: its own module graph
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOWORK=off", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := "cannot build " + litewitnessModule + " (the independent tlog-witness this test needs): " + err.Error() + "\n" + string(out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return filepath.Join(bin, "litewitness")
}

// sshAgent serves an in-memory ssh-agent holding key on a Unix socket,
// which is how litewitness reaches its key.
func sshAgent(t *testing.T, key ed25519.PrivateKey) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent") // short: a socket path is at most ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	kr := agent.NewKeyring()
	if err := kr.Add(agent.AddedKey{PrivateKey: key}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				agent.ServeAgent(kr, c)
			}()
		}
	}()
	return sock
}

// startLitewitness runs litewitness named name following the log whose
// verifier key is logKey, and returns it as the client's witness.
func startLitewitness(t *testing.T, bin, name, logOrigin, logKey string) witnesses.Witness {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	pub := key.Public().(ed25519.PublicKey)
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "litewitness.db")
	// The log, as its witnessctl add-log records it: litewitness's own
	// schema (CREATE IF NOT EXISTS, as it runs it at start), size 0 and
	// the empty tree's root, and the log's key.
	conn, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS log (origin TEXT PRIMARY KEY, tree_size INTEGER NOT NULL, tree_hash TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS key (origin TEXT NOT NULL, key TEXT NOT NULL, FOREIGN KEY(origin) REFERENCES log(origin))`,
	} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(`INSERT INTO log (origin, tree_size, tree_hash) VALUES (?, 0, ?)`, logOrigin, cosign.EmptyRoot.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`INSERT INTO key (origin, key) VALUES (?, ?)`, logOrigin, logKey); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-name", name, "-db", db, "-ssh-agent", sshAgent(t, key), "-listen", addr, "-key", ssh.FingerprintSHA256(sshPub))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// It logs "listening" once it serves.
	listening := make(chan string, 1)
	go func() {
		var log strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "listening") {
				listening <- ""
			}
		}
		listening <- log.String()
	}()
	select {
	case out := <-listening:
		if out != "" {
			t.Fatalf("litewitness exited:\n%s", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("litewitness did not start listening")
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("litewitness does not accept connections")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w, err := witnesses.ParseWitness(cosign.FormatVerifierKey(name, pub) + " http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestAgainstLitewitness: the client against an independent witness: its
// cosignatures verify with its key and join the served note; a client
// that does not know its size follows its 409; a fork signed with the same
// key is refused as inconsistent (422) and recorded so.
func TestAgainstLitewitness(t *testing.T) {
	if os.Getenv("TRADELEDGER_SKIP_SLOW") != "" {
		// Building litewitness (and modernc.org/sqlite under it) from
		// empty caches costs about 50 CPU-seconds, a tenth of make test.
		t.Skip("slow: builds litewitness from the module proxy; make test-slow runs it (CI does)")
	}
	bin := buildLitewitness(t)
	a := newEnv(t, "")
	lw := startLitewitness(t, bin, "litewitness.test/w", a.key.Origin(), a.key.VerifierKey())
	c := witnesses.New(a.log, []witnesses.Witness{lw}, a.cmds, a.clock)
	a.grow(9, "a")
	a.checkpoint()
	c.Tick(a.ctx)
	st := c.Status()
	if st.Cosigned != 1 || st.Witnesses[0].Error != "" {
		t.Fatalf("litewitness did not cosign: %+v", st)
	}
	latest, _ := a.log.Latest()
	got, err := cosign.Quorum([]byte(latest.Note), []*cosign.Verifier{lw.Verifier}, 1)
	if err != nil || time.Since(got[0].Time) > time.Hour {
		t.Fatalf("litewitness's cosignature in the note %q: %v", latest.Note, err)
	}

	// Grown, and sent by a client that does not know what it holds.
	a.grow(6, "b")
	a.checkpoint()
	c2 := witnesses.New(staleLog{a.log}, []witnesses.Witness{lw}, a.cmds, a.clock)
	c2.Tick(a.ctx)
	latest, _ = a.log.Latest()
	if got, err := cosign.Quorum([]byte(latest.Note), []*cosign.Verifier{lw.Verifier}, 1); err != nil || len(got) != 1 {
		t.Fatalf("after the 409: %q %v", latest.Note, err)
	}

	// A copy grown otherwise under the same key.
	b := newEnv(t, a.skey)
	b.grow(30, "fork")
	b.checkpoint()
	cb := witnesses.New(b.log, []witnesses.Witness{lw}, b.cmds, b.clock)
	cb.Tick(b.ctx)
	r := cb.Status().Witnesses[0].Refused
	if r == nil || r.Status != http.StatusUnprocessableEntity || r.WitnessSize != latest.Size {
		t.Fatalf("litewitness on the fork: %+v (status %+v)", r, cb.Status())
	}

	// A log litewitness does not follow: a failure, not a refusal (it
	// answers 403 for an unknown origin).
	other := newEnv(t, "")
	other.grow(2, "x")
	other.checkpoint()
	co := witnesses.New(other.log, []witnesses.Witness{lw}, other.cmds, other.clock)
	co.Tick(other.ctx)
	if st := co.Status().Witnesses[0]; st.Refused != nil || !strings.Contains(st.Error, "403") {
		t.Fatalf("unknown log: %+v", st)
	}
}

// staleLog hides the witnesses' records: a client that knows nothing of
// what they hold.
type staleLog struct{ witnesses.Log }

func (staleLog) Witnesses() map[string]domain.WitnessRecord { return nil }
