package projections

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
)

// OrderList is the index of every order in the log, whatever became of it:
// resting, filled, cancelled, rejected, expired, and the orders of pairs
// no longer (or never) in the configuration. It answers which orders match
// a filter (pairs, side, states, request time), newest first, and nothing
// else: an order's amounts, prices, reason and fills are read from its own
// stream when it is shown (GET orders/all), as the order manager reads a
// finished order. So the index costs about 20 bytes an order: an entry of
// (request time, id) in time order and a word of flags by id; only
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
	flags    orderIndex          // order id → pair index<<8 | listFlags
	entries  listChunks          // (time, id), see the type comment
	unsorted bool                // entries holds a run out of time order (sort before reading)
	open     map[int64]listOpen  // unfinished orders
}

// listOpen is what the index keeps of an unfinished order.
type listOpen struct{ amount, filled domain.Decimal }

// listEntry is an order's place in time order.
type listEntry struct {
	time int64 // ms of its OrderRequested
	id   int64
}

// Flags of an order in OrderList.flags (the low byte; the pair index is
// above).
const (
	listSell       = 1 << 0
	listStateShift = 1 // 3 bits: index in listStates
	listStateMask  = 7 << listStateShift
	listKindShift  = 4 // 2 bits: index in listKinds
	listKindMask   = 3 << listKindShift
	listFilled     = 1 << 6 // at least one fill
	listCancelReq  = 1 << 7 // a cancel was asked for
	listPairShift  = 8
	maxListPairs   = 1<<24 - 1
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
	switch e.Type {
	case domain.TypeOrderRequested:
		r, err := domain.Payload[domain.OrderRequested](e)
		if err != nil {
			return err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.request(r, e.Time)
	case domain.TypeOrderFilled:
		f, err := domain.Payload[domain.OrderFilled](e)
		if err != nil {
			return err
		}
		l.update(e.Stream, func(id int64, v uint32) uint32 {
			v |= listFilled
			st := v & listStateMask >> listStateShift
			o, isOpen := l.open[id]
			if !isOpen {
				return v // a late fill of a finished order (see OrderList)
			}
			o.filled = o.filled.Add(f.Quantity)
			switch {
			case o.filled.Cmp(o.amount) >= 0:
				delete(l.open, id)
				return withState(v, domain.OrderStateFilled)
			case listStates[st] == domain.OrderStateRequested || listStates[st] == domain.OrderStateTriggered:
				v = withState(v, domain.OrderStateAccepted)
			}
			l.open[id] = o
			return v
		})
	case domain.TypeOrderAccepted, domain.TypeStopTriggered:
		next := domain.OrderStateAccepted
		if e.Type == domain.TypeStopTriggered {
			next = domain.OrderStateTriggered
		}
		l.update(e.Stream, func(id int64, v uint32) uint32 {
			if listStates[v&listStateMask>>listStateShift].Done() {
				return v
			}
			return withState(v, next)
		})
	case domain.TypeOrderCancelRequested:
		l.update(e.Stream, func(_ int64, v uint32) uint32 { return v | listCancelReq })
	case domain.TypeOrderCancelled, domain.TypeOrderRejected, domain.TypeOrderExpired:
		final := domain.OrderStateCancelled
		switch e.Type {
		case domain.TypeOrderRejected:
			final = domain.OrderStateRejected
		case domain.TypeOrderExpired:
			final = domain.OrderStateExpired
		}
		l.update(e.Stream, func(id int64, v uint32) uint32 {
			delete(l.open, id)
			return withState(v, final)
		})
	}
	return nil
}

func withState(v uint32, s domain.OrderState) uint32 {
	return v&^listStateMask | uint32(listState(s))<<listStateShift
}

// update changes the flags of the order of stream (an order stream of a
// requested order; others are ignored) to change(id, flags).
func (l *OrderList) update(stream string, change func(id int64, v uint32) uint32) {
	id, ok := domain.OrderStreamID(stream)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.flags.get(id); ok {
		l.flags.set(id, change(id, v))
	}
}

func (l *OrderList) request(r *domain.OrderRequested, t int64) error {
	if _, known := l.flags.get(r.OrderID); known {
		return nil
	}
	var v uint32
	switch r.Side {
	case domain.Buy:
	case domain.Sell:
		v |= listSell
	default:
		return domain.Errorf(domain.EINVALID, "order %d: side %q", r.OrderID, r.Side)
	}
	k := slices.Index(listKinds[:], r.Kind)
	if k < 0 {
		k = 0 // a kind this version does not know shows as limit
	}
	v |= uint32(k) << listKindShift
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
	l.flags.set(r.OrderID, pi<<listPairShift|v) // state 0: requested
	l.open[r.OrderID] = listOpen{amount: r.Amount}
	e := listEntry{time: t, id: r.OrderID}
	n := l.entries.len()
	if l.unsorted || n == 0 || l.entries.at(n-1).time <= t {
		l.entries.push(e)
		return nil
	}
	// After every entry of time ≤ t: ties stay in log order.
	i := sort.Search(n, func(i int) bool { return l.entries.at(i).time > t })
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
	lo := sort.Search(n, func(i int) bool { return l.entries.at(i).time >= f.From })
	hi := n
	if f.To != 0 {
		hi = sort.Search(n, func(i int) bool { return l.entries.at(i).time >= f.To })
	}
	first := page * size
	for i := hi - 1; i >= lo; i-- {
		e := l.entries.at(i)
		v, _ := l.flags.get(e.id)
		if pairs != nil && !pairs[v>>listPairShift] {
			continue
		}
		if (f.Side == domain.Buy && v&listSell != 0) || (f.Side == domain.Sell && v&listSell == 0) {
			continue
		}
		st := v & listStateMask >> listStateShift
		counts[st]++
		if len(f.States) > 0 && states&(1<<st) == 0 {
			continue
		}
		if out.Total >= first && len(out.Orders) < size {
			out.Orders = append(out.Orders, l.listed(e, v))
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

func (l *OrderList) listed(e *listEntry, v uint32) ListedOrder {
	o := ListedOrder{ID: e.id, Key: l.keys[v>>listPairShift], Time: e.time, Side: domain.Buy,
		Kind:  listKinds[v&listKindMask>>listKindShift],
		State: listStates[v&listStateMask>>listStateShift], Filled: v&listFilled != 0, CancelRequested: v&listCancelReq != 0}
	if v&listSell != 0 {
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
		sort.Stable(&l.entries)
		l.unsorted = false
	}
}

// listChunks holds entries in fixed-size chunks (as recList does for
// records): no copy of the whole list as it grows, and at most one chunk
// of unused capacity.
type listChunks struct {
	chunks [][]listEntry
	n      int
}

const listChunk = 1 << 12 // entries per chunk (64 KiB)

func (c *listChunks) len() int { return c.n }

func (c *listChunks) at(i int) *listEntry { return &c.chunks[i/listChunk][i%listChunk] }

func (c *listChunks) push(e listEntry) {
	k := len(c.chunks) - 1
	if k < 0 || len(c.chunks[k]) == listChunk {
		size := listChunk
		if k < 0 {
			size = 16 // most data dirs hold few orders
		}
		c.chunks = append(c.chunks, make([]listEntry, 0, size))
		k++
	}
	ch := c.chunks[k]
	if len(ch) == cap(ch) {
		ch = append(make([]listEntry, 0, min(2*cap(ch), listChunk)), ch...)
	}
	c.chunks[k] = append(ch, e)
	c.n++
}

// insert puts e at index i, moving the entries from i on up by one.
func (c *listChunks) insert(i int, e listEntry) {
	c.push(listEntry{})
	for j := c.n - 1; j > i; j-- {
		*c.at(j) = *c.at(j - 1)
	}
	*c.at(i) = e
}

// Len, Less and Swap sort the entries by time (sort.Stable keeps log
// order among equal times).
func (c *listChunks) Len() int           { return c.n }
func (c *listChunks) Less(i, j int) bool { return c.at(i).time < c.at(j).time }
func (c *listChunks) Swap(i, j int)      { a, b := c.at(i), c.at(j); *a, *b = *b, *a }
