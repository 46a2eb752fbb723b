package esdb

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// ReadStream implements domain.EventStore: pages of ReadBatchSize events,
// forwards from version from; a stream that does not exist reads as empty.
func (s *Store) ReadStream(ctx context.Context, stream string, from int64, max int) domain.EventIterator {
	if from < 0 {
		from = 0
	}
	next := uint64(from)
	it := &pageIterator{ctx: ctx, max: max}
	it.page = func(limit int) ([]domain.Event, bool, error) {
		c, err := s.conn()
		if err != nil {
			return nil, false, err
		}
		rs, err := c.ReadStream(ctx, s.Namespace+stream, esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Revision(next)}, uint64(limit))
		if err != nil {
			return nil, false, s.fail(ctx, c, "read "+stream, err)
		}
		defer rs.Close()
		var out []domain.Event
		for r, err := range recorded(rs) {
			if notFound(err) {
				return nil, true, nil
			}
			if err != nil {
				return nil, false, s.fail(ctx, c, "read "+stream, err)
			}
			e := s.toEvent(r)
			s.ids.add(&e)
			out = append(out, e)
			next = r.EventNumber + 1
		}
		return out, len(out) < limit, nil
	}
	it.batch = s.ReadBatchSize
	return it
}

// ReadAll implements domain.EventStore: $all forwards, system events
// skipped, from the first event at or after position from.
func (s *Store) ReadAll(ctx context.Context, from uint64, max int) domain.EventIterator {
	var start esdb.AllPosition // nil until resolved
	it := &pageIterator{ctx: ctx, max: max, batch: s.ReadBatchSize}
	it.page = func(limit int) ([]domain.Event, bool, error) {
		c, err := s.conn()
		if err != nil {
			return nil, false, err
		}
		if start == nil {
			if start, err = s.startBefore(ctx, c, from); err != nil {
				return nil, false, err
			}
		}
		// Pages restart at the last record seen (reads include their
		// start); records before from, or already seen, are skipped.
		rs, err := c.ReadAll(ctx, esdb.ReadAllOptions{Direction: esdb.Forwards, From: start}, uint64(s.ReadBatchSize))
		if err != nil {
			return nil, false, s.fail(ctx, c, "read $all", err)
		}
		defer rs.Close()
		var out []domain.Event
		n := 0
		for r, err := range recorded(rs) {
			if err != nil {
				return nil, false, s.fail(ctx, c, "read $all", err)
			}
			n++
			start = r.Position
			s.known.add(r.Position)
			if r.Position.Commit < from {
				continue
			}
			from = r.Position.Commit + 1
			if s.skip(r) {
				continue
			}
			e := s.toEvent(r)
			s.ids.add(&e)
			out = append(out, e)
		}
		return out, n < s.ReadBatchSize, nil
	}
	return it
}

// startBefore returns a valid $all position at or before the first event
// with commit position ≥ from (see the package doc), or Start.
func (s *Store) startBefore(ctx context.Context, c *esdb.Client, from uint64) (esdb.AllPosition, error) {
	if from == 0 {
		return esdb.Start{}, nil
	}
	if p, ok := s.known.get(from - 1); ok {
		return p, nil
	}
	var found esdb.AllPosition = esdb.Start{}
	err := s.scanBackwards(ctx, c, func(r *esdb.RecordedEvent) bool {
		if r.Position.Commit < from {
			found = r.Position
			return true
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// Head implements domain.EventStore: the position of the last event that
// is not a system event, read backwards from the end of $all.
func (s *Store) Head(ctx context.Context) (uint64, error) {
	c, err := s.conn()
	if err != nil {
		return 0, err
	}
	var head uint64
	err = s.scanBackwards(ctx, c, func(r *esdb.RecordedEvent) bool {
		if s.skip(r) {
			return false
		}
		s.known.add(r.Position)
		head = r.Position.Commit
		return true
	})
	if err != nil {
		return 0, err
	}
	return head, nil
}

// scanBackwards reads $all backwards from its end, ReadBatchSize records a
// call, and passes each record to visit until visit returns true or $all
// has no more; a failed read is returned (through fail).
func (s *Store) scanBackwards(ctx context.Context, c *esdb.Client, visit func(r *esdb.RecordedEvent) (stop bool)) error {
	var at esdb.AllPosition = esdb.End{}
	for {
		rs, err := c.ReadAll(ctx, esdb.ReadAllOptions{Direction: esdb.Backwards, From: at}, uint64(s.ReadBatchSize))
		if err != nil {
			return s.fail(ctx, c, "read $all", err)
		}
		n := 0
		for r, err := range recorded(rs) {
			if err != nil {
				rs.Close()
				return s.fail(ctx, c, "read $all", err)
			}
			n++
			if visit(r) {
				rs.Close()
				return nil
			}
			at = r.Position
		}
		rs.Close()
		if n < s.ReadBatchSize {
			return nil
		}
	}
}

// recorded yields the records a read delivers, in its order, until it
// ends, leaving out events without an original record; a failed receive
// ends it, yielded with a nil record. It does not close rs.
func recorded(rs *esdb.ReadStream) iter.Seq2[*esdb.RecordedEvent, error] {
	return func(yield func(*esdb.RecordedEvent, error) bool) {
		for {
			ev, err := rs.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if r := ev.OriginalEvent(); r != nil && !yield(r, nil) {
				return
			}
		}
	}
}

// notFound reports whether err is EventStoreDB's answer for a stream that
// does not exist.
func notFound(err error) bool {
	var ee *esdb.Error
	return errors.As(err, &ee) && ee.Code() == esdb.ErrorCodeResourceNotFound
}

// pageIterator delivers events page by page.
type pageIterator struct {
	ctx   context.Context
	page  func(limit int) (events []domain.Event, last bool, err error)
	batch int
	max   int
	count int
	buf   []domain.Event
	i     int
	cur   domain.Event
	err   error
	ended bool
}

func (it *pageIterator) Next() bool {
	for it.err == nil {
		if it.max > 0 && it.count >= it.max {
			return false
		}
		if it.i < len(it.buf) {
			it.cur = it.buf[it.i]
			it.i++
			it.count++
			return true
		}
		if it.ended {
			return false
		}
		if err := it.ctx.Err(); err != nil {
			it.err = err
			return false
		}
		limit := it.batch
		if it.max > 0 {
			limit = min(limit, it.max-it.count)
		}
		it.buf, it.ended, it.err = it.page(limit)
		it.i = 0
	}
	return false
}

func (it *pageIterator) Event() domain.Event { return it.cur }
func (it *pageIterator) Err() error          { return it.err }
func (it *pageIterator) Close() error        { it.buf = nil; it.ended = true; return nil }

// Subscribe implements domain.EventStore with SubscribeToAll and a filter
// that excludes system events. A dropped subscription (server restart,
// leader change, network) is resumed after the last delivered event, with
// a growing delay between attempts, until ctx ends or the store closes.
func (s *Store) Subscribe(ctx context.Context, from uint64) domain.EventIterator {
	return &subscription{s: s, ctx: ctx, next: from, delay: s.ReconnectDelay}
}

type subscription struct {
	s     *Store
	ctx   context.Context
	next  uint64         // deliver only positions ≥ next
	last  *esdb.Position // last record seen: resume point
	sub   *esdb.Subscription
	cur   domain.Event
	err   error
	delay time.Duration
}

func (it *subscription) Next() bool {
	s := it.s
	for it.err == nil {
		if err := it.ctx.Err(); err != nil {
			it.stop(err)
			return false
		}
		if it.sub == nil {
			if err := it.connect(); err != nil {
				if domain.ErrorCode(err) != domain.EUNAVAILABLE || it.isClosed() {
					it.stop(err)
					return false
				}
				s.Logger.Warn("event store subscription: cannot subscribe; retrying", zap.Error(err), zap.Duration("in", it.delay))
				it.wait()
			}
			continue
		}
		ev := it.sub.Recv()
		switch {
		case ev.EventAppeared != nil:
			r := ev.EventAppeared.OriginalEvent()
			if r == nil || r.Position.Commit < it.next {
				continue
			}
			p := r.Position
			it.last = &p
			it.next = p.Commit + 1
			s.known.add(p)
			if s.skip(r) {
				continue
			}
			it.delay = s.ReconnectDelay
			it.cur = s.toEvent(r)
			s.ids.add(&it.cur)
			return true
		case ev.SubscriptionDropped != nil:
			it.sub.Close()
			it.sub = nil
			if err := it.ctx.Err(); err != nil {
				it.stop(err)
				return false
			}
			if it.isClosed() {
				it.stop(domain.Errorf(domain.EUNAVAILABLE, "event store is closed"))
				return false
			}
			s.Logger.Warn("event store subscription dropped; resuming", zap.Uint64("after", it.next-1), zap.Error(ev.SubscriptionDropped.Error), zap.Duration("in", it.delay))
			if c, err := s.conn(); err == nil {
				s.fail(it.ctx, c, "subscribe", ev.SubscriptionDropped.Error) // replaces a client that closed itself
			}
			it.wait()
		default:
			// CaughtUp, FellBehind and checkpoints change nothing: the
			// position that matters is the last event delivered.
		}
	}
	return false
}

func (it *subscription) connect() error {
	s := it.s
	c, err := s.conn()
	if err != nil {
		return err
	}
	var start esdb.AllPosition
	if it.last != nil {
		start = *it.last
	} else if start, err = s.startBefore(it.ctx, c, it.next); err != nil {
		return err
	}
	f := esdb.ExcludeSystemEventsFilter()
	if s.Namespace != "" {
		f = &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: []string{s.Namespace}}
	}
	sub, err := c.SubscribeToAll(it.ctx, esdb.SubscribeToAllOptions{From: start, Filter: f})
	if err != nil {
		return s.fail(it.ctx, c, "subscribe to $all", err)
	}
	it.sub = sub
	return nil
}

func (it *subscription) isClosed() bool {
	it.s.mu.Lock()
	defer it.s.mu.Unlock()
	return it.s.closed
}

// wait sleeps for the current backoff (doubling it), or until ctx ends or
// the store closes.
func (it *subscription) wait() {
	t := time.NewTimer(it.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-it.ctx.Done():
	case <-it.s.closing:
	}
	it.delay = min(2*it.delay, it.s.MaxReconnectDelay)
}

func (it *subscription) stop(err error) {
	it.err = err
	if it.sub != nil {
		it.sub.Close()
		it.sub = nil
	}
}

func (it *subscription) Event() domain.Event { return it.cur }
func (it *subscription) Err() error          { return it.err }
func (it *subscription) Close() error {
	if it.sub != nil {
		it.sub.Close()
		it.sub = nil
	}
	if it.err == nil {
		it.err = errors.New("subscription closed")
	}
	return nil
}
