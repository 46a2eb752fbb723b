package snaptest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/projections"
)

// Encode returns the bytes p's frozen state encodes to.
func Encode(t testing.TB, p projections.Snapshotter) []byte {
	t.Helper()
	var buf bytes.Buffer
	e := snap.NewEncoder(&buf)
	p.Freeze()(e)
	if err := e.Close(); err != nil {
		t.Fatalf("%s: encode: %v", p.Name(), err)
	}
	return buf.Bytes()
}

// Load installs the state b encodes into p (a projection that applied
// nothing), failing the test when it does not load.
func Load(t testing.TB, p projections.Snapshotter, b []byte) {
	t.Helper()
	d := snap.NewDecoder(bytes.NewReader(b), int64(len(b)))
	install, err := p.Load(d)
	if err == nil {
		err = d.Done()
	}
	if err != nil {
		t.Fatalf("%s: load: %v", p.Name(), err)
	}
	install()
}

// Apply feeds events to every projection, in order, ignoring the errors a
// projection reports for an event it refuses (the runner logs them and
// goes on; a refused event must be refused the same way after a snapshot).
func Apply(projs []projections.Snapshotter, events []domain.Event) {
	for i := range events {
		e := events[i] // a copy each: projections may keep nothing of it
		for _, p := range projs {
			_ = p.Apply(&e)
		}
	}
}

// Check proves, for each cut (an index into events: the snapshot is taken
// after events[:cut]), that projections loaded from the snapshot and fed
// events[cut:] end as projections fed every event: the encodings of their
// states are equal byte for byte, and same (when not nil) finds the two
// sets equal in every other way it looks (the package's own field-for-field
// comparison, or its read methods' answers). newProjs returns a new set of
// empty projections, in the same order each time.
//
// It also checks that a state is frozen when Freeze returns: the encoding
// of a snapshot taken after events[:cut] is the same whether it is encoded
// at once or after the rest of the events were applied.
func Check(t *testing.T, events []domain.Event, cuts []int, newProjs func() []projections.Snapshotter,
	same func(t *testing.T, full, restored []projections.Snapshotter)) {
	t.Helper()
	full := newProjs()
	Apply(full, events)
	want := encodeAll(t, full)
	for _, cut := range cuts {
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			part := newProjs()
			Apply(part, events[:cut])
			// Frozen now, encoded after the rest was applied: the same
			// bytes as encoded at once.
			frozen := make([]func(*snap.Encoder), len(part))
			for i, p := range part {
				frozen[i] = p.Freeze()
			}
			atOnce := encodeAll(t, part)
			Apply(part, events[cut:])
			restored := newProjs()
			for i, p := range restored {
				var buf bytes.Buffer
				e := snap.NewEncoder(&buf)
				frozen[i](e)
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), atOnce[i]) {
					t.Fatalf("%s: the state frozen after %d events encodes differently once more events were applied", p.Name(), cut)
				}
				Load(t, p, buf.Bytes())
			}
			// Loaded, the state encodes as it was written.
			for i, b := range encodeAll(t, restored) {
				if !bytes.Equal(b, atOnce[i]) {
					t.Fatalf("%s: loaded from a snapshot after %d events, the state encodes differently", restored[i].Name(), cut)
				}
			}
			Apply(restored, events[cut:])
			got := encodeAll(t, restored)
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%s: snapshot after %d of %d events + the rest ≠ all the events (%d bytes against %d)",
						restored[i].Name(), cut, len(events), len(got[i]), len(want[i]))
				}
			}
			if same != nil {
				same(t, full, restored)
			}
		})
	}
}

func encodeAll(t *testing.T, projs []projections.Snapshotter) [][]byte {
	t.Helper()
	out := make([][]byte, len(projs))
	for i, p := range projs {
		out[i] = Encode(t, p)
	}
	return out
}

// Cuts returns n random cut points in [0, events], always with 0 and
// events (an empty snapshot, and one at the end).
func Cuts(rng *rand.Rand, events, n int) []int {
	cuts := []int{0, events}
	for range n {
		cuts = append(cuts, rng.IntN(events+1))
	}
	return cuts
}

// Store appends events to store, each to its stream (an empty store gives
// them RandomLog's versions and positions), failing the test when one is
// refused.
func Store(t testing.TB, store domain.EventStore, events []domain.Event) {
	t.Helper()
	for i := range events {
		e := events[i]
		e.Position, e.PrevHash, e.Hash = 0, domain.Hash{}, domain.Hash{}
		if _, err := store.Append(context.Background(), e.Stream, domain.Any, e); err != nil {
			t.Fatalf("append %s/%d: %v", e.Stream, e.Version, err)
		}
	}
}
