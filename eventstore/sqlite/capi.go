package sqlite

/*
#include "sqlite_api.h"
*/
import "C"

import (
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// The plumbing shared by the two connections the store drives through
// SQLite's C API (writer.go, rowreader.go).

// busyTimeoutMillis is how long a connection waits for a lock another
// connection or process holds.
const busyTimeoutMillis = 10000

// openConn opens the database at path with flags (TL_OPEN_NOMUTEX added:
// each connection is used by one goroutine at a time), runs setup
// (statements returning no rows), and prepares each statement of prepare
// into its pointer. On failure it closes what it opened; finalize the
// statements and close the connection with closeConn.
func openConn(path string, flags C.int, setup string, prepare map[string]**C.sqlite3_stmt) (*C.sqlite3, error) {
	var db *C.sqlite3
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if rc := C.sqlite3_open_v2(cpath, &db, flags|C.TL_OPEN_NOMUTEX, nil); rc != C.TL_OK {
		err := sqliteErr(db, rc, "open")
		C.sqlite3_close_v2(db) // NULL or a handle that holds only the error
		return nil, err
	}
	C.sqlite3_busy_timeout(db, busyTimeoutMillis)
	fail := func(err error) (*C.sqlite3, error) {
		for _, st := range prepare {
			if *st != nil {
				C.sqlite3_finalize(*st)
				*st = nil
			}
		}
		C.sqlite3_close_v2(db)
		return nil, err
	}
	if setup != "" {
		if err := execConn(db, setup); err != nil {
			return fail(err)
		}
	}
	for sql, st := range prepare {
		csql := C.CString(sql)
		rc := C.sqlite3_prepare_v2(db, csql, -1, st, nil)
		C.free(unsafe.Pointer(csql))
		if rc != C.TL_OK {
			return fail(sqliteErr(db, rc, "prepare"))
		}
	}
	return db, nil
}

// prepareOnce prepares sql into *st unless it is prepared already.
func prepareOnce(db *C.sqlite3, st **C.sqlite3_stmt, sql string) error {
	if *st != nil {
		return nil
	}
	csql := C.CString(sql)
	defer C.free(unsafe.Pointer(csql))
	// Prepared into C memory: *st may sit in a struct holding Go
	// pointers, which cgo must not be handed.
	out := (**C.sqlite3_stmt)(C.malloc(C.size_t(unsafe.Sizeof(*st))))
	defer C.free(unsafe.Pointer(out))
	if rc := C.sqlite3_prepare_v2(db, csql, -1, out, nil); rc != C.TL_OK {
		return sqliteErr(db, rc, "prepare")
	}
	*st = *out
	return nil
}

// execConn runs one or more statements that return no rows.
func execConn(db *C.sqlite3, sql string) error {
	csql := C.CString(sql)
	defer C.free(unsafe.Pointer(csql))
	if rc := C.sqlite3_exec(db, csql, nil, nil, nil); rc != C.TL_OK {
		return sqliteErr(db, rc, "exec")
	}
	return nil
}

// closeConn finalizes stmts (nil ones skipped) and closes db (if not nil).
func closeConn(db *C.sqlite3, stmts ...*C.sqlite3_stmt) {
	for _, st := range stmts {
		if st != nil {
			C.sqlite3_finalize(st)
		}
	}
	if db != nil {
		C.sqlite3_close_v2(db)
	}
}

// sqliteError is a failure reported by SQLite's C API. It unwraps to the
// go-sqlite3 Error of the same code, so that IsCorrupt and constraint
// checks treat every path to the file alike.
type sqliteError struct {
	what, msg string
	code      sqlite3.Error
}

func (e *sqliteError) Error() string { return e.what + ": " + e.msg }
func (e *sqliteError) Unwrap() error { return e.code }

// sqliteErr describes rc, returned by a call on db (nil when opening failed
// for lack of memory).
func sqliteErr(db *C.sqlite3, rc C.int, what string) error {
	e := &sqliteError{what: what, msg: "out of memory", code: sqlite3.Error{Code: sqlite3.ErrNo(rc & 0xff), ExtendedCode: sqlite3.ErrNoExtended(rc)}}
	if db != nil {
		e.msg = C.GoString(C.sqlite3_errmsg(db))
		e.code.ExtendedCode = sqlite3.ErrNoExtended(C.sqlite3_extended_errcode(db))
	}
	return e
}
