package projections

import (
	"bytes"
	"reflect"

	"github.com/tradeledger/tradeledger/domain/snap"
)

// OrderListDiff names the fields of two order indexes that differ.
func OrderListDiff(a, b *OrderList) []string {
	var out []string
	for _, c := range []struct {
		n    string
		x, y any
	}{{"keys", a.keys, b.keys}, {"byName", a.byName, b.byName}, {"states", indexOf(&a.states), indexOf(&b.states)},
		{"entries", a.entries, b.entries}, {"open", a.open, b.open}, {"unsorted", a.unsorted, b.unsorted}} {
		if !reflect.DeepEqual(c.x, c.y) {
			out = append(out, c.n)
		}
	}
	return out
}

// indexOf returns what an id index holds, whatever its chunks' layout:
// the dense range's length and use, and every id with its value in order.
func indexOf[V uint8 | uint32](x *idIndex[V]) any {
	type entry struct {
		id int64
		v  V
	}
	out := []any{x.denseLen, x.used}
	x.each(func(id int64, v V) { out = append(out, entry{id, v}) })
	return out
}

// LedgerDiff names the parts of two Ledgers that differ: each pair's state
// as its snapshot writes it, and the indexes a snapshot's load rebuilds
// (the lock, the interner and the page cache aside).
func LedgerDiff(a, b *Ledger) []string {
	a.Settle()
	b.Settle()
	var out []string
	if len(a.pairs) != len(b.pairs) {
		return []string{"pairs"}
	}
	for i := range a.pairs {
		if !bytes.Equal(pairBytes(a.pairs[i]), pairBytes(b.pairs[i])) {
			out = append(out, "pair "+a.pairs[i].key)
		}
	}
	for _, c := range []struct {
		n    string
		x, y any
	}{{"byKey", a.byKey, b.byKey}, {"byName", a.byName, b.byName}, {"byCur", a.byCur, b.byCur}, {"deps", a.conv.Deps(), b.conv.Deps()},
		{"open", a.open, b.open}, {"strat", a.strat, b.strat}, {"rates", a.conv.Rates.State(), b.conv.Rates.State()},
		{"targets", targetsOf(a), targetsOf(b)}, {"assets", a.assets, b.assets}, {"booksM", a.booksM, b.booksM},
		{"head", a.head, b.head}, {"records", a.records, b.records}, {"version", a.version, b.version},
		{"feeAsts", a.feeAsts, b.feeAsts}, {"method", a.Method, b.Method}} {
		if !reflect.DeepEqual(c.x, c.y) {
			out = append(out, c.n)
		}
	}
	if len(a.quotes) != len(b.quotes) || len(a.conv.pairs) != len(b.conv.pairs) {
		out = append(out, "quotes or conv")
	}
	return out
}

// pairBytes returns a pair's state as its snapshot writes it.
func pairBytes(b *pairBook) []byte {
	var buf bytes.Buffer
	e := snap.NewEncoder(&buf)
	encodePairBook(e, b)
	_ = e.Close()
	return buf.Bytes()
}

func targetsOf(l *Ledger) map[string][]string {
	t, _ := l.conv.TargetsState()
	return t
}

// SettleAtOnce settles l as a read does: every dirty pair folded again
// under one hold of the lock.
func SettleAtOnce(l *Ledger) {
	l.mu.Lock()
	l.settle()
	l.mu.Unlock()
}

// Unsettled reports whether l waits for a settle.
func Unsettled(l *Ledger) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.unsettled()
}
