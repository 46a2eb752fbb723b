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
	results := make([]domain.AppendResult, len(batch))
	errs := make([]error, len(batch))
	reqs := make([]*appendRequest, len(batch))
	// The requests and their events, times, records and leaves are cut
	// from a few large allocations rather than made one by one: an
	// import's batch is tens of thousands of streams. One channel answers
	// them all.
	total := 0
	for i := range batch {
		total += len(batch[i].Events)
	}
	slab := make([]appendRequest, len(batch))
	eventSlab := make([]domain.Event, total)
	stamped := make([]int64, total)
	records := make([][]byte, total)
	leaves := make([]domain.Hash, total)
	done := make(chan struct{}, len(batch))
	var arena recordArena
	taken := 0           // events, stamped, records and leaves taken so far
	queued := 0          // reqs[:queued] are queued (or failed before)
	var stop error       // why the rest is not queued
	from, events := 0, 0 // the group being built: reqs[from:], its events
	send := func(to int) {
		var head *appendRequest
		for _, req := range reqs[from:to] {
			if req == nil {
				continue
			}
			if head == nil {
				head = req
			} else {
				head.group = append(head.group, req)
			}
		}
		if head != nil && stop == nil {
			select {
			case s.appends <- head:
			case <-s.closing:
				stop = domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
			case <-ctx.Done():
				stop = ctx.Err()
			}
		}
		if stop != nil {
			for i := from; i < to; i++ {
				if reqs[i] != nil {
					reqs[i], errs[i] = nil, stop
				}
			}
		}
		queued, from, events = to, to, 0
	}
	limit := s.MaxBatchEvents
	if limit <= 0 {
		limit = DefaultMaxBatchEvents
	}
	for i := range batch {
		a := &batch[i]
		if stop != nil {
			errs[i] = stop
			continue
		}
		n := len(a.Events)
		evs, err := domain.PrepareAppendTo(eventSlab[taken:taken:taken+n], a.Stream, a.Expected, a.Events)
		if err != nil {
			errs[i] = err
			continue
		}
		if events > 0 && events+len(evs) > limit {
			send(i)
			if stop != nil {
				errs[i] = stop
				continue
			}
		}
		req := &slab[i]
		*req = appendRequest{ctx: ctx, stream: a.Stream, expected: a.Expected, events: evs, done: done,
			stamped: stamped[taken : taken+n : taken+n], records: records[taken : taken : taken+n], leaves: leaves[taken : taken : taken+n]}
		for j := range evs {
			req.stamped[j] = evs[j].Time
		}
		taken += n
		if head, ok := s.expectedHead(a.Stream, a.Expected); ok {
			req.sealInto(head, &arena)
		}
		reqs[i] = req
		events += len(evs)
	}
	if queued < len(batch) {
		send(len(batch))
	}
	// Queued requests are written or failed by the writer, each answered
	// once on done; waiting for every one, even if ctx ends, keeps
	// "returned" meaning "durable".
	for _, req := range reqs {
		if req != nil {
			<-done
		}
	}
	for i, req := range reqs {
		if req != nil {
			results[i], errs[i] = req.result, req.err
		}
	}
	return results, domain.NewBatchError(batch, errs)
}
