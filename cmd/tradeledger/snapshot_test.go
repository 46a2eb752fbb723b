package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// snapshotDataDir is a data dir whose log holds a random log of every kind
// of event (snaptest.RandomLog) after its initialization; more appends
// the rest of that log.
func snapshotDataDir(t *testing.T, first, total int) (dir string, more func()) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	events := snaptest.RandomLog(rand.New(rand.NewPCG(32, 32)), snaptest.LogOptions{Events: total})
	appendEvents := func(evs []domain.Event) {
		d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		snaptest.Store(t, d.Store, evs)
	}
	appendEvents(events[:first])
	return dir, func() { appendEvents(events[first:]) }
}

// modelsOf builds serve's read models of dir as serve does before it
// serves (openModels), from the newest valid snapshot when withSnapshot,
// and returns each projection's encoded state and whether a snapshot was
// loaded.
func modelsOf(t *testing.T, dir string, withSnapshot bool) ([][]byte, bool) {
	t.Helper()
	ctx := context.Background()
	m := NewMain()
	m.Config.Data, m.Logger, m.ManualCycles, m.ManualCheckpoints = dir, zap.NewNop(), true, true
	defer m.Close()
	if err := m.openModels(ctx); err != nil {
		t.Fatal(err)
	}
	loaded := false
	if withSnapshot {
		var err error
		if _, loaded, err = m.Runner.LoadSnapshot(ctx, m.Snapshots, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, p := range m.projections {
		out = append(out, snaptest.Encode(t, p.(projections.Snapshotter)))
	}
	return out, loaded
}

// TestSnapshotEveryServeModel: every read model serve keeps, started from
// a snapshot the service wrote and the events after it, is byte for byte
// the model built from the first event; deleting the snapshots changes
// nothing but the start.
func TestSnapshotEveryServeModel(t *testing.T) {
	dir, more := snapshotDataDir(t, 1500, 2500)
	if out, errOut, code := auditRun(t, "snapshot", "--data", dir); code != 0 || !bytes.Contains([]byte(out), []byte("snapshot written")) {
		t.Fatalf("snapshot: exit %d\n%s%s", code, out, errOut)
	}
	more()
	withSnap, loaded := modelsOf(t, dir, true)
	if !loaded {
		t.Fatal("no snapshot loaded")
	}
	full, _ := modelsOf(t, dir, false)
	for i := range full {
		if !bytes.Equal(full[i], withSnap[i]) {
			t.Fatalf("projection %d: from the snapshot + the tail ≠ from the first event", i)
		}
	}
	if err := os.RemoveAll(snapshotDir(dir)); err != nil {
		t.Fatal(err)
	}
	none, loaded := modelsOf(t, dir, true)
	if loaded {
		t.Fatal("a snapshot loaded from a removed directory")
	}
	for i := range full {
		if !bytes.Equal(full[i], none[i]) {
			t.Fatalf("projection %d differs without snapshots", i)
		}
	}
}

// TestServeStartFromSnapshot: serve starts from the newest valid snapshot
// and says so on /healthz (file, position, events replayed after it); a
// corrupt one is passed over and the start replays the whole log.
func TestServeStartFromSnapshot(t *testing.T) {
	dir, more := snapshotDataDir(t, 800, 1200)
	start := func() *Main {
		m := NewMain()
		m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
		m.Logger, m.ManualCycles, m.ManualCheckpoints, m.ManualSnapshots = zap.NewNop(), true, true, true
		if err := m.Run(context.Background()); err != nil {
			m.Close()
			t.Fatal(err)
		}
		return m
	}
	health := func(m *Main) (h struct {
		Start struct {
			Replayed int64 `json:"replayed"`
			Snapshot *struct {
				File     string `json:"file"`
				Position uint64 `json:"position"`
			} `json:"snapshot"`
		} `json:"start"`
	}) {
		resp, err := http.Get(m.Server.URL() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}

	m := start()
	if h := health(m); h.Start.Snapshot != nil || h.Start.Replayed == 0 {
		t.Fatalf("first start: %+v", h.Start)
	}
	_, file, err := m.SnapshotWriter.Write(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	more()
	head := func() uint64 {
		d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		h, _ := d.Store.Head(context.Background())
		return h
	}
	want := int64(head() - file.Position)

	m = start()
	h := health(m)
	m.Close()
	if h.Start.Snapshot == nil || h.Start.Snapshot.Position != file.Position || h.Start.Snapshot.File != filepath.Base(file.Path) {
		t.Fatalf("second start: %+v, want the snapshot %s", h.Start, file.Path)
	}
	// serve's own appends at start (after its replay) are not counted.
	if h.Start.Replayed != want {
		t.Fatalf("replayed %d events after the snapshot, want %d", h.Start.Replayed, want)
	}

	b, _ := os.ReadFile(file.Path)
	b[len(b)/2] ^= 1
	os.WriteFile(file.Path, b, 0o600)
	m = start()
	h = health(m)
	m.Close()
	if h.Start.Snapshot != nil || int64(head()) < h.Start.Replayed || h.Start.Replayed < int64(file.Position) {
		t.Fatalf("start with a corrupt snapshot: %+v, want the whole log replayed", h.Start)
	}
}
