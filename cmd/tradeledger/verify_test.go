package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
)

// auditRun runs a tradeledger command and returns its output and exit status
// (as main would exit).
func auditRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	if err != nil {
		code = 1
		var ec exitCode
		if errors.As(err, &ec) {
			code = int(ec)
		}
		errb.WriteString("tradeledger: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), code
}

// auditLog builds a data dir whose log holds, after whatever initialization
// writes, 3 streams of 4 events each, interleaved, appended one by one (so
// positions are dense). Payloads are {"n":"NNNN"} so that a test can edit
// one in place without changing its length.
func auditLog(t *testing.T) (dir string, log []domain.Event) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_000_000))
	n := 0
	for v := 0; v < 4; v++ {
		for _, s := range []string{"order-1", "order-2", "balance-paper"} {
			e := domain.NewEvent(clock, "Tested", map[string]string{"n": fmt.Sprintf("%04d", n)})
			e.Actor = domain.ActorCLI
			if _, err := d.Store.Append(ctx, s, domain.Any, e); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
			n++
		}
	}
	log = auditReadLog(t, d.Store)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for i, e := range log {
		if e.Position != uint64(i+1) {
			t.Fatalf("positions are not dense: event %d at %d", i, e.Position)
		}
	}
	return dir, log
}

func auditReadLog(t *testing.T, store domain.EventStore) []domain.Event {
	t.Helper()
	var log []domain.Event
	it := store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	for it.Next() {
		log = append(log, it.Event())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return log
}

// auditFind returns the event of stream at version.
func auditFind(t *testing.T, log []domain.Event, stream string, version int64) domain.Event {
	t.Helper()
	for _, e := range log {
		if e.Stream == stream && e.Version == version {
			return e
		}
	}
	t.Fatalf("no event %s/%d", stream, version)
	return domain.Event{}
}

// auditCopyDir copies a closed data dir to a new temp dir.
func auditCopyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	copyDir(t, src, dst)
	return dst
}

// auditOpenRaw opens the embedded log's SQLite file directly, bypassing the
// store, as an attacker with file access would.
func auditOpenRaw(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func auditExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	res, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if n, _ := res.RowsAffected(); n == 0 && !strings.HasPrefix(q, "ATTACH") {
		t.Fatalf("%s %v: no row changed", q, args)
	}
}

// auditEditRow replaces old by new (same length) in every column of the row at
// pos that contains it: whatever the row layout, the stored payload bytes
// change and nothing else does.
func auditEditRow(t *testing.T, db *sql.DB, pos uint64, old, new string) {
	t.Helper()
	if len(old) != len(new) {
		t.Fatal("auditEditRow keeps lengths")
	}
	rows, err := db.Query(`SELECT * FROM events WHERE position = ?`, int64(pos))
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatalf("no row at %d", pos)
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	changed := 0
	for i, v := range vals {
		var b []byte
		switch v := v.(type) {
		case []byte:
			b = v
		case string:
			b = []byte(v)
		default:
			continue
		}
		if bytes.Contains(b, []byte(old)) {
			auditExec(t, db, `UPDATE events SET "`+cols[i]+`" = ? WHERE position = ?`, bytes.Replace(b, []byte(old), []byte(new), 1), int64(pos))
			changed++
		}
	}
	if changed == 0 {
		t.Fatalf("row %d holds no %q", pos, old)
	}
}

// auditSwapRows exchanges the positions of two rows: the log then reads them in
// the other order.
func auditSwapRows(t *testing.T, db *sql.DB, a, b uint64) {
	t.Helper()
	auditExec(t, db, `UPDATE events SET position = -1 WHERE position = ?`, int64(a))
	auditExec(t, db, `UPDATE events SET position = ? WHERE position = ?`, int64(a), int64(b))
	auditExec(t, db, `UPDATE events SET position = ? WHERE position = -1`, int64(b))
}

// auditForgeRow replaces the row at target.Position by a forgery: the same
// event with other data, properly chained and hashed by a real store in a
// scratch log that holds the same events before it. This is what an
// attacker who knows the hash rule can produce.
func auditForgeRow(t *testing.T, dir string, log []domain.Event, target domain.Event, data string) {
	t.Helper()
	if after := slices.IndexFunc(log, func(e domain.Event) bool { return e.Position > target.Position }); after >= 0 {
		log = log[:after]
	}
	scratch := auditScratchLog(t, log, target, data)
	db := auditOpenRaw(t, dir)
	if _, err := db.Exec(`ATTACH DATABASE ? AS forged`, scratch); err != nil {
		t.Fatal(err)
	}
	auditExec(t, db, `DELETE FROM main.events WHERE position = ?`, int64(target.Position))
	auditExec(t, db, `INSERT INTO main.events SELECT * FROM forged.events WHERE position = ?`, int64(target.Position))
}

// auditScratchLog writes log, in order, into a new embedded store, with
// target's data replaced by data: the store chains and hashes each event
// as a real one does. It returns the closed store's file.
func auditScratchLog(t *testing.T, log []domain.Event, target domain.Event, data string) string {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "scratch.db")
	s := sqlitetest.OpenAt(t, scratch)
	for _, e := range log {
		if e.Position == target.Position {
			e.Data = json.RawMessage(data)
		}
		if res, err := s.Append(context.Background(), e.Stream, domain.Any, e); err != nil || res.LastPosition != e.Position {
			t.Fatalf("scratch log at %d (%v), want %d", res.LastPosition, err, e.Position)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return scratch
}

// auditRebuildTree drops the embedded log's Merkle tree and builds it
// again from the events as they are now, as a forger who rewrote events
// does: the tree is derived data.
func auditRebuildTree(t *testing.T, dir string) {
	t.Helper()
	db := auditOpenRaw(t, dir)
	auditExec(t, db, `DELETE FROM tree`)
	db.Close()
	s := sqlite.NewStore(filepath.Join(dir, "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.BuildTree(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestVerifySoundLog(t *testing.T) {
	dir, log := auditLog(t)
	out, errOut, code := auditRun(t, "verify", "--data", dir)
	if code != 0 {
		t.Fatalf("exit %d on a sound log:\n%s%s", code, out, errOut)
	}
	last := log[len(log)-1]
	wantLine := fmt.Sprintf("OK: %d events in ", len(log))
	if !strings.Contains(out, wantLine) || !strings.Contains(out, fmt.Sprintf("up to position %d", last.Position)) {
		t.Fatalf("summary missing %q:\n%s", wantLine, out)
	}
	// A summary by default; the per-stream heads with --heads.
	head := auditFind(t, log, "order-1", 3)
	if strings.Contains(out, "head ") || strings.Count(out, "\n") != 1 {
		t.Fatalf("default output is not one summary line:\n%s", out)
	}
	out, _, _ = auditRun(t, "verify", "--data", dir, "--heads")
	if !strings.Contains(out, "head order-1 3 "+head.Hash.String()+"\n") {
		t.Fatalf("head of order-1 missing with --heads:\n%s", out)
	}

	// --json is the API document; its digest is accepted back by --digest.
	out, _, code = auditRun(t, "verify", "--data", dir, "--json", "--heads")
	var sum audit.VerifySummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || code != 0 {
		t.Fatalf("verify --json: exit %d, %v:\n%s", code, err, out)
	}
	if !sum.OK || sum.Events != int64(len(log)) || len(sum.Heads) != sum.Streams || sum.LastPosition != last.Position || sum.FaultCount != 0 {
		t.Fatalf("json summary=%+v", sum)
	}
	if _, _, code := auditRun(t, "verify", "--data", dir, "--heads=false", "--digest", sum.HeadsDigest.String()); code != 0 {
		t.Fatalf("verify --digest with the current digest: exit %d", code)
	}

	// A mistyped data dir is an error, not an empty sound log.
	if _, errOut, code := auditRun(t, "verify", "--data", filepath.Join(t.TempDir(), "nope")); code != 2 || !strings.Contains(errOut, "no data directory") {
		t.Fatalf("missing data dir: exit %d, %s", code, errOut)
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	dir, log := auditLog(t)
	o1v1, o1v2, o1v3 := auditFind(t, log, "order-1", 1), auditFind(t, log, "order-1", 2), auditFind(t, log, "order-1", 3)
	o2v1 := auditFind(t, log, "order-2", 1)
	payload := func(e domain.Event) string { // the unique "n" value, e.g. "0004"
		var p map[string]string
		json.Unmarshal(e.Data, &p)
		return `"` + p["n"] + `"`
	}
	cases := []struct {
		name    string
		tamper  func(t *testing.T, dir string)
		bad     domain.Event // the first bad event verify must name
		problem string
	}{
		{"edit", func(t *testing.T, dir string) {
			auditEditRow(t, auditOpenRaw(t, dir), o1v1.Position, payload(o1v1), `"9999"`)
		}, o1v1, "edited"},
		{"delete in the middle", func(t *testing.T, dir string) {
			auditExec(t, auditOpenRaw(t, dir), `DELETE FROM events WHERE position = ?`, int64(o1v1.Position))
		}, o1v2, "skips ahead"},
		{"reorder: swap two events of a stream", func(t *testing.T, dir string) {
			auditSwapRows(t, auditOpenRaw(t, dir), o1v1.Position, o1v2.Position)
		}, auditAt(o1v2, o1v1.Position), "skips ahead"},
		{"reorder: swap two events' data", func(t *testing.T, dir string) {
			db := auditOpenRaw(t, dir)
			a, b := payload(o1v1), payload(o2v1)
			auditEditRow(t, db, o1v1.Position, a, b)
			auditEditRow(t, db, o2v1.Position, b, a)
		}, o1v1, "edited"},
		{"forged re-hash in the middle", func(t *testing.T, dir string) {
			auditForgeRow(t, dir, log, o1v2, `{"n":"6666"}`)
		}, o1v3, "chain broken"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := auditCopyDir(t, dir)
			c.tamper(t, cp)
			out, errOut, code := auditRun(t, "verify", "--data", cp)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s%s", code, out, errOut)
			}
			want := fmt.Sprintf("stream %s version %d position %d id %s", c.bad.Stream, c.bad.Version, c.bad.Position, c.bad.ID)
			first, _, _ := strings.Cut(out, "\n")
			if !strings.HasPrefix(first, "bad event: "+want) || !strings.Contains(first, c.problem) || !strings.Contains(out, "\nTAMPERED: ") {
				t.Fatalf("output does not name %q (%s) first:\n%s", want, c.problem, out)
			}
			if !strings.Contains(errOut, "log verification failed: ") || !strings.Contains(errOut, "the first: stream "+c.bad.Stream) {
				t.Fatalf("stderr does not say why:\n%s", errOut)
			}
		})
	}

	// The original is untouched by the copies' tampering.
	if _, _, code := auditRun(t, "verify", "--data", dir); code != 0 {
		t.Fatalf("original log: exit %d", code)
	}
}

// Re-hashing a stream's last event leaves sound chains; the stored Merkle
// tree no longer matches, and once the forger rebuilds it too (it is
// derived data), the heads digest recorded before catches it.
func TestVerifyDigestCatchesRewrittenHead(t *testing.T) {
	dir, log := auditLog(t)
	out, _, _ := auditRun(t, "verify", "--data", dir, "--json", "--heads=false")
	var before audit.VerifySummary
	if err := json.Unmarshal([]byte(out), &before); err != nil {
		t.Fatal(err)
	}
	cp := auditCopyDir(t, dir)
	auditForgeRow(t, cp, log, auditFind(t, log, "order-1", 3), `{"n":"7777"}`)
	if _, errOut, code := auditRun(t, "verify", "--data", cp); code != 1 || !strings.Contains(errOut, "the stored Merkle tree of") {
		t.Fatalf("rewritten head, tree left as it was: exit %d, want 1 naming the tree: %s", code, errOut)
	}
	auditRebuildTree(t, cp)
	if _, _, code := auditRun(t, "verify", "--data", cp); code != 0 {
		t.Fatalf("rewritten head and tree without --digest: exit %d, want 0 (chains and tree are sound)", code)
	}
	_, errOut, code := auditRun(t, "verify", "--data", cp, "--digest", before.HeadsDigest.String())
	if code != 1 || !strings.Contains(errOut, "heads digest") {
		t.Fatalf("rewritten head with --digest: exit %d, %s", code, errOut)
	}
}

func auditAt(e domain.Event, pos uint64) domain.Event {
	e.Position = pos
	return e
}

// verify reports every faulty event, not only the first: a second,
// later tampering is listed too, and --max-faults bounds the list, not the
// count.
func TestVerifyReportsEveryFault(t *testing.T) {
	dir, log := auditLog(t)
	o1v1, o2v3 := auditFind(t, log, "order-1", 1), auditFind(t, log, "order-2", 3)
	payload := func(e domain.Event) string {
		var p map[string]string
		json.Unmarshal(e.Data, &p)
		return `"` + p["n"] + `"`
	}
	db := auditOpenRaw(t, dir)
	auditEditRow(t, db, o1v1.Position, payload(o1v1), `"9999"`)
	auditEditRow(t, db, o2v3.Position, payload(o2v3), `"8888"`)
	db.Close()

	out, _, code := auditRun(t, "verify", "--data", dir)
	if code != 1 || strings.Count(out, "bad event: ") != 2 || !strings.Contains(out, "id "+o1v1.ID) || !strings.Contains(out, "id "+o2v3.ID) || !strings.Contains(out, "TAMPERED: 2 faulty events among") {
		t.Fatalf("exit %d, want both edits reported:\n%s", code, out)
	}
	out, _, code = auditRun(t, "verify", "--data", dir, "--max-faults", "1")
	if code != 1 || strings.Count(out, "bad event: ") != 1 || !strings.Contains(out, "id "+o1v1.ID) || !strings.Contains(out, "TAMPERED: 2 faulty events (1 not listed") {
		t.Fatalf("--max-faults 1: exit %d:\n%s", code, out)
	}
	out, _, _ = auditRun(t, "verify", "--data", dir, "--json", "--max-faults", "1")
	var sum audit.VerifySummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.OK || sum.FaultCount != 2 || len(sum.Faults) != 1 || sum.Fault == nil || sum.Fault.ID != o1v1.ID || sum.Events != int64(len(log)) {
		t.Fatalf("--json --max-faults 1: %v %+v", err, sum)
	}
}

// The writer does not trust a stored hash column: with the head's hash
// zeroed, the next legitimate append still chains onto the head's contents;
// verify reports the zeroed head, and only it.
func TestVerifyZeroedHeadHash(t *testing.T) {
	dir, log := auditLog(t)
	head := auditFind(t, log, "order-1", 3)
	db := auditOpenRaw(t, dir)
	auditExec(t, db, `UPDATE events SET hash = zeroblob(32) WHERE position = ?`, int64(head.Position))
	db.Close()

	ctx := context.Background()
	d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	e := domain.NewEvent(domain.NewManualClock(time.UnixMilli(1_700_000_100_000)), "Tested", map[string]string{"n": "0100"})
	e.Actor = domain.ActorCLI
	res, err := d.Store.Append(ctx, "order-1", domain.ExpectedVersion(3), e)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	out, _, code := auditRun(t, "verify", "--data", dir)
	want := fmt.Sprintf("bad event: stream order-1 version 3 position %d id %s", head.Position, head.ID)
	if code != 1 || strings.Count(out, "bad event: ") != 1 || !strings.Contains(out, want) || !strings.Contains(out, "zero") {
		t.Fatalf("exit %d, want only the zeroed head (%s) reported, not the append at position %d:\n%s", code, want, res.LastPosition, out)
	}
}

// verify refuses flags it cannot honour, naming the flag, before it reads
// the log; --key takes the key itself or a file holding it; --max-faults 0
// counts faults without listing them.
func TestVerifyFlags(t *testing.T) {
	dir, _ := auditLog(t)
	file, _ := auditCheckpoint(t, dir)
	key, _, _ := auditRun(t, "checkpoint", "key", "--data", dir)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		flag string // "" when verify passes
	}{
		{[]string{"--max-faults", "-1"}, "--max-faults"},
		{[]string{"--snapshots", "--json"}, "--snapshots"},
		{[]string{"--snapshots", "--checkpoint", file}, "--snapshots"},
		{[]string{"--since", file, "--json"}, "--since"},
		{[]string{"--digest", "not hex"}, "--digest"},
		{[]string{"--checkpoint", file, "--key", "not a key"}, "checkpoint " + file},
		{[]string{"--max-faults", "0"}, ""},
		{[]string{"--checkpoint", file, "--key", strings.TrimSpace(key)}, ""},
		{[]string{"--checkpoint", file, "--key", keyFile}, ""},
		{[]string{"--since", file, "--key", keyFile}, ""},
	} {
		code, out := auditVerify(t, dir, c.args...)
		switch {
		case c.flag == "" && code != 0:
			t.Errorf("%v: exit %d\n%s", c.args, code, out)
		case c.flag != "" && (code == 0 || !strings.Contains(out, c.flag)):
			t.Errorf("%v: exit %d, want a refusal naming %s\n%s", c.args, code, c.flag, out)
		}
	}
}
