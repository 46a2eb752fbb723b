package fold

import (
	"sort"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// List is a Journal in memory: a pair's fills in trade-time order with
// their Outs, for a reader that keeps no records of its own (the
// ClickHouse sink). An entry takes 72 bytes: amounts as decimal.Compact
// (the rare one a Compact cannot hold in a side table), the fee's asset by
// index. The zero value is empty.
type List struct {
	entries []listEntry
	wide    []decimal.Decimal // amounts a Compact cannot hold, by index
	assets  []string          // fee assets, by index − 1 (0: none)
	first   map[int64]int64   // order → the trade time of its first fill
}

// listEntry is a fill as List keeps it.
type listEntry struct {
	key             Key
	order           int64
	price, qty, fee decimal.Compact
	pnl, unmatched  decimal.Compact
	asset           uint32 // index + 1 in List.assets, 0: none
	sell            bool
}

// Len implements Journal.
func (l *List) Len() int { return len(l.entries) }

// At implements Journal.
func (l *List) At(i int) (Fill, Out) {
	e := &l.entries[i]
	f := Fill{Key: e.key, Order: e.order, Side: domain.Buy, Price: l.get(e.price), Qty: l.get(e.qty), Fee: l.get(e.fee)}
	if e.sell {
		f.Side = domain.Sell
	}
	if e.asset > 0 {
		f.FeeAsset = l.assets[e.asset-1]
	}
	return f, Out{Pnl: l.get(e.pnl), Unmatched: l.get(e.unmatched)}
}

// Search implements Journal.
func (l *List) Search(k Key) int {
	return sort.Search(len(l.entries), func(i int) bool { return !l.entries[i].key.Less(k) })
}

// FirstFill implements Journal.
func (l *List) FirstFill(order int64) (int64, bool) {
	t, ok := l.first[order]
	return t, ok
}

// Insert puts f in its place with out and returns its index; a fill at a
// Key already held replaces it.
func (l *List) Insert(f Fill, out Out) int {
	if l.first == nil {
		l.first = map[int64]int64{}
	}
	if t, ok := l.first[f.Order]; !ok || f.Time < t {
		l.first[f.Order] = f.Time
	}
	e := listEntry{key: f.Key, order: f.Order, price: l.put(f.Price), qty: l.put(f.Qty), fee: l.put(f.Fee), sell: f.Side == domain.Sell}
	if f.FeeAsset != "" {
		e.asset = l.asset(f.FeeAsset)
	}
	i := len(l.entries)
	if i > 0 && !l.entries[i-1].key.Less(f.Key) {
		i = l.Search(f.Key)
		if i < len(l.entries) && l.entries[i].key == f.Key {
			l.entries[i] = e
			l.Set(i, out)
			return i
		}
	}
	l.entries = append(l.entries, listEntry{})
	copy(l.entries[i+1:], l.entries[i:])
	l.entries[i] = e
	l.Set(i, out)
	return i
}

// Set sets fill i's Out.
func (l *List) Set(i int, out Out) {
	e := &l.entries[i]
	l.set(&e.pnl, out.Pnl)
	l.set(&e.unmatched, out.Unmatched)
}

// put returns the compact form of d, keeping d in the side table when it
// needs it.
func (l *List) put(d decimal.Decimal) decimal.Compact {
	if c, ok := decimal.CompactOf(d); ok {
		return c
	}
	l.wide = append(l.wide, d)
	return decimal.CompactRef(len(l.wide) - 1)
}

// set changes *c to d, reusing *c's slot of the side table.
func (l *List) set(c *decimal.Compact, d decimal.Decimal) {
	if i, ok := c.Ref(); ok {
		if _, fits := decimal.CompactOf(d); !fits {
			l.wide[i] = d
			return
		}
	}
	*c = l.put(d)
}

func (l *List) get(c decimal.Compact) decimal.Decimal {
	if i, ok := c.Ref(); ok {
		return l.wide[i]
	}
	return c.Decimal()
}

// asset returns the index + 1 of a fee asset, adding it.
func (l *List) asset(a string) uint32 {
	for i, x := range l.assets {
		if x == a {
			return uint32(i + 1)
		}
	}
	l.assets = append(l.assets, a)
	return uint32(len(l.assets))
}
