package domain

import (
	"context"
	"fmt"
)

// StreamAppend is one element of a batch append: events for one stream,
// with the condition an Append of them would carry.
type StreamAppend struct {
	Stream   string
	Expected ExpectedVersion
	Events   []Event
}

// BatchAppender is implemented by stores that append to many streams in one
// call, cheaper than one Append per stream (the SQLite store merges them
// into its group commits). AppendBatch treats every element exactly as
// Append would (the same checks, the expected-version condition, an
// idempotent re-append of stored event ids answered with the original
// result), each element atomic on its own, committed in slice order, and
// returns once every appended event is durable, with results[i] for
// batch[i]. One element failing does not keep the others from being
// appended; any failure is a *BatchError listing every failed element.
type BatchAppender interface {
	AppendBatch(ctx context.Context, batch []StreamAppend) ([]AppendResult, error)
}

// BatchError is the error of a batch append: the element at Index is the
// first that failed, with Err (a domain.Error code passes through:
// ErrorCode sees Err's); Errs[i] is element i's error, nil for the elements
// appended (or found stored).
type BatchError struct {
	Index  int
	Stream string
	Err    error
	Errs   []error
}

// NewBatchError returns the BatchError of errs (one per element, nil where
// the element succeeded), or nil when every element succeeded.
func NewBatchError(batch []StreamAppend, errs []error) error {
	for i, err := range errs {
		if err != nil {
			return &BatchError{Index: i, Stream: batch[i].Stream, Err: err, Errs: errs}
		}
	}
	return nil
}

// Error implements error.
func (e *BatchError) Error() string {
	return fmt.Sprintf("batch append, element %d (%s): %v", e.Index, e.Stream, e.Err)
}

// Unwrap returns the element's error.
func (e *BatchError) Unwrap() error { return e.Err }

// AppendBatch appends batch through store: with one AppendBatch call when
// store is a BatchAppender, else with one Append per element, in order. It
// has BatchAppender's contract either way.
func AppendBatch(ctx context.Context, store EventStore, batch []StreamAppend) ([]AppendResult, error) {
	if b, ok := store.(BatchAppender); ok {
		return b.AppendBatch(ctx, batch)
	}
	results := make([]AppendResult, len(batch))
	errs := make([]error, len(batch))
	for i, a := range batch {
		results[i], errs[i] = store.Append(ctx, a.Stream, a.Expected, a.Events...)
	}
	return results, NewBatchError(batch, errs)
}
