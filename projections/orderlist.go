package projections

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// OrderList is the index of every order in the log, whatever became of it:
// resting, filled, cancelled, rejected, expired, and the orders of pairs
// no longer (or never) in the configuration. It answers which orders match
// a filter (pairs, side, states, request time), newest first, and nothing
// else: an order's amounts, prices, reason and fills are read from its own
// stream when it is shown (GET orders/all), as the order manager reads a
// finished order. So the index costs about 9 bytes an order: an entry in
// time order of what never changes (request time, id, pair, kind, side),
// packed in 8 bytes (listChunks), and a byte of state by id; only
// unfinished orders keep their amount, to tell when their fills complete
// them.
//
// An order's state follows domain.Order.Apply: requested, accepted (also
// once a fill arrives), triggered, and the final filled, cancelled,
// rejected, expired. One difference: a fill arriving after the order
// finished (cancelled, then a late fill of its rest) does not move it to
// filled here, since its amount is no longer kept; the order's stream, as
// shown, has the last word.
//
// Times are those of the OrderRequested events (an import's: the trade
// time). Entries are in request-time order, ties in log order; a request
// older than the newest entry is put in its place (slices.Insert when it is
// near the end, else by one sort at the next read).
type OrderList struct {
	mu       sync.RWMutex
	keys     []string            // pair index → pair key
	byName   map[pairName]uint32 // exchange and pair → pair index
	states   idIndex[uint8]      // order id → its state's flags (below)
	entries  listChunks          // in request-time order, see the type comment
	unsorted bool                // entries holds a run out of time order (sort before reading)
	open     map[int64]listOpen  // unfinished orders
}

// listOpen is what the index keeps of an unfinished order.
type listOpen struct{ amount, filled decimal.Decimal }

// listEntry is an order's place in time order, and what never changes of
// it.
type listEntry struct {
	time int64  // ms of its OrderRequested
	id   int64  // order id
	pair uint32 // index in OrderList.keys
	kind uint8  // index in listKinds
	sell bool
}

// The flags of an order's state in OrderList.states.
const (
	listStateMask = 7      // index in listStates
	listFilled    = 1 << 3 // at least one fill
	listCancelReq = 1 << 4 // a cancel was asked for
	maxListPairs  = 1<<24 - 1
)

var (
	listStates = [...]domain.OrderState{domain.OrderStateRequested, domain.OrderStateAccepted, domain.OrderStateTriggered,
		domain.OrderStateFilled, domain.OrderStateCancelled, domain.OrderStateRejected, domain.OrderStateExpired}
	listKinds = [...]domain.OrderKind{domain.KindLimit, domain.KindMarket, domain.KindStopLimit, domain.KindTrailingStop}
)

// listState returns the index of s in listStates (-1 if none).
func listState(s domain.OrderState) int { return slices.Index(listStates[:], s) }

// insertReach is how far from the end a late request is inserted in place;
// farther (an old history imported into a data dir in use) it waits for one
// sort at the next read.
const insertReach = 4096

// NewOrderList returns an empty OrderList.
func NewOrderList() *OrderList {
	return &OrderList{byName: map[pairName]uint32{}, open: map[int64]listOpen{}}
}

// Name implements Projection.
func (l *OrderList) Name() string { return "orderlist" }

// Apply implements Projection: OrderRequested adds an order (a second
// request of a known id changes nothing), the other order events move its
// state (see OrderList). Other events are ignored. A payload that does not
// decode is EINVALID and changes nothing.
func (l *OrderList) Apply(e *domain.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.apply(e)
}

// ApplyBatch implements BatchApplier: Apply on each event, under one lock.
func (l *OrderList) ApplyBatch(events []domain.Event, onError func(*domain.Event, error)) {
	l.mu.Lock()
	applyEach(events, l.apply, onError)
	l.mu.Unlock()
}

// The indexes in listStates of the states Apply moves an order to.
const (
	listRequested = iota
	listAccepted
	listTriggered
	listFilledState
	listCancelled
	listRejected
	listExpired
)

// listDone reports whether the state at index st of listStates is final.
func listDone(st uint8) bool { return st >= listFilledState }

// apply is Apply with l.mu held.
func (l *OrderList) apply(e *domain.Event) error {
	switch e.Type {
	case domain.TypeOrderRequested:
		r, err := domain.Payload[domain.OrderRequested](e)
		if err != nil {
			return err
		}
		return l.request(r, e.Time)
	case domain.TypeOrderFilled:
		f, err := domain.Payload[domain.OrderFilled](e)
		if err != nil {
			return err
		}
		l.update(e.Stream, func(id int64, v uint8) uint8 {
			v |= listFilled
			st := v & listStateMask
			o, isOpen := l.open[id]
			if !isOpen {
				return v // a late fill of a finished order (see OrderList)
			}
			o.filled = o.filled.Add(f.Quantity)
			switch {
			case o.filled.Cmp(o.amount) >= 0:
				delete(l.open, id)
				return withState(v, listFilledState)
			case st == listRequested || st == listTriggered:
				v = withState(v, listAccepted)
			}
			l.open[id] = o
			return v
		})
	case domain.TypeOrderAccepted, domain.TypeStopTriggered:
		next := uint8(listAccepted)
		if e.Type == domain.TypeStopTriggered {
			next = listTriggered
		}
		l.update(e.Stream, func(id int64, v uint8) uint8 {
			if listDone(v & listStateMask) {
				return v
			}
			return withState(v, next)
		})
	case domain.TypeOrderCancelRequested:
		l.update(e.Stream, func(_ int64, v uint8) uint8 { return v | listCancelReq })
	case domain.TypeOrderCancelled, domain.TypeOrderRejected, domain.TypeOrderExpired:
		final := uint8(listCancelled)
		switch e.Type {
		case domain.TypeOrderRejected:
			final = listRejected
		case domain.TypeOrderExpired:
			final = listExpired
		}
		l.update(e.Stream, func(id int64, v uint8) uint8 {
			delete(l.open, id)
			return withState(v, final)
		})
	}
	return nil
}

// withState returns the flags v with the state at index st of listStates.
func withState(v uint8, st uint8) uint8 {
	return v&^listStateMask | st
}

// update changes the flags of the order of stream (an order stream of a
// requested order; others are ignored) to change(id, flags). l.mu is held.
func (l *OrderList) update(stream string, change func(id int64, v uint8) uint8) {
	id, ok := streams.OrderStreamID(stream)
	if !ok {
		return
	}
	l.states.update(id, func(v uint8) uint8 { return change(id, v) })
}

func (l *OrderList) request(r *domain.OrderRequested, t int64) error {
	if _, known := l.states.get(r.OrderID); known {
		return nil
	}
	e := listEntry{time: t, id: r.OrderID}
	switch r.Side {
	case domain.Buy:
	case domain.Sell:
		e.sell = true
	default:
		return domain.Errorf(domain.EINVALID, "order %d: side %q", r.OrderID, r.Side)
	}
	if k := slices.Index(listKinds[:], r.Kind); k > 0 { // a kind this version does not know shows as limit
		e.kind = uint8(k)
	}
	pi, ok := l.byName[pairName{r.Exchange, r.Pair}]
	if !ok {
		if len(l.keys) >= maxListPairs {
			return domain.Errorf(domain.EINVALID, "order %d: more than %d pairs", r.OrderID, maxListPairs)
		}
		pi = uint32(len(l.keys))
		l.keys = append(l.keys, domain.PairKey(r.Exchange, r.Pair))
		// Copies: the event's strings may share its replay batch's memory.
		l.byName[pairName{strings.Clone(r.Exchange), strings.Clone(r.Pair)}] = pi
	}
	e.pair = pi
	l.states.set(r.OrderID, 0) // requested
	l.open[r.OrderID] = listOpen{amount: r.Amount}
	n := l.entries.len()
	if l.unsorted || n == 0 || l.entries.time(n-1) <= t {
		l.entries.push(e)
		return nil
	}
	// After every entry of time ≤ t: ties stay in log order.
	i := sort.Search(n, func(i int) bool { return l.entries.time(i) > t })
	if n-i > insertReach {
		l.entries.push(e)
		l.unsorted = true
		return nil
	}
	l.entries.insert(i, e)
	return nil
}

// OrderFilter selects orders of an OrderList. Zero fields select
// everything.
type OrderFilter struct {
	Keys   []string            // pair keys (a key without orders matches none)
	Side   domain.Side         // buy or sell
	States []domain.OrderState // current states
	From   int64               // request time ≥ From (ms)
	To     int64               // request time < To (ms); 0: no bound
}

// ListedOrder is one order as the index knows it.
type ListedOrder struct {
	ID              int64
	Key             string
	Time            int64 // ms of its request
	Side            domain.Side
	Kind            domain.OrderKind
	State           domain.OrderState
	Filled          bool // it has at least one fill
	CancelRequested bool
}

// OrderPage is one page of an OrderList.
type OrderPage struct {
	Orders []ListedOrder // newest first
	Total  int           // orders matching the filter
	// Counts are the orders matching the filter's pairs, side and times,
	// by current state (every state but the filter's).
	Counts map[domain.OrderState]int
}

// Page returns the page-th page (from 0) of size orders matching f, newest
// first (request time, ties in reverse log order); a page past the end is
// empty. Unknown states select nothing.
func (l *OrderList) Page(f OrderFilter, page, size int) OrderPage {
	l.sortIfNeeded()
	l.mu.RLock()
	defer l.mu.RUnlock()
	var pairs map[uint32]bool
	if len(f.Keys) > 0 {
		pairs = map[uint32]bool{}
		for _, k := range f.Keys {
			if e, p, err := domain.SplitPairKey(k); err == nil {
				if i, ok := l.byName[pairName{e, p}]; ok {
					pairs[i] = true
				}
			}
		}
	}
	var states uint8 // bit per listStates index
	for _, s := range f.States {
		if i := listState(s); i >= 0 {
			states |= 1 << i
		}
	}
	out := OrderPage{Orders: []ListedOrder{}, Counts: map[domain.OrderState]int{}}
	var counts [len(listStates)]int
	n := l.entries.len()
	lo := sort.Search(n, func(i int) bool { return l.entries.time(i) >= f.From })
	hi := n
	if f.To != 0 {
		hi = sort.Search(n, func(i int) bool { return l.entries.time(i) >= f.To })
	}
	first := page * size
	for i := hi - 1; i >= lo; i-- {
		e := l.entries.get(i)
		if pairs != nil && !pairs[e.pair] {
			continue
		}
		if (f.Side == domain.Buy && e.sell) || (f.Side == domain.Sell && !e.sell) {
			continue
		}
		v, _ := l.states.get(e.id)
		st := v & listStateMask
		counts[st]++
		if len(f.States) > 0 && states&(1<<st) == 0 {
			continue
		}
		if out.Total >= first && len(out.Orders) < size {
			out.Orders = append(out.Orders, l.listed(&e, v))
		}
		out.Total++
	}
	for i, c := range counts {
		if c > 0 {
			out.Counts[listStates[i]] = c
		}
	}
	return out
}

func (l *OrderList) listed(e *listEntry, v uint8) ListedOrder {
	o := ListedOrder{ID: e.id, Key: l.keys[e.pair], Time: e.time, Side: domain.Buy, Kind: listKinds[e.kind],
		State: listStates[v&listStateMask], Filled: v&listFilled != 0, CancelRequested: v&listCancelReq != 0}
	if e.sell {
		o.Side = domain.Sell
	}
	return o
}

// Keys returns the pair keys of every order in the list, sorted.
func (l *OrderList) Keys() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := slices.Clone(l.keys)
	slices.Sort(out)
	return out
}

// Len returns the number of orders in the list.
func (l *OrderList) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.entries.len()
}

// sortIfNeeded puts entries back in time order after a request far older
// than the newest (see request), keeping log order among equal times.
func (l *OrderList) sortIfNeeded() {
	l.mu.RLock()
	unsorted := l.unsorted
	l.mu.RUnlock()
	if !unsorted {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unsorted {
		l.entries.sort()
		l.unsorted = false
	}
}

// listChunks holds the entries in fixed-size chunks (as recList does for
// records): no copy of the whole list as it grows, and at most one chunk
// of unused capacity. A chunk packs each entry in 8 bytes, its time and id
// as differences from the chunk's first (listChunk.pack); a chunk one of
// whose entries does not pack (a chunk spanning more than 24 days, sparse
// ids, a 512th pair) keeps them whole instead.
type listChunks struct {
	chunks []listChunk // every chunk but the last holds listChunkLen entries
	n      int
}

const listChunkLen = 1 << 12 // entries per chunk (32 KiB packed)

// listChunk is up to listChunkLen entries, packed relative to (t0, id0)
// unless wide holds them.
type listChunk struct {
	t0, id0 int64
	packed  []uint64
	wide    []listEntry // the entries once one did not pack; nil before
}

// Layout of a packed entry: the time difference in the low 32 bits, the id
// difference in the next 20, then the pair (9 bits), the kind (2) and the
// side (1).
const (
	packIDShift   = 32
	packIDBits    = 20
	packPairShift = packIDShift + packIDBits
	packPairBits  = 9
	packKindShift = packPairShift + packPairBits
	packSellBit   = 63
)

// pack returns e packed relative to c's bases, or false when it does not fit.
func (c *listChunk) pack(e listEntry) (uint64, bool) {
	dt, did := e.time-c.t0, e.id-c.id0
	if dt != int64(int32(dt)) || did < -1<<(packIDBits-1) || did >= 1<<(packIDBits-1) || e.pair >= 1<<packPairBits {
		return 0, false
	}
	p := uint64(uint32(dt)) | uint64(did)&(1<<packIDBits-1)<<packIDShift | uint64(e.pair)<<packPairShift |
		uint64(e.kind)<<packKindShift
	if e.sell {
		p |= 1 << packSellBit
	}
	return p, true
}

// unpack returns the entry packed in p.
func (c *listChunk) unpack(p uint64) listEntry {
	return listEntry{
		time: c.t0 + int64(int32(uint32(p))),
		id:   c.id0 + int64(p<<(64-packPairShift))>>(64-packIDBits), // sign-extended
		pair: uint32(p>>packPairShift) & (1<<packPairBits - 1),
		kind: uint8(p>>packKindShift) & 3,
		sell: p>>packSellBit != 0,
	}
}

func (c *listChunk) len() int {
	if c.wide != nil {
		return len(c.wide)
	}
	return len(c.packed)
}

func (c *listChunk) get(i int) listEntry {
	if c.wide != nil {
		return c.wide[i]
	}
	return c.unpack(c.packed[i])
}

// set puts e at index i (< len), the chunk keeping its entries whole from
// then on if e does not pack.
func (c *listChunk) set(i int, e listEntry) {
	if c.wide == nil {
		if p, ok := c.pack(e); ok {
			c.packed[i] = p
			return
		}
		c.widen()
	}
	c.wide[i] = e
}

// add appends e, the chunk's length staying within listChunkLen.
func (c *listChunk) add(e listEntry) {
	if c.wide == nil {
		if len(c.packed) == 0 {
			c.t0, c.id0 = e.time, e.id
		}
		if p, ok := c.pack(e); ok {
			if len(c.packed) == cap(c.packed) {
				// A pair's first chunk grows from small (most data dirs
				// hold few orders); the next ones are made whole.
				c.packed = append(make([]uint64, 0, min(2*cap(c.packed), listChunkLen)), c.packed...)
			}
			c.packed = append(c.packed, p)
			return
		}
		c.widen()
	}
	c.wide = append(c.wide, e)
}

// widen moves the entries out of their packed form.
func (c *listChunk) widen() {
	c.wide = make([]listEntry, len(c.packed), max(cap(c.packed), 1))
	for i, p := range c.packed {
		c.wide[i] = c.unpack(p)
	}
	c.packed = nil
}

func (c *listChunks) len() int { return c.n }

// get returns entry i (< len).
func (c *listChunks) get(i int) listEntry { return c.chunks[i/listChunkLen].get(i % listChunkLen) }

// time returns the time of entry i (< len).
func (c *listChunks) time(i int) int64 { return c.get(i).time }

// push appends e.
func (c *listChunks) push(e listEntry) {
	k := len(c.chunks) - 1
	if k < 0 || c.chunks[k].len() == listChunkLen {
		size := listChunkLen
		if k < 0 {
			size = 16 // most data dirs hold few orders
		}
		c.chunks = append(c.chunks, listChunk{packed: make([]uint64, 0, size)})
		k++
	}
	c.chunks[k].add(e)
	c.n++
}

// insert puts e at index i (≤ len), moving the entries from i on up by one.
func (c *listChunks) insert(i int, e listEntry) {
	if c.n == 0 {
		c.push(e)
		return
	}
	c.push(c.get(c.n - 1)) // packs beside its neighbours, and is moved over
	for j := c.n - 1; j > i; j-- {
		c.set(j, c.get(j-1))
	}
	c.set(i, e)
}

func (c *listChunks) set(i int, e listEntry) { c.chunks[i/listChunkLen].set(i%listChunkLen, e) }

// sort puts the entries in time order, keeping the order of equal times.
func (c *listChunks) sort() {
	all := make([]listEntry, 0, c.n)
	for i := range c.n {
		all = append(all, c.get(i))
	}
	slices.SortStableFunc(all, func(a, b listEntry) int { return cmp.Compare(a.time, b.time) })
	*c = listChunks{}
	for _, e := range all {
		c.push(e)
	}
}
