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
// returns once every queued request is answered. An element that fails its
// checks stops the queueing: the elements before it are still written.
func (s *Store) AppendBatch(ctx context.Context, batch []domain.StreamAppend) ([]domain.AppendResult, error) {
	results := make([]domain.AppendResult, len(batch))
	queued := make([]*appendRequest, 0, len(batch))
	var stopped error // why queueing stopped early, if it did
queue:
	for i := range batch {
		a := &batch[i]
		events, err := domain.PrepareAppend(a.Stream, a.Expected, a.Events)
		if err != nil {
			stopped = &domain.BatchError{Index: i, Stream: a.Stream, Err: err}
			break
		}
		req := &appendRequest{ctx: ctx, stream: a.Stream, expected: a.Expected, events: events, done: make(chan struct{})}
		if head, ok := s.expectedHead(a.Stream, a.Expected); ok {
			req.seal(head)
		}
		select {
		case s.appends <- req:
			queued = append(queued, req)
		case <-s.closing:
			stopped = &domain.BatchError{Index: i, Stream: a.Stream, Err: domain.Errorf(domain.EUNAVAILABLE, "event store is closed")}
			break queue
		case <-ctx.Done():
			stopped = &domain.BatchError{Index: i, Stream: a.Stream, Err: ctx.Err()}
			break queue
		}
	}
	// Queued requests are written or failed by the writer; waiting for
	// every one, even if ctx ends, keeps "returned" meaning "durable".
	var first error
	for i, req := range queued {
		<-req.done
		results[i] = req.result
		if req.err != nil && first == nil {
			first = &domain.BatchError{Index: i, Stream: req.stream, Err: req.err}
		}
	}
	if first == nil {
		first = stopped
	}
	return results, first
}
