package engine

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotSystemAttention: the system's state and the orders needing
// attention loaded from a snapshot at random positions of random logs,
// then fed the rest, equal the same projections fed the whole log.
func TestSnapshotSystemAttention(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2000})
		newProjs := func() []projections.Snapshotter {
			return []projections.Snapshotter{&System{}, &Attention{}}
		}
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			for i := range full {
				if !reflect.DeepEqual(full[i], restored[i]) {
					t.Fatalf("%s: restored ≠ full replay", full[i].Name())
				}
			}
		})
	}
}

// TestSnapshotOrders: the engine's order state loaded from a snapshot at
// random positions of random logs (orders of every kind and state, OCOs,
// Idempotency-Keys, late fills, imports), then fed the rest, equals the
// order state fed the whole log: its encoding, every index, and what the
// engine reads of it.
//
// The last seed's keys are nearly all new, and span several of the key
// index's chunks: a freeze shares them, and the keys answered after it
// must change nothing the frozen copy encodes.
func TestSnapshotOrders(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		opt := snaptest.LogOptions{Events: 2500}
		if seed == 5 {
			opt = snaptest.LogOptions{Events: 30_000, Keys: 1 << 30}
		}
		events := snaptest.RandomLog(rng, opt)
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{NewOrders(nil)} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 5), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*Orders), restored[0].(*Orders)
			sa, sb := a.state, b.state
			sa.spare, sb.spare = nil, nil // a recycled entry, not state
			// The keys' index is laid out in the order they were
			// answered (a snapshot's load answers them in its own): the
			// same keys with the same answers, each found.
			ka, kb := answers(&sa.keys), answers(&sb.keys)
			if !reflect.DeepEqual(ka, kb) {
				t.Fatalf("Idempotency-Keys: restored (%d) ≠ full replay (%d)", len(kb), len(ka))
			}
			for _, k := range ka {
				if rec, ok := sb.keys.get(k.id); !ok || rec != k.rec {
					t.Fatalf("key %x: restored finds %+v, %v; want %+v", k.id, rec, ok, k.rec)
				}
			}
			sa.keys, sb.keys = keyIndex{}, keyIndex{}
			for _, st := range []*orderState{&sa, &sb} {
				for _, entry := range st.orders {
					entry.shared = false
					if len(entry.o.FillIDs) == 0 {
						entry.o.FillIDs = nil // a recycled entry's empty slice: the same state
					}
				}
			}
			if !reflect.DeepEqual(sa, sb) {
				t.Fatal("order state: restored ≠ full replay")
			}
			if !reflect.DeepEqual(a.Unfinished(), b.Unfinished()) {
				t.Fatal("unfinished orders: restored ≠ full replay")
			}
			for _, ex := range []string{"binance", "paper", "kraken"} {
				if !reflect.DeepEqual(a.OpenOrderList(ex, ""), b.OpenOrderList(ex, "")) || a.cursor(ex) != b.cursor(ex) {
					t.Fatalf("%s: open orders or fill cursor: restored ≠ full replay", ex)
				}
			}
		})
	}
}

// answers returns the keys of x and their answers in the keys' order.
func answers(x *keyIndex) []keyAnswer {
	var out []keyAnswer
	x.freeze().sorted(func(k *keyAnswer) { out = append(out, *k) })
	return out
}

// TestOrdersFreezeKeys: a frozen order state encodes the Idempotency-Keys
// answered when it was frozen, however many are answered after (filling
// the chunk being written, starting new ones, growing every shard of the
// index) and whatever answer a key already recorded is given again; and
// while it is encoded on another goroutine, as the snapshot writer does,
// the live state takes keys beside it (the race detector sees any memory
// the two share and the live one writes).
func TestOrdersFreezeKeys(t *testing.T) {
	const before, after = 3*keyChunk + 100, 4 * keyChunk
	key := func(i int) string { return "k-" + strconv.Itoa(i) }
	s := NewOrders(nil)
	for i := range before {
		s.recordKey(key(i), keyRecord{orderID: int64(i + 1), fp: uint64(i)})
	}
	want := snaptest.Encode(t, s)
	frozen := s.Freeze()
	more := func(from int) {
		for i := range after {
			s.recordKey(key(from+i), keyRecord{orderID: int64(from + i + 1)})
		}
		for i := 0; i < before; i += 7 { // answered already: the first answer stands
			s.recordKey(key(i), keyRecord{orderID: -1, ocoID: -1, fp: 1})
		}
	}
	more(before)
	encode := func(f func(*snap.Encoder)) []byte {
		var buf bytes.Buffer
		e := snap.NewEncoder(&buf)
		f(e)
		if err := e.Close(); err != nil {
			t.Error(err)
		}
		return buf.Bytes()
	}
	if got := encode(frozen); !bytes.Equal(got, want) {
		t.Fatalf("frozen with %d keys, encoded after %d more: %d bytes, want %d as encoded at once", before, after, len(got), len(want))
	}
	if rec, ok := s.key(key(7)); !ok || rec != (keyRecord{orderID: 8, fp: 7}) {
		t.Fatalf("key 7 answered again: %+v, %v; want its first answer", rec, ok)
	}

	want = snaptest.Encode(t, s)
	frozen = s.Freeze()
	done := make(chan []byte)
	go func() { done <- encode(frozen) }()
	more(before + after)
	if got := <-done; !bytes.Equal(got, want) {
		t.Fatalf("encoded while more keys were answered: %d bytes, want %d", len(got), len(want))
	}
	restored := NewOrders(nil)
	snaptest.Load(t, restored, want)
	for i := range before + after {
		if rec, ok := restored.key(key(i)); !ok || rec.orderID != int64(i+1) {
			t.Fatalf("loaded: key %d answers %+v, %v", i, rec, ok)
		}
	}
	if _, ok := restored.key(key(before + after)); ok {
		t.Fatalf("loaded: key %d answered after the freeze is found", before+after)
	}
}
