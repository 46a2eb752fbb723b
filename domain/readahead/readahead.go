// Package readahead hands a replay's events to the code that applies them
// in batches, in log order, while a second goroutine reads (and, for
// Predecoded, decodes) the next batch: on two cores a replay costs about
// the larger of reading and applying, not their sum.
package readahead

import (
	"context"
	"errors"

	"github.com/tradeledger/tradeledger/domain"
)

// replayBatch is how many events the replay's reader hands over at once.
const replayBatch = 1024

// Batches calls apply with consecutive batches of it's events, in log
// order, until apply returns false, while a second goroutine reads the
// next batch. apply may keep none of the slice after it returns. It
// closes it, and returns the iterator's error.
func Batches(ctx context.Context, it domain.EventIterator, apply func([]domain.Event) bool) error {
	return readAhead(ctx, it, false, replayBatch, apply)
}

// BatchesOf is Batches in batches of up to size events: for a reader whose
// every batch costs a fixed price (audit.VerifyLog waits for its workers
// at the end of each), larger than a replay's.
func BatchesOf(ctx context.Context, it domain.EventIterator, size int, apply func([]domain.Event) bool) error {
	return readAhead(ctx, it, false, max(size, 1), apply)
}

// Predecoded is Batches with every event Predecoded in the reading
// goroutine (one domain.Predecoder for the whole replay): for replays
// into several projections that decode the same payloads.
func Predecoded(ctx context.Context, it domain.EventIterator, apply func([]domain.Event) bool) error {
	return readAhead(ctx, it, true, replayBatch, apply)
}

func readAhead(ctx context.Context, it domain.EventIterator, predecode bool, size int, apply func([]domain.Event) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []domain.Event, 4)
	free := make(chan []domain.Event, 6)
	var readErr error
	var pd *domain.Predecoder
	if predecode {
		pd = domain.NewPredecoder()
	}
	go func() {
		defer close(batches)
		defer it.Close()
		for {
			var buf []domain.Event
			select {
			case buf = <-free:
			default:
				buf = make([]domain.Event, 0, size)
			}
			buf = buf[:0]
			if bi, ok := it.(domain.BatchIterator); ok {
				for len(buf) < size {
					n := len(buf)
					if buf = bi.NextBatch(buf, size-n); len(buf) == n {
						break
					}
				}
			} else {
				for len(buf) < size && it.Next() {
					buf = append(buf, it.Event())
				}
			}
			if predecode {
				pd.Batch(buf)
			}
			if len(buf) > 0 {
				select {
				case batches <- buf:
				case <-ctx.Done():
					return
				}
			}
			if len(buf) < size {
				readErr = it.Err()
				return
			}
		}
	}()
	stopped := false
	for buf := range batches {
		if !stopped && !apply(buf) {
			stopped = true
			cancel()
		}
		select {
		case free <- buf:
		default:
		}
	}
	if stopped && errors.Is(readErr, context.Canceled) {
		return nil
	}
	return readErr // written before batches closed
}
