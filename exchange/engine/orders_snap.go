package engine

import (
	"cmp"
	"maps"
	"slices"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// The snapshot of the engine's order state (projections.Snapshotter).
// Freeze copies, under the lock, what later events change: the unfinished
// orders (few: the open ones) with their fill ids, the finished set's
// words, the indexes and the fill cursors; the Idempotency-Keys answered,
// which grow with the history, are shared (keyIndex.freeze: O(1)), and so
// are the finished set's sparse words (an import's ids; idSet.frozenSparse).
// Ids reserved for orders still being written (allocID, no event yet) are
// not the log's: they are left out, as a replay of the log would not have
// them.

// SnapshotVersion implements projections.Snapshotter.
func (s *Orders) SnapshotVersion() uint32 { return 2 } // 2: nextID leaves imported ids out (streamID)

// frozenOrders is the order state as Freeze copied it.
type frozenOrders struct {
	nextID   int64
	orders   map[int64]frozenEntry
	dense    []uint64
	sparse   sparseWords
	open     map[string][]int64
	armed    map[pairRef][]int64
	byClient map[string]int64
	keys     keyLog
	ocos     map[int64]domain.Oco
	cursor   map[string]uint64
}

type frozenEntry struct {
	o       domain.Order
	updated int64
	filed   string
}

// reserved reports whether an entry is an id reserved by allocID (handed
// out) that no event of the log has reached.
func (entry *orderEntry) reserved() bool {
	return entry.shared && entry.o.State == domain.OrderStateNone && entry.o.Version == -1
}

// Freeze implements projections.Snapshotter.
func (s *Orders) Freeze() func(*snap.Encoder) {
	s.mu.Lock()
	st := &s.state
	f := frozenOrders{nextID: st.nextID, orders: make(map[int64]frozenEntry, len(st.orders)),
		dense: slices.Clone(st.finished.dense), sparse: st.finished.frozenSparse(),
		open: make(map[string][]int64, len(st.open)), armed: make(map[pairRef][]int64, len(st.armed)),
		byClient: maps.Clone(st.byClient), keys: st.keys.freeze(), ocos: make(map[int64]domain.Oco, len(st.ocos)),
		cursor: maps.Clone(st.cursor)}
	for id, entry := range st.orders {
		if entry.reserved() {
			continue
		}
		o := entry.o
		o.FillIDs = slices.Clone(o.FillIDs) // a spare entry's are written over
		f.orders[id] = frozenEntry{o: o, updated: entry.updated, filed: entry.filed}
	}
	for ex, set := range st.open {
		f.open[ex] = slices.Collect(maps.Keys(set))
	}
	for ref, set := range st.armed {
		f.armed[ref] = slices.Collect(maps.Keys(set))
	}
	for id, c := range st.ocos {
		oc := *c
		oc.Cancelled = maps.Clone(c.Cancelled)
		f.ocos[id] = oc
	}
	s.mu.Unlock()
	return f.encode
}

func (f *frozenOrders) encode(e *snap.Encoder) {
	e.Varint(f.nextID)
	e.Len(len(f.orders))
	for _, id := range slices.Sorted(maps.Keys(f.orders)) {
		entry := f.orders[id]
		e.Varint(id)
		e.Order(&entry.o)
		e.Varint(entry.updated)
		e.Text(entry.filed)
	}
	e.Len(len(f.dense))
	e.Words(f.dense)
	e.Len(f.sparse.len())
	words := make([]int64, 0, f.sparse.len())
	for _, shard := range f.sparse {
		words = slices.AppendSeq(words, maps.Keys(shard))
	}
	slices.Sort(words)
	for _, w := range words {
		e.Varint(w)
		e.Uint64(f.sparse.get(w))
	}
	e.Len(len(f.open))
	for _, ex := range slices.Sorted(maps.Keys(f.open)) {
		e.Text(ex)
		encodeIDs(e, f.open[ex])
	}
	e.Len(len(f.armed))
	for _, ref := range slices.SortedFunc(maps.Keys(f.armed), comparePairRefs) {
		e.Text(ref.exchange)
		e.Text(ref.pair)
		encodeIDs(e, f.armed[ref])
	}
	e.Len(len(f.byClient))
	for _, c := range slices.Sorted(maps.Keys(f.byClient)) {
		e.Text(c)
		e.Varint(f.byClient[c])
	}
	e.Len(f.keys.len())
	f.keys.sorted(func(k *keyAnswer) {
		e.Uint64(k.id.a)
		e.Uint64(k.id.b)
		e.Varint(k.rec.orderID)
		e.Varint(k.rec.ocoID)
		e.Uint64(k.rec.fp)
	})
	e.Len(len(f.ocos))
	for _, id := range slices.Sorted(maps.Keys(f.ocos)) {
		c := f.ocos[id]
		e.Varint(id)
		e.Oco(&c)
	}
	e.Len(len(f.cursor))
	for _, ex := range slices.Sorted(maps.Keys(f.cursor)) {
		e.Text(ex)
		e.Uint64(f.cursor[ex])
	}
}

func comparePairRefs(x, y pairRef) int {
	return cmp.Or(cmp.Compare(x.exchange, y.exchange), cmp.Compare(x.pair, y.pair))
}

func encodeIDs(e *snap.Encoder, ids []int64) {
	slices.Sort(ids)
	e.Len(len(ids))
	for _, id := range ids {
		e.Varint(id)
	}
}

func decodeIDs(d *snap.Decoder) map[int64]struct{} {
	n := d.Len(1)
	set := make(map[int64]struct{}, n)
	for range n {
		set[d.Varint()] = struct{}{}
	}
	return set
}

// Load implements projections.Snapshotter.
func (s *Orders) Load(d *snap.Decoder) (func(), error) {
	st := orderState{nextID: d.Varint()}
	n := d.Len(4)
	st.orders = make(map[int64]*orderEntry, n)
	for range n {
		id := d.Varint()
		entry := &orderEntry{}
		d.Order(&entry.o)
		entry.updated = d.Varint()
		entry.filed = d.Text()
		st.orders[id] = entry
	}
	if words := d.Len(8); words > 0 {
		st.finished.dense = make([]uint64, words)
		d.Words(st.finished.dense)
	}
	for range d.Len(9) {
		w := d.Varint()
		st.finished.setSparse(w, d.Uint64())
	}
	n = d.Len(2)
	st.open = make(map[string]map[int64]struct{}, n)
	for range n {
		ex := d.Text()
		st.open[ex] = decodeIDs(d)
	}
	n = d.Len(3)
	st.armed = make(map[pairRef]map[int64]struct{}, n)
	for range n {
		ref := pairRef{d.Text(), d.Text()}
		st.armed[ref] = decodeIDs(d)
	}
	n = d.Len(2)
	st.byClient = make(map[string]int64, n)
	for range n {
		c := d.Text()
		st.byClient[c] = d.Varint()
	}
	n = d.Len(19)
	st.keys.reserve(n)
	for range n {
		k := keyID{d.Uint64(), d.Uint64()}
		st.keys.add(k, keyRecord{orderID: d.Varint(), ocoID: d.Varint(), fp: d.Uint64()})
	}
	n = d.Len(2)
	st.ocos = make(map[int64]*domain.Oco, n)
	for range n {
		id := d.Varint()
		c := new(domain.Oco)
		d.Oco(c)
		st.ocos[id] = c
	}
	n = d.Len(9)
	st.cursor = make(map[string]uint64, n)
	for range n {
		ex := d.Text()
		st.cursor[ex] = d.Uint64()
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		s.mu.Lock()
		s.state = st
		s.mu.Unlock()
	}, nil
}
