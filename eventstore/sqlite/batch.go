package sqlite

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

var _ domain.BatchAppender = (*Store)(nil)

// AppendBatch implements domain.BatchAppender. Every element becomes the
// request an Append of it would make (checked, compacted and sealed in the
// caller's goroutine), and all are queued to the single writer in order
// without waiting for each other, so that its group commit merges up to
// MaxBatch of them into one transaction and one fdatasync: what costs an
// import a commit per stream with Append costs it one per MaxBatch streams.
// The writer treats each request as it treats an Append's (expected
// version, idempotent re-append, durability before the answer); AppendBatch
// returns once every queued request is answered. When the store closes or
// ctx ends, the elements not queued yet fail with that error.
func (s *Store) AppendBatch(ctx context.Context, batch []domain.StreamAppend) ([]domain.AppendResult, error) {
	results := make([]domain.AppendResult, len(batch))
	errs := make([]error, len(batch))
	queued := make([]*appendRequest, len(batch))
	var stop error // why the rest is not queued
	for i := range batch {
		a := &batch[i]
		if stop != nil {
			errs[i] = stop
			continue
		}
		events, err := domain.PrepareAppend(a.Stream, a.Expected, a.Events)
		if err != nil {
			errs[i] = err
			continue
		}
		req := &appendRequest{ctx: ctx, stream: a.Stream, expected: a.Expected, events: events, done: make(chan struct{})}
		if head, ok := s.expectedHead(a.Stream, a.Expected); ok {
			req.seal(head)
		}
		select {
		case s.appends <- req:
			queued[i] = req
		case <-s.closing:
			stop = domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
			errs[i] = stop
		case <-ctx.Done():
			stop = ctx.Err()
			errs[i] = stop
		}
	}
	// Queued requests are written or failed by the writer; waiting for
	// every one, even if ctx ends, keeps "returned" meaning "durable".
	for i, req := range queued {
		if req == nil {
			continue
		}
		<-req.done
		results[i], errs[i] = req.result, req.err
	}
	return results, domain.NewBatchError(batch, errs)
}
