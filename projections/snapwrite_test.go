package projections

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A snapshot's file is written at the rate asked, in bytes a second, and
// synced every snapshotSyncBytes, with its bytes unchanged.
func TestSyncingWriterPacesAndWritesBack(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	const rate = 4 << 20 // bytes a second
	w := newSyncingWriter(file, rate)
	clock := w.start
	w.now = func() time.Time { return clock }
	w.sleep = func(d time.Duration) { clock = clock.Add(d) }

	var want []byte
	for i := range 9 {
		// Pieces of uneven sizes, as the encoder's frames and the
		// header are: 3.4 MiB in all.
		p := bytes.Repeat([]byte{byte('a' + i)}, 100_000+i*70_000)
		if n, err := w.Write(p); err != nil || n != len(p) {
			t.Fatalf("write %d = %d, %v", i, n, err)
		}
		want = append(want, p...)
		// No time passed but the sleeps: after each write the writer
		// has waited until the rate allows what it wrote.
		if due := time.Duration(float64(len(want)) / rate * float64(time.Second)); clock.Sub(w.start) != due {
			t.Fatalf("after %d bytes, %v passed, want %v", len(want), clock.Sub(w.start), due)
		}
	}
	if w.pending >= snapshotSyncBytes || w.written != int64(len(want)) {
		t.Fatalf("%d of %d bytes not synced, %d counted written of %d", w.pending, w.written, w.written, len(want))
	}
	got, err := os.ReadFile(file.Name())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes (%v), not the %d written", len(got), err, len(want))
	}

	// Without a rate it never waits.
	w = newSyncingWriter(file, 0)
	w.sleep = func(d time.Duration) { t.Fatalf("slept %v without a rate", d) }
	if _, err := w.Write(want); err != nil {
		t.Fatal(err)
	}
}

// WriteSoon makes a snapshot due at once, however few events passed and
// however recent the last one, once the runner applied any event.
func TestWriteSoon(t *testing.T) {
	now := time.Unix(1000, 0)
	w := &SnapshotWriter{Every: 1 << 40, Interval: time.Hour, last: 500, lastAt: now}
	if w.due(600, now) {
		t.Fatal("due 100 events and no time after the last")
	}
	w.WriteSoon()
	if !w.due(600, now) || w.due(0, now) {
		t.Fatalf("after WriteSoon: due at 600 %v, at 0 %v; want true, false", w.due(600, now), w.due(0, now))
	}
}
