// Package sqlite is the embedded default event store: one SQLite file in the
// data directory in WAL mode. An append is acknowledged only once it is
// durable: the WAL is fdatasynced after its commit (durable.go). A single
// writer goroutine batches concurrent appends into one transaction (group
// commit), and commits the next batch while the last one is being synced.
//
// Group commit (commit.go): while Appends are under way (callers preparing
// one, or just answered and about to append again), a transaction waits for
// them — as long as the last fdatasync took, but at least 2 ms and at most
// 20 ms — so that concurrent callers share one transaction and one
// fdatasync; a lone append is committed at once. AppendBatch (batch.go)
// queues many streams' appends as groups of up to MaxBatchEvents events,
// each one transaction, while the caller seals the next.
//
// The Merkle tree (tree.go): each event's leaf is hashed when its append is
// sealed, and the writer writes the tree's stored hashes (the tree table) in
// the same transaction as the events, so the tree never lags the log;
// BuildTree catches up a log written before it. The guard (treeguard.go)
// keeps the last signed checkpoint beside the tree, and refuses every append
// to a log that no longer holds the tree's last record, until an operator's
// CutTree.
//
// Checkpoints (checkpoint.go): past the checkpoint pages a checkpointer
// goroutine copies the WAL back into the file on a connection of its own,
// beside the writer, instead of SQLite doing it inside a commit while
// appends wait. Another process's appends to the same file are seen at the
// next poll (DefaultPollInterval) or at once with Refresh.
package sqlite

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// Defaults for Store settings.
const (
	DefaultMaxBatch = 1024 // appends merged into one transaction at most
	// DefaultMaxBatchEvents bounds the events of one AppendBatch group
	// (one transaction): about 4 MB of records. While the writer commits
	// a group, the caller seals the next one; larger groups left the writer
	// idle longer at the start of each batch (an import of 200,000 orders
	// with time-ordered ids, 4 alternating pairs: 25,800-31,000 orders/s
	// with groups of 65,536 events, 30,900-36,200 with 8,192). Appends to
	// streams at random places of the index want larger groups.
	DefaultMaxBatchEvents = 1 << 13
	DefaultReadBatchSize  = 4096 // rows fetched per query by iterators
	// DefaultCheckpointPages is the WAL size, in pages, past which a commit
	// copies the WAL back into the database file (SQLite's own default of
	// wal_autocheckpoint): small commits keep the WAL file small, and its
	// fdatasyncs cheap. SetCheckpointPages changes it.
	DefaultCheckpointPages = 1000
)

const schema = `
CREATE TABLE IF NOT EXISTS events (
	position INTEGER PRIMARY KEY,
	stream   TEXT    NOT NULL,
	version  INTEGER NOT NULL,
	id       BLOB    NOT NULL, -- idKey: 16 bytes of a UUID
	hash     BLOB    NOT NULL,
	record   BLOB    NOT NULL -- the whole envelope but position (record.go)
);
CREATE UNIQUE INDEX IF NOT EXISTS events_stream_version ON events (stream, version);
CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events (id);
CREATE TABLE IF NOT EXISTS tree (
	record   INTEGER PRIMARY KEY, -- index in the Merkle tree (tree.go)
	position INTEGER NOT NULL,    -- the event's position
	hashes   BLOB    NOT NULL     -- its stored hashes, 32 bytes each: leaf, then each subtree it completes
);
CREATE TABLE IF NOT EXISTS checkpoint (
	id        INTEGER PRIMARY KEY CHECK (id = 1),
	position  INTEGER NOT NULL, -- the last CheckpointSigned event the tree added (treeguard.go)
	size      INTEGER NOT NULL, -- the records it signs
	abandoned INTEGER NOT NULL, -- 1 once CutTree abandoned it
	data      BLOB    NOT NULL  -- its payload
);
`

// Store is a domain.EventStore in one SQLite file.
type Store struct {
	// Path is the database file.
	Path string
	// MaxBatch bounds how many appends one transaction merges.
	MaxBatch int
	// MaxBatchEvents bounds how many events of one AppendBatch the writer
	// takes as one group, committed in one transaction (with whatever
	// appends are queued beside it); MaxBatch does not split a group.
	MaxBatchEvents int
	// ReadBatchSize is how many rows an iterator fetches per query.
	ReadBatchSize int

	w *writerConn // the writer goroutine's connection (writer.go)

	// The write pipeline: Append → appends → writer → committed → syncer.
	appends   chan *appendRequest
	committed chan committedBatch // writer → syncer
	synced    chan struct{}       // closed when the syncer ends
	closing   chan struct{}       // closed by Close
	done      chan struct{}       // closed when writer and syncer have ended
	wal       *walFile
	broken    atomic.Pointer[domain.Error] // set when a sync failed: no more writes
	// Why writes fail now, for WriteErr: the integrity check's verdict
	// (for good), and the last commit's failure (disk full, I/O), cleared
	// by the next commit made durable.
	badIntegrity atomic.Pointer[domain.Error]
	writeFailed  atomic.Pointer[domain.Error]

	integrity integrityCheck     // CheckIntegrity's result
	checkFile fileCheck          // quickCheck; tests replace it
	checkCtx  context.Context    // the integrity check's, cancelled at Close
	stopCheck context.CancelFunc // cancels checkCtx

	readersMu     sync.Mutex
	idleReaders   []*rowReader // pooled row readers (read.go)
	idleTree      []*treeConn  // pooled tree connections (tree.go)
	readersClosed bool

	mu     sync.Mutex
	head   uint64
	notify chan struct{}  // closed and replaced after every commit
	recent []domain.Event // last committed events, consecutive positions

	heads         map[string]streamHead // recent stream heads: the writer writes them under mu and reads them without it; callers read them under mu (expectedHead)
	lastCommitted atomic.Uint64         // written by the writer only: head after its last commit
	closed        bool

	obs observer // write metrics (observe.go)

	tx txn // the writer's transaction, reused (commit.go)
	// spareWritten holds transactions' written events the syncer is done
	// with, emptied, for the writer to reuse (durable.go).
	spareWritten chan []domain.Event

	// writing is set while the writer holds appends it has not handed to
	// the syncer (or answered); writerIdle is signalled when it clears.
	writing    atomic.Bool
	writerIdle chan struct{}

	// active counts the Appends that are about to queue a request: from
	// their start until queued, and from their answer until they return
	// (a caller answered is likely to append again at once). The writer
	// keeps its transaction open for them (commit.go); activeIdle is
	// signalled when the count drops to zero.
	active     atomic.Int64
	activeIdle chan struct{}
	lastSync   atomic.Int64 // how long the last fdatasync took (ns)

	// requests holds the *appendRequests of Appends, reused (newRequest).
	requests sync.Pool

	checkpointPages atomic.Int64 // SetCheckpointPages's; the writer applies it
	// ckpt checkpoints beside the writer (checkpoint.go), started by the
	// writer at the first checkpoint due; checkpoints counts those it ran
	// and those the writer ran itself.
	ckpt        *checkpointer
	checkpoints struct{ background, writer atomic.Int64 }

	// The Merkle tree (tree.go): the writer's state, whether it was read
	// from the file, the durable size readers see, and BuildTree's
	// requests to the writer. noTree leaves the tree unwritten (the
	// appends benchmark's baseline).
	tree       treeState
	treeLoaded bool
	treeSize   atomic.Int64
	treeReqs   chan *treeRequest
	noTree     bool
	// treeCut says why the tree is not the log's (treeguard.go): set, no
	// append and no BuildTree is taken until CutTree.
	treeCut atomic.Pointer[domain.Error]
}

var (
	_ domain.EventStore = (*Store)(nil)
	_ audit.TreeStore   = (*Store)(nil)
)

// NewStore returns a Store for the file at path, with default settings.
// Call Open before use.
func NewStore(path string) *Store {
	return &Store{Path: path, MaxBatch: DefaultMaxBatch, MaxBatchEvents: DefaultMaxBatchEvents, ReadBatchSize: DefaultReadBatchSize}
}

// Open opens (creating if needed) the database and starts the writer. A file
// that is not a SQLite database is an error. The full integrity check reads
// the whole file, so it is not part of Open: see CheckIntegrity.
func (s *Store) Open() error {
	w, err := openWriter(s.Path)
	if err != nil {
		return fmt.Errorf("open %s: %w", s.Path, err)
	}
	s.w = w
	if s.head, err = w.MaxPosition(); err != nil {
		s.Close()
		return fmt.Errorf("open %s: %w", s.Path, err)
	}
	if s.wal, err = openWAL(s.Path); err != nil {
		s.Close()
		return fmt.Errorf("open %s: %w", s.Path, err)
	}
	if s.MaxBatch <= 0 {
		s.MaxBatch = DefaultMaxBatch
	}
	if s.MaxBatchEvents <= 0 {
		s.MaxBatchEvents = DefaultMaxBatchEvents
	}
	if s.ReadBatchSize <= 0 {
		s.ReadBatchSize = DefaultReadBatchSize
	}
	if err := s.loadTree(s.head); err != nil {
		s.Close()
		return fmt.Errorf("open %s: %w", s.Path, err)
	}
	s.treeLoaded = true
	s.treeSize.Store(s.tree.frontier.Size())
	s.treeReqs = make(chan *treeRequest)
	s.checkCtx, s.stopCheck = context.WithCancel(context.Background())
	s.checkFile = quickCheck
	s.notify = make(chan struct{})
	s.heads = make(map[string]streamHead)
	s.lastCommitted.Store(s.head)
	s.appends = make(chan *appendRequest, s.MaxBatch)
	s.closing = make(chan struct{})
	s.done = make(chan struct{})
	s.committed = make(chan committedBatch)
	s.spareWritten = make(chan []domain.Event, 4)
	s.synced = make(chan struct{})
	s.writerIdle = make(chan struct{}, 1)
	s.activeIdle = make(chan struct{}, 1)
	go s.syncLoop()
	go s.writeLoop()
	go s.watchOtherWriters()
	return nil
}

// SetCheckpointPages sets the WAL size, in pages of 4 KiB, past which a
// checkpoint copies the WAL into the database file and syncs it (n ≤ 0 is
// DefaultCheckpointPages): beside the writer, on a connection of its own
// (checkpoint.go), or by the writer itself once the WAL holds catchUpPages
// times as many. A bulk writer (an import) sets it higher: a checkpoint
// then covers several of its large commits, so the database file is synced
// and the indexes' pages copied fewer times, and the WAL file grows to n
// pages or a few times that (it is removed when the store closes). It may
// be called at any time, from any goroutine: the writer applies it before
// its next transaction.
func (s *Store) SetCheckpointPages(n int) {
	s.checkpointPages.Store(int64(n))
}

// applyCheckpointPages sets the checkpoint size SetCheckpointPages asked
// for and watches the WAL's size in place of SQLite's own checkpoints
// (the writer goroutine only, before a commit).
func (s *Store) applyCheckpointPages() {
	s.w.watchWAL()
	want := int(s.checkpointPages.Load())
	if want <= 0 {
		want = DefaultCheckpointPages
	}
	s.w.checkpointPages = want
}

// Close stops the writer (appends already queued are written first) and
// closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	if s.stopCheck != nil {
		s.stopCheck()
		// Wait for a check under way, interrupted just now, to close its
		// connection: nothing touches the file's directory once Close has
		// returned (a check that starts later finds checkCtx cancelled).
		s.integrity.mu.Lock()
		//lint:ignore SA2001 the lock is the barrier: it waits for CheckIntegrity to return
		s.integrity.mu.Unlock()
	}
	if s.closing != nil {
		close(s.closing)
		<-s.done
	}
	s.ckpt.stop() // before the writer's connection, whose close checkpoints the rest and removes the WAL
	s.closeReaders()
	var errs []error
	errs = append(errs, s.wal.close())
	s.w.close()
	return errors.Join(errs...)
}

type appendRequest struct {
	ctx      context.Context
	stream   string
	expected domain.ExpectedVersion
	events   []domain.Event
	result   domain.AppendResult
	err      error
	// done receives one value when the request is answered (answer), once
	// per request: an Append's request is reused only after its caller
	// took that value, so a reused channel holds no stale answer.
	done chan struct{}
	// group holds the requests queued with this one by AppendBatch, which
	// the writer takes into the same transaction, in order, after it.
	group []*appendRequest
	// single marks a request of Append, counted in Store.active.
	single bool

	// sealedOn is the stream head that events were sealed on (versions,
	// hashes and records computed), when sealed. The caller seals on the
	// head it expects, so that the hashing runs beside the single writer;
	// the writer uses the seal only if that head is the real one.
	sealed   bool
	sealedOn streamHead
	records  [][]byte      // records[i] is events[i]'s record, when sealed
	stamped  []int64       // the events' times as the caller stamped them (set at the first seal)
	leaves   []domain.Hash // leaves[i] is events[i]'s leaf in the Merkle tree, when sealed

	// one holds the backing arrays of events, records, stamped and
	// leaves for an Append of a single event, the common append, which
	// then allocates none of them (nil in AppendBatch's requests, which
	// take theirs from larger arrays).
	one *oneEvent
}

// oneEvent is the backing arrays of a single event's request.
type oneEvent struct {
	event  [1]domain.Event
	record [1][]byte
	stamp  [1]int64
	leaf   [1]domain.Hash
}

// newRequest returns an Append's request, single, with its done channel:
// reused from an earlier Append (putRequest) when there is one, so that
// the common append allocates neither the request nor the channel.
func (s *Store) newRequest() *appendRequest {
	if req, ok := s.requests.Get().(*appendRequest); ok {
		return req
	}
	return &appendRequest{done: make(chan struct{}, 1), single: true, one: new(oneEvent)}
}

// putRequest makes req, taken from newRequest, reusable. Only its caller
// may call it, once it has the answer (or never queued req): the writer
// and the syncer do not touch a request after they answered it.
func (s *Store) putRequest(req *appendRequest) {
	*req.one = oneEvent{} // nothing of this append kept alive by the pool
	*req = appendRequest{done: req.done, single: true, one: req.one}
	s.requests.Put(req)
}

// seal numbers, stamps and chains req.events onto head (audit.Chain) and
// encodes their records. The events' times were stamped by the caller; a
// seal on another head starts again from those.
func (req *appendRequest) seal(head streamHead) { req.sealInto(head, nil) }

// sealInto is seal with the records written into arena when it is not nil
// (AppendBatch's, in its caller's goroutine only), else into a buffer of
// their own.
func (req *appendRequest) sealInto(head streamHead, arena *recordArena) {
	size := 0
	for i := range req.events {
		size += recordSize(&req.events[i], req.stream)
	}
	if req.stamped == nil {
		if len(req.events) == 1 && req.one != nil {
			req.stamped, req.records, req.leaves = req.one.stamp[:], req.one.record[:0], req.one.leaf[:0]
		} else {
			req.stamped = make([]int64, len(req.events))
			req.records = make([][]byte, 0, len(req.events))
			req.leaves = make([]domain.Hash, 0, len(req.events))
		}
		for i := range req.events {
			req.stamped[i] = req.events[i].Time
		}
	}
	for i := range req.events {
		req.events[i].Time = req.stamped[i]
	}
	audit.Chain(req.stream, head, req.events)
	var buf []byte
	if arena != nil {
		buf = arena.take(size)
	} else {
		buf = make([]byte, 0, size)
	}
	req.records, req.leaves = req.records[:0], req.leaves[:0]
	for i := range req.events {
		e := &req.events[i]
		from := len(buf)
		buf = appendRecord(buf, e)
		rec := buf[from:len(buf):len(buf)]
		req.records = append(req.records, rec)
		// Hashed here, beside the single writer, which only links it
		// into the tree.
		req.leaves = append(req.leaves, audit.TreeLeaf(e.Hash))
		// From now on the event's payload is the record's copy: the
		// caller's slice is not the store's to keep, the record is never
		// written again, and the recent window (remember) need not copy it.
		e.Data = recordData(rec, len(e.Data))
	}
	req.sealed, req.sealedOn = true, head
}

// expectedHead is the head that an append expecting expected is most likely
// to find, when the store can tell without the file: none for NoStream, the
// cached one when it agrees with expected.
func (s *Store) expectedHead(stream string, expected domain.ExpectedVersion) (streamHead, bool) {
	if expected == domain.NoStream {
		return audit.NoStreamTip, true
	}
	s.mu.Lock()
	head, ok := s.heads[stream]
	s.mu.Unlock()
	return head, ok && expected.Check(stream, head.Version) == nil
}

// Append implements domain.EventStore.
func (s *Store) Append(ctx context.Context, stream string, expected domain.ExpectedVersion, events ...domain.Event) (domain.AppendResult, error) {
	// Checking and compacting happen in the caller's goroutine: the single
	// writer need not do them.
	if o := s.obs.get(); o != nil {
		start := time.Now()
		defer func() { o.ObserveAppend(time.Since(start)) }()
	}
	s.active.Add(1)
	req := s.newRequest()
	var err error
	if req.events, err = domain.PrepareAppendTo(req.one.event[:0], stream, expected, events); err != nil {
		s.leave()
		s.putRequest(req)
		return domain.AppendResult{}, err
	}
	req.ctx, req.stream, req.expected = ctx, stream, expected
	if head, ok := s.expectedHead(stream, expected); ok {
		req.seal(head)
	}
	queued := false
	select {
	case <-s.closing:
		s.leave()
		s.putRequest(req)
		return domain.AppendResult{}, domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	default:
	}
	select {
	case s.appends <- req:
		queued = true
	default:
		// The queue is full: the writer must not wait for this append
		// (Store.active) while it waits for room.
	}
	s.leave()
	if !queued {
		if err := s.enqueue(ctx, req); err != nil {
			s.putRequest(req)
			return domain.AppendResult{}, err
		}
	}
	// Once queued, the request is written or failed by the writer; waiting
	// for it even if ctx ends keeps "acknowledged" meaning "durable".
	<-req.done
	s.leave() // answer counted it again
	res, err := req.result, req.err
	s.putRequest(req)
	return res, err
}

// enqueue queues req, waiting for room in the queue.
func (s *Store) enqueue(ctx context.Context, req *appendRequest) error {
	select {
	case s.appends <- req:
		return nil
	case <-s.closing:
		return domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answer answers reqs (their results or errors set). The callers of
// Appends count as active again until they return (see Store.active),
// counted before the first is answered. A request answered is its
// caller's again (putRequest): nothing reads or writes it after.
func (s *Store) answer(reqs []*appendRequest) {
	s.active.Add(int64(singles(reqs)))
	for _, req := range reqs {
		req.done <- struct{}{}
	}
}

// singles counts the requests of Appends in reqs.
func singles(reqs []*appendRequest) int {
	n := 0
	for _, req := range reqs {
		if req.single {
			n++
		}
	}
	return n
}

// leave ends one count of Store.active.
func (s *Store) leave() {
	if s.active.Add(-1) == 0 {
		select {
		case s.activeIdle <- struct{}{}:
		default:
		}
	}
}

// writeLoop is the single writer: it merges queued appends into one
// transaction, commits it and hands it to the syncer, which answers the
// requests once the commit is durable (durable.go). The handover waits while
// the syncer is busy with the previous batch, so there is at most one batch
// syncing and one committed, and appends gather meanwhile.
func (s *Store) writeLoop() {
	defer func() {
		close(s.committed)
		<-s.synced
		close(s.done)
	}()
	batch := make([]*appendRequest, 0, s.MaxBatch)
	for {
		select {
		case req := <-s.treeReqs:
			s.serveTree(req)
			continue
		case req := <-s.appends:
			s.writing.Store(true)
			batch = append(append(batch[:0], req), req.group...)
		case <-s.closing:
			// Fail whatever is still queued.
			for {
				select {
				case req := <-s.appends:
					reqs := append([]*appendRequest{req}, req.group...)
					for _, r := range reqs {
						r.err = domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
					}
					s.answer(reqs)
				default:
					return
				}
			}
		}
		// Group commit: everything queued goes into one transaction.
		// Appends queue up while the writer waits to hand its last
		// batch to the syncer.
		batch = s.commit(s.drain(batch))
		s.idle()
	}
}

// idle tells the syncer that the writer holds no appends (see
// joinCommitting).
func (s *Store) idle() {
	if s.writing.Swap(false) {
		select {
		case s.writerIdle <- struct{}{}:
		default:
		}
	}
}

// drain appends every queued request to batch (an AppendBatch group
// whole), until batch holds MaxBatch or more.
func (s *Store) drain(batch []*appendRequest) []*appendRequest {
	for len(batch) < s.MaxBatch {
		select {
		case req := <-s.appends:
			batch = append(append(batch, req), req.group...)
		default:
			return batch
		}
	}
	return batch
}

// CheckIntegrity runs SQLite's quick_check over the whole file until it
// gives a verdict, which later calls return; a check that could not run
// (I/O, a lock) is EUNAVAILABLE and runs again at the next call. It reads
// every page (seconds for millions of events), so Open leaves it out and the
// writer runs it before its first transaction: a damaged file is never
// written to, and every append fails with the check's EINTERNAL error
// instead. A service calls it in the background once it is ready, so that
// its first write need not wait. Close interrupts it and returns once it
// has ended (the result is then EUNAVAILABLE); called after Close, it opens
// nothing and is EUNAVAILABLE. Reads are not held back: a damaged table page fails the
// read that meets it ("event log is corrupt").
func (s *Store) CheckIntegrity() error {
	c := &s.integrity
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.err
	}
	if s.checkCtx.Err() != nil { // closed: open no connection to the file
		return domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	}
	check, err := s.checkFile(s.Path, s.checkCtx.Done())
	switch {
	case s.checkCtx.Err() != nil:
		return domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	case err == nil && check == "ok":
		c.done = true
	case err == nil || IsCorrupt(err):
		// A verdict on the file: it holds for as long as the process runs.
		if err == nil {
			err = errors.New(check)
		}
		verdict := domain.Errorf(domain.EINTERNAL, "event log %s failed its integrity check: %v", s.Path, err)
		c.done, c.err = true, verdict
		s.badIntegrity.Store(verdict)
	default:
		// The check could not run (I/O, locks): no verdict, the next
		// write tries again.
		return domain.Errorf(domain.EUNAVAILABLE, "event log %s could not be checked: %v", s.Path, err)
	}
	return c.err
}

// fileCheck checks the database file at path (quickCheck), stopping when
// interrupt closes; it returns the check's first line, "ok" when sound.
type fileCheck func(path string, interrupt <-chan struct{}) (string, error)

// integrityCheck is the verdict of CheckIntegrity, once there is one.
type integrityCheck struct {
	mu   sync.Mutex
	done bool
	err  error
}

// DefaultPollInterval is how often the store looks for events appended by
// another process (an operator command run beside the service), so that
// subscribers see them too.
const DefaultPollInterval = 500 * time.Millisecond

// pollHead reads the file's last position through a pooled reader.
func (s *Store) pollHead() (uint64, error) {
	r, err := s.reader()
	if err != nil {
		return 0, err
	}
	defer s.release(r)
	return r.maxPosition()
}

// watchOtherWriters polls the file's head and wakes subscribers when another
// process appended. Appends of this process wake them at once.
func (s *Store) watchOtherWriters() {
	t := time.NewTicker(DefaultPollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		_, _ = s.Refresh()
	}
}

// Refresh reads the file's head now, as the store does every
// DefaultPollInterval, and wakes the subscribers when another process
// (an operator command run beside the service) appended since: a caller
// about to act on state such a command may have just changed waits for
// its projections to reach the returned head instead of for the next
// poll. It returns the head, this process's appends included.
func (s *Store) Refresh() (uint64, error) {
	maxPos, err := s.pollHead()
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	other := maxPos > s.head && maxPos > s.lastCommitted.Load()
	if other {
		s.head = maxPos
		close(s.notify)
		s.notify = make(chan struct{})
	}
	head := s.head
	s.mu.Unlock()
	if other {
		s.refreshTreeSize()
	}
	return head, nil
}

// refreshTreeSize reads the tree's size from the file, which another
// process extended with its appends: the writer learns of them at its
// next transaction, readers now.
func (s *Store) refreshTreeSize() {
	c, err := s.treeReader()
	if err != nil {
		return
	}
	defer s.releaseTree(c)
	if size, _, err := treeEnd(c.db, c.end); err == nil && size > s.treeSize.Load() {
		s.treeSize.Store(size)
	}
}

// streamHead is a stream's last version, hash and time; version -1 means
// no stream.
type streamHead = audit.StreamTip

// recentEvents is how many of the last committed events the store keeps in
// memory for live subscribers, which then need not read back from the file
// what was just written: the projections see a write sooner, and the
// writer's connection is not shared with a read per commit.
const recentEvents = 4096

// remember adds just-committed events to the recent window (s.mu held).
// The window holds consecutive positions only: an append by another process
// leaves a gap, and then the window starts over.
func (s *Store) remember(evs []domain.Event) {
	if len(evs) == 0 {
		return
	}
	if n := len(s.recent); n > 0 && s.recent[n-1].Position+1 != evs[0].Position {
		s.recent = s.recent[:0]
	}
	if s.recent == nil {
		// At its working size at once: grown by appends, the window
		// would be copied a dozen times over its first 8k events.
		s.recent = make([]domain.Event, 0, 2*recentEvents+DefaultMaxBatch)
	}
	// Their payloads are their records' (seal): the store's, never
	// written again.
	s.recent = append(s.recent, evs...)
	if len(s.recent) > 2*recentEvents {
		s.recent = append(s.recent[:0], s.recent[len(s.recent)-recentEvents:]...)
	}
}

// fromRecent appends to buf up to max events from position from on, if the
// recent window holds from; ok is false when the file must be read instead.
func (s *Store) fromRecent(from uint64, max int, buf []domain.Event) ([]domain.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recent) == 0 || from < s.recent[0].Position || from > s.recent[len(s.recent)-1].Position {
		return buf, false
	}
	i := int(from - s.recent[0].Position)
	end := min(len(s.recent), i+max)
	return append(buf, s.recent[i:end]...), true
}

// maxCachedHeads bounds the writer's cache of stream heads.
const maxCachedHeads = 1 << 16

// idKey is the indexed form of an event id: the 16 bytes of a UUID, or the
// text itself for other ids.
func idKey(id string) []byte {
	var k [16]byte
	if uuidKey(id, &k) {
		return k[:]
	}
	return []byte(id)
}

// appendIDKey appends id's key (idKey) to b, after its length (uint32,
// little endian), without allocating.
func appendIDKey(b []byte, id string) []byte {
	var k [16]byte
	if uuidKey(id, &k) {
		b = binary.LittleEndian.AppendUint32(b, 16)
		return append(b, k[:]...)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(id)))
	return append(b, id...)
}

// uuidKey decodes id into k if id is a UUID in its text form.
func uuidKey(id string, k *[16]byte) bool {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return false
	}
	var src [32]byte
	copy(src[0:8], id[0:8])
	copy(src[8:12], id[9:13])
	copy(src[12:16], id[14:18])
	copy(src[16:20], id[19:23])
	copy(src[20:32], id[24:36])
	_, err := hex.Decode(k[:], src[:])
	return err == nil
}

// findDuplicates reports whether req's events are all already in its stream
// (a retry), with the original result. Ids found elsewhere, or only some of
// the ids, are an ECONFLICT: the retry does not match what was written.
func (s *Store) findDuplicates(req *appendRequest, pending []domain.Event) (domain.AppendResult, bool, error) {
	var res domain.AppendResult
	found := 0
	for i, e := range req.events {
		stream, version, position, ok, err := s.lookupID(e.ID, pending)
		if err != nil {
			return res, false, domain.Errorf(domain.EUNAVAILABLE, "event store unavailable: %v", err)
		}
		if !ok {
			continue
		}
		if stream != req.stream {
			return res, false, domain.Errorf(domain.ECONFLICT, "event id %s is already in stream %s", e.ID, stream)
		}
		if found == 0 && i == 0 {
			res.FirstVersion = version
		}
		res.LastVersion, res.LastPosition = version, position
		found++
	}
	switch {
	case found == 0:
		return res, false, nil
	case found < len(req.events):
		return res, false, domain.Errorf(domain.ECONFLICT, "append to %s: %d of %d event ids already stored", req.stream, found, len(req.events))
	}
	return res, true, nil
}

func (s *Store) lookupID(id string, pending []domain.Event) (stream string, version int64, position uint64, ok bool, err error) {
	for i := range pending {
		if pending[i].ID == id {
			return pending[i].Stream, pending[i].Version, pending[i].Position, true, nil
		}
	}
	return s.w.LookupID(idKey(id))
}

// WriteErr returns why appends fail at the moment, or nil: a failed
// fdatasync or a failed integrity check (both for as long as the process
// runs), a Merkle tree that is not the log's (until CutTree), or the last transaction's failure (disk full, I/O error, the file
// locked by another process) until a commit succeeds again. A health check
// reports it; it never blocks.
func (s *Store) WriteErr() error {
	for _, p := range []*atomic.Pointer[domain.Error]{&s.broken, &s.badIntegrity, &s.treeCut, &s.writeFailed} {
		if e := p.Load(); e != nil {
			return e
		}
	}
	return nil
}

// Head implements domain.EventStore.
func (s *Store) Head(ctx context.Context) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head, nil
}

// changed returns the current head and a channel closed at the next commit.
func (s *Store) changed() (uint64, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head, s.notify
}

// IsCorrupt reports whether err says the database file is damaged.
func IsCorrupt(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	return false
}
