package sqlite

import (
	"fmt"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// RawScan reads every row of the file at path through the store's row
// reader without decoding any: the reference of BenchmarkReplay.
func RawScan(path string) (int, error) {
	r, err := openRowReader(path)
	if err != nil {
		return 0, err
	}
	defer r.close()
	return r.countRows(0)
}

// RawInsertC writes evs (positions 1…, each its own stream) into a bare
// events table (no index) of a new file at path, through the C API with
// synchronous=FULL, in transactions of batch rows: the physical floor of
// BenchmarkAppend. Records are the events' own, hashes zero. It returns the
// time the inserts took (rows are built before).
func RawInsertC(path string, evs []domain.Event, batch int) (time.Duration, error) {
	w, err := openWriterWith(path, `PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE events (position INTEGER PRIMARY KEY, stream TEXT, version INTEGER, id BLOB, hash BLOB, record BLOB);`)
	if err != nil {
		return 0, err
	}
	defer w.close()
	rows := make([]domain.Event, len(evs))
	records := make([][]byte, len(evs))
	for i := range evs {
		rows[i] = evs[i]
		rows[i].Position, rows[i].Stream = uint64(i+1), fmt.Sprintf("order-%d", i)
		records[i] = appendRecord(nil, &rows[i])
	}
	start := time.Now()
	for i := 0; i < len(rows); i += batch {
		j := min(i+batch, len(rows))
		if err := w.Begin(); err != nil {
			return 0, err
		}
		if err := w.Insert(rows[i:j], records[i:j]); err != nil {
			return 0, err
		}
		if err := w.Commit(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// RawIndexed is BenchmarkAppend's reference: a file with the store's own
// schema (the same table and the same two unique indexes) and the writer's
// own pragmas, written through the writer's C-level insert
// (tl_insert_rows), each commit made durable as the store makes it (an
// fdatasync of the WAL) before the next transaction begins. Its rows are
// sealed (numbered, chained, hashed, encoded) as the store seals them,
// before the clock starts: byte for byte the rows an append writes. What it
// leaves out is the store's work per append: checks, hashing, the
// stream-head and id bookkeeping, the handover between goroutines. Nor does
// it overlap a sync with the next commit, as the store does.
type RawIndexed struct {
	w      *writerConn
	wal    *walFile
	n      int // events written so far
	stream func(i int) string
}

// OpenRawIndexed creates the reference's file at path; the i-th event
// written (from 0) becomes the first event of stream stream(i), at
// position i+1.
func OpenRawIndexed(path string, stream func(i int) string) (*RawIndexed, error) {
	w, err := openWriter(path)
	if err != nil {
		return nil, err
	}
	wal, err := openWAL(path)
	if err != nil {
		w.close()
		return nil, err
	}
	return &RawIndexed{w: w, wal: wal, stream: stream}, nil
}

// RawRows are events sealed for RawIndexed.Write.
type RawRows struct {
	rows    []domain.Event
	records [][]byte
}

// Seal seals evs as the next events written, as the store seals them.
func (r *RawIndexed) Seal(evs []domain.Event) RawRows {
	rows := make([]domain.Event, len(evs))
	records := make([][]byte, len(evs))
	for i := range evs {
		req := &appendRequest{stream: r.stream(r.n + i), events: []domain.Event{evs[i]}}
		req.seal(audit.NoStreamTip)
		rows[i], records[i] = req.events[0], req.records[0]
		rows[i].Position = uint64(r.n + i + 1)
	}
	r.n += len(evs)
	return RawRows{rows, records}
}

// Write inserts sealed rows, in order, in durable transactions of batch
// rows, and returns the time the inserts, commits and syncs took.
func (r *RawIndexed) Write(sealed RawRows, batch int) (time.Duration, error) {
	rows, records := sealed.rows, sealed.records
	start := time.Now()
	for i := 0; i < len(rows); i += batch {
		j := min(i+batch, len(rows))
		if err := r.w.Begin(); err != nil {
			return 0, err
		}
		if err := r.w.Insert(rows[i:j], records[i:j]); err != nil {
			r.w.Rollback()
			return 0, err
		}
		if err := r.w.Commit(); err != nil {
			return 0, err
		}
		if err := r.wal.sync(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// Close closes the reference's file.
func (r *RawIndexed) Close() {
	r.wal.close()
	r.w.close()
}

// ActiveAppends is how many Appends the writer counts as under way
// (Store.active).
func (s *Store) ActiveAppends() int64 { return s.active.Load() }

// NewStoreWithoutTree returns a Store that keeps no Merkle tree, as a
// store of an earlier version: the baseline of BenchmarkAppendTree, and
// another process's appends the tree does not cover.
func NewStoreWithoutTree(path string) *Store {
	s := NewStore(path)
	s.noTree = true
	return s
}

// CheckpointCounts returns how many checkpoints ran beside the writer
// (checkpoint.go) and on the writer's own connection.
func (s *Store) CheckpointCounts() (background, writer int64) {
	return s.checkpoints.background.Load(), s.checkpoints.writer.Load()
}
