package projections

import (
	"bytes"
	"math/rand"
	"reflect"
	"testing"

	"github.com/tradeledger/tradeledger/domain/snap"
)

// orderIndex answers like a map for dense, sparse, negative and
// out-of-order ids, including sparse ids that a later growth covers.
func TestOrderIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var x orderIndex
	want := map[int64]uint32{}
	for i := 0; i < 200000; i++ {
		var id int64
		switch rng.Intn(10) {
		case 0:
			id = rng.Int63n(1 << 40) // far away: sparse
		case 1:
			id = -rng.Int63n(100)
		case 2:
			id = x.denseLen + rng.Int63n(3*denseSlack) // past the end, near or not
		default:
			id = rng.Int63n(x.denseLen + 10)
		}
		v := uint32(rng.Int63n(1<<32 - 1))
		x.set(id, v)
		want[id] = v
	}
	for id, v := range want {
		if got, ok := x.get(id); !ok || got != v {
			t.Fatalf("get(%d) = %d, %v; want %d", id, got, ok, v)
		}
	}
	for i := 0; i < 10000; i++ {
		id := rng.Int63n(x.denseLen * 2)
		_, inMap := want[id]
		if _, ok := x.get(id); ok != inMap {
			t.Fatalf("get(%d) present = %v, want %v", id, ok, inMap)
		}
	}
	if int(x.denseLen) == 0 || x.far.n == 0 {
		t.Fatalf("the test should exercise both homes: dense %d, sparse %d", int(x.denseLen), x.far.n)
	}
	if int(x.denseLen) > 4*(x.used+x.far.n+1)+denseSlack {
		t.Fatalf("dense slice of %d for %d ids: the density bound does not hold", int(x.denseLen), x.used+x.far.n)
	}
}

// Ids doubling each time (1, 2, 4, … 2⁴⁰) cost memory in proportion to
// their number, not to their size.
func TestOrderIndexSparseIdsStaySmall(t *testing.T) {
	var x orderIndex
	for i := 0; i <= 40; i++ {
		x.set(int64(1)<<i, uint32(i))
	}
	for i := 0; i <= 40; i++ {
		if v, ok := x.get(int64(1) << i); !ok || v != uint32(i) {
			t.Fatalf("get(2^%d) = %d, %v", i, v, ok)
		}
	}
	if int(x.denseLen) > 4*41+denseSlack {
		t.Fatalf("dense slice of %d entries for 41 ids", int(x.denseLen))
	}
}

// The Trader's ids (1, 2, 3 …) all land in the slice.
func TestOrderIndexDenseIds(t *testing.T) {
	var x orderIndex
	for id := int64(1); id <= 100000; id++ {
		x.set(id, uint32(id%7))
	}
	if x.far.n != 0 || x.used != 100000 {
		t.Fatalf("dense ids: %d in the map, %d in the slice", x.far.n, x.used)
	}
	if v, ok := x.get(77777); !ok || v != 77777%7 {
		t.Fatalf("get(77777) = %d, %v", v, ok)
	}
}

// indexMap returns what x holds as a map.
func indexMap[V uint8 | uint32](x *idIndex[V]) map[int64]V {
	m := map[int64]V{}
	x.each(func(id int64, v V) { m[id] = v })
	return m
}

// An import's ids (from 2^51, increasing with the trade time) and a later
// import of an older history (smaller ids, in the middle) go to the far
// ids, in order, in chunks that split as they fill.
func TestOrderIndexFarIdsInAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var x orderIndex
	want := map[int64]uint32{}
	base := int64(1) << 51
	for i := int64(0); i < 5000; i++ { // increasing
		id := base + i<<19 + rng.Int63n(1<<19)
		x.set(id, uint32(i))
		want[id] = uint32(i)
	}
	for i := 0; i < 5000; i++ { // anywhere among them, and before them
		id := base + rng.Int63n(5000<<19) - 1<<30
		x.set(id, uint32(i)+7)
		want[id] = uint32(i) + 7
	}
	if x.far.n != len(want) || x.used != 0 {
		t.Fatalf("far %d, dense %d; want %d far ids", x.far.n, x.used, len(want))
	}
	if len(x.far.chunks) <= len(want)/farChunkLen+1 {
		t.Fatalf("%d chunks for %d ids: the test should split chunks", len(x.far.chunks), len(want))
	}
	for id, v := range want {
		if got, ok := x.get(id); !ok || got != v {
			t.Fatalf("get(%d) = %d, %v; want %d", id, got, ok, v)
		}
		if _, ok := x.get(id + 1); ok != (want[id+1] != 0 || hasKey(want, id+1)) {
			t.Fatalf("get(%d): present = %v", id+1, ok)
		}
	}
	last := int64(-1 << 63)
	x.far.each(func(id int64, _ uint32) {
		if id <= last {
			t.Fatalf("far ids out of order: %d after %d", id, last)
		}
		last = id
	})
	for k, c := range x.far.chunks {
		if len(c.ids) == 0 || len(c.ids) > farChunkLen || x.far.firsts[k] != c.ids[0] {
			t.Fatalf("chunk %d: %d ids, first %d, directory says %d", k, len(c.ids), c.ids[0], x.far.firsts[k])
		}
	}
}

func hasKey(m map[int64]uint32, k int64) bool { _, ok := m[k]; return ok }

// A clone holds what the index held when it was taken, whatever is set
// afterwards (new ids, changed ones, dense growth over far ids, splits):
// the chunks it shares are copied before they are written into.
func TestOrderIndexCloneIsFrozen(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var x idIndex[uint8]
	id := func() int64 {
		switch rng.Intn(4) {
		case 0:
			return x.denseLen + rng.Int63n(2*denseSlack) // past the dense end: far, until it grows over them
		case 1:
			return int64(1)<<51 + rng.Int63n(1<<30)
		default:
			return rng.Int63n(x.denseLen + 10)
		}
	}
	var clones []idIndex[uint8]
	var wants []map[int64]uint8
	for round := 0; round < 6; round++ {
		for i := 0; i < 20000; i++ {
			x.set(id(), uint8(rng.Intn(200)))
		}
		clones = append(clones, x.clone())
		wants = append(wants, indexMap(&x))
	}
	for i := range clones {
		if got := indexMap(&clones[i]); len(got) != len(wants[i]) {
			t.Fatalf("clone %d holds %d ids, %d when taken", i, len(got), len(wants[i]))
		}
		for k, v := range wants[i] {
			if got, ok := clones[i].get(k); !ok || got != v {
				t.Fatalf("clone %d: get(%d) = %d, %v; %d when taken", i, k, got, ok, v)
			}
		}
	}
	if got, want := indexMap(&x), wants[len(wants)-1]; len(got) != len(want) {
		t.Fatalf("the index holds %d ids, want %d", len(got), len(want))
	}
}

// An index read back from its encoding holds the same ids and encodes to
// the same bytes.
func TestOrderIndexEncodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var x orderIndex
	for i := 0; i < 30000; i++ {
		var id int64
		switch rng.Intn(3) {
		case 0:
			id = int64(1)<<51 + rng.Int63n(1<<40)
		case 1:
			id = -rng.Int63n(1000)
		default:
			id = rng.Int63n(x.denseLen + 100)
		}
		x.set(id, uint32(rng.Int63n(1<<31)))
	}
	enc := func(x *orderIndex) []byte {
		var buf bytes.Buffer
		e := snap.NewEncoder(&buf)
		x.encode(e)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	b := enc(&x)
	var y orderIndex
	d := snap.NewDecoder(bytes.NewReader(b), int64(len(b)))
	y.decode(d)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(indexMap(&x), indexMap(&y)) || x.denseLen != y.denseLen || x.used != y.used {
		t.Fatal("the index read back holds other ids")
	}
	if !bytes.Equal(enc(&y), b) {
		t.Fatal("the index read back encodes to other bytes")
	}
}

// A clone written into leaves the index it was taken from as it was, and
// the other way round: neither writes into a chunk they share.
func TestOrderIndexCloneWrittenIntoIsApart(t *testing.T) {
	var x orderIndex
	far := int64(1) << 51
	for id := int64(1); id <= 3*denseChunkLen; id++ {
		x.set(id, 1)
		x.set(far+id, 1)
	}
	c := x.clone()
	d := c.clone() // a clone of a clone
	for id := int64(1); id <= 3*denseChunkLen; id += 97 {
		for _, k := range []int64{id, far + id} {
			c.set(k, 2)
			x.set(k+1, 3)
			d.set(k+2, 4)
		}
	}
	for id := int64(1); id <= 3*denseChunkLen; id += 97 {
		for _, k := range []int64{id, far + id} {
			for _, w := range []struct {
				name    string
				x       *orderIndex
				k       int64
				v, left uint32
			}{{"clone", &c, k, 2, 1}, {"index", &x, k + 1, 3, 1}, {"clone's clone", &d, k + 2, 4, 1}} {
				for _, o := range []*orderIndex{&x, &c, &d} {
					want := w.left
					if o == w.x {
						want = w.v
					}
					if got, _ := o.get(w.k); got != want {
						t.Fatalf("after the %s set %d: get(%d) = %d, want %d", w.name, w.k, w.k, got, want)
					}
				}
			}
		}
	}
}

// A snapshot whose far ids are not ascending (a duplicate among them) is
// refused, not read into an index that would encode to other bytes.
func TestOrderIndexDecodeRefusesUnorderedFarIds(t *testing.T) {
	for _, ids := range [][]int64{{1 << 51, 1 << 51}, {1<<51 + 1, 1 << 51}} {
		var buf bytes.Buffer
		e := snap.NewEncoder(&buf)
		e.Len(0) // no dense range
		e.Int(0)
		e.Len(len(ids))
		for _, id := range ids {
			e.Varint(id)
			e.Uvarint(1)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		var x orderIndex
		d := snap.NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		x.decode(d)
		if d.Err() == nil {
			t.Fatalf("far ids %v read without an error", ids)
		}
	}
}
