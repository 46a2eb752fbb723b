package transparency_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// logEnv is a Log over an embedded store on a temp dir, with a clock the
// test moves.
type logEnv struct {
	t     *testing.T
	store *sqlite.Store
	key   *transparency.Key
	clock *domain.ManualClock
	log   *transparency.Log
	n     int
}

func newLogEnv(t *testing.T) *logEnv {
	t.Helper()
	s := sqlitetest.Open(t)
	key := newKey(t)
	clock := domain.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	l := transparency.NewLog(s, s, key, clock)
	if err := l.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &logEnv{t: t, store: s, key: key, clock: clock, log: l}
}

// append adds n events to a few streams, order streams among them.
func (e *logEnv) append(n int) {
	e.t.Helper()
	for i := 0; i < n; i++ {
		stream := fmt.Sprintf("order-%d", e.n%5)
		if e.n%3 == 0 {
			stream = "config"
		}
		ev := domain.NewEvent(e.clock, "Tick", map[string]any{"n": e.n, "note": "a <b> & c"})
		if _, err := e.store.Append(context.Background(), stream, domain.Any, ev); err != nil {
			e.t.Fatal(err)
		}
		e.n++
	}
}

// newKey returns a new checkpoint key.
func newKey(t *testing.T) *transparency.Key {
	t.Helper()
	skey, err := transparency.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := transparency.ParseKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func (e *logEnv) size() int64 {
	n, _ := e.store.TreeSize(context.Background())
	return n
}

func TestKeyAndCheckpointText(t *testing.T) {
	skey, err := transparency.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := transparency.ParseKey(skey + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key.Origin(), transparency.OriginPrefix) || strings.Contains(key.VerifierKey(), "PRIVATE") {
		t.Fatalf("origin %q, verifier key %q", key.Origin(), key.VerifierKey())
	}
	if _, err := note.NewVerifier(key.VerifierKey()); err != nil {
		t.Fatalf("verifier key does not parse with note: %v", err)
	}
	cp := transparency.Checkpoint{Origin: key.Origin(), Size: 12, Root: tlog.RecordHash([]byte("x"))}
	msg, err := key.Sign(cp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(msg), cp.Origin+"\n12\n"+cp.Root.String()+"\n\n— "+cp.Origin+" ") {
		t.Fatalf("signed checkpoint:\n%s", msg)
	}
	got, err := transparency.OpenCheckpoint([]byte(strings.ReplaceAll(string(msg), "\n", "\r\n")), key.VerifierKey())
	if err != nil || got != cp {
		t.Fatalf("opened %+v (%v), want %+v", got, err, cp)
	}
	other, _ := transparency.GenerateKey(nil)
	otherKey, _ := transparency.ParseKey(other)
	if _, err := transparency.OpenCheckpoint(msg, otherKey.VerifierKey()); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("opened with another log's key: %v, want EINVALID", err)
	}
	forged := strings.Replace(string(msg), "\n12\n", "\n13\n", 1)
	if _, err := transparency.OpenCheckpoint([]byte(forged), key.VerifierKey()); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("opened an edited checkpoint: %v, want EINVALID", err)
	}
	for _, bad := range []string{"", "PRIVATE+KEY+x+00000000+AAAA", key.VerifierKey()} {
		if _, err := transparency.ParseKey(bad); domain.ErrorCode(err) != domain.EINVALID {
			t.Fatalf("ParseKey(%q): %v, want EINVALID", bad, err)
		}
	}
}

// Checkpoints are issued when the log grew, at most every Interval on the
// log's clock, never for the growth of their own event, and on demand.
func TestCheckpointIssuing(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t)
	if _, ok := e.log.Latest(); ok {
		t.Fatal("a checkpoint before any was issued")
	}
	e.append(10)
	issued, err := e.log.Tick(ctx)
	if err != nil || !issued {
		t.Fatalf("first tick issued %v (%v), want a checkpoint", issued, err)
	}
	first, _ := e.log.Latest()
	if first.Size != 10 || e.size() != 11 {
		t.Fatalf("first checkpoint of %d records, tree %d, want 10 and 11 (its own event)", first.Size, e.size())
	}
	cp, err := transparency.OpenCheckpoint([]byte(first.Note), e.key.VerifierKey())
	if err != nil || cp.Size != 10 || cp.Root.String() != first.Root {
		t.Fatalf("checkpoint %+v (%v)", cp, err)
	}
	ref := storetest.NewRefTree(t, storetest.ReadAll(t, e.store.ReadAll(ctx, 0, 0)))
	if cp.Root != ref.Root(t, 10) {
		t.Fatal("checkpoint root is not tlog's root of the first 10 events")
	}
	// Grown, but the interval has not passed.
	e.append(3)
	e.clock.Advance(59 * time.Second)
	if issued, err := e.log.Tick(ctx); issued || err != nil {
		t.Fatalf("tick within the interval issued %v (%v)", issued, err)
	}
	e.clock.Advance(time.Second)
	if issued, err := e.log.Tick(ctx); !issued || err != nil {
		t.Fatalf("tick after the interval issued %v (%v)", issued, err)
	}
	second, _ := e.log.Latest()
	if second.Size != 14 {
		t.Fatalf("second checkpoint of %d records, want 14", second.Size)
	}
	// Only its own event since: nothing to sign, however long.
	e.clock.Advance(time.Hour)
	if issued, err := e.log.Tick(ctx); issued || err != nil {
		t.Fatalf("tick with only the checkpoint's own event issued %v (%v)", issued, err)
	}
	// On demand it signs that event too.
	c, issued, err := e.log.Issue(ctx, true)
	if err != nil || !issued || c.Size != 15 {
		t.Fatalf("on demand: %d records, issued %v (%v), want 15", c.Size, issued, err)
	}
	// Every checkpoint is in the stream, in order.
	var sizes []int64
	for _, ev := range storetest.ReadAll(t, e.store.ReadStream(ctx, domain.StreamCheckpoints, 0, 0)) {
		var cs domain.CheckpointSigned
		if err := ev.Decode(&cs); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, cs.Size)
	}
	if fmt.Sprint(sizes) != "[10 14 15]" {
		t.Fatalf("checkpoints stream sizes %v, want [10 14 15]", sizes)
	}
	// Another Log on the same store (a restart) starts from the last one.
	again := transparency.NewLog(e.store, e.store, e.key, e.clock)
	if err := again.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if c, _ := again.Latest(); c.Size != 15 {
		t.Fatalf("reopened log's last checkpoint of %d records, want 15", c.Size)
	}
}

// Inclusion and consistency proofs check against the roots tlog computes
// itself; bad sizes are refused.
func TestProofs(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t)
	e.append(300)
	ref := storetest.NewRefTree(t, storetest.ReadAll(t, e.store.ReadAll(ctx, 0, 0)))
	for _, c := range [][2]int64{{0, 1}, {0, 300}, {299, 300}, {17, 256}, {255, 257}} {
		leaf, p, err := e.log.ProveInclusion(ctx, c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		if leaf != tlog.RecordHash(ref.Records[c[0]]) {
			t.Fatalf("record %d: leaf differs from tlog.RecordHash of its event's hash", c[0])
		}
		if err := tlog.CheckRecord(p, c[1], ref.Root(t, c[1]), c[0], leaf); err != nil {
			t.Fatalf("inclusion of %d in %d: %v", c[0], c[1], err)
		}
	}
	for _, c := range [][2]int64{{1, 300}, {10, 10}, {100, 257}, {256, 300}, {299, 300}} {
		p, err := e.log.ProveConsistency(ctx, c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckTree(p, c[1], ref.Root(t, c[1]), c[0], ref.Root(t, c[0])); err != nil {
			t.Fatalf("consistency %d→%d: %v", c[0], c[1], err)
		}
	}
	for _, c := range [][2]int64{{-1, 10}, {10, 10}, {0, 301}, {0, 0}} {
		if _, _, err := e.log.ProveInclusion(ctx, c[0], c[1]); domain.ErrorCode(err) != domain.EINVALID {
			t.Fatalf("inclusion %v: %v, want EINVALID", c, err)
		}
	}
	for _, c := range [][2]int64{{11, 10}, {0, 10}, {1, 301}} {
		if _, err := e.log.ProveConsistency(ctx, c[0], c[1]); domain.ErrorCode(err) != domain.EINVALID {
			t.Fatalf("consistency %v: %v, want EINVALID", c, err)
		}
	}
	ev, err := e.log.Record(ctx, 123)
	if err != nil || tlog.RecordHash(ev.Hash[:]) != tlog.RecordHash(ref.Records[123]) {
		t.Fatalf("record 123: %+v (%v)", ev, err)
	}
	if _, err := e.log.Record(ctx, 300); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("record 300 of 300: %v, want ENOTFOUND", err)
	}
}

// tileClient is a mirror's tile reader: it fetches tiles from the log
// (as GET /tlog/tile/… would) and may be told to damage one.
type tileClient struct {
	log    *transparency.Log
	damage string // path of a tile to flip a bit in
	saved  int
}

func (c *tileClient) Height() int { return transparency.TileHeight }
func (c *tileClient) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		b, err := c.log.Tile(context.Background(), t.Path())
		if err != nil {
			return nil, err
		}
		if t.Path() == c.damage {
			b[0] ^= 1
		}
		out[i] = b
	}
	return out, nil
}
func (c *tileClient) SaveTiles(tiles []tlog.Tile, data [][]byte) { c.saved += len(tiles) }

// A mirror copies the tree as tiles and checks them with tlog's own
// TileHashReader against a checkpoint: the hashes it reads are tlog's,
// and a damaged tile is refused.
func TestTilesCheckWithTileHashReader(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t)
	e.append(70000 / 100) // 700 records: full and partial tiles at levels 0 and 1
	c, _, err := e.log.Issue(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := transparency.OpenCheckpoint([]byte(c.Note), e.key.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	events := storetest.ReadAll(t, e.store.ReadAll(ctx, 0, int(cp.Size)))
	ref := storetest.NewRefTree(t, events)
	client := &tileClient{log: e.log}
	hr := tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Root}, client)
	root, err := tlog.TreeHash(cp.Size, hr)
	if err != nil || root != cp.Root {
		t.Fatalf("root through tiles %s (%v), want %s", root, err, cp.Root)
	}
	idx := []int64{0, tlog.StoredHashIndex(0, 255), tlog.StoredHashIndex(0, cp.Size-1), tlog.StoredHashIndex(8, 1)}
	got, err := hr.ReadHashes(idx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ref.ReadHashes(idx)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("hash %d through tiles differs from tlog's", idx[i])
		}
	}
	p, err := tlog.ProveRecord(cp.Size, 500, hr)
	if err != nil || tlog.CheckRecord(p, cp.Size, cp.Root, 500, tlog.RecordHash(ref.Records[500])) != nil {
		t.Fatalf("proof through tiles: %v", err)
	}
	if client.saved == 0 {
		t.Fatal("TileHashReader saved no tile: none was authenticated")
	}
	bad := &tileClient{log: e.log, damage: "tile/8/0/001"}
	if _, err := tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Root}, bad).ReadHashes([]int64{tlog.StoredHashIndex(0, 300)}); err == nil {
		t.Fatal("a damaged tile was accepted")
	}
	for _, path := range []string{"tile/8/0/003", "tile/8/0/002.p/190", "tile/8/2/000.p/1", "tile/4/0/000", "tile/8/-1/000", "x"} {
		if _, err := e.log.Tile(ctx, path); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("tile %s beyond the tree or not served: %v, want ENOTFOUND", path, err)
		}
	}
	if b, err := e.log.Tile(ctx, "tile/8/0/002.p/188"); err != nil || len(b) != 188*32 {
		t.Fatalf("last partial tile: %d bytes (%v)", len(b), err)
	}
	if !transparency.TileIsFull("tile/8/0/000") || transparency.TileIsFull("tile/8/0/002.p/188") {
		t.Fatal("TileIsFull")
	}
}
