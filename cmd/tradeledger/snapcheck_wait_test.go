package main

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// heldIntegrity is the embedded store with its integrity check held until
// release is closed.
type heldIntegrity struct {
	*sqlite.Store
	release chan struct{}
}

func (h *heldIntegrity) CheckIntegrity() error {
	<-h.release
	return h.Store.CheckIntegrity()
}

// TestSnapshotCheckAfterStoreCheck: the start snapshot's check against the
// log (a rebuild, a core's worth of work) does not begin while the store's
// integrity check, which /readyz waits for, is running; once that check
// returned, it runs and finds the log's own snapshot equal.
func TestSnapshotCheckAfterStoreCheck(t *testing.T) {
	ctx := context.Background()
	dir, _, _ := forgeDataDir(t)
	m := startForgeServe(t, dir, zap.NewNop())
	if _, _, err := m.SnapshotWriter.Write(ctx); err != nil {
		t.Fatal(err)
	}
	m.Close()

	start := func(release chan struct{}) *Main {
		d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		d.Store = &heldIntegrity{Store: d.Store.(*sqlite.Store), release: release}
		m := NewMain()
		m.DataDir = d
		m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
		m.Config.SnapshotCheckShare = 1
		m.Logger, m.ManualCycles, m.ManualCheckpoints, m.ManualSnapshots = zap.NewNop(), true, true, true
		if err := m.Run(ctx); err != nil {
			m.Close()
			t.Fatal(err)
		}
		if _, loaded, _ := m.Runner.Snapshot(); !loaded {
			t.Fatal("serve did not start from the snapshot")
		}
		return m
	}

	// Held: the check is stopped without having begun.
	release := make(chan struct{})
	m = start(release)
	m.snapCheck.work.stop()
	state, _ := m.snapCheck.status()
	close(release)
	m.Close()
	if state != "pending" {
		t.Fatalf("the snapshot check was %q while the store's integrity check ran, want pending", state)
	}

	// Released at once: it runs to the end.
	release = make(chan struct{})
	close(release)
	m = start(release)
	m.snapCheck.work.wg.Wait()
	state, problem := m.snapCheck.status()
	m.Close()
	if state != "equal" {
		t.Fatalf("the snapshot check ended %q (%s), want equal", state, problem)
	}
}
