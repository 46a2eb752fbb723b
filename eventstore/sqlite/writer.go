package sqlite

/*
#include "sqlite_api.h"

// tl_insert_rows inserts n rows packed in buf, each
//   int64 position | int64 version | uint32 len, stream | uint32 len, id key |
//   32 bytes hash | uint32 len, record
// (integers little endian), with st = INSERT INTO events (position, stream,
// version, id, hash, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6). It returns
// TL_DONE, or the failing step's code with *failed the row's index.
static int tl_insert_rows(sqlite3_stmt *st, const unsigned char *buf, int n, int *failed) {
	const unsigned char *p = buf;
	int rc = TL_DONE;
	for (int i = 0; i < n; i++) {
		int64_t pos, ver;
		uint32_t ls, li, lr;
		memcpy(&pos, p, 8);
		memcpy(&ver, p + 8, 8);
		p += 16;
		memcpy(&ls, p, 4);
		const char *stream = (const char *)p + 4;
		p += 4 + ls;
		memcpy(&li, p, 4);
		const void *id = p + 4;
		p += 4 + li;
		const void *hash = p;
		p += 32;
		memcpy(&lr, p, 4);
		const void *rec = p + 4;
		p += 4 + lr;
		sqlite3_bind_int64(st, 1, pos);
		sqlite3_bind_text(st, 2, stream, (int)ls, TL_STATIC);
		sqlite3_bind_int64(st, 3, ver);
		sqlite3_bind_blob(st, 4, id, (int)li, TL_STATIC);
		sqlite3_bind_blob(st, 5, hash, 32, TL_STATIC);
		sqlite3_bind_blob(st, 6, rec, (int)lr, TL_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != TL_DONE) {
			*failed = i;
			break;
		}
	}
	// The bindings point into Go memory valid only during this call.
	sqlite3_clear_bindings(st);
	return rc;
}

// tl_insert_tree inserts n rows of the Merkle tree packed in buf, each
//   int64 record | int64 position | uint32 len, hashes
// (integers little endian), with st = INSERT INTO tree (record, position,
// hashes) VALUES (?1, ?2, ?3). It returns TL_DONE or the failing step's
// code.
static int tl_insert_tree(sqlite3_stmt *st, const unsigned char *buf, int n) {
	const unsigned char *p = buf;
	int rc = TL_DONE;
	for (int i = 0; i < n; i++) {
		int64_t rec, pos;
		uint32_t lh;
		memcpy(&rec, p, 8);
		memcpy(&pos, p + 8, 8);
		memcpy(&lh, p + 16, 4);
		const void *hashes = p + 20;
		p += 20 + lh;
		sqlite3_bind_int64(st, 1, rec);
		sqlite3_bind_int64(st, 2, pos);
		sqlite3_bind_blob(st, 3, hashes, (int)lh, TL_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != TL_DONE) {
			break;
		}
	}
	sqlite3_clear_bindings(st);
	return rc;
}
*/
import "C"

import (
	"encoding/binary"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// writerConn is the store's one write connection, driven through SQLite's
// C API: the writer goroutine inserts a whole batch of rows with one cgo
// call, binding each row's six values in C, where database/sql made one
// cgo call per value and converted every argument twice. Only the writer
// goroutine uses it (Open and Close aside).
type writerConn struct {
	db                      *C.sqlite3
	begin, commit, rollback *C.sqlite3_stmt
	maxPos, head, id        *C.sqlite3_stmt
	insert                  *C.sqlite3_stmt
	buf                     []byte // packed rows (tl_insert_rows)
	// The Merkle tree's statements (tree.go), prepared at their first
	// use: a file set up without the tree table never needs them.
	treeInsert, treeRow, treeEnd *C.sqlite3_stmt
	treeBuf                      []byte // packed tree rows (tl_insert_tree)
	checkpointPages              int    // the checkpoint pages in force (Store.applyCheckpointPages)
	walFrames                    *C.int // the WAL's frames after the last commit, in C memory (checkpoint.go)
	wokeAt                       int    // the WAL's frames when the checkpointer was last woken (checkpoint.go)
	// The tree's guard's statements (treeguard.go), prepared at their
	// first use.
	keep, cut, abandon, eventAt *C.sqlite3_stmt
}

// writerPragmas set the connection up: WAL, synchronous=NORMAL (the syncer
// makes each commit durable, durable.go), a page cache large enough for the
// hot pages of the two indexes each append probes (64 MiB at most,
// allocated as used).
const writerPragmas = `PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536; PRAGMA foreign_keys=OFF;`

func openWriter(path string) (*writerConn, error) {
	return openWriterWith(path, writerPragmas+schema)
}

// openWriterWith opens a writer connection on a database set up by setup
// (pragmas and schema; it must create the events table).
func openWriterWith(path, setup string) (*writerConn, error) {
	w := &writerConn{checkpointPages: DefaultCheckpointPages}
	db, err := openConn(path, C.TL_OPEN_READWRITE|C.TL_OPEN_CREATE, setup, map[string]**C.sqlite3_stmt{
		`BEGIN IMMEDIATE`:                  &w.begin,
		`COMMIT`:                           &w.commit,
		`ROLLBACK`:                         &w.rollback,
		`SELECT MAX(position) FROM events`: &w.maxPos,
		`SELECT version, record FROM events WHERE stream = ?1 ORDER BY version DESC LIMIT 1`:               &w.head,
		`SELECT stream, version, position FROM events WHERE id = ?1`:                                       &w.id,
		`INSERT INTO events (position, stream, version, id, hash, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`: &w.insert,
	})
	if err != nil {
		return nil, err
	}
	w.db = db
	return w, nil
}

// step runs a prepared statement that returns no rows.
func (w *writerConn) step(st *C.sqlite3_stmt, what string) error {
	defer C.sqlite3_reset(st)
	if rc := C.sqlite3_step(st); rc != C.TL_DONE {
		return sqliteErr(w.db, rc, what)
	}
	return nil
}

// Begin starts a write transaction holding SQLite's write lock (waiting up
// to the busy timeout for another process that holds it).
func (w *writerConn) Begin() error { return w.step(w.begin, "begin") }

// Commit commits the transaction (durable only once the WAL is synced).
func (w *writerConn) Commit() error { return w.step(w.commit, "commit") }

// Rollback abandons the transaction.
func (w *writerConn) Rollback() { _ = w.step(w.rollback, "rollback") }

// MaxPosition returns the last position in the file (0 when empty).
func (w *writerConn) MaxPosition() (uint64, error) {
	defer C.sqlite3_reset(w.maxPos)
	if rc := C.sqlite3_step(w.maxPos); rc != C.TL_ROW {
		return 0, sqliteErr(w.db, rc, "read head")
	}
	return uint64(C.sqlite3_column_int64(w.maxPos, 0)), nil
}

// StreamHead returns the last version, hash and time of stream (version -1
// when the stream has no events). The hash is recomputed from the stored
// event (audit.TipOf): neither the hash column nor the record's copy of
// the hash is trusted, so a damaged one never breaks the chain of the next
// event appended. A record that does not decode, or whose version is not
// the row's, is an EINTERNAL error: nothing is chained onto it.
func (w *writerConn) StreamHead(stream string) (streamHead, error) {
	defer C.sqlite3_reset(w.head)
	C.tl_bind_text(w.head, 1, stream)
	head := audit.NoStreamTip
	switch rc := C.sqlite3_step(w.head); rc {
	case C.TL_DONE:
		return head, nil
	case C.TL_ROW:
		version := int64(C.sqlite3_column_int64(w.head, 0))
		var rec []byte
		if p, n := C.sqlite3_column_blob(w.head, 1), C.sqlite3_column_bytes(w.head, 1); p != nil && n > 0 {
			rec = unsafe.Slice((*byte)(p), int(n))
		}
		var e domain.Event
		if err := decodeRecord(rec, &e); err != nil || e.Version != version || e.Stream != stream {
			return head, domain.Errorf(domain.EINTERNAL, "event log is corrupt: the last event of stream %s (version %d) cannot be read back", stream, version)
		}
		return audit.TipOf(&e), nil
	default:
		return head, sqliteErr(w.db, rc, "read stream head")
	}
}

// LookupID finds the event stored under id key (see idKey).
func (w *writerConn) LookupID(key []byte) (stream string, version int64, position uint64, ok bool, err error) {
	defer C.sqlite3_reset(w.id)
	C.tl_bind_blob(w.id, 1, unsafe.Pointer(unsafe.SliceData(key)), C.int(len(key)))
	switch rc := C.sqlite3_step(w.id); rc {
	case C.TL_DONE:
		return "", 0, 0, false, nil
	case C.TL_ROW:
		p, n := C.sqlite3_column_text(w.id, 0), C.sqlite3_column_bytes(w.id, 0)
		stream = C.GoStringN((*C.char)(unsafe.Pointer(p)), n)
		return stream, int64(C.sqlite3_column_int64(w.id, 1)), uint64(C.sqlite3_column_int64(w.id, 2)), true, nil
	default:
		return "", 0, 0, false, sqliteErr(w.db, rc, "look an event id up")
	}
}

// Insert writes events, records[i] being the record of events[i], in the
// open transaction, with one cgo call.
func (w *writerConn) Insert(events []domain.Event, records [][]byte) error {
	if len(events) == 0 {
		return nil
	}
	// Sized once: a batch of an import is tens of megabytes, which
	// append's doubling would copy and fault in twice over.
	need := 0
	for i := range events {
		need += 16 + 4 + len(events[i].Stream) + 4 + max(16, len(events[i].ID)) + 32 + 4 + len(records[i])
	}
	if cap(w.buf) < need {
		w.buf = make([]byte, 0, need)
	}
	b := w.buf[:0]
	for i := range events {
		e := &events[i]
		b = binary.LittleEndian.AppendUint64(b, e.Position)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.Version))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Stream)))
		b = append(b, e.Stream...)
		b = appendIDKey(b, e.ID)
		b = append(b, e.Hash[:]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(records[i])))
		b = append(b, records[i]...)
	}
	w.buf = b
	var failed C.int
	if rc := C.tl_insert_rows(w.insert, (*C.uchar)(unsafe.Pointer(&b[0])), C.int(len(events)), &failed); rc != C.TL_DONE {
		return sqliteErr(w.db, rc, "insert events")
	}
	return nil
}

// InsertTree writes n packed rows of the Merkle tree (see tl_insert_tree)
// in the open transaction, with one cgo call.
func (w *writerConn) InsertTree(rows []byte, n int) error {
	if n == 0 {
		return nil
	}
	if err := prepareOnce(w.db, &w.treeInsert, `INSERT INTO tree (record, position, hashes) VALUES (?1, ?2, ?3)`); err != nil {
		return err
	}
	if rc := C.tl_insert_tree(w.treeInsert, (*C.uchar)(unsafe.Pointer(&rows[0])), C.int(n)); rc != C.TL_DONE {
		return sqliteErr(w.db, rc, "insert tree hashes")
	}
	return nil
}

// TreeEnd returns the number of records in the tree table (one more than
// its last record's index) and the last record's position (0, 0 when it
// is empty).
func (w *writerConn) TreeEnd() (size int64, lastPos uint64, err error) {
	if err := prepareOnce(w.db, &w.treeEnd, treeEndSQL); err != nil {
		return 0, 0, err
	}
	return treeEnd(w.db, w.treeEnd)
}

// TreeHashes returns the stored hashes of record (nil when the table has
// no such record), copied.
func (w *writerConn) TreeHashes(record int64) ([]byte, error) {
	if err := prepareOnce(w.db, &w.treeRow, treeRowSQL); err != nil {
		return nil, err
	}
	_, hashes, err := treeRow(w.db, w.treeRow, record, nil)
	return hashes, err
}

func (w *writerConn) close() {
	if w == nil {
		return
	}
	closeConn(w.db, w.begin, w.commit, w.rollback, w.maxPos, w.head, w.id, w.insert, w.treeInsert, w.treeRow, w.treeEnd, w.keep, w.cut, w.abandon, w.eventAt)
	C.free(unsafe.Pointer(w.walFrames)) // after the connection that wrote it
	*w = writerConn{}
}
