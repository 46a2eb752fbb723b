package projections

import (
	"slices"
	"sync/atomic"
)

// idIndex maps an order id to a small value V. It keeps two homes:
//
//   - the dense range: ids from 0, the Trader's (dense and increasing from
//     1), by their place in chunks of denseChunkLen values — a value each
//     and no hashing, which on a replay of a million orders is most of
//     what a map would cost. The range grows only while at least a quarter
//     of it is used, so memory stays proportional to the orders held
//     whatever the ids;
//   - the far ids, every other (negative, or past the range: an import's
//     are from domain.ImportedOrderIDs on and increase with their trade
//     time), sorted in chunks of up to farChunkLen: an id after every other
//     is appended, a lookup is two binary searches, and those of the recent
//     ids (a fill after its order's request) stay within the last chunk.
//
// Both are copy-on-write: clone shares every chunk and a later set copies
// the one it writes into first (one chunk, not the index), so that a
// snapshot's freeze copies only the chunks' directory.
type idIndex[V uint8 | uint32] struct {
	dense    []*denseChunk[V] // the ids [0, denseLen): dense[id>>denseBits].v[id&denseMask] = value+1; 0 is no order
	denseLen int64
	used     int // non-zero entries of the dense range
	far      farIDs[V]
	gen      uint64 `snap:"-"` // chunks of another generation are shared with a clone: copied before a write
}

// idIndexGens hands out the generations of cloned indexes: unique in the
// process, so that a chunk's generation is that of the one index that may
// write into it in place (or of none, once shared).
var idIndexGens atomic.Uint64

// orderIndex is the Ledger's: order id → pair index | sideSell bit.
type orderIndex = idIndex[uint32]

// denseSlack is how long the dense range may be regardless of its use.
const denseSlack = 1024

const (
	denseBits     = 12
	denseChunkLen = 1 << denseBits
	denseMask     = denseChunkLen - 1
	farChunkLen   = 1024
)

// denseChunk is a run of the dense range's values; only the last chunk may
// be shorter than denseChunkLen (a small index's).
type denseChunk[V uint8 | uint32] struct {
	gen uint64 `snap:"-"`
	v   []V
}

// farChunk is a run of far ids, ascending, and their values.
type farChunk[V uint8 | uint32] struct {
	gen  uint64 `snap:"-"`
	ids  []int64
	vals []V
}

// farIDs is the far ids in ascending order, in chunks of 1 to farChunkLen.
type farIDs[V uint8 | uint32] struct {
	chunks []*farChunk[V]
	firsts []int64 // chunks[k].ids[0]
	n      int
}

func (x *idIndex[V]) get(id int64) (V, bool) {
	if id >= 0 && id < x.denseLen {
		if v := x.dense[id>>denseBits].v[id&denseMask]; v != 0 {
			return v - 1, true
		}
		return 0, false
	}
	k, i, ok := x.far.find(id)
	if !ok {
		return 0, false
	}
	return x.far.chunks[k].vals[i], true
}

// update sets id's value to f(its value) when id is held (one look-up; a
// chunk shared with a clone is copied only when the value changes) and
// reports whether it is.
func (x *idIndex[V]) update(id int64, f func(V) V) bool {
	if id >= 0 && id < x.denseLen {
		k, i := int(id>>denseBits), id&denseMask
		v := x.dense[k].v[i]
		if v == 0 {
			return false
		}
		if nv := f(v-1) + 1; nv != v {
			x.ownDense(k).v[i] = nv
		}
		return true
	}
	k, i, ok := x.far.find(id)
	if !ok {
		return false
	}
	v := x.far.chunks[k].vals[i]
	if nv := f(v); nv != v {
		x.far.own(k, x.gen).vals[i] = nv
	}
	return true
}

// len returns the number of ids held.
func (x *idIndex[V]) len() int { return x.used + x.far.n }

// set records id's value; v must be below V's largest value.
func (x *idIndex[V]) set(id int64, v V) {
	n := x.denseLen
	if id >= n && id < 4*int64(x.len()+1)+denseSlack {
		// Grow, at least doubling (amortized), within the density bound.
		x.growDense(min(max(id+1, 2*n), 4*int64(x.len()+1)+denseSlack))
	}
	if id >= 0 && id < x.denseLen {
		c := x.ownDense(int(id >> denseBits))
		if c.v[id&denseMask] == 0 {
			x.used++
		}
		c.v[id&denseMask] = v + 1
		return
	}
	x.far.set(id, v, x.gen)
}

// growDense makes the dense range [0, size) and moves the far ids it now
// covers into it: one home per id.
func (x *idIndex[V]) growDense(size int64) {
	old, have := x.denseLen, int64(0)
	if k := len(x.dense) - 1; k >= 0 {
		have = int64(k)<<denseBits + int64(len(x.dense[k].v))
		if c := x.dense[k]; have < size && len(c.v) < denseChunkLen {
			// The last chunk is short (a small index's): lengthen it, at
			// least doubling (a new chunk, which no clone shares).
			n := min(max(2*len(c.v), int(size-int64(k)<<denseBits)), denseChunkLen)
			grown := &denseChunk[V]{gen: x.gen, v: make([]V, n)}
			copy(grown.v, c.v)
			x.dense[k] = grown
			have = int64(k)<<denseBits + int64(n)
		}
	}
	for have < size {
		n := int(min(size-have, denseChunkLen))
		x.dense = append(x.dense, &denseChunk[V]{gen: x.gen, v: make([]V, n)})
		have += int64(n)
	}
	x.denseLen = size
	x.far.take(old, size, x.gen, func(id int64, v V) {
		x.ownDense(int(id >> denseBits)).v[id&denseMask] = v + 1
		x.used++
	})
}

// ownDense returns dense chunk k, copied first if a clone shares it.
func (x *idIndex[V]) ownDense(k int) *denseChunk[V] {
	c := x.dense[k]
	if c.gen != x.gen {
		c = &denseChunk[V]{gen: x.gen, v: slices.Clone(c.v)}
		x.dense[k] = c
	}
	return c
}

// clone returns a copy of x that later sets do not change: it shares every
// chunk, which either copies before it writes into one (the cost of a
// clone is its directory of chunks). Both take a new generation, so that
// no chunk either holds is of the generation of either.
func (x *idIndex[V]) clone() idIndex[V] {
	c := *x
	c.dense = slices.Clone(x.dense)
	c.far.chunks, c.far.firsts = slices.Clone(x.far.chunks), slices.Clone(x.far.firsts)
	c.gen, x.gen = idIndexGens.Add(1), idIndexGens.Add(1)
	return c
}

// each calls f with every id held and its value, dense ones first, each
// part in ascending order.
func (x *idIndex[V]) each(f func(id int64, v V)) {
	for k, c := range x.dense {
		for i, v := range c.v {
			if v != 0 {
				f(int64(k)<<denseBits+int64(i), v-1)
			}
		}
	}
	x.far.each(f)
}

// find returns the chunk and place of id, or where it would go (k −1:
// before every id), and whether it is there.
func (f *farIDs[V]) find(id int64) (k, i int, ok bool) {
	nc := len(f.chunks)
	if nc == 0 {
		return -1, 0, false
	}
	// The last chunk with a first id at or before id: most lookups are of
	// recent ids, in the last chunk.
	k = nc - 1
	if ids := f.chunks[k].ids; len(ids) > 0 && id > ids[len(ids)-1] {
		return k, len(ids), false // after every id: a new one, appended
	}
	if id < f.firsts[k] {
		lo, hi := 0, k // firsts[hi] > id
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if f.firsts[m] <= id {
				lo = m + 1
			} else {
				hi = m
			}
		}
		k = lo - 1
		if k < 0 {
			return -1, 0, false
		}
	}
	ids := f.chunks[k].ids
	lo, hi := 0, len(ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return k, lo, lo < len(ids) && ids[lo] == id
}

// own returns chunk k, copied first if a clone shares it.
func (f *farIDs[V]) own(k int, gen uint64) *farChunk[V] {
	c := f.chunks[k]
	if c.gen != gen {
		c = &farChunk[V]{gen: gen, ids: make([]int64, len(c.ids), farChunkLen), vals: make([]V, len(c.vals), farChunkLen)}
		copy(c.ids, f.chunks[k].ids)
		copy(c.vals, f.chunks[k].vals)
		f.chunks[k] = c
	}
	return c
}

// newFarChunk returns an empty chunk of generation gen.
func newFarChunk[V uint8 | uint32](gen uint64) *farChunk[V] {
	return &farChunk[V]{gen: gen, ids: make([]int64, 0, farChunkLen), vals: make([]V, 0, farChunkLen)}
}

// set records id's value: in place when id is held, else inserted in
// order (appended when it is after every id).
func (f *farIDs[V]) set(id int64, v V, gen uint64) {
	k, i, ok := f.find(id)
	if ok {
		f.own(k, gen).vals[i] = v
		return
	}
	if k < 0 { // before every id: the first chunk's first
		if len(f.chunks) == 0 {
			f.chunks, f.firsts = append(f.chunks, newFarChunk[V](gen)), append(f.firsts, id)
		}
		k, i = 0, 0
	}
	if c := f.chunks[k]; len(c.ids) == farChunkLen {
		if k == len(f.chunks)-1 && i == farChunkLen { // after every id: a new last chunk
			f.chunks, f.firsts = append(f.chunks, newFarChunk[V](gen)), append(f.firsts, id)
			k, i = k+1, 0
		} else { // split: the upper half to a new chunk after it
			half := farChunkLen / 2
			upper := newFarChunk[V](gen)
			upper.ids, upper.vals = append(upper.ids, c.ids[half:]...), append(upper.vals, c.vals[half:]...)
			lower := f.own(k, gen)
			lower.ids, lower.vals = lower.ids[:half], lower.vals[:half]
			f.chunks, f.firsts = slices.Insert(f.chunks, k+1, upper), slices.Insert(f.firsts, k+1, upper.ids[0])
			if i > half {
				k, i = k+1, i-half
			}
		}
	}
	c := f.own(k, gen)
	c.ids, c.vals = slices.Insert(c.ids, i, id), slices.Insert(c.vals, i, v)
	f.firsts[k] = c.ids[0]
	f.n++
}

// take removes the ids in [lo, hi) and calls fn with each, in order.
func (f *farIDs[V]) take(lo, hi int64, gen uint64, fn func(id int64, v V)) {
	if f.n == 0 || hi <= lo {
		return
	}
	k, i, _ := f.find(lo)
	if k < 0 {
		k, i = 0, 0
	}
	for k < len(f.chunks) {
		c := f.chunks[k]
		j := i
		for j < len(c.ids) && c.ids[j] < hi {
			fn(c.ids[j], c.vals[j])
			j++
		}
		done := j < len(c.ids) // an id at or past hi stays: the last chunk touched
		if j > i {
			c = f.own(k, gen)
			c.ids, c.vals = slices.Delete(c.ids, i, j), slices.Delete(c.vals, i, j)
			f.n -= j - i
		}
		if len(c.ids) == 0 {
			f.chunks, f.firsts = slices.Delete(f.chunks, k, k+1), slices.Delete(f.firsts, k, k+1)
		} else {
			f.firsts[k] = c.ids[0]
			k++
		}
		if done {
			return
		}
		i = 0
	}
}

// each calls fn with every id in ascending order and its value.
func (f *farIDs[V]) each(fn func(id int64, v V)) {
	for _, c := range f.chunks {
		for i, id := range c.ids {
			fn(id, c.vals[i])
		}
	}
}
