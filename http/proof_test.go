package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// proofServer is a test server whose log has 40 events on a few streams
// (order-1 among them), a transparency log over it, and the key's
// verifier key. The tree is not built until build is called.
type proofServer struct {
	*testServer
	log  *transparency.Log
	vkey string
}

func newProofServer(t *testing.T, public bool) *proofServer {
	t.Helper()
	ps := &proofServer{}
	ps.testServer = newTestServer(t, func(ts *testServer) {
		skey, err := transparency.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		key, err := transparency.ParseKey(skey)
		if err != nil {
			t.Fatal(err)
		}
		ps.log = transparency.NewLog(ts.Store, ts.Store, key, ts.Clock)
		ps.log.Commands = eventstore.NewCommands(ts.Store, ts.Runner) // a checkpoint returns once applied, as in serve
		ps.vkey = key.VerifierKey()
		ts.Runner.Register(ps.log)
		ts.Server.Tlog, ts.Server.PublicTlog = ps.log, public
		for i := 0; i < 40; i++ {
			stream := fmt.Sprintf("order-%d", i%3)
			ts.appendEvent(stream, domain.NewEvent(ts.Clock, "Tested", map[string]any{"n": i, "html": "<&>"}))
		}
	})
	return ps
}

func (ps *proofServer) build() domain.CheckpointSigned {
	ps.t.Helper()
	if err := ps.log.Build(context.Background(), nil); err != nil {
		ps.t.Fatal(err)
	}
	c, _, err := ps.log.Issue(context.Background(), true)
	if err != nil {
		ps.t.Fatal(err)
	}
	return c
}

func TestProofRoutes(t *testing.T) {
	ps := newProofServer(t, false)
	// The tree is not built yet: not ready, and the proofs wait.
	if status, body := ps.do("GET", "/readyz", nil, ""); status != 503 || !strings.Contains(string(body), "building the Merkle tree") {
		t.Fatalf("readyz before the tree: %d %s", status, body)
	}
	if status, _ := ps.do("GET", "/api/v1/audit/checkpoint", nil, ps.Token); status != 503 {
		t.Fatalf("checkpoint before the tree: %d", status)
	}
	// As JSON (the dashboard's), a 200 saying so.
	resp := ps.request("GET", "/api/v1/audit/checkpoint", nil, map[string]string{"Authorization": bearer(ps.Token), "Accept": "application/json"})
	early, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(early), `"ready":false,"message":"building the Merkle tree`) || !strings.Contains(string(early), `"checkpoint":null`) {
		t.Fatalf("checkpoint as JSON before the tree: %d %s", resp.StatusCode, early)
	}
	if status, body := ps.do("GET", "/api/v1/audit/checkpoint/key", nil, ps.Token); status != 200 || string(body) != ps.vkey+"\n" {
		t.Fatalf("key: %d %q", status, body)
	}
	c := ps.build()
	if status, _ := ps.do("GET", "/readyz", nil, ""); status != 200 {
		t.Fatalf("readyz once the tree is built: %d", status)
	}
	status, body := ps.do("GET", "/api/v1/audit/checkpoint", nil, ps.Token)
	if status != 200 || string(body) != c.Note {
		t.Fatalf("checkpoint: %d %q, want the signed note %q", status, body, c.Note)
	}
	n, err := note.Open(body, note.VerifierList(mustVerifier(t, ps.vkey)))
	if err != nil || !strings.HasPrefix(n.Text, fmt.Sprintf("%s\n%d\n", c.Origin, c.Size)) {
		t.Fatalf("served checkpoint does not open with the key: %v %+v", err, n)
	}
	resp = ps.request("GET", "/api/v1/audit/checkpoint", nil, map[string]string{"Authorization": bearer(ps.Token), "Accept": "application/json"})
	var st checkpointStatus
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if cj := st.Checkpoint; !st.Ready || st.Key != ps.vkey || cj == nil || cj.Size != c.Size || cj.Root != c.Root || cj.Note != c.Note || cj.Time != ps.Clock.Now().UnixMilli() {
		t.Fatalf("checkpoint as JSON: %+v %+v", st, st.Checkpoint)
	}
	// A record's inclusion proof checks against the checkpoint's root;
	// the record is the event audit/events shows.
	root, _ := tlog.ParseHash(c.Root)
	var inc inclusionResponse
	if status, body := ps.getJSON(fmt.Sprintf("/api/v1/audit/proof/inclusion?index=7&size=%d", c.Size), &inc); status != 200 {
		t.Fatalf("inclusion: %d %s", status, body)
	}
	var rec domain.Event
	if status, body := ps.getJSON("/api/v1/audit/record?index=7", &rec); status != 200 {
		t.Fatalf("record: %d %s", status, body)
	}
	if inc.RecordHash != tlog.RecordHash(rec.Hash[:]) || domain.ComputeHash(&rec) != rec.Hash {
		t.Fatal("the record's leaf is not tlog.RecordHash of its recomputed hash")
	}
	if err := tlog.CheckRecord(inc.Proof, c.Size, root, 7, inc.RecordHash); err != nil {
		t.Fatalf("inclusion proof: %v", err)
	}
	// Consistency with a later checkpoint.
	ps.appendEvent("order-1", domain.NewEvent(ps.Clock, "Tested", map[string]any{"n": 99}))
	later, _, err := ps.log.Issue(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	laterRoot, _ := tlog.ParseHash(later.Root)
	var cons consistencyResponse
	if status, body := ps.getJSON(fmt.Sprintf("/api/v1/audit/proof/consistency?from=%d&to=%d", c.Size, later.Size), &cons); status != 200 {
		t.Fatalf("consistency: %d %s", status, body)
	}
	if err := tlog.CheckTree(cons.Proof, later.Size, laterRoot, c.Size, root); err != nil {
		t.Fatalf("consistency proof: %v", err)
	}
	// An order's bundle checks with the key alone.
	status, body = ps.do("GET", "/api/v1/audit/proof/order?id=1", nil, ps.Token)
	if status != 200 {
		t.Fatalf("order proof: %d %s", status, body)
	}
	if st, err := transparency.VerifyBundle(body, ps.vkey); err != nil || len(st.Events) != 14 {
		t.Fatalf("bundle: %+v %v", st, err)
	}
	// Bad input is a 4xx naming the parameter; nothing is written.
	head, _ := ps.Store.Head(context.Background())
	for _, c := range []struct {
		path   string
		status int
		text   string
	}{
		{"/api/v1/audit/proof/inclusion?size=40", 400, "index is required"},
		{"/api/v1/audit/proof/inclusion?index=x&size=40", 400, "index must be an integer"},
		{"/api/v1/audit/proof/inclusion?index=40&size=40", 400, "index must be from 0"},
		{"/api/v1/audit/proof/inclusion?index=1&size=9999", 400, "size must be from 0 to the tree's size"},
		{"/api/v1/audit/proof/consistency?from=0&to=40", 400, "from must be from 1"},
		{"/api/v1/audit/proof/consistency?from=3", 400, "to is required"},
		{"/api/v1/audit/record?index=9999", 404, "no record 9999"},
		{"/api/v1/audit/proof/order?id=abc", 400, "id must be an order id"},
		{"/api/v1/audit/proof/order?id=77", 404, "order 77 not found"},
		{"/tlog/tile/8/0/001", 404, "no tile"},
		{"/tlog/tile/9/0/000", 404, "no tile"},
	} {
		status, body := ps.do("GET", c.path, nil, ps.Token)
		if status != c.status || !strings.Contains(string(body), c.text) {
			t.Errorf("%s: %d %s, want %d saying %q", c.path, status, body, c.status, c.text)
		}
	}
	if h, _ := ps.Store.Head(context.Background()); h != head {
		t.Fatalf("bad requests appended events: head %d → %d", head, h)
	}
	// /tlog needs a token here (no --public-tlog).
	if status, _ := ps.do("GET", "/tlog/checkpoint", nil, ""); status != 401 {
		t.Fatalf("tlog checkpoint without a token: %d, want 401", status)
	}
	if status, body := ps.do("GET", "/tlog/checkpoint", nil, ps.Token); status != 200 || !strings.HasPrefix(string(body), later.Origin+"\n") {
		t.Fatalf("tlog checkpoint: %d %s", status, body)
	}
	if status, _ := ps.do("GET", "/api/v1/audit/proof/inclusion?index=1&size=2", nil, ""); status != 401 {
		t.Fatalf("a proof without a token: %d, want 401", status)
	}
}

func mustVerifier(t *testing.T, vkey string) note.Verifier {
	t.Helper()
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// httpTiles reads tiles from /tlog/tile/… without a token (the server runs
// with PublicTlog), as a mirror does.
type httpTiles struct {
	ps      *proofServer
	fetched int
}

func (h *httpTiles) Height() int { return 8 }
func (h *httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		resp := h.ps.request("GET", "/tlog/"+t.Path(), nil, nil)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return nil, fmt.Errorf("tile %s: %d %v", t.Path(), resp.StatusCode, err)
		}
		if full := t.W == 256; full != strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
			return nil, fmt.Errorf("tile %s: Cache-Control %q", t.Path(), resp.Header.Get("Cache-Control"))
		}
		out[i] = b
		h.fetched++
	}
	return out, nil
}
func (h *httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// With --public-tlog a mirror reads the checkpoint and the tiles without a
// token and checks them with tlog's TileHashReader.
func TestPublicTlogTiles(t *testing.T) {
	ps := newProofServer(t, true)
	for i := 0; i < 300; i++ {
		ps.appendEvent("order-9", domain.NewEvent(ps.Clock, "More", map[string]int{"i": i}))
	}
	ps.build()
	resp := ps.request("GET", "/tlog/checkpoint", nil, nil)
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	n, err := note.Open(msg, note.VerifierList(mustVerifier(t, ps.vkey)))
	if err != nil {
		t.Fatalf("public checkpoint: %d %v", resp.StatusCode, err)
	}
	lines := strings.Split(n.Text, "\n")
	var size int64
	fmt.Sscan(lines[1], &size)
	root, _ := tlog.ParseHash(lines[2])
	tiles := &httpTiles{ps: ps}
	hr := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, tiles)
	if got, err := tlog.TreeHash(size, hr); err != nil || got != root {
		t.Fatalf("root through tiles %v (%v), want %v", got, err, root)
	}
	p, err := tlog.ProveRecord(size, 301, hr)
	if err != nil {
		t.Fatal(err)
	}
	var rec domain.Event
	ps.getJSON("/api/v1/audit/record?index=301", &rec)
	if err := tlog.CheckRecord(p, size, root, 301, tlog.RecordHash(rec.Hash[:])); err != nil {
		t.Fatalf("record 301 through tiles: %v", err)
	}
	if tiles.fetched == 0 {
		t.Fatal("no tile fetched")
	}
	// The API's proofs still need a token.
	if status, _ := ps.do("GET", "/api/v1/audit/checkpoint", nil, ""); status != 401 {
		t.Fatalf("api checkpoint without a token: %d, want 401", status)
	}
}

// TestOrderProofSignsOnce: 16 concurrent audit/proof/order calls for an
// order no checkpoint covers yet sign one checkpoint between them (a
// read-scope token may call it: the signatures must not grow with the
// requests).
func TestOrderProofSignsOnce(t *testing.T) {
	ps := newProofServer(t, false)
	ps.build()
	ps.appendEvent("order-1", domain.NewEvent(ps.Clock, "Tested", map[string]any{"after": true}))
	count := func() int {
		it := ps.Store.ReadStream(context.Background(), domain.StreamCheckpoints, 0, 0)
		defer it.Close()
		n := 0
		for it.Next() {
			n++
		}
		return n
	}
	before := count()
	var wg sync.WaitGroup
	statuses := make([]int, 16)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = ps.do("GET", "/api/v1/audit/proof/order?id=1", nil, ps.Token)
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Fatalf("call %d: %d", i, s)
		}
	}
	if signed := count() - before; signed != 1 {
		t.Fatalf("16 concurrent proofs signed %d checkpoints, want 1", signed)
	}
}
