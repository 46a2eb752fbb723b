// The part of SQLite's C API that the store calls directly (rowreader.go,
// writer.go). The library itself is the one github.com/mattn/go-sqlite3
// links into the binary (its bundled amalgamation, or the system library
// with the libsqlite3 tag); these declarations match its sqlite3.h.
#ifndef TRADELEDGER_SQLITE_API_H
#define TRADELEDGER_SQLITE_API_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs);
int sqlite3_close_v2(sqlite3 *db);
int sqlite3_busy_timeout(sqlite3 *db, int ms);
void sqlite3_interrupt(sqlite3 *db);
int sqlite3_exec(sqlite3 *db, const char *sql, void *callback, void *arg, char **errmsg);
void sqlite3_free(void *p);
const char *sqlite3_errmsg(sqlite3 *db);
int sqlite3_extended_errcode(sqlite3 *db);
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt, const char **tail);
int sqlite3_finalize(sqlite3_stmt *stmt);
int sqlite3_reset(sqlite3_stmt *stmt);
int sqlite3_clear_bindings(sqlite3_stmt *stmt);
int sqlite3_bind_int64(sqlite3_stmt *stmt, int i, long long v);
int sqlite3_bind_text(sqlite3_stmt *stmt, int i, const char *v, int n, void (*destructor)(void *));
int sqlite3_bind_blob(sqlite3_stmt *stmt, int i, const void *v, int n, void (*destructor)(void *));
int sqlite3_step(sqlite3_stmt *stmt);
long long sqlite3_column_int64(sqlite3_stmt *stmt, int col);
const void *sqlite3_column_blob(sqlite3_stmt *stmt, int col);
const unsigned char *sqlite3_column_text(sqlite3_stmt *stmt, int col);
int sqlite3_column_bytes(sqlite3_stmt *stmt, int col);
void *sqlite3_wal_hook(sqlite3 *db, int (*hook)(void *, sqlite3 *, const char *, int), void *arg);
int sqlite3_wal_checkpoint_v2(sqlite3 *db, const char *name, int mode, int *log, int *copied);

#define TL_OK 0
#define TL_CHECKPOINT_PASSIVE 0
#define TL_CONSTRAINT 19
#define TL_ROW 100
#define TL_DONE 101
#define TL_OPEN_READWRITE 0x00000002
#define TL_OPEN_CREATE 0x00000004
#define TL_OPEN_NOMUTEX 0x00008000
#define TL_STATIC ((void (*)(void *))0)
#define TL_TRANSIENT ((void (*)(void *))-1)

// tl_bind_text binds a Go string's bytes (copied by SQLite). For cgo
// preambles only: _GoString_ is cgo's.
static inline int tl_bind_text(sqlite3_stmt *st, int i, _GoString_ s) {
	return sqlite3_bind_text(st, i, _GoStringPtr(s), (int)_GoStringLen(s), TL_TRANSIENT);
}

// tl_bind_blob binds n bytes at p (copied by SQLite, so p may be Go memory
// that moves or is freed once the call returns).
static inline int tl_bind_blob(sqlite3_stmt *st, int i, const void *p, int n) {
	return sqlite3_bind_blob(st, i, p, n, TL_TRANSIENT);
}

#endif
