package sqlite

import (
	"context"
	"errors"

	"github.com/tradeledger/tradeledger/domain"
)

// selectColumns are the columns tl_fill reads (rowreader.go).
const selectColumns = `SELECT position, record, hash FROM events `

// ReadStream implements domain.EventStore.
func (s *Store) ReadStream(ctx context.Context, stream string, from int64, max int) domain.EventIterator {
	it := &iterator{store: s, ctx: ctx, max: max}
	it.query = func(r *rowReader, limit int, buf []domain.Event) ([]domain.Event, error) {
		return r.readByStream(stream, from+int64(it.count), limit, buf)
	}
	return it
}

// ReadAll implements domain.EventStore.
func (s *Store) ReadAll(ctx context.Context, from uint64, max int) domain.EventIterator {
	it := &iterator{store: s, ctx: ctx, max: max, next: from}
	it.query = it.readByPosition
	it.prefetch = max <= 0 // a whole log from some position on: a replay
	return it
}

// ReadAllNoHashes is ReadAll(ctx, from, 0) for a replay into read models,
// which never read an event's hashes: the events come without them (zero
// PrevHash and Hash), so that neither the hashes nor the hash column are
// copied out of the file, and a row whose hash column disagrees with its
// record is not flagged (verification reads with ReadAll). The events of
// ReadBatchSize rows share the buffer those rows were copied into from
// the file, never written again, for their streams, ids, correlations and
// Data (types and actors are copies of their own): a reader that keeps
// one of those strings past the event should copy it, or it keeps that
// buffer in memory. Everything else about the events is what ReadAll
// gives.
func (s *Store) ReadAllNoHashes(ctx context.Context, from uint64) domain.EventIterator {
	it := &iterator{store: s, ctx: ctx, next: from, prefetch: true, noHashes: true}
	it.query = it.readByPosition // not used: prefetch reads
	return it
}

// Subscribe implements domain.EventStore. It reads committed rows in
// batches and, once caught up, waits for the next commit: a slow consumer
// only falls behind in the file, never loses events.
func (s *Store) Subscribe(ctx context.Context, from uint64) domain.EventIterator {
	it := &iterator{store: s, ctx: ctx, next: from, live: true}
	it.query = it.readByPosition
	return it
}

func (it *iterator) readByPosition(r *rowReader, limit int, buf []domain.Event) ([]domain.Event, error) {
	return r.readByPosition(it.next, limit, buf)
}

// Row readers are pooled: opening one costs a connection and its prepared
// statements.
const maxIdleReaders = 8

// reader returns an idle row reader, or a new one.
func (s *Store) reader() (*rowReader, error) {
	if r, ok, err := takeIdle(s, &s.idleReaders); ok || err != nil {
		return r, err
	}
	return openRowReader(s.Path)
}

// release returns r to the pool, or closes it.
func (s *Store) release(r *rowReader) {
	releaseIdle(s, &s.idleReaders, maxIdleReaders, r, (*rowReader).close)
}

// takeIdle takes the connection last put in pool (one of the Store's
// pools of read connections, guarded by readersMu): ok is false when none
// is idle, and err EUNAVAILABLE once the readers are closed.
func takeIdle[C any](s *Store, pool *[]C) (c C, ok bool, err error) {
	s.readersMu.Lock()
	defer s.readersMu.Unlock()
	if n := len(*pool); n > 0 {
		c = (*pool)[n-1]
		*pool = (*pool)[:n-1]
		return c, true, nil
	}
	if s.readersClosed {
		return c, false, domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	}
	return c, false, nil
}

// releaseIdle puts c back in pool, or closes it with discard (under
// readersMu) when the readers are closed or limit connections are idle
// already.
func releaseIdle[C any](s *Store, pool *[]C, limit int, c C, discard func(C)) {
	s.readersMu.Lock()
	defer s.readersMu.Unlock()
	if s.readersClosed || len(*pool) >= limit {
		discard(c)
		return
	}
	*pool = append(*pool, c)
}

// closeReaders closes the idle readers; readers in use close on release.
func (s *Store) closeReaders() {
	s.readersMu.Lock()
	defer s.readersMu.Unlock()
	s.readersClosed = true
	for _, r := range s.idleReaders {
		r.close()
	}
	s.idleReaders = nil
	for _, c := range s.idleTree {
		c.close()
	}
	s.idleTree = nil
}

// iterator pages through a query in batches of ReadBatchSize rows so that no
// read transaction stays open while the caller works.
type iterator struct {
	store *Store
	ctx   context.Context
	query func(r *rowReader, limit int, buf []domain.Event) ([]domain.Event, error)
	live  bool   // wait for new commits instead of ending
	max   int    // ≤ 0: unlimited
	count int    // events delivered
	next  uint64 // next position to read (ReadAll, Subscribe)
	buf   []domain.Event
	i     int
	cur   domain.Event
	err   error
	ended bool // a short batch: nothing more to read (not live)

	// prefetch: the rows are copied from the file by a goroutine of its
	// own (started at the first read), one batch ahead of the decoding.
	prefetch bool
	ahead    *readAhead
	noHashes bool // ReadAllNoHashes (prefetching only)
}

// readAhead is a prefetching iterator's row copier: it copies batches of
// undecoded rows (ReadBatchSize each) while the iterator decodes the
// previous one, so that on two cores the copy from SQLite and the decoding
// overlap instead of adding up.
type readAhead struct {
	batches chan rowBatch // closed after the last batch
	free    chan []byte   // decoded batches' buffers, for reuse (with hashes only)
	stop    chan struct{} // closed by the iterator's Close
	done    chan struct{} // closed when the copier has ended
	cur     []byte        // the undecoded rows of the batch being decoded
	spent   []byte        // cur's whole buffer, for free
	hashes  bool          // the rows are copied with their hashes
	kept    keptStrings   // without hashes: decodeRowsShared's types and actors
}

type rowBatch struct {
	rows []byte
	err  error
}

// copyAhead copies batches of rows from position from on into a.batches
// until the last one (a short batch), an error, or a.stop.
func (s *Store) copyAhead(a *readAhead, from uint64) {
	defer close(a.done)
	defer close(a.batches)
	last := 0 // bytes of the last batch
	for {
		var buf []byte
		if a.hashes {
			select {
			case buf = <-a.free:
			default:
			}
		}
		if buf == nil && last > 0 {
			// The events' strings point into the rows
			// (decodeRowsShared): a new buffer each time, of about
			// the last one's size. So too when no spent buffer is back
			// yet: sized at once rather than grown from the reader's
			// default, copying the rows at each doubling.
			buf = make([]byte, 0, last+last/32)
		}
		var b rowBatch
		var n int
		var lastPos uint64
		r, err := s.reader()
		if err == nil {
			b.rows, n, lastPos, err = r.copyByPosition(from, s.ReadBatchSize, buf[:0], a.hashes)
			s.release(r)
			last = len(b.rows)
		}
		b.err = err
		select {
		case a.batches <- b:
		case <-a.stop:
			return
		case <-s.closing: // an iterator left open does not outlive the store
			return
		}
		if err != nil || n < s.ReadBatchSize {
			return
		}
		from = lastPos + 1
	}
}

// readPrefetched appends up to limit events to dst from the copier,
// starting it if need be; it sets it.ended after the last batch.
func (it *iterator) readPrefetched(dst []domain.Event, limit int) ([]domain.Event, error) {
	a := it.ahead
	if a == nil {
		a = &readAhead{batches: make(chan rowBatch, 1), free: make(chan []byte, 2), stop: make(chan struct{}), done: make(chan struct{}), hashes: !it.noHashes}
		it.ahead = a
		go it.store.copyAhead(a, it.next)
	}
	start := len(dst)
	for len(dst)-start < limit {
		if len(a.cur) == 0 {
			if a.spent != nil && a.hashes {
				select {
				case a.free <- a.spent:
				default:
				}
			}
			a.spent = nil
			if err := it.ctx.Err(); err != nil {
				return dst, err
			}
			b, ok := <-a.batches
			if !ok {
				it.ended = true
				return dst, nil
			}
			if b.err != nil {
				return dst, b.err
			}
			a.cur, a.spent = b.rows, b.rows
			if len(a.cur) == 0 {
				continue
			}
		}
		var err error
		if a.hashes {
			a.cur, dst, err = decodeRows(a.cur, limit-(len(dst)-start), dst)
		} else {
			a.cur, dst, err = decodeRowsShared(a.cur, limit-(len(dst)-start), dst, &a.kept)
		}
		if err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func (it *iterator) Next() bool {
	for it.err == nil {
		if it.i < len(it.buf) {
			it.cur = it.buf[it.i]
			it.i++
			it.count++
			it.next = it.cur.Position + 1
			return true
		}
		if (it.max > 0 && it.count >= it.max) || it.ended {
			return false
		}
		if err := it.ctx.Err(); err != nil {
			it.err = err
			return false
		}
		if it.live {
			if head, wait := it.store.changed(); it.next > head {
				select {
				case <-wait:
				case <-it.ctx.Done():
					it.err = it.ctx.Err()
				}
				continue
			}
			var ok bool
			if it.buf, ok = it.store.fromRecent(it.next, it.store.ReadBatchSize, it.buf[:0]); ok {
				it.i = 0
				continue
			}
		}
		it.err = it.fill()
	}
	return false
}

// fill reads the next batch into it.buf.
func (it *iterator) fill() error {
	var err error
	it.buf, err = it.read(it.buf[:0], it.store.ReadBatchSize)
	it.i = 0
	return err
}

// read appends the next rows (at most limit, and ReadBatchSize, in one read
// transaction, so that none stays open while the caller works) to dst.
func (it *iterator) read(dst []domain.Event, limit int) ([]domain.Event, error) {
	limit = min(limit, it.store.ReadBatchSize)
	if it.max > 0 {
		limit = min(limit, it.max-it.count)
	}
	if it.live {
		// A subscriber sees only what is durable: the file may already
		// hold a commit the syncer has not made durable yet (positions
		// are consecutive, so the head bounds the rows).
		head, _ := it.store.changed()
		if it.next > head {
			return dst, nil
		}
		limit = int(min(uint64(limit), head-it.next+1))
	}
	var err error
	start := len(dst)
	if it.prefetch {
		dst, err = it.readPrefetched(dst, limit)
	} else {
		var r *rowReader
		if r, err = it.store.reader(); err == nil {
			dst, err = it.query(r, limit, dst)
			it.store.release(r)
		}
	}
	var derr *domain.Error
	switch {
	case err == nil:
	case errors.As(err, &derr), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return dst, err
	case IsCorrupt(err):
		return dst, domain.Errorf(domain.EINTERNAL, "event log is corrupt: %v", err)
	default:
		return dst, domain.Errorf(domain.EUNAVAILABLE, "read events: %v", err)
	}
	if len(dst)-start < limit && !it.live {
		it.ended = true
	}
	return dst, nil
}

// NextBatch implements domain.BatchIterator: a replay reads rows straight
// into its own buffer, without copying each event through Next and Event.
func (it *iterator) NextBatch(dst []domain.Event, max int) []domain.Event {
	start := len(dst)
	for it.i < len(it.buf) && len(dst)-start < max { // left over from Next
		dst = append(dst, it.buf[it.i])
		it.i++
	}
	if len(dst) == start && it.err == nil && !it.live && !it.ended && (it.max <= 0 || it.count < it.max) {
		if err := it.ctx.Err(); err != nil {
			it.err = err
		} else {
			dst, it.err = it.read(dst, max)
		}
	}
	if n := len(dst) - start; n > 0 {
		it.count += n
		it.next = dst[len(dst)-1].Position + 1
	} else if it.live {
		for len(dst)-start < max && it.Next() { // live: wait as Next does
			dst = append(dst, it.cur)
		}
	}
	return dst
}

func (it *iterator) Event() domain.Event { return it.cur }
func (it *iterator) Err() error          { return it.err }

// Close implements domain.EventIterator; it stops the row copier, if any.
func (it *iterator) Close() error {
	it.buf = nil
	if a := it.ahead; a != nil {
		it.ahead = nil
		close(a.stop)
		<-a.done
	}
	return nil
}
