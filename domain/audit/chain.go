package audit

import "github.com/tradeledger/tradeledger/domain"

// StreamTip is what an append needs to know of a stream's last event: its
// version (-1: the stream has no events), its hash and its time.
type StreamTip struct {
	Version int64
	Hash    domain.Hash
	Time    int64
}

// NoStreamTip is the tip of a stream that has no events.
var NoStreamTip = StreamTip{Version: -1}

// TipOf returns the tip a stored event leaves its stream at. The hash is
// recomputed from the event's contents (ComputeHash), never taken from the
// stored hash: a store must not chain a new event onto a hash it did not
// verify, or a damaged hash column would make the next legitimate event
// look like the tampered one.
func TipOf(e *domain.Event) StreamTip {
	return StreamTip{Version: e.Version, Hash: domain.ComputeHash(e), Time: e.Time}
}

// Chain makes events the next events of stream after tip, in order, as
// every store does before it writes them: it sets their Stream, Version,
// PrevHash and Hash, and raises a Time earlier than the previous event's
// to it, so that the envelope time never goes backwards within a stream
// whatever the clock did (a step back, two writers' clocks). Position is
// left alone. It returns the tip after the last event.
func Chain(stream string, tip StreamTip, events []domain.Event) StreamTip {
	for i := range events {
		e := &events[i]
		e.Stream = stream
		e.Version = tip.Version + 1
		e.PrevHash = tip.Hash
		if tip.Version >= 0 && e.Time < tip.Time {
			e.Time = tip.Time
		}
		e.Hash = domain.ComputeHash(e)
		tip = StreamTip{Version: e.Version, Hash: e.Hash, Time: e.Time}
	}
	return tip
}
