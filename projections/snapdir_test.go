package projections_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// snapLog is a log in a SQLite store with a directory of read-model
// snapshots of the small read models.
type snapLog struct {
	t     *testing.T
	store *sqlite.Store
	snaps *projections.Snapshots
}

func newSnapLog(t *testing.T, dir string, events []domain.Event) *snapLog {
	store := sqlite.NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	snaptest.Store(t, store, events)
	snaps := projections.NewSnapshots(dir,
		func(ctx context.Context, pos uint64) (int64, domain.Hash, error) {
			return transparency.Identity(ctx, store, pos)
		},
		testSnapshotKey(t), domain.NewManualClock(time.Unix(0, 0)))
	return &snapLog{t: t, store: store, snaps: snaps}
}

// testSnapshotKey is the log key (transparency.Key) that signs and checks
// the tests' snapshots: one for the package, so that two logs of a test
// are two copies of one data dir, told apart by their Merkle roots.
func testSnapshotKey(t *testing.T) *transparency.Key {
	t.Helper()
	sharedKey.once.Do(func() { sharedKey.key = newSnapshotKey(t) })
	return sharedKey.key
}

var sharedKey struct {
	once sync.Once
	key  *transparency.Key
}

// newSnapshotKey is a new log key.
func newSnapshotKey(t *testing.T) *transparency.Key {
	t.Helper()
	k, err := transparency.NewKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func smallModels() []projections.Projection {
	return []projections.Projection{projections.NewPassword(), projections.NewTokens(), projections.NewConfig(),
		projections.NewFiles(nil), projections.NewBalances()}
}

// start runs a runner over the log with projs, loading the newest valid
// snapshot first, and returns what it loaded and the reasons of those it
// skipped.
func (l *snapLog) start(projs []projections.Projection) (*projections.Runner, projections.SnapshotInfo, bool, []string) {
	l.t.Helper()
	r := projections.NewRunner(l.store)
	for _, p := range projs {
		r.Register(p)
	}
	var skipped []string
	info, ok, err := r.LoadSnapshot(context.Background(), l.snaps, func(path string, why error) {
		skipped = append(skipped, filepath.Base(path)+": "+why.Error())
	})
	if err != nil {
		l.t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { r.Close() })
	return r, info, ok, skipped
}

// write takes a snapshot with a runner that replayed the whole log.
func (l *snapLog) write() projections.SnapshotFile {
	l.t.Helper()
	r, _, _, _ := l.start(smallModels())
	f, err := r.Freeze(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	file, err := l.snaps.Write(context.Background(), f)
	if err != nil {
		l.t.Fatal(err)
	}
	return file
}

// sameAsFull fails unless projs encode as the same models fed the whole
// log of store from the first event.
func sameAsFull(t *testing.T, store domain.EventStore, projs []projections.Projection) {
	t.Helper()
	full := smallModels()
	if _, err := projections.ReplayCut(context.Background(), store, projections.Cut{}, full, projections.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range full {
		if !bytes.Equal(snaptest.Encode(t, full[i].(projections.Snapshotter)), snaptest.Encode(t, projs[i].(projections.Snapshotter))) {
			t.Fatalf("%s differs from a replay of the whole log", full[i].Name())
		}
	}
}

// TestStartFromSnapshot: a start loads the newest valid snapshot and
// replays the events after it; a snapshot that is corrupt, of another
// format or projection version, of another log, or beyond the log's head
// is passed over with why, the start takes the next older one or the first
// event, and the state is always the state of a replay of the whole log.
func TestStartFromSnapshot(t *testing.T) {
	events := snaptest.RandomLog(rand.New(rand.NewPCG(3, 3)), snaptest.LogOptions{Events: 900})
	n := len(events)

	t.Run("none", func(t *testing.T) {
		l := newSnapLog(t, filepath.Join(t.TempDir(), "snapshots"), events)
		projs := smallModels()
		r, _, ok, skipped := l.start(projs)
		if ok || len(skipped) != 0 {
			t.Fatalf("loaded %v, skipped %v from an empty directory", ok, skipped)
		}
		if _, _, replayed := r.Snapshot(); replayed != int64(n) {
			t.Fatalf("replayed %d events, want %d", replayed, n)
		}
		sameAsFull(t, l.store, projs)
	})

	// Two snapshots, at 600 and at the head; then more events.
	setup := func(t *testing.T) (*snapLog, projections.SnapshotFile, projections.SnapshotFile) {
		dir := filepath.Join(t.TempDir(), "snapshots")
		l := newSnapLog(t, dir, events[:600])
		older := l.write()
		snaptest.Store(t, l.store, events[600:800])
		newer := l.write()
		snaptest.Store(t, l.store, events[800:])
		return l, older, newer
	}
	startAfter := func(t *testing.T, l *snapLog, want projections.SnapshotFile, why string) {
		t.Helper()
		projs := smallModels()
		r, info, ok, skipped := l.start(projs)
		if !ok || info.Position != want.Position {
			t.Fatalf("loaded %v at %d, want the snapshot at %d (skipped %v)", ok, info.Position, want.Position, skipped)
		}
		if why == "" && len(skipped) != 0 || why != "" && (len(skipped) != 1 || !strings.Contains(skipped[0], why)) {
			t.Fatalf("skipped %q, want one saying %q", skipped, why)
		}
		if _, _, replayed := r.Snapshot(); replayed != int64(n)-int64(want.Position) {
			t.Fatalf("replayed %d events after the snapshot at %d, want %d", replayed, want.Position, int64(n)-int64(want.Position))
		}
		sameAsFull(t, l.store, projs)
	}

	t.Run("newest", func(t *testing.T) {
		l, _, newer := setup(t)
		startAfter(t, l, newer, "")
	})
	t.Run("corrupt", func(t *testing.T) {
		l, older, newer := setup(t)
		b, err := os.ReadFile(newer.Path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/3] ^= 0x40
		if err := os.WriteFile(newer.Path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		startAfter(t, l, older, "checksum")
	})
	t.Run("cut short", func(t *testing.T) {
		l, older, newer := setup(t)
		if err := os.Truncate(newer.Path, newer.Bytes/2); err != nil {
			t.Fatal(err)
		}
		startAfter(t, l, older, "cut short")
	})
	t.Run("format version", func(t *testing.T) {
		l, older, newer := setup(t)
		b, _ := os.ReadFile(newer.Path)
		binary.BigEndian.PutUint16(b[6:], 0)
		os.WriteFile(newer.Path, b, 0o600)
		startAfter(t, l, older, "format version 0")
	})
	t.Run("forged", func(t *testing.T) {
		// A value of a section changed and its frame's CRC-32C made
		// right again: what anyone can do, and today's frames alone
		// would not notice.
		l, older, newer := setup(t)
		forgeSection(t, newer.Path, "config", func(payload []byte) { payload[len(payload)-1] ^= 0x01 })
		startAfter(t, l, older, "SHA-256")
	})
	t.Run("stolen signature", func(t *testing.T) {
		// A file carrying the signature of another snapshot of the
		// same log (a forger who made the sections and the index
		// agree, and has no key to sign them).
		l, older, newer := setup(t)
		b, _ := os.ReadFile(older.Path)
		h, err := snap.ReadHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		own := l.snaps.Key
		l.snaps.Key = stolenSignature{own, h.Signature}
		l.write()
		l.snaps.Key = own
		startAfter(t, l, newer, "covers another index")
	})
	t.Run("another key", func(t *testing.T) {
		l, _, newer := setup(t)
		own := l.snaps.Key
		l.snaps.Key = newSnapshotKey(t)
		l.write() // at the head, signed by another key
		l.snaps.Key = own
		startAfter(t, l, newer, "signed by a key named")
	})
	t.Run("projection version", func(t *testing.T) {
		l, _, _ := setup(t)
		projs := smallModels()
		projs[1] = tokensV2{projections.NewTokens()}
		_, _, ok, skipped := l.start(projs)
		if ok || len(skipped) != 2 || !strings.Contains(skipped[0], "version 1, this release's is 2") {
			t.Fatalf("loaded %v, skipped %q: want both refused for the tokens' version", ok, skipped)
		}
	})
	t.Run("another log", func(t *testing.T) {
		l, older, _ := setup(t)
		// A snapshot of another log, at a position this log has.
		other := newSnapLog(t, filepath.Join(t.TempDir(), "other"), snaptest.RandomLog(rand.New(rand.NewPCG(4, 4)), snaptest.LogOptions{Events: 700}))
		foreign := other.write()
		moved := filepath.Join(l.snaps.Dir, filepath.Base(foreign.Path))
		if err := os.Rename(foreign.Path, moved); err != nil {
			t.Fatal(err)
		}
		if foreign.Position <= older.Position {
			t.Fatalf("the other log's snapshot at %d is not newer than %d", foreign.Position, older.Position)
		}
		// It is the newest of the directory when the newer one is gone.
		list, _ := l.snaps.List()
		os.Remove(list[0].Path)
		startAfter(t, l, older, "Merkle root")
	})
	t.Run("beyond head", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "snapshots")
		longer := newSnapLog(t, dir, events)
		longer.write()
		// The same log cut short: its snapshot reaches past the head.
		l := newSnapLog(t, dir, events[:500])
		projs := smallModels()
		_, _, ok, skipped := l.start(projs)
		if ok || len(skipped) != 1 || !strings.Contains(skipped[0], "beyond the log's head") {
			t.Fatalf("loaded %v, skipped %q", ok, skipped)
		}
		sameAsFull(t, l.store, projs)
	})
}

// forgeSection changes the payload of each frame of section name of the
// snapshot file at path with patch and recomputes the frames' CRC-32C, as
// someone without the log's key can.
func forgeSection(t *testing.T, path, name string, patch func(payload []byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := snap.ReadHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	sec, ok := h.Section(name)
	if !ok || sec.Length == 0 {
		t.Fatalf("no section %s to forge", name)
	}
	for off := sec.Offset; off < sec.Offset+sec.Length; {
		size := int64(binary.LittleEndian.Uint32(b[off:]))
		payload := b[off+8 : off+8+size]
		patch(payload)
		binary.LittleEndian.PutUint32(b[off+4:], snap.Checksum(payload))
		off += 8 + size
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// stolenSignature signs every snapshot with the signature of another one:
// a valid signature by the log's key, over another index.
type stolenSignature struct {
	projections.SnapshotKey
	sig []byte
}

func (k stolenSignature) SignSnapshot([]byte) ([]byte, error) { return k.sig, nil }

// tokensV2 is Tokens as a release that encodes them another way would be.
type tokensV2 struct{ *projections.Tokens }

func (tokensV2) SnapshotVersion() uint32 { return 2 }

// TestRunnerUntil: a runner stopping at a position holds the models of the
// log up to it, from the first event or from a snapshot before it (never
// one beyond it), and its snapshot there is the one a runner that followed
// the log took at that position.
func TestRunnerUntil(t *testing.T) {
	events := snaptest.RandomLog(rand.New(rand.NewPCG(5, 5)), snaptest.LogOptions{Events: 900})
	dir := filepath.Join(t.TempDir(), "snapshots")
	l := newSnapLog(t, dir, events[:300])
	at300 := l.write()
	snaptest.Store(t, l.store, events[300:700])
	at700 := l.write()
	snaptest.Store(t, l.store, events[700:])
	for _, until := range []uint64{200, 300, 500, 700} {
		r := projections.NewRunner(l.store)
		r.Until = until
		projs := smallModels()
		for _, p := range projs {
			r.Register(p)
		}
		info, ok, err := r.LoadSnapshot(context.Background(), l.snaps, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := uint64(0)
		for _, f := range []projections.SnapshotFile{at300, at700} {
			if f.Position <= until {
				want = f.Position
			}
		}
		if ok != (want != 0) || info.Position != want {
			t.Fatalf("until %d: loaded the snapshot at %d (%v), want %d", until, info.Position, ok, want)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r.Position() != until {
			t.Fatalf("until %d: stopped at %d", until, r.Position())
		}
		cut := smallModels()
		if _, err := projections.ReplayCut(context.Background(), l.store, projections.Cut{Position: until}, cut, projections.ReplayOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range cut {
			if !bytes.Equal(snaptest.Encode(t, cut[i].(projections.Snapshotter)), snaptest.Encode(t, projs[i].(projections.Snapshotter))) {
				t.Fatalf("until %d: %s differs from the log up to it", until, cut[i].Name())
			}
		}
		r.Close()
	}
}
