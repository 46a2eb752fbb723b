package sqlite

/*
#include "sqlite_api.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// The tree's guard (audit.TreeStore's KeptCheckpoint and CutTree, and
// the refusal to extend a tree that is not the log's).
//
// The writer keeps, in the table checkpoint, the last CheckpointSigned
// event it adds to the tree, in the same transaction as the event and
// its tree row: beside the tree, so that a log cut together with its tree
// still names what was signed. A smaller one never replaces it (a tree
// rebuilt from a cut log meets older checkpoints), unless CutTree
// abandoned it. Whenever it reads the tree's state from
// the file (loadTree: at Open, and after another process wrote), it
// checks that the tree's last record is the log's event at that position;
// if the log no longer holds it (rows removed from its end) or holds
// another event there, every append and every BuildTree is refused with
// that reason, instead of writing events at positions the tree already
// holds with other hashes (a fork of the signed history). Only CutTree
// (an operator's decision) lifts the refusal.

const (
	keptSQL = `SELECT position, abandoned, data FROM checkpoint WHERE id = 1`
	keepSQL = `INSERT INTO checkpoint (id, position, size, abandoned, data) VALUES (1, ?1, ?2, 0, ?3)
		ON CONFLICT (id) DO UPDATE SET position = excluded.position, size = excluded.size, abandoned = 0, data = excluded.data
		WHERE excluded.size >= checkpoint.size OR checkpoint.abandoned`
	abandonSQL = `UPDATE checkpoint SET abandoned = 1`
	cutSQL     = `DELETE FROM tree WHERE record >= ?1`
	eventAtSQL = `SELECT record FROM events WHERE position = ?1`
)

// keptEvent is a CheckpointSigned event the writer keeps beside the tree:
// its position, the size it signs, and its payload.
type keptEvent struct {
	position uint64
	size     int64
	data     []byte
}

// lastCheckpoint returns the CheckpointSigned of the checkpoints stream
// among events of the largest size (the last of them), nil when there is
// none. One that does not decode is kept with size 0: the check then
// reports it.
func lastCheckpoint(events []domain.Event) *keptEvent {
	var k *keptEvent
	for i := range events {
		e := &events[i]
		if e.Type != domain.TypeCheckpointSigned || e.Stream != domain.StreamCheckpoints {
			continue
		}
		var c struct {
			Size int64 `json:"size"`
		}
		_ = json.Unmarshal(e.Data, &c)
		if k == nil || c.Size >= k.size {
			k = &keptEvent{position: e.Position, size: c.Size, data: e.Data}
		}
	}
	return k
}

// KeepCheckpoint writes k as the kept checkpoint, in the open transaction.
func (w *writerConn) KeepCheckpoint(k *keptEvent) error {
	if err := prepareOnce(w.db, &w.keep, keepSQL); err != nil {
		return err
	}
	defer C.sqlite3_reset(w.keep)
	C.sqlite3_bind_int64(w.keep, 1, C.longlong(k.position))
	C.sqlite3_bind_int64(w.keep, 2, C.longlong(k.size))
	C.tl_bind_blob(w.keep, 3, unsafe.Pointer(unsafe.SliceData(k.data)), C.int(len(k.data)))
	if rc := C.sqlite3_step(w.keep); rc != C.TL_DONE {
		return sqliteErr(w.db, rc, "keep the last checkpoint")
	}
	return nil
}

// DeleteTreeFrom deletes the tree's records from index records on, and
// marks the kept checkpoint abandoned, in the open transaction.
func (w *writerConn) DeleteTreeFrom(records int64) error {
	if err := prepareOnce(w.db, &w.cut, cutSQL); err != nil {
		return err
	}
	if err := prepareOnce(w.db, &w.abandon, abandonSQL); err != nil {
		return err
	}
	defer C.sqlite3_reset(w.cut)
	C.sqlite3_bind_int64(w.cut, 1, C.longlong(records))
	if rc := C.sqlite3_step(w.cut); rc != C.TL_DONE {
		return sqliteErr(w.db, rc, "cut the tree")
	}
	return w.step(w.abandon, "abandon the kept checkpoint")
}

// EventAt returns the event at position, ok false when the file holds
// none there.
func (w *writerConn) EventAt(position uint64) (e domain.Event, ok bool, err error) {
	if err := prepareOnce(w.db, &w.eventAt, eventAtSQL); err != nil {
		return e, false, err
	}
	defer C.sqlite3_reset(w.eventAt)
	C.sqlite3_bind_int64(w.eventAt, 1, C.longlong(position))
	switch rc := C.sqlite3_step(w.eventAt); rc {
	case C.TL_DONE:
		return e, false, nil
	case C.TL_ROW:
		var rec []byte
		if p, n := C.sqlite3_column_blob(w.eventAt, 0), C.sqlite3_column_bytes(w.eventAt, 0); p != nil && n > 0 {
			rec = unsafe.Slice((*byte)(p), int(n))
		}
		if err := decodeRecord(rec, &e); err != nil {
			return e, false, domain.Errorf(domain.EINTERNAL, "event log is corrupt: the event at position %d cannot be read back", position)
		}
		e.Position = position
		return e, true, nil
	default:
		return e, false, sqliteErr(w.db, rc, "read an event")
	}
}

// treeDisagreement returns why the tree of size records, whose last record
// is at lastPos with leaf, is not the log whose last event is at pos:
// nil when the log holds that record's event (the log may hold events
// after it, which BuildTree adds). The reason is an EINTERNAL error in
// plain words; err is for a file that could not be read.
func (s *Store) treeDisagreement(size int64, lastPos, pos uint64, leaf domain.Hash) (reason *domain.Error, err error) {
	if size == 0 {
		return nil, nil
	}
	const refused = "; appends are refused, so that no event is written at a position the tree holds with another hash (tradeledger serve says what to do)"
	if lastPos > pos {
		return domain.Errorf(domain.EINTERNAL, "event log was cut: its Merkle tree holds %d records, the last at position %d, but the log ends at position %d%s", size, lastPos, pos, refused), nil
	}
	e, ok, err := s.w.EventAt(lastPos)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return domain.Errorf(domain.EINTERNAL, "event log was cut: the Merkle tree's last record (%d) is the event at position %d, which the log no longer holds%s", size-1, lastPos, refused), nil
	case audit.TreeLeaf(domain.ComputeHash(&e)) != leaf:
		return domain.Errorf(domain.EINTERNAL, "event log was rewritten at its end: the event at position %d is not the one the Merkle tree's record %d was made from%s", lastPos, size-1, refused), nil
	}
	return nil, nil
}

// KeptCheckpoint implements audit.TreeStore.
func (s *Store) KeptCheckpoint(ctx context.Context) (audit.KeptCheckpoint, bool, error) {
	var k audit.KeptCheckpoint
	c, err := s.treeReader()
	if err != nil {
		return k, false, err
	}
	defer s.releaseTree(c)
	if err := prepareOnce(c.db, &c.kept, keptSQL); err != nil {
		return k, false, domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", err)
	}
	defer C.sqlite3_reset(c.kept)
	switch rc := C.sqlite3_step(c.kept); rc {
	case C.TL_DONE:
		return k, false, nil
	case C.TL_ROW:
		k.Position = uint64(C.sqlite3_column_int64(c.kept, 0))
		k.Abandoned = C.sqlite3_column_int64(c.kept, 1) != 0
		var data []byte
		if p, n := C.sqlite3_column_blob(c.kept, 2), C.sqlite3_column_bytes(c.kept, 2); p != nil && n > 0 {
			data = C.GoBytes(p, n)
		}
		if err := json.Unmarshal(data, &k.CheckpointSigned); err != nil {
			return k, false, domain.Errorf(domain.EINTERNAL, "event log is corrupt: the kept checkpoint does not decode: %v", err)
		}
		return k, true, nil
	default:
		return k, false, domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", sqliteErr(c.db, rc, "read the kept checkpoint"))
	}
}

// CutTree implements audit.TreeStore: the writer deletes the records in
// a transaction of its own, makes it durable, and reads the tree again;
// the refusal of appends ends when the cut tree is the log's.
func (s *Store) CutTree(ctx context.Context, records int64) error {
	_, err := s.askTree(ctx, &treeRequest{cut: true, n: int(records)})
	return err
}

// cutTree is the writer's side of CutTree.
func (s *Store) cutTree(records int64) (treeState, error) {
	if err := s.broken.Load(); err != nil {
		return s.tree, err
	}
	if err := s.w.Begin(); err != nil {
		return s.tree, s.unavailable(err)
	}
	fail := func(err error) (treeState, error) {
		s.w.Rollback()
		s.treeLoaded = false
		return s.tree, err
	}
	size, _, err := s.w.TreeEnd()
	if err != nil {
		return fail(s.unavailable(err))
	}
	if records < 0 || records > size {
		return fail(domain.Errorf(domain.EINVALID, "cannot cut the Merkle tree of %d records to %d", size, records))
	}
	pos, err := s.w.MaxPosition()
	if err == nil {
		err = s.w.DeleteTreeFrom(records)
	}
	if err == nil {
		s.forgetHeads()
		err = s.loadTree(pos)
	}
	if err != nil {
		return fail(s.unavailable(err))
	}
	if err := s.commitTxn(); err != nil {
		s.treeLoaded = false
		return s.tree, err
	}
	if err := s.wal.sync(); err != nil {
		err := domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: the write-ahead log could not be made durable: %v", err)
		s.broken.Store(err)
		return s.tree, err
	}
	s.treeLoaded = true
	s.lastCommitted.Store(pos)
	// No append is under way (the disagreeing tree refused them), so no
	// batch in the syncer's hands carries a larger size.
	s.treeSize.Store(s.tree.frontier.Size())
	if cut := s.treeCut.Load(); cut != nil {
		return s.tree, fmt.Errorf("the tree cut to %d records still disagrees with the log: %w", records, cut)
	}
	return s.tree, nil
}
