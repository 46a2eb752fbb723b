package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

func openStore(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// storeOfEvents opens a new store, closed when t ends, holding n events
// of type E in stream s.
func storeOfEvents(t *testing.T, n int) *sqlite.Store {
	t.Helper()
	s := sqlitetest.Open(t)
	for i := 0; i < n; i++ {
		if _, err := s.Append(context.Background(), "s", domain.Any, storetest.Event("E", i)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) domain.EventStore {
		return openStore(t, filepath.Join(t.TempDir(), "events.db"))
	})
}

// An operator command (another process) may append to the file while the
// service runs: both stay consistent and the service's subscribers see it.
func TestTwoWritersOnOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	service, command := openStore(t, path), openStore(t, path)
	defer service.Close()
	defer command.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub := service.Subscribe(ctx, 1)
	defer sub.Close()
	mustAppend := func(s *sqlite.Store, exp domain.ExpectedVersion) domain.AppendResult {
		t.Helper()
		r, err := s.Append(ctx, "config", exp, storetest.Event("Changed", 0))
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		return r
	}
	mustAppend(service, domain.NoStream)
	mustAppend(command, domain.ExpectedVersion(0)) // the command sees the service's event
	r := mustAppend(service, domain.ExpectedVersion(1))
	if r.LastVersion != 2 || r.LastPosition != 3 {
		t.Fatalf("third append = %+v, want version 2 at position 3", r)
	}
	for want := uint64(1); want <= 3; want++ {
		if !sub.Next() {
			t.Fatalf("subscription ended: %v", sub.Err())
		}
		if got := sub.Event().Position; got != want {
			t.Fatalf("subscription position = %d, want %d", got, want)
		}
	}
	verifyChains(t, storetest.ReadAll(t, service.ReadAll(ctx, 0, 0)))
}

// After a reopen the writer knows no stream heads: NoStream on an existing
// stream must still conflict, and a retry must still find its events.
func TestNoStreamAfterReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	ctx := context.Background()
	s := openStore(t, path)
	e := storetest.Event("Created", 1)
	first, err := s.Append(ctx, "order-1", domain.NoStream, e)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, path)
	defer s.Close()
	if _, err := s.Append(ctx, "order-1", domain.NoStream, storetest.Event("Created", 2)); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("NoStream on an existing stream after reopen: err = %v, want ECONFLICT", err)
	}
	again, err := s.Append(ctx, "order-1", domain.NoStream, e)
	if err != nil || again != first {
		t.Fatalf("retry after reopen = %+v, %v; want %+v", again, err, first)
	}
	if n := len(storetest.ReadAll(t, s.ReadStream(ctx, "order-1", 0, 0))); n != 1 {
		t.Fatalf("stream has %d events, want 1", n)
	}
}

// NextBatch and Next share one position: mixed, with a max and a batch
// size smaller than the log, they deliver every event once, in order.
func TestNextBatchMixedWithNext(t *testing.T) {
	s := storeOfEvents(t, 10)
	ctx := context.Background()
	s.ReadBatchSize = 4
	it := s.ReadAll(ctx, 2, 7).(domain.BatchIterator) // positions 2…8
	defer it.Close()
	var got []uint64
	batch := it.NextBatch(nil, 3)
	for _, e := range batch {
		got = append(got, e.Position)
	}
	if !it.Next() {
		t.Fatalf("Next after NextBatch: %v", it.Err())
	}
	got = append(got, it.Event().Position)
	for {
		n := len(batch)
		if batch = it.NextBatch(batch, 10); len(batch) == n {
			break
		}
		for _, e := range batch[n:] {
			got = append(got, e.Position)
		}
	}
	if it.Next() || it.Err() != nil {
		t.Fatalf("iterator not done after its max: err %v", it.Err())
	}
	want := []uint64{2, 3, 4, 5, 6, 7, 8}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("positions %v, want %v", got, want)
	}
}

// A data directory whose path holds characters that mean something in a
// URI ('#', '?', '%', a space) is used as it is: every connection opens the
// same file, and nothing appears next to it.
func TestPathWithURICharacters(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "data #1?x=%20 y")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, filepath.Join(dir, "events.db"))
	ctx := context.Background()
	if _, err := s.Append(ctx, "s", domain.Any, storetest.Event("E", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	if evs := storetest.ReadAll(t, s.ReadAll(ctx, 0, 0)); len(evs) != 1 {
		t.Fatalf("read %d events back, want 1", len(evs))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("files beside the data dir: %q", names)
	}
}

// A whole-log ReadAll copies rows ahead in a goroutine of its own: mixed
// Next and NextBatch calls across many small batches still deliver every
// event once, in order; and Close mid-way stops the copier.
func TestReadAllPrefetchMixedAndEarlyClose(t *testing.T) {
	s := storeOfEvents(t, 30)
	ctx := context.Background()
	s.ReadBatchSize = 4
	it := s.ReadAll(ctx, 2, 0).(domain.BatchIterator)
	var got []uint64
	for round := 0; ; round++ {
		if round%2 == 0 {
			if !it.Next() {
				break
			}
			got = append(got, it.Event().Position)
			continue
		}
		batch := it.NextBatch(nil, 3)
		if len(batch) == 0 {
			break
		}
		for _, e := range batch {
			got = append(got, e.Position)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if len(got) != 29 {
		t.Fatalf("read %d events, want 29: %v", len(got), got)
	}
	for i, p := range got {
		if p != uint64(i+2) {
			t.Fatalf("event %d at position %d, want %d: %v", i, p, i+2, got)
		}
	}

	early := s.ReadAll(ctx, 0, 0)
	for i := 0; i < 5 && early.Next(); i++ {
	}
	if err := early.Close(); err != nil { // returns once the copier has stopped
		t.Fatal(err)
	}
}

// An event larger than a reader's copy buffer is read whole, alone and
// among small ones.
func TestLargeEventReadBack(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "events.db"))
	defer s.Close()
	ctx := context.Background()
	big := domain.NewEvent(domain.SystemClock{}, "Big", map[string]string{"blob": strings.Repeat("x", 3<<20)})
	for i, e := range []domain.Event{storetest.Event("Small", 1), big, storetest.Event("Small", 2)} {
		if _, err := s.Append(ctx, "s", domain.Any, e); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	evs := storetest.ReadAll(t, s.ReadAll(ctx, 0, 0))
	if len(evs) != 3 || evs[1].ID != big.ID || !bytes.Equal(evs[1].Data, big.Data) {
		t.Fatalf("read back %d events; the large one intact: %v", len(evs), len(evs) == 3 && bytes.Equal(evs[1].Data, big.Data))
	}
	it := s.ReadStream(ctx, "s", 1, 1)
	defer it.Close()
	if !it.Next() || it.Event().ID != big.ID {
		t.Fatalf("ReadStream of the large event: %v", it.Err())
	}
}

// ReadAllNoHashes gives exactly ReadAll's events but for their zero
// hashes, over many small batches, an event larger than a reader's copy
// buffer and a start past position 1; and it refuses a damaged record as
// ReadAll does.
func TestReadAllNoHashes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s := openStore(t, path)
	ctx := context.Background()
	big := domain.NewEvent(domain.SystemClock{}, "Big", map[string]string{"blob": strings.Repeat("x", 3<<20)})
	for i := 0; i < 40; i++ {
		e := storetest.Event("Small", i)
		if i == 17 {
			e = big
		}
		if _, err := s.Append(ctx, fmt.Sprintf("s-%d", i%3), domain.Any, e); err != nil {
			t.Fatal(err)
		}
	}
	s.ReadBatchSize = 5
	for _, from := range []uint64{0, 1, 7, 40, 41} {
		want := storetest.ReadAll(t, s.ReadAll(ctx, from, 0))
		got := storetest.ReadAll(t, s.ReadAllNoHashes(ctx, from))
		if len(got) != len(want) {
			t.Fatalf("from %d: %d events, want %d", from, len(got), len(want))
		}
		for i := range want {
			if want[i].Hash == (domain.Hash{}) {
				t.Fatalf("from %d: ReadAll's event %d has no hash", from, i)
			}
			want[i].Hash, want[i].PrevHash = domain.Hash{}, domain.Hash{}
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("from %d, event %d: %+v, want %+v", from, i, got[i], want[i])
			}
			// Types and actors are copies of their own, one per value,
			// not strings in the records (which a batch shares).
			if i > 0 && got[i].Type == got[i-1].Type && unsafe.StringData(got[i].Type) != unsafe.StringData(got[i-1].Type) {
				t.Fatalf("from %d, events %d and %d: type %q read twice", from, i-1, i, got[i].Type)
			}
		}
	}
	s.Close()

	for _, damaged := range []string{`x'01'`, `x'02' || zeroblob(100)`, `x'01' || zeroblob(64)`, `x'01' || zeroblob(70)`} {
		copyPath := filepath.Join(t.TempDir(), "events.db")
		copyFile(t, path, copyPath)
		db, err := sql.Open("sqlite3", copyPath)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE events SET record = ` + damaged + ` WHERE position = 9`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		s := openStore(t, copyPath)
		read := func(it domain.EventIterator) (int, error) {
			defer it.Close()
			n := 0
			for it.Next() {
				n++
			}
			return n, it.Err()
		}
		n, err := read(s.ReadAll(ctx, 0, 0))
		nh, errh := read(s.ReadAllNoHashes(ctx, 0))
		if domain.ErrorCode(err) != domain.EINTERNAL || domain.ErrorCode(errh) != domain.EINTERNAL || n != nh || n > 8 {
			t.Errorf("record %s: ReadAll read %d events, then %v; ReadAllNoHashes %d, then %v; want the same, and the log is corrupt", damaged, n, err, nh, errh)
		}
		s.Close()
	}
}

// TestSetCheckpointPages: with SetCheckpointPages(100) the WAL stays
// within 2 × 100 pages and a commit's (a commit past 100 starts a
// checkpoint beside the writer, past 200 the writer's own, and the WAL
// starts over); with SetCheckpointPages(4096) the same 1,600 pages of
// commits all stay in the WAL. Closing the store removes the WAL file
// either way.
func TestSetCheckpointPages(t *testing.T) {
	const frame = 4096 + 24 // a WAL frame: a page and its header
	walHighWater := func(pages int) int64 {
		path := filepath.Join(t.TempDir(), "events.db")
		s := openStore(t, path)
		s.SetCheckpointPages(pages)
		most := appendBigCommits(t, s, path, 32, 50, 4000)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
			t.Errorf("checkpoint pages %d: the WAL file is still there after Close (%d bytes)", pages, st.Size())
		}
		return most / frame
	}
	// A commit of 50 such events is about 64 pages.
	if got := walHighWater(100); got > 2*100+80 {
		t.Errorf("SetCheckpointPages(100): the WAL grew to %d pages, want at most 280", got)
	}
	if got := walHighWater(4096); got < 1500 {
		t.Errorf("SetCheckpointPages(4096): the WAL grew to %d pages only, want every commit's (over 1,500)", got)
	}
}
