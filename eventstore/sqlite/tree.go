package sqlite

/*
#include "sqlite_api.h"

// tl_tree_hashes copies, for i < n, the level[i]-th stored hash of record
// rec[i] (st: treeRowSQL) to out + 32*i, with one lookup for consecutive
// equal records. It returns TL_DONE; -1 when a record is missing and -2
// when its hashes are too few (*failed is then i); or the failing step's
// code.
static int tl_tree_hashes(sqlite3_stmt *st, const int64_t *rec, const int32_t *level, int n, unsigned char *out, int *failed) {
	int64_t cur = -1;
	const unsigned char *blob = NULL;
	int len = 0;
	int rc = TL_DONE;
	for (int i = 0; i < n; i++) {
		if (rec[i] != cur || blob == NULL) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, rec[i]);
			int r = sqlite3_step(st);
			if (r != TL_ROW) {
				*failed = i;
				rc = r == TL_DONE ? -1 : r;
				break;
			}
			blob = sqlite3_column_blob(st, 1);
			len = sqlite3_column_bytes(st, 1);
			cur = rec[i];
		}
		if (blob == NULL || len < 32 * (level[i] + 1)) {
			*failed = i;
			rc = -2;
			break;
		}
		memcpy(out + 32 * i, blob + 32 * level[i], 32);
	}
	sqlite3_reset(st);
	return rc;
}
*/
import "C"

import (
	"context"
	"encoding/binary"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
)

// The Merkle tree over the log (domain.TreeStore, DESIGN §13).
//
// The table tree holds one row per record: its index, its event's
// position, and the hashes tlog.StoredHashes gives for it (its leaf, then
// the hash of each subtree it completes: 64 bytes per record on average).
// The writer adds the rows of the events it commits in the same
// transaction (commit.go), from the frontier of the tree it keeps in
// memory (domain.TreeFrontier), so that the tree never lags the log. A
// stored hash of tlog index x (tlog.StoredHashIndex(level, n)) is the
// level-th hash of record (n+1)·2^level − 1.
//
// A log written before the tree existed, or by a process that does not
// keep it, has events the tree does not cover: until BuildTree has added
// them, the writer leaves the tree alone (treeState.live false), and
// BuildTree adds them in chunks it hands to the writer.

const (
	treeEndSQL = `SELECT record, position FROM tree ORDER BY record DESC LIMIT 1`
	treeRowSQL = `SELECT position, hashes FROM tree WHERE record = ?1`
)

// treeState is the writer's view of the tree: the frontier of its records
// and the last record's position; live when it covers every event
// committed, so that the next commit adds its events' records.
type treeState struct {
	live     bool
	lastPos  uint64
	frontier domain.TreeFrontier
}

// treeEnd runs st (treeEndSQL) on db.
func treeEnd(db *C.sqlite3, st *C.sqlite3_stmt) (size int64, lastPos uint64, err error) {
	defer C.sqlite3_reset(st)
	switch rc := C.sqlite3_step(st); rc {
	case C.TL_DONE:
		return 0, 0, nil
	case C.TL_ROW:
		return int64(C.sqlite3_column_int64(st, 0)) + 1, uint64(C.sqlite3_column_int64(st, 1)), nil
	default:
		return 0, 0, sqliteErr(db, rc, "read the tree's end")
	}
}

// treeRow runs st (treeRowSQL) for record on db, and returns its position
// and its hashes appended to buf (buf unchanged and position 0 when there
// is no such record).
func treeRow(db *C.sqlite3, st *C.sqlite3_stmt, record int64, buf []byte) (uint64, []byte, error) {
	defer C.sqlite3_reset(st)
	C.sqlite3_bind_int64(st, 1, C.longlong(record))
	switch rc := C.sqlite3_step(st); rc {
	case C.TL_DONE:
		return 0, buf, nil
	case C.TL_ROW:
		pos := uint64(C.sqlite3_column_int64(st, 0))
		if p, n := C.sqlite3_column_blob(st, 1), C.sqlite3_column_bytes(st, 1); p != nil && n > 0 {
			buf = append(buf, unsafe.Slice((*byte)(p), int(n))...)
		}
		return pos, buf, nil
	default:
		return 0, buf, sqliteErr(db, rc, "read the tree")
	}
}

// loadTree reads the tree's state from the file, whose last event is at
// position pos (the writer goroutine, or Open).
func (s *Store) loadTree(pos uint64) error {
	size, lastPos, err := s.w.TreeEnd()
	if err != nil {
		return err
	}
	levels, idx := domain.FrontierLevels(size)
	hashes := make([]domain.Hash, len(levels))
	for i, l := range levels {
		rec := (idx[i]+1)<<l - 1
		hs, err := s.w.TreeHashes(rec)
		if err != nil {
			return err
		}
		if len(hs) < 32*(l+1) {
			return domain.Errorf(domain.EINTERNAL, "event log is corrupt: the Merkle tree's record %d lacks its level-%d hash", rec, l)
		}
		copy(hashes[i][:], hs[32*l:])
	}
	f, err := domain.NewTreeFrontier(size, hashes)
	if err != nil {
		return err
	}
	var leaf domain.Hash
	if size > 0 {
		hs, err := s.w.TreeHashes(size - 1)
		if err != nil {
			return err
		}
		if len(hs) < 32 {
			return domain.Errorf(domain.EINTERNAL, "event log is corrupt: the Merkle tree's record %d lacks its leaf hash", size-1)
		}
		copy(leaf[:], hs)
	}
	cut, err := s.treeDisagreement(size, lastPos, pos, leaf)
	if err != nil {
		return err
	}
	s.treeCut.Store(cut)
	s.tree = treeState{live: lastPos == pos && !s.noTree && cut == nil, lastPos: lastPos, frontier: f}
	return nil
}

// addTreeRows adds the records of events (committed in tx at their
// positions, leaves[i] the leaf of events[i]) to tx's tree and writes their
// rows, when the tree is live.
func (s *Store) addTreeRows(tx *txn, events []domain.Event, leaves []domain.Hash) error {
	if !tx.tree.live || len(events) == 0 {
		return nil
	}
	rows := s.w.treeBuf[:0]
	var stored [64]domain.Hash
	for i := range events {
		rec := tx.tree.frontier.Size()
		hs := tx.tree.frontier.AddLeaf(leaves[i], stored[:0])
		rows = binary.LittleEndian.AppendUint64(rows, uint64(rec))
		rows = binary.LittleEndian.AppendUint64(rows, events[i].Position)
		rows = binary.LittleEndian.AppendUint32(rows, uint32(32*len(hs)))
		for j := range hs {
			rows = append(rows, hs[j][:]...)
		}
	}
	s.w.treeBuf = rows
	tx.tree.lastPos = events[len(events)-1].Position
	if err := s.w.InsertTree(rows, len(events)); err != nil {
		return err
	}
	if k := lastCheckpoint(events); k != nil {
		return s.w.KeepCheckpoint(k)
	}
	return nil
}

// TreeSize implements domain.TreeStore: the records whose rows are
// durable (their commit fdatasynced), or, after another process appended,
// as many as the file held when the store last looked (Refresh).
func (s *Store) TreeSize(ctx context.Context) (int64, error) {
	return s.treeSize.Load(), nil
}

// ReadTreeHashes implements domain.TreeStore.
func (s *Store) ReadTreeHashes(ctx context.Context, indexes []int64) ([]domain.Hash, error) {
	limit := tlog.StoredHashCount(s.treeSize.Load())
	for _, x := range indexes {
		if x < 0 || x >= limit {
			return nil, domain.Errorf(domain.EINVALID, "stored hash %d is beyond the tree of %d records", x, s.treeSize.Load())
		}
	}
	out := make([]domain.Hash, len(indexes))
	if len(indexes) == 0 {
		return out, nil
	}
	recs := make([]int64, len(indexes))
	levels := make([]int32, len(indexes))
	for i, x := range indexes {
		level, n := tlog.SplitStoredHashIndex(x)
		recs[i], levels[i] = (n+1)<<level-1, int32(level)
	}
	r, err := s.treeReader()
	if err != nil {
		return nil, err
	}
	defer s.releaseTree(r)
	var failed C.int
	switch rc := C.tl_tree_hashes(r.row, (*C.int64_t)(unsafe.Pointer(&recs[0])), (*C.int32_t)(unsafe.Pointer(&levels[0])), C.int(len(indexes)),
		(*C.uchar)(unsafe.Pointer(&out[0][0])), &failed); rc {
	case C.TL_DONE:
		return out, nil
	case -1, -2:
		return nil, domain.Errorf(domain.EINTERNAL, "event log is corrupt: the Merkle tree's record %d lacks its level-%d hash", recs[failed], levels[failed])
	default:
		return nil, domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", sqliteErr(r.db, rc, "read the tree"))
	}
}

// treeConn is a read connection for the Merkle tree's lookups (proofs,
// records): apart from the row readers, with a page cache large enough
// for the tree's upper pages, which every lookup walks.
type treeConn struct {
	db       *C.sqlite3
	row, end *C.sqlite3_stmt
	kept     *C.sqlite3_stmt // prepared at its first use (KeptCheckpoint)
}

// treeConnPragmas: query only, and a 16 MiB page cache (allocated as
// used): the interior pages of a tree of 10M records take about 3 MiB.
const treeConnPragmas = `PRAGMA query_only=1; PRAGMA cache_size=-16384;`

// treeReader returns an idle tree connection, or a new one.
func (s *Store) treeReader() (*treeConn, error) {
	if c, ok, err := takeIdle(s, &s.idleTree); ok || err != nil {
		return c, err
	}
	c := &treeConn{}
	db, err := openConn(s.Path, C.TL_OPEN_READWRITE, treeConnPragmas, map[string]**C.sqlite3_stmt{treeRowSQL: &c.row, treeEndSQL: &c.end})
	if err != nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", err)
	}
	c.db = db
	return c, nil
}

// maxIdleTree bounds the idle tree connections kept.
const maxIdleTree = 4

// releaseTree returns c to the pool, or closes it.
func (s *Store) releaseTree(c *treeConn) {
	releaseIdle(s, &s.idleTree, maxIdleTree, c, (*treeConn).close)
}

// close closes c's statements and connection.
func (c *treeConn) close() { closeConn(c.db, c.row, c.end, c.kept) }

// position returns record's position (0 when the tree has no such record).
func (c *treeConn) position(record int64) (uint64, error) {
	pos, _, err := treeRow(c.db, c.row, record, nil)
	return pos, err
}

// RecordPosition implements domain.TreeStore.
func (s *Store) RecordPosition(ctx context.Context, index int64) (uint64, error) {
	size := s.treeSize.Load()
	if index < 0 || index >= size {
		return 0, domain.Errorf(domain.ENOTFOUND, "no record %d: the tree holds %d", index, size)
	}
	r, err := s.treeReader()
	if err != nil {
		return 0, err
	}
	defer s.releaseTree(r)
	pos, err := r.position(index)
	if err != nil {
		return 0, domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", err)
	}
	if pos == 0 {
		return 0, domain.Errorf(domain.EINTERNAL, "event log is corrupt: the Merkle tree has no record %d", index)
	}
	return pos, nil
}

// RecordIndex implements domain.TreeStore. Positions of this store are
// dense unless events were removed, so the record at position p is
// looked for at index p−1 first, then by bisection (positions increase
// with the index).
func (s *Store) RecordIndex(ctx context.Context, position uint64) (int64, error) {
	size := s.treeSize.Load()
	if size == 0 || position == 0 {
		return 0, domain.Errorf(domain.ENOTFOUND, "the tree holds no event at position %d", position)
	}
	r, err := s.treeReader()
	if err != nil {
		return 0, err
	}
	defer s.releaseTree(r)
	return domain.FindRecord(size, position, int64(min(position-1, uint64(size-1))), func(i int64) (uint64, error) {
		pos, err := r.position(i)
		if err != nil {
			return 0, domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", err)
		}
		return pos, nil
	})
}

// treeChunkSize is how many records BuildTree hands to the writer at a
// time: one transaction of about 300 KB of rows.
const treeChunkSize = 4096

// treeRequest asks the writer to add rows to the tree (n > 0) or only
// for its state (n == 0). The rows extend the tree of from (its size and
// last position); they are written only if the tree is still that one.
type treeRequest struct {
	from  treeState
	rows  []byte
	n     int
	after treeState  // the tree with the rows, live unset
	keep  *keptEvent // the last checkpoint among the rows' events, kept with them
	// cut asks the writer to cut the tree to n records instead (CutTree).
	cut bool
	// answer receives the writer's tree after the request (rows written or
	// not), or an error.
	answer chan treeAnswer
}

type treeAnswer struct {
	state treeState
	err   error
}

// BuildTree implements domain.TreeStore. It reads the events the tree
// lacks with ReadAll, computes their records (each event's hash recomputed
// from its contents, domain.ComputeHash, on every CPU) and hands them to
// the writer a chunk at a time, each written in a transaction of its own
// between the appends; the writer marks the tree live once a chunk ends
// at the last event committed. Progress gets the records in the tree.
func (s *Store) BuildTree(ctx context.Context, progress func(records int64)) error {
	for {
		st, err := s.askTree(ctx, &treeRequest{})
		if err != nil {
			return err
		}
		if cut := s.treeCut.Load(); cut != nil {
			return cut // a tree that is not the log's is never extended
		}
		if st.live {
			return s.awaitTreeSize(ctx, st.frontier.Size())
		}
		if s.noTree {
			return nil
		}
		if err := s.buildFrom(ctx, st, progress); err != nil {
			return err
		}
	}
}

// awaitTreeSize waits until the tree's first size records are durable
// (TreeSize).
func (s *Store) awaitTreeSize(ctx context.Context, size int64) error {
	for {
		_, next := s.changed()
		if s.treeSize.Load() >= size {
			return nil
		}
		select {
		case <-next:
		case <-s.closing:
			return domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// buildFrom adds the events after st.lastPos to the tree, chunk by chunk,
// until the log ends or the writer's tree is no longer the one it
// extends (another builder, another process).
func (s *Store) buildFrom(ctx context.Context, st treeState, progress func(int64)) error {
	it := s.ReadAll(ctx, st.lastPos+1, 0)
	defer it.Close()
	bi, _ := it.(domain.BatchIterator)
	chunk := make([]domain.Event, 0, treeChunkSize)
	leaves := make([]domain.Hash, treeChunkSize)
	var rows []byte
	var stored [64]domain.Hash
	for {
		chunk = chunk[:0]
		if bi != nil {
			chunk = bi.NextBatch(chunk, treeChunkSize)
		} else {
			for len(chunk) < treeChunkSize && it.Next() {
				chunk = append(chunk, it.Event())
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
		if len(chunk) == 0 {
			return nil
		}
		treeLeaves(chunk, leaves)
		after := st
		rows = rows[:0]
		for i := range chunk {
			rec := after.frontier.Size()
			hs := after.frontier.AddLeaf(leaves[i], stored[:0])
			rows = binary.LittleEndian.AppendUint64(rows, uint64(rec))
			rows = binary.LittleEndian.AppendUint64(rows, chunk[i].Position)
			rows = binary.LittleEndian.AppendUint32(rows, uint32(32*len(hs)))
			for j := range hs {
				rows = append(rows, hs[j][:]...)
			}
		}
		after.lastPos = chunk[len(chunk)-1].Position
		got, err := s.askTree(ctx, &treeRequest{from: st, rows: rows, n: len(chunk), after: after, keep: lastCheckpoint(chunk)})
		if err != nil {
			return err
		}
		if progress != nil {
			progress(got.frontier.Size())
		}
		if got.live || !sameTree(got, after) {
			return nil // done, or the tree moved on without this reader
		}
		st = got
	}
}

// treeLeaves sets leaves[i] to the leaf of events[i]: the tree's record
// data is the event's hash recomputed from its contents.
func treeLeaves(events []domain.Event, leaves []domain.Hash) {
	workers := min(runtime.GOMAXPROCS(0), (len(events)+255)/256)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w * len(events) / workers; i < (w+1)*len(events)/workers; i++ {
				leaves[i] = domain.TreeLeaf(domain.ComputeHash(&events[i]))
			}
		}(w)
	}
	wg.Wait()
}

// sameTree reports whether a and b are the same tree (size and last
// position; the frontier follows from the log).
func sameTree(a, b treeState) bool {
	return a.frontier.Size() == b.frontier.Size() && a.lastPos == b.lastPos
}

// askTree hands req to the writer and returns its answer.
func (s *Store) askTree(ctx context.Context, req *treeRequest) (treeState, error) {
	req.answer = make(chan treeAnswer, 1)
	select {
	case s.treeReqs <- req:
	case <-s.closing:
		return treeState{}, domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	case <-ctx.Done():
		return treeState{}, ctx.Err()
	}
	select {
	case a := <-req.answer:
		return a.state, a.err
	case <-ctx.Done():
		return treeState{}, ctx.Err()
	}
}

// serveTree is the writer's side of askTree: it writes req's rows in a
// transaction of their own if they extend its tree, and answers with the
// tree as it then is.
func (s *Store) serveTree(req *treeRequest) {
	var state treeState
	var err error
	if req.cut {
		state, err = s.cutTree(int64(req.n))
	} else {
		state, err = s.writeTreeRows(req)
	}
	req.answer <- treeAnswer{state, err}
}

func (s *Store) writeTreeRows(req *treeRequest) (treeState, error) {
	if err := s.broken.Load(); err != nil {
		return s.tree, err
	}
	if req.n == 0 && s.treeLoaded {
		// Only the state: no transaction (and no write lock) unless
		// another process appended since this writer last looked.
		if pos, err := s.w.MaxPosition(); err == nil && pos == s.lastCommitted.Load() {
			return s.tree, nil
		}
	}
	if err := s.w.Begin(); err != nil {
		return s.tree, s.unavailable(err)
	}
	pos, err := s.w.MaxPosition()
	if err == nil && (pos != s.lastCommitted.Load() || !s.treeLoaded) {
		s.forgetHeads()
		err = s.loadTree(pos)
		s.treeLoaded = err == nil
	}
	if err != nil {
		s.w.Rollback()
		return s.tree, s.unavailable(err)
	}
	if req.n == 0 || s.tree.live || !sameTree(s.tree, req.from) || s.treeCut.Load() != nil {
		s.w.Rollback()
		return s.tree, nil
	}
	if err := s.w.InsertTree(req.rows, req.n); err != nil {
		s.w.Rollback()
		return s.tree, s.unavailable(err)
	}
	if req.keep != nil {
		if err := s.w.KeepCheckpoint(req.keep); err != nil {
			s.w.Rollback()
			return s.tree, s.unavailable(err)
		}
	}
	if err := s.commitTxn(); err != nil {
		return s.tree, err
	}
	s.tree = req.after
	s.tree.live = s.tree.lastPos == pos
	s.lastCommitted.Store(pos)
	// Published once durable, as an append's rows are.
	s.committed <- committedBatch{position: pos, treeSize: s.tree.frontier.Size()}
	return s.tree, nil
}
