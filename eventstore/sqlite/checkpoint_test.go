package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// TestCheckpointsOffTheWriter: once appends grew the WAL by
// checkpointPages, the checkpointer copies it into the database file while
// the store stays open, and the writer's next transaction starts the WAL
// over; the store reads everything back, then and after a reopen.
func TestCheckpointsOffTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := NewStore(path)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkpoints := make(chan error, 16)
	s.ckpt.after = func(err error) { checkpoints <- err }

	// Events of about a page each, one per append, until the writer asks
	// for a checkpoint (asked is the writer's: read after its append
	// returned). Nothing is appended while the checkpoint runs, so it
	// copies the whole WAL.
	ctx := context.Background()
	payload := []byte(fmt.Sprintf(`{"note":%q}`, strings.Repeat("x", 3500)))
	appended := 0
	for s.ckpt.asked == 0 {
		if appended > 2*checkpointPages {
			t.Fatalf("no checkpoint asked for after %d appends of a page", appended)
		}
		if _, err := s.Append(ctx, fmt.Sprintf("note-%d", appended), domain.NoStream, domain.Event{ID: fmt.Sprint("e-", appended), Type: "Noted", Data: payload}); err != nil {
			t.Fatal(err)
		}
		appended++
	}
	if err := <-checkpoints; err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < int64(appended*len(payload)) {
		t.Fatalf("the database file has %d bytes after a checkpoint of %d events of %d bytes", st.Size(), appended, len(payload))
	}
	// The checkpoint copied the whole WAL: the next transaction starts it
	// over, and the WAL then holds that transaction's pages only.
	if _, err := s.Append(ctx, "note-last", domain.NoStream, domain.Event{ID: "e-last", Type: "Noted", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	appended++
	if pages := int(*s.ckpt.walPages); pages > 10 {
		t.Fatalf("the WAL holds %d pages after the checkpoint and one small append: it did not start over", pages)
	}
	count := func(s *Store) int {
		it := s.ReadAll(ctx, 0, 0)
		defer it.Close()
		n := 0
		for it.Next() {
			n++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(s); n != appended {
		t.Fatalf("read %d events, want %d", n, appended)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = NewStore(path)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if n := count(s); n != appended {
		t.Fatalf("after a reopen: read %d events, want %d", n, appended)
	}
}

// TestWriterCheckpointsWhenTheCheckpointerLags: while the checkpointer is
// held up, the WAL grows to writerCheckpointPages, and then the writer
// checkpoints it itself, so that it starts over.
func TestWriterCheckpointsWhenTheCheckpointerLags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := NewStore(path)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	s.ckpt.before = func() { <-release }
	defer close(release) // before Close, which waits for the checkpointer

	ctx := context.Background()
	payload := []byte(fmt.Sprintf(`{"note":%q}`, strings.Repeat("x", 3500)))
	largest, appended := 0, 0
	for {
		batch := make([]domain.StreamAppend, 500)
		for i := range batch {
			batch[i] = domain.StreamAppend{Stream: fmt.Sprint("note-", appended), Expected: domain.NoStream,
				Events: []domain.Event{{ID: fmt.Sprint("e-", appended), Type: "Noted", Data: payload}}}
			appended++
		}
		if _, err := s.AppendBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		pages := int(*s.ckpt.walPages) // the writer's: read after its answer
		if pages < largest {
			break // started over
		}
		largest = pages
		if appended > 3*writerCheckpointPages {
			t.Fatalf("the WAL did not start over after %d appends of a page (%d pages)", appended, pages)
		}
	}
	if largest < writerCheckpointPages {
		t.Fatalf("the WAL started over at %d pages, with the checkpointer held up: want the writer's checkpoint at %d", largest, writerCheckpointPages)
	}
}
