package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/esdb/esdbtest"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// Issue 43: a log cut at its end (rows removed from events, with or
// without their tree rows) is refused by serve and by every command that
// appends, in plain words; verify and audit/verify say so; serve
// --accept-truncated-log goes on, recording the decision.

// logCutDataDir makes a data dir as an operator has one: serve on it, a
// pair cycling on the paper exchange, a few orders filled, serve stopped
// (which signs a checkpoint of the whole log as it stops). It returns the
// dir and its log.
func logCutDataDir(t *testing.T) (string, []domain.Event) {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	dir := filepath.Join(t.TempDir(), "data")
	e := &tradingE2E{t: t, clock: domain.NewManualClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))}
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
	m.Logger, m.Clock, m.ManualCycles, m.ManualCheckpoints = zap.NewNop(), e.clock, true, true
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	e.m = m
	waitReady(t, m)
	status, token := serveLogin(t, m, e2eWallet, "e2e trading password")
	if status != 200 {
		m.Close()
		t.Fatalf("login = %d", status)
	}
	e.token = token
	e.startManualPair("binance", "USDT-BTC")
	e.cycle("60000")
	base := map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01}
	e.order("trade/buy/market", base)
	e.order("trade/buy", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01, "price": 59000})
	e.cycle("58900")
	e.order("trade/sell/market", base)
	m.ManualCheckpoints = false // as in production: a checkpoint as serve stops
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return dir, auditReadLog(t, d.Store)
}

// waitReady waits for /readyz (the Merkle tree built).
func waitReady(t *testing.T, m *Main) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := serveGet(t, m, "/readyz", "")
		if status == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz = %d %s", status, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logCutCounts returns the rows of events and tree of dir's log.
func logCutCounts(t *testing.T, dir string) (events, tree int64) {
	t.Helper()
	db := auditOpenRaw(t, dir)
	defer db.Close()
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM tree)`).Scan(&events, &tree); err != nil {
		t.Fatal(err)
	}
	return events, tree
}

// The two scenarios of the issue: the last two rows of events deleted,
// the tree left; and the twin, their tree rows deleted too, the last
// checkpoint kept.
var logCutScenarios = []struct {
	name      string
	withTree  bool
	lostFirst int // the first lost position, counted back from the last
}{
	{"tail rows deleted, tree left", false, 2},
	{"tail rows and their tree rows deleted", true, 2},
}

// cutCopy copies the data dir orig, whose log is log, into a new one and
// deletes the last n events of the copy's log (and their tree rows); it
// returns the copy and the first lost position.
func cutCopy(t *testing.T, orig string, log []domain.Event, n int, withTree bool) (dir string, lostFrom uint64) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	copyDir(t, orig, dir)
	lostFrom = log[len(log)-n].Position
	db := auditOpenRaw(t, dir)
	defer db.Close()
	auditExec(t, db, `DELETE FROM events WHERE position >= ?`, int64(lostFrom))
	if withTree {
		auditExec(t, db, `DELETE FROM tree WHERE position >= ?`, int64(lostFrom))
	}
	return dir, lostFrom
}

func TestServeSignsACheckpointAsItStops(t *testing.T) {
	dir, log := logCutDataDir(t)
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	kept, ok, err := d.Tree.KeptCheckpoint(context.Background())
	last := log[len(log)-1]
	if err != nil || !ok || last.Type != domain.TypeCheckpointSigned || kept.Position != last.Position || kept.Size != int64(len(log)-1) {
		t.Fatalf("kept checkpoint %+v (%v, %v); the log's last event %s at %d: want a checkpoint of every event before it, kept", kept, ok, err, last.Type, last.Position)
	}
}

func TestCutLogRefusedAtStart(t *testing.T) {
	orig, log := logCutDataDir(t)
	records := int64(len(log)) // the tree's records before the cut
	for _, sc := range logCutScenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir, lostFrom := cutCopy(t, orig, log, sc.lostFirst, sc.withTree)
			lostTo := log[len(log)-1].Position
			events, treeRows := logCutCounts(t, dir)
			kept := records - int64(sc.lostFirst)

			// serve refuses, naming the sizes and the way out.
			m := NewMain()
			m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
			m.Logger, m.ManualCycles, m.ManualCheckpoints = zap.NewNop(), true, true
			err := m.Run(context.Background())
			m.Close()
			var cut *logCutError
			if !errors.As(err, &cut) {
				t.Fatalf("serve on a cut log: %v, want a refusal", err)
			}
			treeSays := fmt.Sprintf("the Merkle tree holds %d records", records)
			if sc.withTree {
				treeSays = fmt.Sprintf("the Merkle tree holds %d records", kept)
			}
			for _, want := range []string{"refusing to start", treeSays, fmt.Sprintf("the last checkpoint signed covers %d events", records-1),
				fmt.Sprintf("the log holds only %d of them", kept), fmt.Sprintf("positions %d to %d are lost", lostFrom, lostTo),
				"tradeledger verify --heads --data " + dir, "restore the data directory from a copy", "tradeledger serve --accept-truncated-log --data " + dir} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("serve's refusal lacks %q:\n%v", want, err)
				}
			}

			// Every command that appends refuses too, and writes nothing.
			for _, args := range [][]string{
				{"token", "create", "--scope", "read", "--name", "auditor"},
				{"passwd"},
				{"import", "--from", filepath.Join("..", "..", "testdata", "gunbot-example")},
				{"checkpoint"},
				{"snapshot"},
				{"attention", "clear", "--order", "1", "--note", "x"},
			} {
				var out, errb bytes.Buffer
				err := Run(context.Background(), append(args, "--data", dir), strings.NewReader("new password\n"), &out, &errb)
				if err == nil || !strings.Contains(err.Error(), "refusing to start") || !strings.Contains(err.Error(), "--accept-truncated-log") {
					t.Errorf("%s on a cut log: %v, want the refusal", args[0], err)
				}
			}
			if e, tr := logCutCounts(t, dir); e != events || tr != treeRows {
				t.Fatalf("refusals wrote: events %d→%d, tree rows %d→%d", events, e, treeRows, tr)
			}
			// migrate does not copy it into another store as if whole.
			esdb, err := esdbtest.NewServer()
			if err != nil {
				t.Fatal(err)
			}
			defer esdb.Close()
			before := esdb.Len()
			if _, errOut, code := auditRun(t, "migrate", "--data", dir, "--to", esdb.URL()); code == 0 ||
				!strings.Contains(errOut, "refusing to migrate: ") || !strings.Contains(errOut, "--accept-truncated-log") || esdb.Len() != before {
				t.Errorf("migrate of a cut log: exit %d, %d records copied\n%s", code, esdb.Len()-before, errOut)
			}

			// verify: exit 1, and stdout says why first, never OK.
			out, _, code := auditRun(t, "verify", "--data", dir)
			if code != 1 || !strings.HasPrefix(out, "TAMPERED: ") || strings.Contains("\n"+out, "\nOK") || strings.Contains(out, "AAAAAAAAAAAA") {
				t.Fatalf("verify on a cut log: exit %d\n%s", code, out)
			}
			out, _, code = auditRun(t, "verify", "--data", dir, "--json")
			var sum audit.VerifySummary
			if err := json.Unmarshal([]byte(out), &sum); err != nil || code != 1 || sum.OK || sum.Problem == "" || sum.Tree == nil ||
				sum.Tree.Checkpoint != records-1 || sum.Tree.LogEvents != kept || sum.Events != kept {
				t.Fatalf("verify --json: exit %d, %v %+v tree %+v", code, err, sum, sum.Tree)
			}
		})
	}
}

// The store itself never writes over a position its tree holds: opened
// on a log whose last rows were deleted (the tree left), it refuses
// every append and tree build, until the tree is cut back.
func TestStoreRefusesToExtendACutLog(t *testing.T) {
	orig, log := logCutDataDir(t)
	dir, lostFrom := cutCopy(t, orig, log, 2, false)
	s := sqlitetest.OpenAt(t, filepath.Join(dir, "events.db"))
	ctx := context.Background()
	e := domain.NewEvent(domain.SystemClock{}, "Tested", map[string]string{"n": "1"})
	if _, err := s.Append(ctx, "order-999", domain.NoStream, e); err == nil || !strings.Contains(err.Error(), "event log was cut") {
		t.Fatalf("append on a cut log: %v, want a refusal", err)
	}
	if err := s.BuildTree(ctx, nil); err == nil || !strings.Contains(err.Error(), "event log was cut") {
		t.Fatalf("BuildTree on a cut log: %v, want a refusal", err)
	}
	if err := s.WriteErr(); err == nil {
		t.Fatal("WriteErr says nothing of the cut")
	}
	if head, _ := s.Head(ctx); head != lostFrom-1 {
		t.Fatalf("head %d after refused appends, want %d", head, lostFrom-1)
	}
}

func TestAcceptTruncatedLog(t *testing.T) {
	orig, log := logCutDataDir(t)
	records := int64(len(log))
	for _, sc := range logCutScenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir, lostFrom := cutCopy(t, orig, log, sc.lostFirst, sc.withTree)
			lostTo := log[len(log)-1].Position
			kept := records - int64(sc.lostFirst)

			m := NewMain()
			if err := m.ParseFlags([]string{"--data", dir, "--listen", "127.0.0.1:0", "--files-listen", "", "--accept-truncated-log"}, &Env{Stderr: &bytes.Buffer{}}); err != nil {
				t.Fatal(err)
			}
			m.Logger, m.ManualCycles, m.ManualCheckpoints = zap.NewNop(), true, true
			if err := m.Run(context.Background()); err != nil {
				m.Close()
				t.Fatalf("serve --accept-truncated-log: %v", err)
			}
			waitReady(t, m)
			// The decision is an event naming what was lost; the
			// checkpoint after it says so in its signed text.
			var cut domain.LogCutAccepted
			var cutPos uint64
			var note string
			for _, e := range auditReadLog(t, m.DataDir.Store) {
				switch e.Type {
				case domain.TypeLogCutAccepted:
					if err := e.Decode(&cut); err != nil {
						t.Fatal(err)
					}
					cutPos = e.Position
				case domain.TypeCheckpointSigned:
					if cutPos != 0 {
						var c domain.CheckpointSigned
						e.Decode(&c)
						note = c.Note
					}
				}
			}
			if cutPos != lostFrom || cut.Kept != kept || cut.LostFrom != lostFrom || cut.LostTo != lostTo || cut.Checkpoint == nil || cut.Checkpoint.Size != records-1 || cut.Problem == "" {
				t.Fatalf("LogCutAccepted at %d: %+v, want at %d naming positions %d to %d and the checkpoint of %d", cutPos, cut, lostFrom, lostFrom, lostTo, records-1)
			}
			c, err := transparency.OpenCheckpoint([]byte(note), m.DataDir.CheckpointKey.VerifierKey())
			if err != nil || c.Size != kept+1 || !strings.Contains(c.Extension, fmt.Sprintf("log cut accepted: %d of", kept)) || !strings.Contains(c.Extension, fmt.Sprintf("positions %d to %d lost", lostFrom, lostTo)) {
				t.Fatalf("checkpoint after the cut: %+v (%v)\n%s", c, err, note)
			}
			m.Close()

			// Then everything is sound again, and serve starts as usual.
			if out, errOut, code := auditRun(t, "verify", "--data", dir); code != 0 || !strings.HasPrefix(out, "OK: ") {
				t.Fatalf("verify after the accepted cut: exit %d\n%s%s", code, out, errOut)
			}
			if _, errOut, code := auditRun(t, "token", "create", "--scope", "read", "--name", "after", "--data", dir); code != 0 {
				t.Fatalf("token create after the accepted cut: exit %d %s", code, errOut)
			}
		})
	}
}

// GET /api/v1/audit/verify gives the CLI's verdict, the tree included: a
// log cut under a running service is ok:false with the reason and the
// sizes, the same as `tradeledger verify --json`.
func TestAuditVerifyGivesTheCLIVerdict(t *testing.T) {
	m, _, token := startTlogMain(t, "", zap.NewNop())
	ctx := context.Background()
	if _, _, err := m.Tlog.Issue(ctx, true); err != nil {
		t.Fatal(err)
	}
	log := auditReadLog(t, m.DataDir.Store)
	db := auditOpenRaw(t, m.Config.Data)
	auditExec(t, db, `DELETE FROM events WHERE position >= ?`, int64(log[len(log)-2].Position))
	db.Close()
	status, body := serveGet(t, m, "/api/v1/audit/verify", token)
	var api audit.VerifySummary
	if err := json.Unmarshal([]byte(body), &api); err != nil || status != 200 {
		t.Fatalf("audit/verify = %d %s", status, body)
	}
	out, _, code := auditRun(t, "verify", "--data", m.Config.Data, "--json")
	var cli audit.VerifySummary
	if err := json.Unmarshal([]byte(out), &cli); err != nil || code != 1 {
		t.Fatalf("verify --json: exit %d %v\n%s", code, err, out)
	}
	if api.OK || api.Tree == nil || api.Tree.Records != int64(len(log)) || api.Tree.LogEvents != int64(len(log)-2) || !strings.Contains(api.Problem, "events were removed") {
		t.Fatalf("audit/verify = %s, want ok false with the tree's %d records and the log's %d events", body, len(log), len(log)-2)
	}
	if api.OK != cli.OK || api.Problem != cli.Problem || *api.Tree != *cli.Tree || api.Events != cli.Events || api.HeadsDigest != cli.HeadsDigest {
		t.Fatalf("audit/verify %+v %+v differs from verify --json %+v %+v", api, api.Tree, cli, cli.Tree)
	}
}

// verify's stdout never says OK when it exits 1: a saved checkpoint the
// log does not extend, or a recorded digest that differs, are named first
// on the summary line.
func TestVerifyNeverSaysOKOnFailure(t *testing.T) {
	dir, _ := auditLog(t)
	cp, _ := auditCheckpoint(t, dir)
	out, _, _ := auditRun(t, "verify", "--data", dir, "--json")
	var before audit.VerifySummary
	if err := json.Unmarshal([]byte(out), &before); err != nil {
		t.Fatal(err)
	}
	auditAppend(t, dir, 3, "x")
	db := auditOpenRaw(t, dir)
	auditExec(t, db, `DELETE FROM events WHERE position > 5`)
	auditExec(t, db, `DELETE FROM tree WHERE position > 5`)
	auditExec(t, db, `DELETE FROM checkpoint`)
	db.Close()
	cases := [][]string{
		{"--checkpoint", cp},
		{"--digest", before.HeadsDigest.String()},
	}
	for _, args := range cases {
		out, errOut, code := auditRun(t, append([]string{"verify", "--data", dir}, args...)...)
		first, _, _ := strings.Cut(out, "\n")
		if code != 1 || strings.Contains("\n"+out, "\nOK") || !strings.HasPrefix(first, "TAMPERED: ") {
			t.Fatalf("verify %v: exit %d, stdout:\n%s%s", args, code, out, errOut)
		}
		want := map[string]string{"--checkpoint": "checkpoint " + cp + " (", "--digest": "heads digest "}[args[0]]
		if !strings.HasPrefix(first, "TAMPERED: "+want) || args[0] == "--digest" && !strings.Contains(first, "differs from the recorded "+before.HeadsDigest.String()) {
			t.Fatalf("verify %v: the summary line does not name the failure first:\n%s", args, first)
		}
	}
}

// The same on EventStoreDB, whose tree is kept in local files (esdb-tree/,
// the last checkpoint beside it): the server restored from an older backup
// (its last records gone) is refused at start, and accepted on demand.
func TestCutLogOnEventStoreDB(t *testing.T) {
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	srv, err := esdbtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "data")
	start := func(accept bool) (*Main, error) {
		m := NewMain()
		m.Config.Data, m.Config.EventStore, m.Config.Listen, m.Config.FilesListen = dir, srv.URL(), "127.0.0.1:0", ""
		m.Logger, m.ManualCycles, m.AcceptTruncatedLog = zap.NewNop(), true, accept
		return m, m.Run(context.Background())
	}
	m, err := start(false)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	waitReady(t, m)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		e := domain.NewEvent(domain.SystemClock{}, "Tested", map[string]int{"n": i})
		if _, err := m.DataDir.Store.Append(ctx, "order-1", domain.Any, e); err != nil {
			t.Fatal(err)
		}
	}
	m.Close() // signs a checkpoint of everything, kept in esdb-tree/checkpoint
	d, err := OpenDataDir(ctx, dir, srv.URL(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	kept, ok, err := d.Tree.KeptCheckpoint(ctx)
	records, _ := d.Tree.TreeSize(ctx)
	d.Close()
	if err != nil || !ok || kept.Size != records-1 {
		t.Fatalf("kept checkpoint %+v (%v %v), tree %d: want the checkpoint signed at stop", kept, ok, err, records)
	}

	srv.CutAfter(srv.Len() - 2) // the checkpoint's event and the one before it
	m, err = start(false)
	m.Close()
	var cut *logCutError
	if !errors.As(err, &cut) || !strings.Contains(err.Error(), fmt.Sprintf("the last checkpoint signed covers %d events, but the log holds only %d", kept.Size, records-2)) {
		t.Fatalf("serve on the cut EventStoreDB log: %v", err)
	}
	m, err = start(true)
	if err != nil {
		m.Close()
		t.Fatalf("serve --accept-truncated-log: %v", err)
	}
	waitReady(t, m)
	m.Close()
	if out, errOut, code := auditRun(t, "verify", "--data", dir, "--eventstore", srv.URL()); code != 0 || !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("verify after the accepted cut: exit %d\n%s%s", code, out, errOut)
	}
}
