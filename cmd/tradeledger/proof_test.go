package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// auditCheckpoint signs a checkpoint of dir's log (tradeledger checkpoint)
// and saves it in a file of its own, as an auditor keeps it.
func auditCheckpoint(t *testing.T, dir string) (file string, c transparency.Checkpoint) {
	t.Helper()
	out, errOut, code := auditRun(t, "checkpoint", "--data", dir)
	if code != 0 {
		t.Fatalf("checkpoint: exit %d: %s", code, errOut)
	}
	key, _, _ := auditRun(t, "checkpoint", "key", "--data", dir)
	c, err := transparency.OpenCheckpoint([]byte(out), strings.TrimSpace(key))
	if err != nil {
		t.Fatalf("the printed checkpoint does not open with the printed key: %v\n%s", err, out)
	}
	file = filepath.Join(t.TempDir(), fmt.Sprintf("checkpoint-%d", c.Size))
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, c
}

// auditAppend appends n events to dir's log, on the streams auditLog uses.
func auditAppend(t *testing.T, dir string, n int, tag string) {
	t.Helper()
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	clock := domain.NewManualClock(time.UnixMilli(1_800_000_000_000))
	for i := 0; i < n; i++ {
		s := []string{"order-1", "order-2", "balance-paper"}[i%3]
		e := domain.NewEvent(clock, "Tested", map[string]string{"n": fmt.Sprintf("%s%03d", tag, i)})
		if _, err := d.Store.Append(context.Background(), s, domain.Any, e); err != nil {
			t.Fatal(err)
		}
	}
}

// auditRewriteStream replaces stream target.Stream from target on by a
// rewrite in which target's data is data and every later event of the
// stream is re-hashed onto it (as a real store chains them), then
// rebuilds the tree: every chain is sound again, the events the
// checkpoints covered are not what they were.
func auditRewriteStream(t *testing.T, dir string, log []domain.Event, target domain.Event, data string) {
	t.Helper()
	scratch := auditScratchLog(t, log, target, data)
	db := auditOpenRaw(t, dir)
	if _, err := db.Exec(`ATTACH DATABASE ? AS forged`, scratch); err != nil {
		t.Fatal(err)
	}
	auditExec(t, db, `DELETE FROM main.events WHERE stream = ? AND position >= ?`, target.Stream, int64(target.Position))
	auditExec(t, db, `INSERT INTO main.events SELECT * FROM forged.events WHERE stream = ? AND position >= ?`, target.Stream, int64(target.Position))
	db.Close()
	auditRebuildTree(t, dir)
}

// auditForgetCheckpoint drops the checkpoint the embedded log keeps beside
// its tree, as a forger who knows of it does.
func auditForgetCheckpoint(t *testing.T, dir string) {
	t.Helper()
	db := auditOpenRaw(t, dir)
	defer db.Close()
	auditExec(t, db, `DELETE FROM checkpoint`)
}

// auditVerify runs verify with args on dir and returns its exit status
// and everything it printed.
func auditVerify(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	out, errOut, code := auditRun(t, append([]string{"verify", "--data", dir}, args...)...)
	return code, out + errOut
}

func TestCheckpointCommandAndKey(t *testing.T) {
	dir, _ := auditLog(t)
	st, err := os.Stat(filepath.Join(dir, "checkpoint.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("checkpoint.key: %v, mode %v, want 0600", err, st.Mode())
	}
	key, _, code := auditRun(t, "checkpoint", "key", "--data", dir)
	key = strings.TrimSpace(key)
	if code != 0 || strings.Contains(key, "PRIVATE") || !strings.HasPrefix(key, transparency.OriginPrefix) {
		t.Fatalf("checkpoint key: exit %d, %q", code, key)
	}
	if _, err := note.NewVerifier(key); err != nil {
		t.Fatalf("the verifier key does not parse with note: %v", err)
	}
	_, c := auditCheckpoint(t, dir)
	// Another data dir is another log: another origin.
	other, _ := auditLog(t)
	otherKey, _, _ := auditRun(t, "checkpoint", "key", "--data", other)
	if strings.TrimSpace(otherKey) == key {
		t.Fatal("two data dirs share a checkpoint key")
	}
	// TRADELEDGER_CHECKPOINT_KEY replaces the file.
	skey, _ := os.ReadFile(filepath.Join(dir, "checkpoint.key"))
	t.Setenv("TRADELEDGER_CHECKPOINT_KEY", string(skey))
	if k, _, _ := auditRun(t, "checkpoint", "key", "--data", other); strings.TrimSpace(k) != key {
		t.Fatalf("with TRADELEDGER_CHECKPOINT_KEY: %q, want %q", k, key)
	}
	t.Setenv("TRADELEDGER_CHECKPOINT_KEY", "PRIVATE+KEY+nope")
	if _, errOut, code := auditRun(t, "checkpoint", "key", "--data", other); code == 0 || strings.Contains(errOut, "nope") {
		t.Fatalf("a bad TRADELEDGER_CHECKPOINT_KEY: exit %d, %s (the key must not be quoted)", code, errOut)
	}
	t.Setenv("TRADELEDGER_CHECKPOINT_KEY", "")
	// No secret key in what the log recorded.
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, e := range auditReadLog(t, d.Store) {
		if strings.Contains(string(e.Data), "PRIVATE") || strings.Contains(string(e.Data), strings.TrimSpace(strings.Split(string(skey), "+")[4])) {
			t.Fatalf("event %s %s holds the private key", e.Stream, e.Type)
		}
		if e.Type == domain.TypeCheckpointSigned && (!strings.Contains(string(e.Data), c.Root.String()) || e.Actor != domain.ActorCLI) {
			t.Fatalf("the checkpoint event by %s does not record the root: %s", e.Actor, e.Data)
		}
	}
}

// The tamper cases of issue 30. Each leaves every hash chain sound and the
// stored tree rebuilt from the events, so plain verify passes; a kept
// checkpoint, --since and the consistency proofs catch them.
func TestCheckpointsCatchTampering(t *testing.T) {
	dir, _ := auditLog(t)
	// An old fill of order-1, the target of the first rewrite.
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	fill := domain.NewEvent(domain.NewManualClock(time.UnixMilli(1_750_000_000_000)), domain.TypeOrderFilled,
		domain.OrderFilled{FillID: "f-1", Price: decimal.MustDecimal("27123.45"), Quantity: decimal.MustDecimal("0.5"), Fee: decimal.MustDecimal("0.01"), FeeAsset: "USDT"})
	if _, err := d.Store.Append(context.Background(), "order-1", domain.Any, fill); err != nil {
		t.Fatal(err)
	}
	log := auditReadLog(t, d.Store)
	d.Close()
	cp1, c1 := auditCheckpoint(t, dir)
	auditAppend(t, dir, 9, "b")
	cp2, c2 := auditCheckpoint(t, dir)
	if code, out := auditVerify(t, dir, "--checkpoint", cp1, "--checkpoint", cp2); code != 0 ||
		!strings.Contains(out, "checkpoint "+cp1+": the log extends it") || !strings.Contains(out, "Merkle root of the first") {
		t.Fatalf("sound log with its checkpoints: exit %d\n%s", code, out)
	}
	if code, out := auditVerify(t, dir, "--since", cp1); code != 0 || !strings.Contains(out, "OK: the log extends checkpoint "+cp1) {
		t.Fatalf("sound log --since: exit %d\n%s", code, out)
	}
	oldFill := auditFind(t, log, "order-1", 4)
	if oldFill.Type != domain.TypeOrderFilled {
		t.Fatalf("order-1 version 4 is a %s", oldFill.Type)
	}
	var f domain.OrderFilled
	if err := oldFill.Decode(&f); err != nil {
		t.Fatal(err)
	}
	f.Price = decimal.MustDecimal("27000.45") // the fill's price lowered
	b, _ := json.Marshal(f)
	edited := string(b)
	if edited == string(oldFill.Data) {
		t.Fatal("the edit changes nothing")
	}
	full := func(dir string) []domain.Event {
		d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		return auditReadLog(t, d.Store)
	}(dir)
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		broken string // the first checkpoint file verify names
	}{
		{"an old fill edited, its stream re-hashed to the head", func(t *testing.T, dir string) {
			auditRewriteStream(t, dir, full, oldFill, edited)
		}, cp1},
		{"the log cut below a checkpoint's size", func(t *testing.T, dir string) {
			db := auditOpenRaw(t, dir)
			auditExec(t, db, `DELETE FROM events WHERE position > ?`, c2.Size-3)
			db.Close()
			auditRebuildTree(t, dir)
		}, cp2},
		{"two events swapped", func(t *testing.T, dir string) {
			// Events of two streams: each chain stays in order.
			a, b := auditFind(t, log, "order-1", 2), auditFind(t, log, "order-2", 2)
			auditSwapRows(t, auditOpenRaw(t, dir), a.Position, b.Position)
			auditRebuildTree(t, dir)
		}, cp1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := auditCopyDir(t, dir)
			c.tamper(t, cp)
			// The checkpoint kept beside the tree (the rebuild does not
			// go back to an older one) catches it at once.
			if code, out := auditVerify(t, cp); code != 1 || !strings.HasPrefix(out, "TAMPERED: the log does not extend the last checkpoint signed (24 events") {
				t.Fatalf("plain verify: exit %d, want 1 naming the kept checkpoint first\n%s", code, out)
			}
			// A forger who also drops the kept checkpoint leaves sound
			// chains and a sound tree: only the checkpoints given out
			// show the rewrite.
			auditForgetCheckpoint(t, cp)
			if code, out := auditVerify(t, cp); code != 0 {
				t.Fatalf("plain verify: exit %d, want 0 (the chains and the rebuilt tree are sound)\n%s", code, out)
			}
			code, out := auditVerify(t, cp, "--checkpoint", cp1, "--checkpoint", cp2)
			if code != 1 || !strings.Contains(out, "checkpoint "+c.broken+" (") {
				t.Fatalf("verify --checkpoint: exit %d, want 1 naming %s\n%s", code, c.broken, out)
			}
			if code, out := auditVerify(t, cp, "--since", c.broken); code != 1 || !strings.Contains(out, "does not extend checkpoint "+c.broken) {
				t.Fatalf("verify --since: exit %d, want 1\n%s", code, out)
			}
			// No consistency proof from the kept checkpoint to the tree
			// the log has now.
			if !consistencyHolds(t, cp, c1, c2) {
				return
			}
			t.Fatal("a consistency proof from a kept checkpoint holds against the tampered log")
		})
	}
	// The same rewrite with the stored tree left as it was: plain verify
	// sees the tree no longer matches; --since proves the rewritten
	// stream's last event before the checkpoint against the checkpoint's
	// root, and it is not there.
	t.Run("a stream re-hashed, the tree left alone", func(t *testing.T) {
		cp := auditCopyDir(t, dir)
		auditRewriteStream(t, cp, full, oldFill, edited)
		db := auditOpenRaw(t, cp)
		if _, err := db.Exec(`ATTACH DATABASE ? AS orig`, filepath.Join(dir, "events.db")); err != nil {
			t.Fatal(err)
		}
		auditExec(t, db, `DELETE FROM main.tree`)
		auditExec(t, db, `INSERT INTO main.tree SELECT * FROM orig.tree`)
		db.Close()
		if code, out := auditVerify(t, cp); code != 1 || !strings.Contains(out, "the stored Merkle tree of") {
			t.Fatalf("plain verify: exit %d, want 1 naming the tree\n%s", code, out)
		}
		if code, out := auditVerify(t, cp, "--since", cp1); code != 1 || !strings.Contains(out, "stream order-1 version") || !strings.Contains(out, "is not the event the checkpoint covers") {
			t.Fatalf("verify --since: exit %d, want 1 naming order-1's head in the checkpoint\n%s", code, out)
		}
	})
	// A second log signed with the same key (a fork of the data dir after
	// the first checkpoint): its checkpoint is not one of this log's.
	t.Run("a forked log signed with the same key", func(t *testing.T) {
		fork := auditCopyDir(t, dir)
		db := auditOpenRaw(t, fork)
		auditExec(t, db, `DELETE FROM events WHERE position > ?`, c1.Size+1) // keeps checkpoint 1's event
		db.Close()
		auditRebuildTree(t, fork)
		auditForgetCheckpoint(t, fork) // else the fork is refused: a log cut below its last checkpoint
		auditAppend(t, fork, 9, "f")   // other events than the original's
		forkFile, cf := auditCheckpoint(t, fork)
		if cf.Origin != c2.Origin || cf.Size != c2.Size || cf.Root == c2.Root {
			t.Fatalf("fork checkpoint %+v vs %+v: want the same origin and size, another root", cf, c2)
		}
		if code, out := auditVerify(t, dir, "--checkpoint", forkFile); code != 1 || !strings.Contains(out, "checkpoint "+forkFile+" (") {
			t.Fatalf("the original against the fork's checkpoint: exit %d\n%s", code, out)
		}
		if code, _ := auditVerify(t, dir, "--since", forkFile); code != 1 {
			t.Fatalf("the original --since the fork's checkpoint: exit %d, want 1", code)
		}
		// Both logs extend checkpoint 1, but no proof links the two
		// checkpoints of the same size: the fork shows.
		if consistencyHolds(t, dir, c1, cf) {
			t.Fatal("a consistency proof links the original to the fork's checkpoint")
		}
	})
}

// consistencyHolds reports whether dir's log proves that checkpoint to
// extends checkpoint from, checked with tlog against the two roots, and
// that its tree now has to's root (what an auditor holding both checks).
func consistencyHolds(t *testing.T, dir string, from, to transparency.Checkpoint) bool {
	t.Helper()
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l := transparency.NewLog(d.Store, d.Tree, d.CheckpointKey, domain.SystemClock{})
	size, _ := d.Tree.TreeSize(context.Background())
	if size < to.Size {
		return false
	}
	root, err := l.Root(context.Background(), to.Size)
	if err != nil || root != to.Root {
		return false
	}
	p, err := l.ProveConsistency(context.Background(), from.Size, to.Size)
	return err == nil && tlog.CheckTree(p, to.Size, to.Root, from.Size, from.Root) == nil
}

// A forged checkpoint file (its size edited) fails on its signature, and
// one signed by another log's key fails too, before the log is read.
func TestVerifyRefusesForgedCheckpoints(t *testing.T) {
	dir, _ := auditLog(t)
	file, c := auditCheckpoint(t, dir)
	b, _ := os.ReadFile(file)
	forged := filepath.Join(t.TempDir(), "forged")
	os.WriteFile(forged, []byte(strings.Replace(string(b), fmt.Sprintf("\n%d\n", c.Size), fmt.Sprintf("\n%d\n", c.Size-1), 1)), 0o644)
	if code, out := auditVerify(t, dir, "--checkpoint", file, "--checkpoint", forged); code != 1 || !strings.Contains(out, "checkpoint "+forged+": checkpoint signature") {
		t.Fatalf("forged checkpoint: exit %d\n%s", code, out)
	}
	other, _ := auditLog(t)
	otherFile, _ := auditCheckpoint(t, other)
	if code, out := auditVerify(t, dir, "--checkpoint", otherFile); code != 1 || !strings.Contains(out, otherFile) {
		t.Fatalf("another log's checkpoint: exit %d\n%s", code, out)
	}
	if _, _, code := auditRun(t, "verify", "--data", dir, "--since", file, "--checkpoint", file); code == 0 {
		t.Fatal("--since with --checkpoint accepted")
	}
}

// proof writes an order's bundle; verify-proof checks it with the key
// alone, and refuses it edited or under another key.
func TestProofBundleCommands(t *testing.T) {
	dir, _ := auditLog(t)
	key, _, _ := auditRun(t, "checkpoint", "key", "--data", dir)
	key = strings.TrimSpace(key)
	file := filepath.Join(t.TempDir(), "order-1.proof.json")
	if out, errOut, code := auditRun(t, "proof", "--data", dir, "--order", "1", "--out", file); code != 0 || !strings.Contains(out, "tradeledger verify-proof "+file+" --key "+key) {
		t.Fatalf("proof: exit %d\n%s%s", code, out, errOut)
	}
	// Checked with nothing else: the data dir is gone.
	os.RemoveAll(dir)
	out, errOut, code := auditRun(t, "verify-proof", file, "--key", key)
	if code != 0 || !strings.HasPrefix(out, "OK: The 4 events of order 1 (Tested, Tested, Tested, Tested, versions 0 to 3") {
		t.Fatalf("verify-proof: exit %d\n%s%s", code, out, errOut)
	}
	keyFile := filepath.Join(t.TempDir(), "vkey")
	os.WriteFile(keyFile, []byte(key+"\n"), 0o644)
	if _, _, code := auditRun(t, "verify-proof", "--key", keyFile, file); code != 0 {
		t.Fatalf("verify-proof with the key in a file: exit %d", code)
	}
	b, _ := os.ReadFile(file)
	edited := filepath.Join(t.TempDir(), "edited.json")
	os.WriteFile(edited, []byte(strings.Replace(string(b), `"0003"`, `"0004"`, 1)), 0o644)
	if _, errOut, code := auditRun(t, "verify-proof", edited, "--key", key); code != 1 || !strings.Contains(errOut, "does not match its contents") {
		t.Fatalf("edited bundle: exit %d: %s", code, errOut)
	}
	otherDir, _ := auditLog(t)
	otherKey, _, _ := auditRun(t, "checkpoint", "key", "--data", otherDir)
	if _, errOut, code := auditRun(t, "verify-proof", file, "--key", strings.TrimSpace(otherKey)); code != 1 || !strings.Contains(errOut, "signature") {
		t.Fatalf("another key: exit %d: %s", code, errOut)
	}
	if _, _, code := auditRun(t, "verify-proof", file); code == 0 {
		t.Fatal("verify-proof without --key succeeded")
	}
}
