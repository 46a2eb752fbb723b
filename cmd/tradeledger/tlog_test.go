package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
)

// startTlogMain starts serve with --public-tlog on a manual clock, the
// checkpoints issued only when the test ticks, in data dir dir (a new one
// when empty); it returns the service and a token.
func startTlogMain(t *testing.T, dir string, logger *zap.Logger) (*Main, *domain.ManualClock, string) {
	t.Helper()
	return startTlogMainWith(t, dir, logger, nil)
}

// startTlogMainWith is startTlogMain with configure (when not nil)
// changing the settings before the start.
func startTlogMainWith(t *testing.T, dir string, logger *zap.Logger, configure func(*Main)) (*Main, *domain.ManualClock, string) {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "data")
	}
	clock := domain.NewManualClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
	m.Config.PublicTlog = true
	m.Logger, m.Clock, m.ManualCycles, m.ManualCheckpoints = logger, clock, true, true
	if configure != nil {
		configure(m)
	}
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	// The tree is built and the store's integrity checked in the
	// background: /readyz says when both are done.
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := serveGet(t, m, "/readyz", "")
		if status == 200 {
			break
		}
		starting := strings.Contains(body, "Merkle tree") || strings.Contains(body, "integrity check is running")
		if !starting || time.Now().After(deadline) {
			t.Fatalf("readyz = %d %s", status, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	status, token := serveLogin(t, m, e2eWallet, "e2e trading password")
	if status != 200 {
		t.Fatalf("login = %d", status)
	}
	return m, clock, token
}

// writeOldLog writes events "Old" events, spread over streams order
// streams, into a new data dir made with the e2e wallet and password, and
// returns the dir, closed.
func writeOldLog(t *testing.T, events, streams int) string {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", e2eWallet)
	t.Setenv("TRADELEDGER_PASSWORD", "e2e trading password")
	dir := filepath.Join(t.TempDir(), "data")
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_000_000))
	var batch []domain.StreamAppend
	for i := 0; i < events; i++ {
		batch = append(batch, domain.StreamAppend{Stream: domain.OrderStream(int64(i%streams + 1)), Expected: domain.Any,
			Events: []domain.Event{domain.NewEvent(clock, "Old", map[string]int{"i": i})}})
	}
	if _, err := d.Store.(domain.BatchAppender).AppendBatch(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	return dir
}

// auditor is an outside party: it knows the service's URL and the
// verifier key, and uses only HTTP and golang.org/x/mod/sumdb's tlog and
// note.
type auditor struct {
	t     *testing.T
	url   string
	token string // for the API's proofs (a read token)
	vkey  string
}

func (a *auditor) get(path string, auth bool) []byte {
	a.t.Helper()
	req, _ := http.NewRequest("GET", a.url+path, nil)
	if auth {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	return readOK(a.t, req)
}

// checkpoint fetches /tlog/checkpoint (no token: --public-tlog) and
// checks its signature; it returns the tree it names and the note.
func (a *auditor) checkpoint() (tlog.Tree, []byte) {
	a.t.Helper()
	msg := a.get("/tlog/checkpoint", false)
	v, err := note.NewVerifier(a.vkey)
	if err != nil {
		a.t.Fatal(err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		a.t.Fatalf("checkpoint signature: %v\n%s", err, msg)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[0] != v.Name() {
		a.t.Fatalf("checkpoint text %q: want the key's origin %s first", n.Text, v.Name())
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		a.t.Fatal(err)
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		a.t.Fatal(err)
	}
	return tlog.Tree{N: size, Hash: root}, msg
}

// ReadTiles, Height and SaveTiles make the auditor a tlog.TileReader of
// /tlog/tile/….
func (a *auditor) Height() int { return 8 }
func (a *auditor) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		out[i] = a.get("/tlog/"+t.Path(), false)
	}
	return out, nil
}
func (a *auditor) SaveTiles([]tlog.Tile, [][]byte) {}

// checkRecord fetches record i and its inclusion proof in tree, and checks
// the proof against tree's root with the record's hash as its data.
func (a *auditor) checkRecord(tree tlog.Tree, i int64) {
	a.t.Helper()
	var rec struct {
		Hash string `json:"hash"`
		Type string `json:"type"`
	}
	json.Unmarshal(a.get(fmt.Sprintf("/api/v1/audit/record?index=%d", i), true), &rec)
	data, err := hex.DecodeString(rec.Hash)
	if err != nil || len(data) != 32 {
		a.t.Fatalf("record %d: hash %q", i, rec.Hash)
	}
	var p struct {
		RecordHash tlog.Hash   `json:"recordHash"`
		Proof      []tlog.Hash `json:"proof"`
	}
	json.Unmarshal(a.get(fmt.Sprintf("/api/v1/audit/proof/inclusion?index=%d&size=%d", i, tree.N), true), &p)
	if p.RecordHash != tlog.RecordHash(data) {
		a.t.Fatalf("record %d: the served leaf is not tlog.RecordHash of its hash", i)
	}
	if err := tlog.CheckRecord(p.Proof, tree.N, tree.Hash, i, p.RecordHash); err != nil {
		a.t.Fatalf("record %d (%s): %v", i, rec.Type, err)
	}
	// The same through the tiles alone.
	tp, err := tlog.ProveRecord(tree.N, i, tlog.TileHashReader(tree, a))
	if err != nil || tlog.CheckRecord(tp, tree.N, tree.Hash, i, tlog.RecordHash(data)) != nil {
		a.t.Fatalf("record %d through the tiles: %v", i, err)
	}
}

// TestOutsideAuditor runs the service and checks it as an outside party
// would, with HTTP and tlog/note only: the signed checkpoint, records'
// inclusion proofs (served and rebuilt from tiles), the consistency of a
// later checkpoint with a kept one; meanwhile the service issues
// checkpoints on its clock and sends each to a webhook.
func TestOutsideAuditor(t *testing.T) {
	hooks := make(chan []byte, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Tradeledger-Event") == "checkpoints" {
			hooks <- b
		}
	}))
	defer srv.Close()
	m, clock, token := startTlogMain(t, "", zap.NewNop())
	e := &tradingE2E{t: t, m: m, clock: clock, token: token}
	status, full := e.get("config/full")
	if status != 200 {
		t.Fatalf("config/full = %d", status)
	}
	cfg := full["config"].(map[string]any)
	cfg["notifications"] = map[string]any{"webhooks": []any{map[string]any{"url": srv.URL, "events": []any{"checkpoints"}}}}
	if status, out := e.post("config/update", map[string]any{"data": cfg}, ""); status != 200 {
		t.Fatalf("config/update = %d %v", status, out)
	}
	ctx := context.Background()
	if issued, err := m.Tlog.Tick(ctx); !issued || err != nil {
		t.Fatalf("first tick: %v %v", issued, err)
	}
	a := &auditor{t: t, url: m.Server.URL(), token: token}
	a.vkey = strings.TrimSpace(string(a.get("/api/v1/audit/checkpoint/key", true)))
	kept, keptNote := a.checkpoint()
	select {
	case b := <-hooks:
		var p struct {
			Data struct {
				Note string `json:"note"`
			} `json:"data"`
		}
		if json.Unmarshal(b, &p); p.Data.Note != string(keptNote) {
			t.Fatalf("webhook sent %s, want the served checkpoint", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook for the checkpoint")
	}
	for _, i := range []int64{0, kept.N / 2, kept.N - 1} {
		a.checkRecord(kept, i)
	}
	// The log grows; within the interval no checkpoint, after it one.
	if status, out := e.post("config/pair/add", map[string]any{"pair": "USDT-BTC", "exchange": "binance", "settings": map[string]any{"strategy": "manual"}}, ""); status != 200 {
		t.Fatalf("pair/add = %d %v", status, out)
	}
	clock.Advance(30 * time.Second)
	if issued, _ := m.Tlog.Tick(ctx); issued {
		t.Fatal("a checkpoint within --checkpoint-interval")
	}
	clock.Advance(30 * time.Second)
	if issued, err := m.Tlog.Tick(ctx); !issued || err != nil {
		t.Fatalf("tick after the interval: %v %v", issued, err)
	}
	later, _ := a.checkpoint()
	if later.N <= kept.N {
		t.Fatalf("later checkpoint of %d records, kept one %d", later.N, kept.N)
	}
	var cons struct {
		Proof []tlog.Hash `json:"proof"`
	}
	json.Unmarshal(a.get(fmt.Sprintf("/api/v1/audit/proof/consistency?from=%d&to=%d", kept.N, later.N), true), &cons)
	if err := tlog.CheckTree(cons.Proof, later.N, later.Hash, kept.N, kept.Hash); err != nil {
		t.Fatalf("consistency of the kept checkpoint with the later one: %v", err)
	}
	a.checkRecord(later, later.N-1)
	// A mirror rebuilds the later root from the tiles alone.
	if root, err := tlog.TreeHash(later.N, tlog.TileHashReader(later, a)); err != nil || root != later.Hash {
		t.Fatalf("root from the tiles: %v %v", root, err)
	}
}

// A data dir written before the tree existed gets its tree at the first
// start of this version (progress logged), and the service is ready once
// it covers the log; its origin was made at that start and stays.
func TestServeBuildsTheTreeOfAnOldLog(t *testing.T) {
	dir := writeOldLog(t, 5000, 900)
	// As an earlier version left it: no tree, no checkpoint key.
	db := auditOpenRaw(t, dir)
	if _, err := db.Exec(`DROP TABLE tree`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := removeFile(filepath.Join(dir, "checkpoint.key")); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	m, _, token := startTlogMain(t, dir, zap.New(core))
	if status, body := serveGet(t, m, "/readyz", ""); status != 200 {
		t.Fatalf("readyz once built: %d %s", status, body)
	}
	head, _ := m.DataDir.Store.Head(context.Background())
	if size, _ := m.DataDir.Tree.TreeSize(context.Background()); size != int64(head) {
		t.Fatalf("tree of %d records, log of %d events", size, head)
	}
	deadline := time.Now().Add(10 * time.Second)
	for logs.FilterMessage("Merkle tree ready").Len() == 0 || logs.FilterMessage("building the Merkle tree over the log").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no progress and \"Merkle tree ready\" log lines: %v", logs.All())
		}
		time.Sleep(10 * time.Millisecond)
	}
	status, key := serveGet(t, m, "/api/v1/audit/checkpoint/key", token)
	if status != 200 || !bytes.HasPrefix([]byte(key), []byte(m.DataDir.CheckpointKey.Origin()+"+")) {
		t.Fatalf("key: %d %s", status, key)
	}
}

func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
