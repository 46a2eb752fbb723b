package engine

import (
	"math/rand/v2"
	"testing"
)

// TestKeyIndex: the index answers as a map of the same keys does, the
// first answer of a key standing, for keys that share a shard, the 32
// bits a slot keeps, or all of keyID.a, across chunks and growths, and
// when sized beforehand (a snapshot's load); its frozen records come in
// the keys' order.
func TestKeyIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 5*keyChunk + 37
	ids := make([]keyID, 0, n)
	for len(ids) < n {
		k := keyID{rng.Uint64(), rng.Uint64()}
		switch rng.IntN(8) {
		case 0: // another key's shard and slot bits, other bits between
			if len(ids) > 0 {
				o := ids[rng.IntN(len(ids))]
				k.a = o.a&((keyShards-1)<<keyShardShift|0xffffffff) | k.a&^((keyShards-1)<<keyShardShift|0xffffffff)
			}
		case 1: // another key's a, another b
			if len(ids) > 0 {
				k.a = ids[rng.IntN(len(ids))].a
			}
		case 2: // a few shards only
			k.a = k.a&^((keyShards-1)<<keyShardShift) | uint64(rng.IntN(3))<<keyShardShift
		}
		ids = append(ids, k)
	}
	want := map[keyID]keyRecord{}
	var x, sized keyIndex
	sized.reserve(n)
	for i, k := range ids {
		rec := keyRecord{orderID: int64(i + 1), ocoID: int64(i % 3), fp: rng.Uint64()}
		if _, ok := want[k]; !ok {
			want[k] = rec
		}
		x.add(k, rec)
		sized.add(k, rec)
		if i%97 == 0 { // answered again: the first answer stands
			x.add(ids[rng.IntN(i+1)], keyRecord{orderID: -1})
		}
	}
	for _, idx := range []*keyIndex{&x, &sized} {
		if got := idx.log.len(); got != len(want) {
			t.Fatalf("%d keys, want %d", got, len(want))
		}
		for k, rec := range want {
			if got, ok := idx.get(k); !ok || got != rec {
				t.Fatalf("key %x: %+v, %v; want %+v", k, got, ok, rec)
			}
			miss := k
			miss.b++
			if _, ok := want[miss]; !ok {
				if got, ok := idx.get(miss); ok {
					t.Fatalf("key %x never answered: found %+v", miss, got)
				}
			}
		}
		var prev *keyAnswer
		count := 0
		idx.freeze().sorted(func(e *keyAnswer) {
			if prev != nil && (prev.id.a > e.id.a || prev.id.a == e.id.a && prev.id.b >= e.id.b) {
				t.Fatalf("key %x after %x", e.id, prev.id)
			}
			if want[e.id] != e.rec {
				t.Fatalf("frozen key %x: %+v, want %+v", e.id, e.rec, want[e.id])
			}
			p := *e
			prev = &p
			count++
		})
		if count != len(want) {
			t.Fatalf("frozen: %d keys, want %d", count, len(want))
		}
	}
	var empty keyIndex
	if _, ok := empty.get(ids[0]); ok || empty.freeze().len() != 0 {
		t.Fatal("an empty index finds a key")
	}
}
