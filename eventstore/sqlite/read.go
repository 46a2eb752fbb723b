package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tradeledger/tradeledger/domain"
)

const selectColumns = `SELECT position, record FROM events `

// uninterrupted returns ctx without its cancellation for a batch query.
// go-sqlite3 watches a cancellable context by stepping every row in a
// goroutine of its own, which costs more than reading the row; a batch is
// bounded (ReadBatchSize rows), and iterators check ctx between batches.
func uninterrupted(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// ReadStream implements domain.EventStore.
func (s *Store) ReadStream(ctx context.Context, stream string, from int64, max int) domain.EventIterator {
	it := &iterator{store: s, ctx: ctx, max: max}
	it.query = func(limit int) (*sql.Rows, error) {
		return s.readDB.QueryContext(uninterrupted(ctx), selectColumns+`WHERE stream = ? AND version >= ? ORDER BY version LIMIT ?`, stream, from+int64(it.count), limit)
	}
	return it
}

// ReadAll implements domain.EventStore.
func (s *Store) ReadAll(ctx context.Context, from uint64, max int) domain.EventIterator {
	it := &iterator{store: s, ctx: ctx, max: max, next: from}
	it.query = func(limit int) (*sql.Rows, error) {
		return s.readDB.QueryContext(uninterrupted(ctx), selectColumns+`WHERE position >= ? ORDER BY position LIMIT ?`, int64(it.next), limit)
	}
	return it
}

// Subscribe implements domain.EventStore. It reads committed rows in
// batches and, once caught up, waits for the next commit: a slow consumer
// only falls behind in the file, never loses events.
func (s *Store) Subscribe(ctx context.Context, from uint64) domain.EventIterator {
	it := &iterator{store: s, ctx: ctx, next: from, live: true}
	it.query = func(limit int) (*sql.Rows, error) {
		return s.readDB.QueryContext(uninterrupted(ctx), selectColumns+`WHERE position >= ? ORDER BY position LIMIT ?`, int64(it.next), limit)
	}
	return it
}

// iterator pages through a query in batches of ReadBatchSize rows so that no
// read transaction stays open while the caller works.
type iterator struct {
	store *Store
	ctx   context.Context
	query func(limit int) (*sql.Rows, error)
	live  bool   // wait for new commits instead of ending
	max   int    // ≤ 0: unlimited
	count int    // events delivered
	next  uint64 // next position to read (ReadAll, Subscribe)
	buf   []domain.Event
	i     int
	cur   domain.Event
	err   error
	ended bool // a short batch: nothing more to read (not live)
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

func (it *iterator) fill() error {
	limit := it.store.ReadBatchSize
	if it.max > 0 {
		limit = min(limit, it.max-it.count)
	}
	rows, err := it.query(limit)
	if err != nil {
		if it.ctx.Err() != nil {
			return it.ctx.Err()
		}
		return domain.Errorf(domain.EUNAVAILABLE, "read events: %v", err)
	}
	defer rows.Close()
	it.buf, it.i = it.buf[:0], 0
	for rows.Next() {
		var e domain.Event
		var pos int64
		var rec sql.RawBytes
		if err := rows.Scan(&pos, &rec); err != nil {
			return fmt.Errorf("scan event: %w", err)
		}
		if err := decodeRecord(rec, &e); err != nil {
			return domain.Errorf(domain.EINTERNAL, "event log is corrupt at position %d: %v", pos, err)
		}
		e.Position = uint64(pos)
		it.buf = append(it.buf, e)
	}
	if err := rows.Err(); err != nil {
		if it.ctx.Err() != nil {
			return it.ctx.Err()
		}
		if IsCorrupt(err) {
			return domain.Errorf(domain.EINTERNAL, "event log is corrupt: %v", err)
		}
		return domain.Errorf(domain.EUNAVAILABLE, "read events: %v", err)
	}
	if len(it.buf) < limit && !it.live {
		it.ended = true
	}
	return nil
}

func (it *iterator) Event() domain.Event { return it.cur }
func (it *iterator) Err() error          { return it.err }
func (it *iterator) Close() error        { it.buf = nil; return nil }
