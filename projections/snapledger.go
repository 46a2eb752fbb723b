package projections

import (
	"fmt"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// The Ledger's snapshot: its whole state as snap.Deep writes it (every
// field but the lock, the interner and the JSON page cache), so that a
// field added to the Ledger, a pair book, the lots or the PNL buckets is
// in the snapshot without being written down here, and a changed layout
// refuses the older snapshots. The order records, most of the state, are
// not copied at the cut: the frozen copy shares their chunks, and a late
// fill that inserts into a shared chunk copies it first (recList.own);
// everything else is copied (snap.Clone) while the runner waits.

// SnapshotVersion implements Snapshotter.
func (l *Ledger) SnapshotVersion() uint32 { return 1 }

// Freeze implements Snapshotter.
func (l *Ledger) Freeze() func(*snap.Encoder) {
	l.mu.Lock()
	for _, b := range l.pairs {
		b.recs.frozen = len(b.recs.chunks)
	}
	f := snap.Clone(l)
	l.mu.Unlock()
	return func(e *snap.Encoder) {
		e.Uint32(uint32(f.Method))
		e.Deep(f)
	}
}

// Load implements Snapshotter. A snapshot of a Ledger that matches lots
// another way (serve's --pnl-method against an asOf read's method=) is
// refused before it is read.
func (l *Ledger) Load(d *snap.Decoder) (func(), error) {
	if m := domain.PnlMethod(d.Uint32()); m != l.Method && d.Err() == nil {
		return nil, fmt.Errorf("a ledger matching lots by %s, this one by %s", m, l.Method)
	}
	n := NewLedger(l.Method)
	d.Deep(n)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		l.mu.Lock()
		snap.Assign(l, n)
		l.mu.Unlock()
	}, nil
}
