package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/esdb/esdbtest"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	"github.com/tradeledger/tradeledger/projections"
)

// countProjection counts events per stream and type and folds every
// event's identity and hash, in order, into a digest.
type countProjection struct {
	mu     sync.Mutex
	counts map[string]int
	trail  []string
}

func (p *countProjection) Name() string { return "count" }

func (p *countProjection) Apply(e *domain.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts == nil {
		p.counts = map[string]int{}
	}
	p.counts[e.Stream+"/"+e.Type]++
	p.trail = append(p.trail, fmt.Sprintf("%s/%d %s %s %s", e.Stream, e.Version, e.ID, e.Hash, e.Data))
	return nil
}

func rebuild(t *testing.T, store domain.EventStore) *countProjection {
	t.Helper()
	p := &countProjection{}
	r := projections.NewRunner(store)
	r.Register(p)
	if err := r.Start(context.Background()); err != nil {
		t.Fatalf("replay: %v", err)
	}
	r.Close()
	return p
}

// The test talks to the esdbtest protocol test double, not to EventStoreDB.
func TestMigrateIntoEventStoreDB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := sqlitetest.OpenAt(t, filepath.Join(dir, "events.db"))
	for i := 0; i < 700; i++ { // more than one migrate batch in some streams
		stream := fmt.Sprintf("order-%d", i%4)
		if i%50 == 0 {
			stream = "config"
		}
		e := storetest.Event(fmt.Sprintf("T%d", i%3), i)
		e.Actor, e.Correlation = "alice", fmt.Sprintf("req-%d", i)
		if _, err := src.Append(ctx, stream, domain.Any, e, storetest.Event("Pair", i)); err != nil {
			t.Fatal(err)
		}
	}
	want := rebuild(t, src)
	src.Close()

	srv, err := esdbtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	run := func() string {
		var out, errOut bytes.Buffer
		if err := Run(ctx, []string{"migrate", "--data", dir, "--to", srv.URL()}, nil, &out, &errOut); err != nil {
			t.Fatalf("migrate: %v (stderr %s)", err, errOut.String())
		}
		return out.String()
	}
	if got := run(); !strings.Contains(got, "migrated 1400 events in 5 streams") || !strings.Contains(got, "1400 copied, 0 already present") {
		t.Fatalf("first run summary = %q", got)
	}
	records := srv.Len()
	if got := run(); !strings.Contains(got, "0 copied, 1400 already present") {
		t.Fatalf("second run summary = %q", got)
	}
	if srv.Len() != records {
		t.Fatalf("second run wrote %d records", srv.Len()-records)
	}

	dst, err := openESDB(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	got := rebuild(t, dst)
	if len(got.trail) != len(want.trail) {
		t.Fatalf("rebuilt from %d events, want %d", len(got.trail), len(want.trail))
	}
	for i := range want.trail {
		if got.trail[i] != want.trail[i] {
			t.Fatalf("event %d: %s, want %s", i, got.trail[i], want.trail[i])
		}
	}
	for k, n := range want.counts {
		if got.counts[k] != n {
			t.Fatalf("count %s = %d, want %d", k, got.counts[k], n)
		}
	}
}

// A log migrated to EventStoreDB has the same Merkle tree: the same root
// at the same size, so that a checkpoint kept before the move checks
// against the log after it (verify --eventstore, the tree kept in the
// data dir).
func TestMigratedLogHasTheSameTree(t *testing.T) {
	dir, _ := auditLog(t)
	auditAppend(t, dir, 30, "m")
	kept, c := auditCheckpoint(t, dir)
	key, _, _ := auditRun(t, "checkpoint", "key", "--data", dir)
	auditAppend(t, dir, 5, "n")
	srv, err := esdbtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, errOut, code := auditRun(t, "migrate", "--data", dir, "--to", srv.URL()); code != 0 {
		t.Fatalf("migrate: %s", errOut)
	}
	ctx := context.Background()
	src, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	srcSize, _ := src.Tree.TreeSize(ctx)
	srcRoot, err := transparency.NewLog(src.Store, src.Tree, src.CheckpointKey, domain.SystemClock{}).Root(ctx, srcSize)
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Another data dir on the EventStoreDB log: its tree is derived from
	// $all and kept in esdb-tree/.
	esdbDir := filepath.Join(t.TempDir(), "esdb-data")
	d, err := OpenDataDir(ctx, esdbDir, srv.URL(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Tree.(*transparency.FileTree); !ok {
		t.Fatalf("tree of an EventStoreDB log is a %T, want a FileTree", d.Tree)
	}
	if err := d.Tree.BuildTree(ctx, nil); err != nil {
		t.Fatal(err)
	}
	l := transparency.NewLog(d.Store, d.Tree, d.CheckpointKey, domain.SystemClock{})
	root, err := l.Root(ctx, srcSize)
	if err != nil || root != srcRoot {
		t.Fatalf("EventStoreDB tree root of %d records %s (%v), the embedded log's %s", srcSize, root, err, srcRoot)
	}
	if kr, _ := l.Root(ctx, c.Size); kr != c.Root {
		t.Fatal("the migrated log's tree does not have the kept checkpoint's root")
	}
	d.Close()
	out, errOut, code := auditRun(t, "verify", "--data", esdbDir, "--eventstore", srv.URL(), "--checkpoint", kept, "--key", strings.TrimSpace(key))
	if code != 0 || !strings.Contains(out, "checkpoint "+kept+": the log extends it") {
		t.Fatalf("verify of the migrated log against the kept checkpoint: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := auditRun(t, "verify", "--data", esdbDir, "--eventstore", srv.URL(), "--since", kept, "--key", strings.TrimSpace(key)); code != 0 {
		t.Fatalf("verify --since on the migrated log: exit %d\n%s%s", code, out, errOut)
	}
}
