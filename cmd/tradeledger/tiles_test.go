package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// tilesClient reads a log served as c2sp.org/tlog-tiles with nothing but
// HTTP and golang.org/x/mod/sumdb's tlog and note: it knows the prefix and
// the log's verifier key. Its tile paths are written here from the
// specification, not taken from the service's code.
type tilesClient struct {
	t      *testing.T
	prefix string
	gets   int
}

func (c *tilesClient) get(path string) []byte {
	c.t.Helper()
	c.gets++
	res, err := http.Get(c.prefix + "/" + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		c.t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	if ct := res.Header.Get("Content-Type"); strings.HasPrefix(path, "tile/") && ct != "application/octet-stream" {
		c.t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	return b
}

// specPath is c2sp.org/tlog-tiles's path of a tile ("entries" for level
// −1): N in three-digit groups, all but the last prefixed with x.
func specPath(level string, n int64, w, full int) string {
	groups := []string{fmt.Sprintf("%03d", n%1000)}
	for n /= 1000; n > 0; n /= 1000 {
		groups = append([]string{fmt.Sprintf("x%03d", n%1000)}, groups...)
	}
	p := "tile/" + level + "/" + strings.Join(groups, "/")
	if w < full {
		p += ".p/" + strconv.Itoa(w)
	}
	return p
}

func (c *tilesClient) Height() int { return 8 }
func (c *tilesClient) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		out[i] = c.get(specPath(strconv.Itoa(t.L), t.N, t.W, 256))
	}
	return out, nil
}
func (c *tilesClient) SaveTiles([]tlog.Tile, [][]byte) {}

// TestEntryTilesReadByATlogClient: every record of a log of 700 events
// is read from the entry bundles and checked against the signed
// checkpoint, through the hash tiles at their tlog-tiles paths.
func TestEntryTilesReadByATlogClient(t *testing.T) {
	m := startLogOf(t, 700)
	vkey := m.DataDir.CheckpointKey.VerifierKey()

	c := &tilesClient{t: t, prefix: m.Server.URL() + "/tlog"}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(c.get("checkpoint"), note.VerifierList(v))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(n.Text, "\n")
	size, _ := strconv.ParseInt(lines[1], 10, 64)
	root, err := tlog.ParseHash(lines[2])
	if err != nil || size < 700 {
		t.Fatalf("checkpoint %q: %v", n.Text, err)
	}
	tree := tlog.Tree{N: size, Hash: root}
	// Every leaf hash, through hash tiles the reader checks against the
	// checkpoint's root.
	idx := make([]int64, size)
	for i := range idx {
		idx[i] = tlog.StoredHashIndex(0, int64(i))
	}
	leaves, err := tlog.TileHashReader(tree, c).ReadHashes(idx)
	if err != nil {
		t.Fatalf("hash tiles: %v", err)
	}
	// Every record from the entry bundles.
	read := int64(0)
	for b := int64(0); b*256 < size; b++ {
		w := int(min(256, size-b*256))
		bundle := c.get(specPath("entries", b, w, 256))
		for len(bundle) > 0 {
			if len(bundle) < 2 {
				t.Fatalf("bundle %d: a truncated length", b)
			}
			l := int(binary.BigEndian.Uint16(bundle))
			if len(bundle) < 2+l {
				t.Fatalf("bundle %d: a truncated entry", b)
			}
			entry := bundle[2 : 2+l]
			bundle = bundle[2+l:]
			if tlog.RecordHash(entry) != leaves[read] {
				t.Fatalf("record %d: its entry does not hash to the checkpoint's leaf", read)
			}
			read++
		}
		if read != b*256+int64(w) {
			t.Fatalf("bundle %d: %d entries, want %d", b, read-b*256, w)
		}
	}
	if read != size {
		t.Fatalf("read %d records, the checkpoint has %d", read, size)
	}
	// Each record is the event's chain hash: record 0 is the first event.
	e := m.DataDir.Store.ReadAll(context.Background(), 0, 1)
	defer e.Close()
	if !e.Next() {
		t.Fatal("no first event")
	}
	first := e.Event().Hash
	if tlog.RecordHash(first[:]) != leaves[0] {
		t.Fatal("record 0 is not the first event's hash")
	}
	// A tile or bundle beyond the tree, or a malformed path, is 404; the
	// Go checksum database's layout is still served.
	for _, p := range []string{specPath("entries", 9, 256, 256), "tile/0/3", "tile/entries/000.p/0", "tile/0/x000.p/1"} {
		res, _ := http.Get(c.prefix + "/" + p)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
		res.Body.Close()
	}
	if got := c.get("tile/8/0/001"); len(got) != 256*32 {
		t.Fatalf("Go layout tile/8/0/001: %d bytes", len(got))
	}
}

// startLogOf serves a data dir holding events events (their tree built at
// start) and one checkpoint of them.
func startLogOf(t *testing.T, events int) *Main {
	m, _, _ := startTlogMain(t, writeOldLog(t, events, 40), zap.NewNop())
	if _, err := m.Tlog.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEntryTilesReadByTorchwood: an independent tlog-tiles client
// (filippo.io/torchwood's TileFetcher and Client) reads every record of
// the log through the entry bundles and checks each against the signed
// checkpoint, which it parses itself.
func TestEntryTilesReadByTorchwood(t *testing.T) {
	m := startLogOf(t, 600)
	ctx := context.Background()
	v, _ := note.NewVerifier(m.DataDir.CheckpointKey.VerifierKey())
	f, err := torchwood.NewTileFetcher(m.Server.URL() + "/tlog/")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := f.ReadEndpoint(ctx, "checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil || cp.Origin != v.Name() || cp.N < 600 {
		t.Fatalf("torchwood.ParseCheckpoint(%q) = %+v, %v", n.Text, cp, err)
	}
	c, err := torchwood.NewClient(f)
	if err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	for i, entry := range c.Entries(ctx, cp.Tree, 0) {
		if i != next || len(entry) != 32 {
			t.Fatalf("entry %d (want %d): %d bytes", i, next, len(entry))
		}
		next++
	}
	if err := c.Err(); err != nil {
		t.Fatalf("torchwood client after %d entries: %v", next, err)
	}
	if next < 512 {
		t.Fatalf("torchwood's Entries yielded %d entries, want the two full bundles' 512", next)
	}
	// Entries stops before a partial bundle; Entry reads the rest with
	// its inclusion proof.
	for ; next < cp.N; next++ {
		if entry, _, err := c.Entry(ctx, cp.Tree, next); err != nil || len(entry) != 32 {
			t.Fatalf("entry %d: %v", next, err)
		}
	}
}
