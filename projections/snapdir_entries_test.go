//go:build unix

package projections_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotDirEntries: entries of the snapshot directory that are not
// regular files — a symbolic link (to a file elsewhere, to a valid
// snapshot), a FIFO, a device, a directory, each named <position>.snap —
// are passed over without being followed or opened: a start loads the
// newest regular snapshot, pruning neither shrinks nor removes what a
// link points to, and a FIFO does not hang the start.
func TestSnapshotDirEntries(t *testing.T) {
	events := snaptest.RandomLog(rand.New(rand.NewPCG(6, 6)), snaptest.LogOptions{Events: 600})
	dir := filepath.Join(t.TempDir(), "snapshots")
	l := newSnapLog(t, dir, events[:300])
	real := l.write()

	// A file elsewhere that a link in the directory points to, named as
	// the oldest snapshot: the first one pruning removes.
	outside := filepath.Join(t.TempDir(), "precious")
	content := bytes.Repeat([]byte("keep me "), 1<<16)
	if err := os.WriteFile(outside, content, 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(outside, filepath.Join(dir, "1.snap")))
	// A link to a valid snapshot of this log (a copy elsewhere), named
	// as a newer one.
	copied := filepath.Join(t.TempDir(), "copy.snap")
	b, _ := os.ReadFile(real.Path)
	must(t, os.WriteFile(copied, b, 0o600))
	must(t, os.Symlink(copied, filepath.Join(dir, "290.snap")))
	// A FIFO named as the newest snapshot: opening it for reading waits
	// for a writer.
	fifo := filepath.Join(dir, "99999.snap")
	must(t, syscall.Mkfifo(fifo, 0o600))
	must(t, os.Mkdir(filepath.Join(dir, "299.snap"), 0o700))
	if err := syscall.Mknod(filepath.Join(dir, "298.snap"), syscall.S_IFCHR|0o600, 1<<8|3); err != nil {
		t.Logf("no device node (%v): that case is left out", err)
	}

	// Whoever opens the FIFO for reading waits until it has a writer: the
	// watch is that writer, so a start that opened it would not hang, and
	// the test knows it did.
	var opened atomic.Bool
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				opened.Store(true)
				f.Close()
			}
		}
	}()
	projs := smallModels()
	_, info, ok, skipped := l.start(projs)
	close(stop)
	<-watched
	if opened.Load() {
		t.Fatal("the start opened the FIFO named 99999.snap")
	}
	if !ok || info.Path != real.Path {
		t.Fatalf("loaded %v %s, want the regular snapshot %s (skipped %v)", ok, info.Path, real.Path, skipped)
	}
	sameAsFull(t, l.store, projs)

	// Pruning: enough newer snapshots that every older name goes.
	l.snaps.Keep = 1
	snaptest.Store(t, l.store, events[300:450])
	l.write()
	snaptest.Store(t, l.store, events[450:])
	newest := l.write()
	if got, err := os.ReadFile(outside); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the file a link in the snapshot directory points to: %d bytes (%v), want %d untouched", len(got), err, len(content))
	}
	if got, _ := os.ReadFile(copied); !bytes.Equal(got, b) {
		t.Fatal("the snapshot a link points to was changed")
	}
	list, err := l.snaps.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Path != newest.Path {
		t.Fatalf("listed %v, want only %s", list, newest.Path)
	}
	for _, name := range []string{"1.snap", "290.snap", "99999.snap", "299.snap"} {
		st, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || st.Mode().IsRegular() {
			t.Errorf("%s: %v, %v: want it left as it was", name, st, err)
		}
	}
	if !strings.HasSuffix(newest.Path, ".snap") {
		t.Fatal(newest.Path)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
