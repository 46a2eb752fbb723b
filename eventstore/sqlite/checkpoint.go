package sqlite

/*
#include "sqlite_api.h"

// tl_wal_frames records, after each commit of the connection it watches,
// how many frames its WAL holds (a WAL hook: setting it replaces SQLite's
// own, which checkpoints inside the commit past wal_autocheckpoint).
static int tl_wal_frames(void *frames, sqlite3 *db, const char *name, int n) {
	*(int *)frames = n;
	return TL_OK;
}

static void tl_watch_wal(sqlite3 *db, int *frames) {
	sqlite3_wal_hook(db, tl_wal_frames, frames);
}

// tl_checkpoint copies what it can of the WAL into the database file
// without waiting for readers or the writer (SQLITE_CHECKPOINT_PASSIVE),
// syncing the WAL before and the file after, as the connection's
// synchronous setting asks.
static int tl_checkpoint(sqlite3 *db) {
	return sqlite3_wal_checkpoint_v2(db, NULL, TL_CHECKPOINT_PASSIVE, NULL, NULL);
}
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Checkpoints beside the writer.
//
// SQLite copies the WAL back into the database file (a checkpoint) inside
// the commit that takes the WAL past wal_autocheckpoint pages: the writer
// then reads the WAL's pages back, writes them into the file and syncs
// both, while appends wait for it — at SetCheckpointPages(8192), the
// import's, about a sixth of the writer's CPU and all of its fsyncs of the
// database file. The store instead watches the WAL's size after each
// commit (a WAL hook, which turns SQLite's own off) and, past the
// checkpoint pages, wakes a checkpointer goroutine that checkpoints on a
// connection of its own (PASSIVE: it never waits for the writer), on
// another CPU while the writer goes on; then again each time the WAL grew
// by another quarter of the checkpoint pages (checkpointSteps).
//
// SQLite starts the WAL over only at a write transaction that begins when
// everything in it has been copied, which a writer that never pauses may
// never meet; past catchUpPages × the checkpoint pages the writer
// checkpoints itself, as SQLite would have (after the checkpointer's copy
// under way, if any: little is left to copy by then), and its next
// transaction starts the WAL over. The WAL so holds at most about
// catchUpPages × the checkpoint pages and a commit's. Durability is
// unchanged: a checkpoint syncs the WAL before it copies and the file
// after, whoever runs it, and acknowledgements still wait for the
// syncer's fdatasync of the WAL (durable.go).

// catchUpPages is how many times the checkpoint pages the WAL may hold
// before the writer checkpoints itself. At 4 an import's WAL grew to 128 MB
// between restarts, and its writing and copying took 3% more CPU (most of
// it the system's) than at 2.
const catchUpPages = 2

// checkpointer runs PASSIVE checkpoints on a connection of its own when
// woken.
type checkpointer struct {
	path   string
	wake   chan struct{}
	done   chan struct{}
	failed atomic.Bool   // its connection could not be opened: the writer checkpoints itself
	runs   *atomic.Int64 // checkpoints run (the store's count)
	// mu is held through each checkpoint, the writer's too: SQLite lets
	// one connection checkpoint at a time and answers the other at once
	// without copying anything, so the writer, past catchUpPages, waits
	// for the checkpointer's copy to end and copies the rest.
	mu sync.Mutex
}

// watchWAL sets the writer connection's WAL hook (the writer goroutine,
// before its first commit).
func (w *writerConn) watchWAL() {
	if w.walFrames != nil {
		return
	}
	w.walFrames = (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))
	C.tl_watch_wal(w.db, w.walFrames)
}

// walSize returns the frames in the WAL after the last commit.
func (w *writerConn) walSize() int {
	if w.walFrames == nil {
		return 0
	}
	return int(*w.walFrames)
}

// checkpointSteps is how many times the checkpointer is woken while the
// WAL grows from the checkpoint pages to catchUpPages times as many: once
// each pages/checkpointSteps frames. Woken after every commit instead, as
// long as the WAL stayed past the checkpoint pages, it ran a checkpoint —
// two fsyncs and a flush of the disk's cache — for about one commit in
// ten under 1,000 placements a second (2,226 fsyncs for 10,000 orders,
// against 186 with SQLite's own checkpoints), and the WAL's fdatasyncs
// waited behind them.
const checkpointSteps = 4

// checkpointDue says what a commit that left the WAL with frames frames
// asks for, the checkpointer last woken at wokeAt frames: wake the
// checkpointer, or checkpoint on the writer's connection (inline), and the
// frames to remember as wokeAt. The WAL past the checkpoint pages wakes the
// checkpointer, and again each time it grew by another
// pages/checkpointSteps since (a WAL started over, below the pages,
// forgets the last wake); past catchUpPages × the pages the writer
// checkpoints itself.
func checkpointDue(frames, pages, wokeAt int) (wake, inline bool, woke int) {
	switch {
	case frames < pages:
		return false, false, 0
	case frames >= catchUpPages*pages:
		return false, true, 0
	case wokeAt == 0 || frames >= wokeAt+max(pages/checkpointSteps, 1):
		return true, false, frames
	}
	return false, false, wokeAt
}

// checkpointAfterCommit wakes the checkpointer or checkpoints on the
// writer's connection as checkpointDue says (on the writer's connection
// too when there is no checkpointer). The writer goroutine only, after a
// commit.
func (s *Store) checkpointAfterCommit() {
	wake, inline, woke := checkpointDue(s.w.walSize(), s.w.checkpointPages, s.w.wokeAt)
	s.w.wokeAt = woke
	if !wake && !inline {
		return
	}
	if s.ckpt == nil {
		s.ckpt = startCheckpointer(s.Path, &s.checkpoints.background)
	}
	if inline || s.ckpt.failed.Load() {
		s.ckpt.mu.Lock()
		C.tl_checkpoint(s.w.db) // as SQLite's own would: its failure leaves the frames to the next one
		s.ckpt.mu.Unlock()
		s.checkpoints.writer.Add(1)
		return
	}
	select {
	case s.ckpt.wake <- struct{}{}:
	default: // one is under way, or already asked for
	}
}

func startCheckpointer(path string, runs *atomic.Int64) *checkpointer {
	c := &checkpointer{path: path, wake: make(chan struct{}, 1), done: make(chan struct{}), runs: runs}
	go c.run()
	return c
}

// run checkpoints each time it is woken, until stop.
func (c *checkpointer) run() {
	defer close(c.done)
	db, err := openConn(c.path, C.TL_OPEN_READWRITE, `PRAGMA synchronous=NORMAL;`, nil)
	if err != nil {
		c.failed.Store(true)
		for range c.wake {
		}
		return
	}
	defer closeConn(db)
	for range c.wake {
		// A failure (another connection checkpointing, an I/O error)
		// leaves the frames to the next checkpoint, as SQLite's own does.
		c.mu.Lock()
		C.tl_checkpoint(db)
		c.mu.Unlock()
		c.runs.Add(1)
	}
}

// stop ends the checkpointer once its checkpoint under way is done and
// closes its connection (after the writer ended: it alone wakes it).
func (c *checkpointer) stop() {
	if c == nil {
		return
	}
	close(c.wake)
	<-c.done
}
