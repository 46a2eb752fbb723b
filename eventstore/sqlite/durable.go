package sqlite

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Durability, pipelined.
//
// SQLite's synchronous=FULL makes each commit wait for an fsync of the WAL
// while holding the write lock, so the next transaction cannot start until
// the disk answers. The store instead opens the database with
// synchronous=NORMAL, under which SQLite still syncs at every checkpoint
// and never reorders writes in a way that loses consistency, and makes each
// commit durable itself: the writer commits (the WAL frames reach the OS)
// and hands the batch to the syncer, which fdatasyncs the WAL file and only
// then answers the batch's requests and shows its events to subscribers.
// Meanwhile the writer builds and commits the next batch, and one fdatasync
// covers every commit written before it. An acknowledged append is durable
// exactly as under synchronous=FULL.
//
// If an fdatasync fails, whether the batch reached the disk is unknown: its
// requests, and every later append, fail with EUNAVAILABLE (a retry with the
// same event ids after a restart is answered from what is stored), and the
// store accepts no more writes, because a failed fsync may have dropped
// pages the kernel will not write again.

// committedBatch is a committed, not yet durable, batch.
type committedBatch struct {
	requests []*appendRequest
	written  []domain.Event
	position uint64 // last position written
	treeSize int64  // the Merkle tree's records after the commit
}

// walFile is the WAL file of the database, for fdatasync: used by the
// syncer only, and closed after it ended.
type walFile struct {
	f        *os.File
	syncFile func(*os.File) error // fdatasync; tests make it fail
}

func openWAL(dbPath string) (*walFile, error) {
	w := &walFile{syncFile: fdatasync}
	f, err := os.Open(dbPath + "-wal")
	if err != nil {
		return nil, fmt.Errorf("open write-ahead log: %w", err)
	}
	w.f = f
	return w, nil
}

// sync makes everything written to the WAL so far durable. The file is
// the one SQLite writes: it removes the WAL only when its last connection
// closes, and the store's writer connection stays open until Close.
func (w *walFile) sync() error { return w.syncFile(w.f) }

func (w *walFile) close() error {
	if w == nil {
		return nil
	}
	return w.f.Close()
}

// syncLoop makes committed batches durable, several per fdatasync when they
// queue up, then publishes and answers them in commit order. It ends when
// the writer closes s.committed.
func (s *Store) syncLoop() {
	defer close(s.synced)
	var group []committedBatch
	var lastSync time.Duration
	for c := range s.committed {
		group = s.joinCommitting(append(group[:0], c), lastSync)
		start := time.Now()
		err := s.wal.sync()
		lastSync = time.Since(start)
		s.lastSync.Store(int64(lastSync))
		if o := s.obs.get(); o != nil {
			o.ObserveSync(lastSync)
		}
		if err != nil {
			err := domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: the write-ahead log could not be made durable: %v", err)
			s.broken.Store(err)
			for _, c := range group {
				for _, req := range c.requests {
					if req.err == nil {
						req.err = err
					}
				}
				s.answer(c.requests)
			}
			continue
		}
		s.writeFailed.Store(nil)
		s.mu.Lock()
		for _, c := range group {
			s.remember(c.written)
			s.head = max(s.head, c.position)
			if c.treeSize > s.treeSize.Load() {
				s.treeSize.Store(c.treeSize)
			}
		}
		close(s.notify)
		s.notify = make(chan struct{})
		s.mu.Unlock()
		s.spare(group)
		s.answerGroup(group)
		// Let the callers just answered run: those that append again
		// queue now, and the next group can take them (joinCommitting).
		runtime.Gosched()
	}
}

// spare hands the group's written events, copied into the recent window
// (remember), back to the writer for its next transactions, emptied.
func (s *Store) spare(group []committedBatch) {
	for _, c := range group {
		clear(c.written)
		select {
		case s.spareWritten <- c.written[:0]:
		default:
		}
	}
}

// answerGroup answers every request of group. The Appends' callers are
// counted as active (Store.active) all at once, before the first is
// answered: the writer, which may take the first that append again into a
// transaction, then waits for the others too.
func (s *Store) answerGroup(group []committedBatch) {
	n := 0
	for _, c := range group {
		n += singles(c.requests)
	}
	s.active.Add(int64(n))
	for _, c := range group {
		for _, req := range c.requests {
			req.done <- struct{}{}
		}
	}
}

// joinCommitting adds to group the batches committed meanwhile and, for as
// long as the writer holds appends or appends are queued, the batches the
// writer commits next: appends that have already arrived join this sync
// instead of waiting for the next one. It waits only for work the writer
// has, never for appends that may come, and at most about as long as the
// last sync took (lastSync, within maxJoin; the writer may also be waiting
// for another process's lock), so an append waits at most about one more
// sync. One fdatasync costs about the same for few events as for many, so
// the fewer syncs, the more appends per second: callers that append again
// as soon as they are answered (a closed loop of clients) settle into one
// group per sync instead of two half groups each waiting for the other's
// sync while the disk syncs twice as often.
func (s *Store) joinCommitting(group []committedBatch, lastSync time.Duration) []committedBatch {
	group, open := s.committedMeanwhile(group)
	if !open || (!s.writing.Load() && len(s.appends) == 0) {
		return group
	}
	t := time.NewTimer(min(max(lastSync, minJoin), maxJoin))
	defer t.Stop()
	for open && (s.writing.Load() || len(s.appends) > 0) {
		select {
		case c, ok := <-s.committed:
			if !ok {
				return group
			}
			group = append(group, c)
		case <-s.writerIdle: // the writer answered its batch itself, or handed it over
		case <-t.C:
			group, _ = s.committedMeanwhile(group)
			return group
		}
		group, open = s.committedMeanwhile(group)
	}
	return group
}

// committedMeanwhile adds to group the batches already committed; open is
// false once the writer has ended.
func (s *Store) committedMeanwhile(group []committedBatch) ([]committedBatch, bool) {
	for {
		select {
		case c, ok := <-s.committed:
			if !ok {
				return group, false
			}
			group = append(group, c)
		default:
			return group, true
		}
	}
}

// minJoin and maxJoin bound joinCommitting's wait.
const (
	minJoin = 200 * time.Microsecond
	maxJoin = 20 * time.Millisecond
)
