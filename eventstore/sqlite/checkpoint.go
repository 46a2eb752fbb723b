package sqlite

/*
#include "sqlite_api.h"

// tl_wal_size_hook is the writer connection's WAL hook: after each commit
// it records the WAL's size in pages in *arg, and checkpoints nothing.
static int tl_wal_size_hook(void *arg, sqlite3 *db, const char *name, int pages) {
	*(int *)arg = pages;
	return TL_OK;
}

// tl_watch_wal makes db record its WAL's size in *pages after each commit,
// instead of checkpointing (sqlite3_wal_hook replaces SQLite's own
// autocheckpoint hook).
static void tl_watch_wal(sqlite3 *db, int *pages) {
	sqlite3_wal_hook(db, tl_wal_size_hook, pages);
}
*/
import "C"

import "unsafe"

// Checkpoints, off the writer.
//
// By default SQLite checkpoints a WAL database inside the commit that
// leaves the WAL above 1,000 pages: the writer copies those pages into the
// database file and waits for an fsync of the WAL and one of the database
// file, while every append waits behind it (at 64 clients placing orders,
// once every few hundred orders). The store's writer connection checkpoints
// nothing instead: after each commit it notes the WAL's size (tl_watch_wal),
// and whenever the WAL grew by checkpointPages since it last asked, it asks
// the checkpointer, a goroutine with a connection of its own, for a PASSIVE
// checkpoint. A passive checkpoint waits for neither the writer nor readers:
// it copies the frames no reader still needs, and once it has copied them
// all, the writer's next transaction starts the WAL over from its start, as
// after an automatic checkpoint. The WAL is synced before the copy and the
// database file after it (synchronous=NORMAL), so what the checkpoint
// copies is durable first. A failed checkpoint is tried again at the next
// request, as SQLite tries a failed automatic one again at the next commit;
// the WAL grows meanwhile.

// checkpointPages is how many pages the WAL grows between two checkpoint
// requests: SQLite's own autocheckpoint threshold.
const checkpointPages = 1000

// writerCheckpointPages is the WAL's size at which the writer checkpoints
// itself, after its commit, as SQLite did at 1,000 pages. Under a steady
// flow of appends the checkpointer never catches up with the last commit,
// and SQLite starts the WAL over only once a checkpoint copied every frame
// before a transaction begins: the writer's checkpoint copies what the
// checkpointer left (about checkpointPages) and lets the WAL start over, a
// tenth as often as SQLite's own.
const writerCheckpointPages = 10 * checkpointPages

// checkpointer runs the store's checkpoints on its own connection.
type checkpointer struct {
	db       *C.sqlite3
	requests chan struct{} // capacity 1: requests made while one runs merge
	done     chan struct{} // closed when the loop ended
	// before and after, when set (tests), are called before each
	// checkpoint and after it with its error.
	before func()
	after  func(error)

	// Only the writer goroutine uses these.
	writer   *C.sqlite3 // the writer's connection
	walPages *C.int     // the WAL's size after the last commit (tl_watch_wal)
	asked    int        // the WAL's size when the writer last asked
}

// startCheckpointer turns the automatic checkpoints of the writer
// connection w off and starts the checkpointer on a connection of its own
// to path.
func startCheckpointer(path string, w *writerConn) (*checkpointer, error) {
	db, err := openConn(path, C.TL_OPEN_READWRITE, `PRAGMA synchronous=NORMAL;`, nil)
	if err != nil {
		return nil, err
	}
	c := &checkpointer{db: db, writer: w.db, requests: make(chan struct{}, 1), done: make(chan struct{})}
	c.walPages = (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))
	C.tl_watch_wal(w.db, c.walPages)
	go c.loop()
	return c, nil
}

// committed is called by the writer after each commit: it asks for a
// checkpoint when the WAL grew by checkpointPages since the last request,
// and checkpoints itself when the WAL holds writerCheckpointPages.
// A WAL smaller than at the last request was started over. Safe on nil.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	pages := int(*c.walPages)
	if pages < c.asked {
		c.asked = 0
	}
	if pages >= writerCheckpointPages {
		// Busy (the checkpointer is copying): the next commit tries again.
		C.sqlite3_wal_checkpoint_v2(c.writer, nil, C.TL_CHECKPOINT_PASSIVE, nil, nil)
		return
	}
	if pages-c.asked < checkpointPages {
		return
	}
	c.asked = pages
	select {
	case c.requests <- struct{}{}:
	default: // one is pending: it will copy these pages too
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	for range c.requests {
		if c.before != nil {
			c.before()
		}
		err := c.checkpoint()
		if c.after != nil {
			c.after(err)
		}
	}
}

// checkpoint runs one passive checkpoint. SQLITE_BUSY (another checkpoint
// under way, such as a reader connection's on close) is no failure.
func (c *checkpointer) checkpoint() error {
	rc := C.sqlite3_wal_checkpoint_v2(c.db, nil, C.TL_CHECKPOINT_PASSIVE, nil, nil)
	if rc == C.TL_OK || rc&0xff == C.TL_BUSY || rc&0xff == C.TL_LOCKED {
		return nil
	}
	return sqliteErr(c.db, rc, "checkpoint")
}

// stop ends the checkpointer once the writer w has ended (no more
// requests), after the checkpoint under way, closes its connection and
// removes w's WAL hook; w's connection, closed last, then checkpoints the
// whole WAL, as it did before. Safe on nil.
func (c *checkpointer) stop(w *writerConn) {
	if c == nil {
		return
	}
	close(c.requests)
	<-c.done
	closeConn(c.db)
	if w != nil && w.db != nil {
		C.sqlite3_wal_hook(w.db, nil, nil)
	}
	C.free(unsafe.Pointer(c.walPages))
}
