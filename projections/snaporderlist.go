package projections

import (
	"encoding/binary"
	"maps"
	"slices"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// Snapshots of the order index (OrderList) and of the id indexes it shares
// with the Ledger. The large parts are copied as little as they can be at
// the cut: an index by id is chunks (a byte or a word an order) shared
// copy-on-write (idIndex.clone); the order list's chunks are shared but
// for the last few, the only ones a later request can change in place
// (see frozenChunks).

// valueSize returns the bytes a value of an id index is written in: 1 for
// a byte, 4 for a word.
func valueSize[V uint8 | uint32]() int {
	if V(0xff)+1 == 0 {
		return 1
	}
	return 4
}

// denseRun is how many values of a dense index one Bytes value holds.
const denseRun = 1 << 16

// encode writes x: its dense range as runs of little-endian values, then
// its far ids in order.
func (x *idIndex[V]) encode(e *snap.Encoder) {
	size := valueSize[V]()
	e.Len(int(x.denseLen))
	e.Int(x.used)
	buf := make([]byte, 0, denseRun*size)
	for i := int64(0); i < x.denseLen; i += denseRun {
		buf = buf[:0]
		for id := i; id < min(i+denseRun, x.denseLen); id++ {
			v := x.dense[id>>denseBits].v[id&denseMask]
			if size == 1 {
				buf = append(buf, byte(v))
			} else {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
			}
		}
		e.Bytes(buf)
	}
	e.Len(x.far.n)
	x.far.each(func(id int64, v V) {
		e.Varint(id)
		e.Uvarint(uint64(v))
	})
}

// decode reads an index encode wrote.
func (x *idIndex[V]) decode(d *snap.Decoder) {
	size := valueSize[V]()
	n := d.Len(0)
	used := d.Int()
	if d.Err() != nil {
		return
	}
	*x = idIndex[V]{}
	if n > 0 {
		x.growDense(int64(n))
	}
	for at := int64(0); at < int64(n) && d.Err() == nil; {
		b := d.Bytes()
		if len(b) != int(min(denseRun, int64(n)-at))*size {
			d.Failf("a run of an id index holds %d bytes", len(b))
			return
		}
		for i := 0; i < len(b); i += size {
			var v uint32
			if size == 1 {
				v = uint32(b[i])
			} else {
				v = binary.LittleEndian.Uint32(b[i:])
			}
			x.dense[at>>denseBits].v[at&denseMask] = V(v)
			at++
		}
	}
	x.used = used
	prev := int64(0)
	for k := range d.Len(2) {
		id, v := d.Varint(), V(d.Uvarint())
		switch {
		case d.Err() != nil:
			return
		case id >= 0 && id < int64(n):
			d.Failf("far id %d inside the dense range of %d", id, n)
			return
		case k > 0 && id <= prev:
			d.Failf("far id %d after %d: not ascending", id, prev)
			return
		}
		x.far.set(id, v, x.gen) // ascending: appended
		prev = id
	}
}

// SnapshotVersion implements Snapshotter.
func (l *OrderList) SnapshotVersion() uint32 { return 1 }

// frozenChunks returns the chunks as of now, for encoding later: the
// chunks a later request may change in place (those holding the last
// insertReach entries: request inserts no farther from the end) are
// copied; the others are shared, since a later push appends past them and
// a sort makes new ones.
func (c *listChunks) frozen() listChunks {
	out := listChunks{chunks: slices.Clone(c.chunks), n: c.n}
	from := max(c.n-insertReach-1, 0) / listChunkLen
	for k := from; k < len(out.chunks); k++ {
		ch := &out.chunks[k]
		ch.packed, ch.wide = slices.Clone(ch.packed), slices.Clone(ch.wide)
	}
	return out
}

// Freeze implements Snapshotter.
func (l *OrderList) Freeze() func(*snap.Encoder) {
	l.mu.Lock() // the clone of states moves its generation
	keys := slices.Clone(l.keys)
	states := l.states.clone()
	entries := l.entries.frozen()
	unsorted := l.unsorted
	open := maps.Clone(l.open)
	l.mu.Unlock()
	return func(e *snap.Encoder) {
		// byName is the inverse of keys.
		e.Len(len(keys))
		for _, k := range keys {
			e.Text(k)
		}
		states.encode(e)
		e.Bool(unsorted)
		e.Len(entries.n)
		e.Len(len(entries.chunks))
		for i := range entries.chunks {
			ch := &entries.chunks[i]
			e.Varint(ch.t0)
			e.Varint(ch.id0)
			e.Bool(ch.wide != nil)
			if ch.wide != nil {
				e.Len(len(ch.wide))
				for _, en := range ch.wide {
					e.Varint(en.time)
					e.Varint(en.id)
					e.Uvarint(uint64(en.pair))
					e.Byte(en.kind)
					e.Bool(en.sell)
				}
				continue
			}
			e.Len(len(ch.packed))
			e.Words(ch.packed)
		}
		e.Len(len(open))
		for _, id := range slices.Sorted(maps.Keys(open)) {
			o := open[id]
			e.Varint(id)
			e.Decimal(o.amount)
			e.Decimal(o.filled)
		}
	}
}

// Load implements Snapshotter.
func (l *OrderList) Load(d *snap.Decoder) (func(), error) {
	n := d.Len(1)
	keys := make([]string, 0, n)
	byName := make(map[pairName]uint32, n)
	for i := range n {
		k := d.Text()
		ex, pair, err := domain.SplitPairKey(k)
		if err != nil && d.Err() == nil {
			d.Failf("pair key %q: %v", k, err)
		}
		keys = append(keys, k)
		byName[pairName{ex, pair}] = uint32(i)
	}
	var states idIndex[uint8]
	states.decode(d)
	unsorted := d.Bool()
	var entries listChunks
	entries.n = d.Len(0)
	chunks := d.Len(2)
	entries.chunks = make([]listChunk, 0, chunks)
	total := 0
	for range chunks {
		ch := listChunk{t0: d.Varint(), id0: d.Varint()}
		if d.Bool() {
			m := d.Len(5)
			ch.wide = make([]listEntry, 0, max(m, 1))
			for range m {
				ch.wide = append(ch.wide, listEntry{time: d.Varint(), id: d.Varint(), pair: uint32(d.Uvarint()), kind: d.Byte(), sell: d.Bool()})
			}
		} else {
			m := d.Len(0)
			if m > listChunkLen {
				d.Failf("a chunk of %d entries", m)
				break
			}
			ch.packed = make([]uint64, m, listChunkLen)
			d.Words(ch.packed)
		}
		total += ch.len()
		entries.chunks = append(entries.chunks, ch)
	}
	if total != entries.n && d.Err() == nil {
		d.Failf("%d entries in chunks, %d said", total, entries.n)
	}
	m := d.Len(3)
	open := make(map[int64]listOpen, m)
	for range m {
		id := d.Varint()
		open[id] = listOpen{amount: d.Decimal(), filled: d.Decimal()}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		l.mu.Lock()
		l.keys, l.byName, l.states, l.entries, l.unsorted, l.open = keys, byName, states, entries, unsorted, open
		l.mu.Unlock()
	}, nil
}
