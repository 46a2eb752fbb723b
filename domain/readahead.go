package domain

import (
	"context"
	"errors"

	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// replayBatch is how many events the replay's reader hands over at once.
const replayBatch = 1024

// ReadAheadBatches calls apply with consecutive batches of it's events, in
// log order, until apply returns false, while a second goroutine reads the
// next batch: on two cores a replay costs about the larger of reading and
// applying, not their sum. apply may keep none of the slice after it
// returns. It closes it, and returns the iterator's error.
func ReadAheadBatches(ctx context.Context, it EventIterator, apply func([]Event) bool) error {
	return readAhead(ctx, it, false, replayBatch, apply)
}

// ReadAheadBatchesOf is ReadAheadBatches in batches of up to size events:
// for a reader whose every batch costs a fixed price (VerifyLog waits for
// its workers at the end of each), larger than a replay's.
func ReadAheadBatchesOf(ctx context.Context, it EventIterator, size int, apply func([]Event) bool) error {
	return readAhead(ctx, it, false, max(size, 1), apply)
}

// ReadAheadPredecoded is ReadAheadBatches with every event Predecoded in
// the reading goroutine (one Interner for the whole replay): for replays
// into several projections that decode the same payloads.
func ReadAheadPredecoded(ctx context.Context, it EventIterator, apply func([]Event) bool) error {
	return readAhead(ctx, it, true, replayBatch, apply)
}

func readAhead(ctx context.Context, it EventIterator, predecode bool, size int, apply func([]Event) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []Event, 4)
	free := make(chan []Event, 6)
	var readErr error
	var in jsonscan.Interner
	var last *lastStrings
	if predecode {
		in, last = jsonscan.Interner{}, new(lastStrings)
	}
	go func() {
		defer close(batches)
		defer it.Close()
		for {
			var buf []Event
			select {
			case buf = <-free:
			default:
				buf = make([]Event, 0, size)
			}
			buf = buf[:0]
			if bi, ok := it.(BatchIterator); ok {
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
				predecodeBatch(buf, in, last)
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
