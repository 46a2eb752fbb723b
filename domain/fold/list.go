package fold

import "sort"

// List is a Journal in memory: a pair's fills in trade-time order with
// their Outs, for a reader that keeps no records of its own (the
// ClickHouse sink). The zero value is empty.
type List struct {
	fills []Fill
	outs  []Out
	first map[int64]int64 // order → the trade time of its first fill
}

// Len implements Journal.
func (l *List) Len() int { return len(l.fills) }

// At implements Journal.
func (l *List) At(i int) (Fill, Out) { return l.fills[i], l.outs[i] }

// Search implements Journal.
func (l *List) Search(k Key) int {
	return sort.Search(len(l.fills), func(i int) bool { return !l.fills[i].Key.Less(k) })
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
	i := len(l.fills)
	if i > 0 && !l.fills[i-1].Key.Less(f.Key) {
		i = l.Search(f.Key)
		if i < len(l.fills) && l.fills[i].Key == f.Key {
			l.fills[i], l.outs[i] = f, out
			return i
		}
	}
	l.fills = append(l.fills, Fill{})
	l.outs = append(l.outs, Out{})
	copy(l.fills[i+1:], l.fills[i:])
	copy(l.outs[i+1:], l.outs[i:])
	l.fills[i], l.outs[i] = f, out
	return i
}

// Set sets fill i's Out.
func (l *List) Set(i int, out Out) { l.outs[i] = out }
