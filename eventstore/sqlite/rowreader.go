package sqlite

/*
#include "sqlite_api.h"

// tl_fill copies the rows of st (column 0 the position, column 1 the
// record, column 2 the hash column) into buf as [8-byte position, little
// endian][4-byte length][record bytes], until the statement is done or the
// next row does not fit. The hash column is the stored hash as much as the
// record's copy (its last 32 bytes): when the two differ, the copy's hash
// is zeroed, so that the event reads as one whose stored hash does not
// match its contents and verification reports it. With pending set, the
// row st is on (one that did not fit before) comes first. It returns the
// rows copied, sets *used to the bytes written, *need to the size of the
// row left pending (0 if none), *last to the last copied row's position
// (unchanged if none) and *rc to SQLite's last result code.
//
// Without hashes (st selects no hash column), each record is copied
// without its two hashes (its last 64 bytes), and one too short to hold
// them as an empty record, which does not decode.
static int tl_fill(sqlite3_stmt *st, int hashes, int pending, unsigned char *buf, int cap, int *used, int *need, int64_t *last, int *rc) {
	int n = 0, off = 0;
	int r = pending ? TL_ROW : sqlite3_step(st);
	*need = 0;
	while (r == TL_ROW) {
		int64_t pos = sqlite3_column_int64(st, 0);
		const void *p = sqlite3_column_blob(st, 1);
		int32_t len = sqlite3_column_bytes(st, 1);
		if (!hashes) {
			len = len > 64 ? len - 64 : 0;
		}
		if (off + 12 + len > cap) {
			*need = 12 + len;
			break;
		}
		memcpy(buf + off, &pos, 8);
		memcpy(buf + off + 8, &len, 4);
		if (len > 0) {
			memcpy(buf + off + 12, p, len);
		}
		if (hashes && len >= 64) {
			const void *h = sqlite3_column_blob(st, 2);
			unsigned char *copy = buf + off + 12 + len - 32;
			if (sqlite3_column_bytes(st, 2) != 32 || h == NULL || memcmp(h, copy, 32) != 0) {
				memset(copy, 0, 32);
			}
		}
		off += 12 + len;
		n++;
		*last = pos;
		r = sqlite3_step(st);
	}
	*used = off;
	*rc = r;
	return n;
}
*/
import "C"

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
)

// rowReader reads event rows through SQLite's C API on a connection of its
// own, copying a whole buffer of rows per call into Go. Through
// database/sql, each row costs half a dozen cgo calls and as many
// conversions; replay reads millions of rows, and this is most of a cold
// start. A rowReader is used by one goroutine at a time (the store pools
// them).
type rowReader struct {
	db       *C.sqlite3
	byPos    *C.sqlite3_stmt // position >= ? ORDER BY position LIMIT ?
	recsPos  *C.sqlite3_stmt // byPos without the hash column
	byStream *C.sqlite3_stmt // stream = ? AND version >= ? ORDER BY version LIMIT ?
	maxPos   *C.sqlite3_stmt // MAX(position)
	buf      []byte
}

const (
	readByPositionSQL = selectColumns + `WHERE position >= ?1 ORDER BY position LIMIT ?2`
	recordsByPosSQL   = `SELECT position, record FROM events WHERE position >= ?1 ORDER BY position LIMIT ?2`
	readByStreamSQL   = selectColumns + `WHERE stream = ?1 AND version >= ?2 ORDER BY version LIMIT ?3`
)

// rowBufferSize is the copy buffer of a reader; rows larger than it grow it.
const rowBufferSize = 1 << 20

func openRowReader(path string) (*rowReader, error) {
	r := &rowReader{}
	db, err := openConn(path, C.TL_OPEN_READWRITE, "PRAGMA query_only=1", map[string]**C.sqlite3_stmt{
		readByPositionSQL:                  &r.byPos,
		recordsByPosSQL:                    &r.recsPos,
		readByStreamSQL:                    &r.byStream,
		`SELECT MAX(position) FROM events`: &r.maxPos,
	})
	if err != nil {
		return nil, err
	}
	r.db, r.buf = db, make([]byte, rowBufferSize)
	return r, nil
}

func (r *rowReader) close() {
	closeConn(r.db, r.byPos, r.recsPos, r.byStream, r.maxPos)
	*r = rowReader{}
}

// maxPosition returns the last position in the file (0 when empty).
func (r *rowReader) maxPosition() (uint64, error) {
	defer C.sqlite3_reset(r.maxPos)
	if rc := C.sqlite3_step(r.maxPos); rc != C.TL_ROW {
		return 0, sqliteErr(r.db, rc, "read head")
	}
	return uint64(C.sqlite3_column_int64(r.maxPos, 0)), nil
}

// quickCheck runs PRAGMA quick_check on a connection of its own, which
// interrupt() stops (from any goroutine). It returns the check's first
// line ("ok" for a sound file).
func quickCheck(path string, interrupt <-chan struct{}) (string, error) {
	var st *C.sqlite3_stmt
	db, err := openConn(path, C.TL_OPEN_READWRITE, "PRAGMA query_only=1", map[string]**C.sqlite3_stmt{`PRAGMA quick_check`: &st})
	if err != nil {
		return "", err
	}
	defer closeConn(db, st)
	// The watcher ends before the connection closes (defers run last
	// first): an interrupt never reaches a closed connection.
	done, watching := make(chan struct{}), make(chan struct{})
	defer func() { close(done); <-watching }()
	go func() {
		defer close(watching)
		select {
		case <-interrupt:
			C.sqlite3_interrupt(db)
		case <-done:
		}
	}()
	if rc := C.sqlite3_step(st); rc != C.TL_ROW {
		return "", sqliteErr(db, rc, "quick_check")
	}
	p, n := C.sqlite3_column_text(st, 0), C.sqlite3_column_bytes(st, 0)
	return C.GoStringN((*C.char)(unsafe.Pointer(p)), n), nil
}

// readByPosition appends to evs up to limit events from position from on.
func (r *rowReader) readByPosition(from uint64, limit int, evs []domain.Event) ([]domain.Event, error) {
	C.sqlite3_bind_int64(r.byPos, 1, C.longlong(from))
	C.sqlite3_bind_int64(r.byPos, 2, C.longlong(limit))
	return r.run(r.byPos, evs)
}

// readByStream appends to evs up to limit events of stream from version
// from on.
func (r *rowReader) readByStream(stream string, from int64, limit int, evs []domain.Event) ([]domain.Event, error) {
	C.tl_bind_text(r.byStream, 1, stream)
	C.sqlite3_bind_int64(r.byStream, 2, C.longlong(from))
	C.sqlite3_bind_int64(r.byStream, 3, C.longlong(limit))
	return r.run(r.byStream, evs)
}

// run steps st to the end, decoding every row into evs, and resets it (which
// ends its read transaction).
func (r *rowReader) run(st *C.sqlite3_stmt, evs []domain.Event) ([]domain.Event, error) {
	err := r.copyRows(st, func(b []byte, n int) error {
		var err error
		_, evs, err = decodeRows(b, n, evs)
		return err
	})
	return evs, err
}

// decodeRows decodes up to max rows of b (as tl_fill lays them out, with
// hashes) onto evs, and returns the rows left.
func decodeRows(b []byte, max int, evs []domain.Event) ([]byte, []domain.Event, error) {
	for i := 0; i < max && len(b) > 0; i++ {
		pos := binary.LittleEndian.Uint64(b)
		size := binary.LittleEndian.Uint32(b[8:])
		rec := b[12 : 12+size]
		b = b[12+size:]
		evs = append(evs, domain.Event{}) // decoded in place, not copied in
		e := &evs[len(evs)-1]
		if err := decodeRecord(rec, e); err != nil {
			return b, evs[:len(evs)-1], domain.Errorf(domain.EINTERNAL, "event log is corrupt at position %d: %v", pos, err)
		}
		e.Position = pos
	}
	return b, evs, nil
}

// decodeRowsShared is decodeRows without hashes for a replay into read
// models (ReadAllNoHashes): the events are decoded in place, their strings
// and Data pointing into b, whose rows are never written again (the copier
// does not reuse the buffers of such a read), instead of into a copy of
// each record. An event's type and actor, strings a read model may keep
// for every event and that take few values, come from kept instead, so
// that keeping one keeps no buffer in memory.
func decodeRowsShared(b []byte, max int, evs []domain.Event, kept *keptStrings) ([]byte, []domain.Event, error) {
	for i := 0; i < max && len(b) > 0; i++ {
		pos := binary.LittleEndian.Uint64(b)
		size := binary.LittleEndian.Uint32(b[8:])
		rec := b[12 : 12+size : 12+size]
		b = b[12+size:]
		evs = append(evs, domain.Event{}) // decoded in place, not copied in
		e := &evs[len(evs)-1]
		if err := decodeRecordIn(rec, e); err != nil {
			return b, evs[:len(evs)-1], domain.Errorf(domain.EINTERNAL, "event log is corrupt at position %d: %v", pos, err)
		}
		e.Type, e.Actor = kept.types.str(e.Type), kept.actors.str(e.Actor)
		e.Position = pos
	}
	return b, evs, nil
}

// keptStrings holds the types and actors of a replay's last events.
type keptStrings struct{ types, actors recentStrings }

// recentStrings returns copies of strings, the same copy for a string
// among the last few distinct ones it was asked for.
type recentStrings struct {
	s    [8]string
	next uint8
}

// str returns a string equal to v that shares no memory with it.
func (r *recentStrings) str(v string) string {
	for i := range r.s {
		if r.s[i] == v {
			return r.s[i]
		}
	}
	c := strings.Clone(v)
	r.s[r.next] = c
	r.next = (r.next + 1) % uint8(len(r.s))
	return c
}

// copyByPosition copies up to limit rows from position from on onto dst,
// undecoded (decodeRows reads them), and returns them with their number and
// the last one's position. SQLite's rows are copied straight into dst
// (grown as need be), not through the reader's buffer: a replay copies each
// row out of SQLite once. Without hashes, the records come without theirs
// (and the hash column is not read).
func (r *rowReader) copyByPosition(from uint64, limit int, dst []byte, hashes bool) (rows []byte, n int, last uint64, err error) {
	st, withHashes := r.byPos, C.int(1)
	if !hashes {
		st, withHashes = r.recsPos, 0
	}
	C.sqlite3_bind_int64(st, 1, C.longlong(from))
	C.sqlite3_bind_int64(st, 2, C.longlong(limit))
	defer C.sqlite3_reset(st)
	if cap(dst)-len(dst) < rowBufferSize/4 {
		dst = slices.Grow(dst, rowBufferSize)
	}
	pending := C.int(0)
	var lastPos C.int64_t
	for {
		var used, need, rc C.int
		spare := dst[len(dst):cap(dst)]
		k := C.tl_fill(st, withHashes, pending, (*C.uchar)(unsafe.Pointer(unsafe.SliceData(spare))), C.int(len(spare)), &used, &need, &lastPos, &rc)
		dst, n = dst[:len(dst)+int(used)], n+int(k)
		switch {
		case rc == C.TL_DONE:
			return dst, n, uint64(lastPos), nil
		case rc != C.TL_ROW:
			return dst, n, uint64(lastPos), sqliteErr(r.db, rc, "read events")
		}
		// The next row did not fit: make room for it, and for more.
		dst = slices.Grow(dst, max(int(need), cap(dst)))
		pending = 1
	}
}

// copyRows steps st to the end and hands each buffer of n copied rows to
// use, then resets st (which ends its read transaction).
func (r *rowReader) copyRows(st *C.sqlite3_stmt, use func(b []byte, n int) error) error {
	defer C.sqlite3_reset(st)
	defer func() {
		if len(r.buf) > rowBufferSize { // grown for one large row: a pooled reader does not keep it
			r.buf = make([]byte, rowBufferSize)
		}
	}()
	pending := C.int(0)
	for {
		var used, need, rc C.int
		var last C.int64_t
		n := C.tl_fill(st, 1, pending, (*C.uchar)(unsafe.Pointer(&r.buf[0])), C.int(len(r.buf)), &used, &need, &last, &rc)
		if err := use(r.buf[:used], int(n)); err != nil {
			return err
		}
		switch {
		case rc == C.TL_DONE:
			return nil
		case rc != C.TL_ROW:
			return sqliteErr(r.db, rc, "read events")
		case need > C.int(len(r.buf)):
			r.buf = make([]byte, need)
		}
		pending = 1
	}
}

// countRows copies every row from position from on without decoding any:
// the physical floor of a replay, which the replay benchmark reports its
// ratio to. It returns the number of rows.
func (r *rowReader) countRows(from uint64) (int, error) {
	C.sqlite3_bind_int64(r.byPos, 1, C.longlong(from))
	C.sqlite3_bind_int64(r.byPos, 2, -1)
	rows := 0
	err := r.copyRows(r.byPos, func(_ []byte, n int) error { rows += n; return nil })
	return rows, err
}
