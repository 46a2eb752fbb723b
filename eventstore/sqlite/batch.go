package sqlite

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

var _ domain.BatchAppender = (*Store)(nil)

// AppendBatch implements domain.BatchAppender. Every element becomes the
// request an Append of it would make (checked, compacted and sealed in the
// caller's goroutine), and they go to the single writer in order, in groups
// of up to MaxBatchEvents events that the writer commits each in one
// transaction (with whatever single appends are queued beside it) and one
// fdatasync, while the caller seals the next group: an import of 200,000
// orders makes about 75 commits instead of one per MaxBatch streams. A
// commit rewrites every index page it touches, so appends to streams that
// sort where earlier ones ended (gunbot.OrderID) cost far fewer pages than
// appends at random places, whose groups should be large. The writer
// treats each request as it treats an Append's (expected version,
// idempotent re-append, durability before the answer); AppendBatch returns
// once every queued request is answered. When the store closes or ctx
// ends, the elements not queued yet fail with that error.
func (s *Store) AppendBatch(ctx context.Context, batch []domain.StreamAppend) ([]domain.AppendResult, error) {
	b := s.newBatchAppend(ctx, batch)
	for i := range batch {
		b.add(i)
	}
	if b.queued < len(batch) {
		b.send(len(batch))
	}
	return b.wait()
}

// batchAppend is one AppendBatch under way: its elements' requests, cut
// from a few large allocations rather than made one by one (an import's
// batch is tens of thousands of streams), and the group being built for
// the writer.
type batchAppend struct {
	s     *Store
	ctx   context.Context
	batch []domain.StreamAppend
	limit int // events in one group at most (MaxBatchEvents)

	errs []error
	reqs []*appendRequest // the element's request, nil when it failed before being queued
	done chan struct{}    // answers every request

	slab      []appendRequest
	eventSlab []domain.Event
	stamped   []int64
	records   [][]byte
	leaves    []domain.Hash
	arena     recordArena
	taken     int // events, stamped, records and leaves taken so far

	queued int   // reqs[:queued] are queued (or failed before)
	stop   error // why the rest is not queued
	from   int   // the group being built: reqs[from:]
	events int   // and its events
}

// newBatchAppend allocates the requests of batch: one slab of requests,
// and one each of events, times, records and leaves for all its events.
func (s *Store) newBatchAppend(ctx context.Context, batch []domain.StreamAppend) *batchAppend {
	total := 0
	for i := range batch {
		total += len(batch[i].Events)
	}
	limit := s.MaxBatchEvents
	if limit <= 0 {
		limit = DefaultMaxBatchEvents
	}
	return &batchAppend{s: s, ctx: ctx, batch: batch, limit: limit,
		errs: make([]error, len(batch)), reqs: make([]*appendRequest, len(batch)), done: make(chan struct{}, len(batch)),
		slab: make([]appendRequest, len(batch)), eventSlab: make([]domain.Event, total), stamped: make([]int64, total),
		records: make([][]byte, total), leaves: make([]domain.Hash, total)}
}

// add makes element i's request (checked and compacted as Append would,
// and sealed on the head the store expects) and puts it in the group
// being built, sending that group first when i would take it past the
// limit. An element that fails Append's checks, or comes after the store
// closed or ctx ended (stop), gets that error and no request.
func (b *batchAppend) add(i int) {
	a := &b.batch[i]
	if b.stop != nil {
		b.errs[i] = b.stop
		return
	}
	n := len(a.Events)
	evs, err := domain.PrepareAppendTo(b.eventSlab[b.taken:b.taken:b.taken+n], a.Stream, a.Expected, a.Events)
	if err != nil {
		b.errs[i] = err
		return
	}
	if b.events > 0 && b.events+len(evs) > b.limit {
		b.send(i)
		if b.stop != nil {
			b.errs[i] = b.stop
			return
		}
	}
	t := b.taken
	req := &b.slab[i]
	*req = appendRequest{ctx: b.ctx, stream: a.Stream, expected: a.Expected, events: evs, done: b.done,
		stamped: b.stamped[t : t+n : t+n], records: b.records[t : t : t+n], leaves: b.leaves[t : t : t+n]}
	for j := range evs {
		req.stamped[j] = evs[j].Time
	}
	b.taken += n
	if head, ok := b.s.expectedHead(a.Stream, a.Expected); ok {
		req.sealInto(head, &b.arena)
	}
	b.reqs[i] = req
	b.events += len(evs)
}

// send queues the group reqs[from:to] for the writer as one request (the
// first, the others in its group), unless the store closes or ctx ends
// first: then stop says why, and every request of the group fails with it
// and is not queued. The next group starts at to.
func (b *batchAppend) send(to int) {
	var head *appendRequest
	for _, req := range b.reqs[b.from:to] {
		if req == nil {
			continue
		}
		if head == nil {
			head = req
		} else {
			head.group = append(head.group, req)
		}
	}
	if head != nil && b.stop == nil {
		select {
		case b.s.appends <- head:
		case <-b.s.closing:
			b.stop = domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
		case <-b.ctx.Done():
			b.stop = b.ctx.Err()
		}
	}
	if b.stop != nil {
		for i := b.from; i < to; i++ {
			if b.reqs[i] != nil {
				b.reqs[i], b.errs[i] = nil, b.stop
			}
		}
	}
	b.queued, b.from, b.events = to, to, 0
}

// wait waits for the writer to answer every queued request, even if ctx
// ends (so that "returned" means "durable"), and returns each element's
// result, and a BatchError naming the first that failed.
func (b *batchAppend) wait() ([]domain.AppendResult, error) {
	for _, req := range b.reqs {
		if req != nil {
			<-b.done
		}
	}
	results := make([]domain.AppendResult, len(b.batch))
	for i, req := range b.reqs {
		if req != nil {
			results[i], b.errs[i] = req.result, req.err
		}
	}
	return results, domain.NewBatchError(b.batch, b.errs)
}
