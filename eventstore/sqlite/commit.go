package sqlite

import (
	"errors"
	"slices"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// The writer's transaction, step by step: commit runs tryCommit, which
// begins a transaction (beginTxn), places each request of the batch in it
// (place: the stream's head, the expected version, a retry's duplicates,
// the seal, the positions) and inserts their rows (insert), takes in the
// appends that arrived meanwhile (extend) and places and inserts those
// too, commits (commitTxn), records the stream heads the commit left
// (publishHeads) and hands the batch to the syncer, which answers it once
// durable (durable.go).

// commit writes a batch, and the appends that arrive while it is being
// written, in one transaction, and returns the batch so extended. It first
// runs without looking event ids up: new ids are the rule, and the id
// index rejects a repeated one anyway; nor does it look up the head of a
// stream appended with NoStream, which the (stream, version) index checks
// as well. Only when an expected version does not hold (a retry looks like
// that) are the request's ids looked up. If the index rejects an id, the
// transaction is rolled back and the batch runs again with every id
// looked up first, which sorts retries from conflicts exactly.
func (s *Store) commit(batch []*appendRequest) []*appendRequest {
	batch, ok := s.tryCommit(batch, false)
	if !ok {
		for _, req := range batch {
			req.err, req.result = nil, domain.AppendResult{}
		}
		s.tryCommit(batch, true)
	}
	return batch
}

// tryCommit runs commit's transaction and hands it to the syncer (or answers
// every request itself when the transaction fails), or, only when
// !lookupIDs and an id turned out to be stored already, rolls back and
// returns false without answering. On the first run (!lookupIDs), once the
// batch's rows are inserted, the appends queued or under way meanwhile
// join the transaction (extend), round after round while more arrive:
// callers answered by the last sync append again while the writer
// inserts, and taking them into this transaction rather than the next
// writes the pages they share (the table's last page, the indexes' pages)
// to the WAL once per sync instead of once per transaction, and lets the
// syncer sync them all at once.
func (s *Store) tryCommit(batch []*appendRequest, lookupIDs bool) ([]*appendRequest, bool) {
	events := 0
	for _, req := range batch {
		events += len(req.events)
	}
	tx, err := s.beginTxn(lookupIDs, events)
	if err != nil {
		s.failRequests(batch, err)
		return batch, true
	}
	placed := 0
	deadline := time.Now().Add(min(max(time.Duration(s.lastSync.Load()), minAwait), maxJoin))
	for {
		for _, req := range batch[placed:] {
			if err := s.place(tx, req); err != nil {
				s.w.Rollback()
				s.failRequests(batch, err)
				return batch, true
			}
		}
		placed = len(batch)
		retry, err := s.insert(tx)
		switch {
		case retry:
			return batch, false
		case err != nil:
			s.failRequests(batch, err)
			return batch, true
		}
		if lookupIDs {
			break
		}
		if batch = s.extend(batch, deadline); len(batch) == placed {
			break
		}
	}
	if err := s.commitTxn(); err != nil {
		s.failRequests(batch, err)
		return batch, true
	}
	s.publishHeads(tx)
	s.tree = tx.tree
	// The syncer answers the batch once it is durable. Once it is handed
	// over the writer holds no other append (idle): the syncer, which may
	// be waiting for this batch, need not wait for another.
	s.committed <- committedBatch{requests: slices.Clone(batch), written: tx.written, position: tx.pos, treeSize: tx.tree.frontier.Size()}
	s.idle()
	return batch, true
}

// extend appends to batch the appends queued while the writer placed and
// inserted it, up to MaxBatch requests in all. While Appends are on their
// way (Store.active: callers preparing one, or just answered and about to
// append again, as a closed loop of clients does), it first waits for
// them, until deadline at most: the transaction takes them in instead of
// committing without them and leaving them to another transaction and
// another fdatasync. The wait is for all of them at once, not one by one:
// the callers prepare and seal their appends on every core meanwhile, and
// the writer inserts them with one call. It never waits when no Append is
// under way, so a lone append is committed at once.
func (s *Store) extend(batch []*appendRequest, deadline time.Time) []*appendRequest {
	if len(batch) >= s.MaxBatch {
		return batch
	}
	if s.active.Load() > 0 {
		s.awaitAppends(deadline)
	}
	return s.drain(batch)
}

// minAwait is the least time a transaction may wait for Appends under
// way (extend), however fast the last fdatasync was: 64 callers preparing
// and sealing their appends on a busy machine take about a millisecond.
// At most it waits as long as the last sync took, within maxJoin.
const minAwait = 2 * time.Millisecond

// awaitAppends waits until no Append is under way (Store.active), or until
// deadline, or Close.
func (s *Store) awaitAppends(deadline time.Time) {
	var t *time.Timer
	for s.active.Load() > 0 {
		d := time.Until(deadline)
		if d <= 0 {
			break
		}
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		}
		select {
		case <-s.activeIdle:
		case <-t.C:
			return
		case <-s.closing:
			return
		}
	}
}

// forgetHeads empties the cache of stream heads, which another process's
// appends may have made stale.
func (s *Store) forgetHeads() {
	s.mu.Lock()
	clear(s.heads)
	s.mu.Unlock()
}

// txn is the transaction tryCommit builds: the events placed in it so far,
// their records, and the stream heads they leave.
type txn struct {
	lookupIDs bool                  // look every request's ids up (commit's second run)
	pos       uint64                // the last position taken
	heads     map[string]streamHead // heads as of this transaction
	written   []domain.Event
	records   [][]byte      // records[i] is written[i]'s
	leaves    []domain.Hash // leaves[i] is written[i]'s leaf in the Merkle tree
	tree      treeState     // the tree with the rows inserted so far
	inserted  int           // written[:inserted] are in the file's transaction
	// lastEvents is how many events the last transaction committed.
	lastEvents int
}

// failRequests answers every request of batch with err, but those that
// already have an error of their own.
func (s *Store) failRequests(batch []*appendRequest, err error) {
	for _, req := range batch {
		if req.err == nil {
			req.err = err
		}
	}
	s.answer(batch)
}

// unavailable is a failed transaction's error, which WriteErr reports until
// a commit succeeds again.
func (s *Store) unavailable(err error) error {
	e := domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", err)
	s.writeFailed.Store(e)
	return e
}

// beginTxn starts the write transaction of a batch of n events, unless
// the store takes no more writes (a failed sync, a failed integrity check).
func (s *Store) beginTxn(lookupIDs bool, n int) (*txn, error) {
	if err := s.broken.Load(); err != nil {
		return nil, err
	}
	if err := s.CheckIntegrity(); err != nil {
		return nil, err
	}
	if err := s.w.Begin(); err != nil {
		return nil, s.unavailable(err)
	}
	// The transaction holds SQLite's write lock (BEGIN IMMEDIATE), so the
	// head read here is final. It differs from ours only when another
	// process (tradeledger passwd, import) appended to the same file: then
	// the cached stream heads may be stale too.
	pos, err := s.w.MaxPosition()
	if err != nil {
		s.w.Rollback()
		return nil, s.unavailable(err)
	}
	if pos != s.lastCommitted.Load() || !s.treeLoaded {
		s.forgetHeads()
		if err := s.loadTree(pos); err != nil {
			s.w.Rollback()
			s.treeLoaded = false
			return nil, s.unavailable(err)
		}
		s.treeLoaded = true
	}
	if cut := s.treeCut.Load(); cut != nil {
		s.w.Rollback()
		return nil, cut
	}
	// The map and the records' slice are the last transaction's, emptied;
	// written goes to the syncer with the batch, so it is another.
	tx := &s.tx
	if tx.heads == nil || len(tx.heads) > 4*DefaultMaxBatch {
		tx.heads = make(map[string]streamHead) // not one that a huge batch grew
	}
	clear(tx.heads)
	tx.lookupIDs, tx.pos, tx.inserted = lookupIDs, pos, 0
	tx.tree = s.tree
	tx.leaves = tx.leaves[:0]
	// Sized for as many events as the last transaction took in (within
	// MaxBatch) when more than n: extend's rounds would grow it by
	// doubling, copying every event placed so far at each step. One the
	// syncer is done with (spareWritten) is reused when large enough.
	want := max(n, min(tx.lastEvents, s.MaxBatch))
	var written []domain.Event
	select {
	case written = <-s.spareWritten:
	default:
	}
	if cap(written) < want {
		written = make([]domain.Event, 0, want)
	}
	tx.written = written
	clear(tx.records)
	tx.records = tx.records[:0]
	return tx, nil
}

// place adds req's events to tx, or answers req without them: with its
// context's error, an ECONFLICT, or, for a retry of events already stored,
// the original result. It returns an error only when the store failed, and
// then the whole transaction must be abandoned.
func (s *Store) place(tx *txn, req *appendRequest) error {
	if err := req.ctx.Err(); err != nil {
		req.err = err
		return nil
	}
	head, err := s.headOf(tx, req)
	if err != nil {
		return s.unavailable(err)
	}
	// A retry of events already stored answers with the original result.
	expectErr := req.expected.Check(req.stream, head.Version)
	if tx.lookupIDs || expectErr != nil {
		res, dup, err := s.findDuplicates(req, tx.written)
		switch {
		case err != nil:
			req.err = err
			return nil
		case dup:
			req.result = res
			return nil
		}
	}
	if expectErr != nil {
		req.err = expectErr
		return nil
	}
	if !req.sealed || req.sealedOn != head {
		req.seal(head)
	}
	tx.add(req)
	return nil
}

// headOf returns the head of req's stream in tx: as an earlier request of
// tx left it, as the last commit left it (cached), new for a NoStream
// append on the first run (the (stream, version) index refuses version 0 if
// the stream exists, and the batch runs again with lookups), or as the file
// has it.
func (s *Store) headOf(tx *txn, req *appendRequest) (streamHead, error) {
	if head, ok := tx.heads[req.stream]; ok {
		return head, nil
	}
	// s.heads is written by this goroutine only: no lock to read it.
	if head, ok := s.heads[req.stream]; ok {
		return head, nil
	}
	if !tx.lookupIDs && req.expected == domain.NoStream {
		return audit.NoStreamTip, nil
	}
	return s.w.StreamHead(req.stream)
}

// add gives req's sealed events the next positions in tx and sets req's
// result.
func (tx *txn) add(req *appendRequest) {
	first := len(tx.written)
	for i := range req.events {
		e := req.events[i]
		tx.pos++
		e.Position = tx.pos
		tx.written = append(tx.written, e)
	}
	tx.records = append(tx.records, req.records...)
	tx.leaves = append(tx.leaves, req.leaves...)
	last := &tx.written[len(tx.written)-1]
	tx.heads[req.stream] = streamHead{Version: last.Version, Hash: last.Hash, Time: last.Time}
	req.result = domain.AppendResult{
		FirstVersion: tx.written[first].Version,
		LastVersion:  last.Version,
		LastPosition: tx.pos,
	}
}

// insert inserts the rows of tx not inserted yet. On failure the
// transaction is rolled back; retry reports that an index refused a row on
// the first run (an id stored already, or a stream taken to be new that is
// not), when the batch must run again with lookups.
func (s *Store) insert(tx *txn) (retry bool, err error) {
	from := tx.inserted
	tx.inserted = len(tx.written)
	if err := s.w.Insert(tx.written[from:], tx.records[from:]); err != nil {
		s.w.Rollback()
		var se sqlite3.Error
		if !tx.lookupIDs && errors.As(err, &se) && se.Code == sqlite3.ErrConstraint {
			return true, nil
		}
		return false, s.unavailable(err)
	}
	if err := s.addTreeRows(tx, tx.written[from:], tx.leaves[from:]); err != nil {
		s.w.Rollback()
		return false, s.unavailable(err)
	}
	return false, nil
}

// commitTxn commits the transaction (rolled back on failure), and starts
// a checkpoint when the WAL has grown past the checkpoint pages
// (checkpoint.go).
func (s *Store) commitTxn() error {
	s.applyCheckpointPages()
	if err := s.w.Commit(); err != nil {
		s.w.Rollback()
		return s.unavailable(err)
	}
	s.checkpointAfterCommit()
	return nil
}

// publishHeads records tx as the last commit and caches the stream heads it
// left.
func (s *Store) publishHeads(tx *txn) {
	s.lastCommitted.Store(tx.pos)
	tx.lastEvents = len(tx.written)
	if o := s.obs.get(); o != nil {
		o.ObserveBatch(len(tx.written))
	}
	s.mu.Lock()
	if len(s.heads)+len(tx.heads) > maxCachedHeads {
		clear(s.heads)
	}
	for stream, h := range tx.heads {
		s.heads[stream] = h
	}
	s.mu.Unlock()
}
