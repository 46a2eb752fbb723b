package streams

import (
	"strconv"
	"strings"
)

// StreamID returns the id of a stream named prefix followed by the id as
// strconv.FormatInt writes it (domain.OrderStream, domain.OcoStream), and
// false for any other name: ok exactly when
// stream == prefix+strconv.FormatInt(id, 10), so two streams never share
// an id. Replays call it for every order event;
// the common id (1 to 18 digits) is read without strconv.
func StreamID(stream, prefix string) (int64, bool) {
	d, ok := strings.CutPrefix(stream, prefix)
	if !ok {
		return 0, false
	}
	return streamDigits(d)
}

// streamDigits is StreamID of the name's part after its prefix.
func streamDigits(d string) (int64, bool) {
	if d == "" {
		return 0, false
	}
	if len(d) <= 18 && d[0] != '-' && (d[0] != '0' || len(d) == 1) {
		var id int64
		for i := 0; i < len(d); i++ {
			c := d[i] - '0'
			if c > 9 {
				return 0, false
			}
			id = id*10 + int64(c)
		}
		return id, true
	}
	id, err := strconv.ParseInt(d, 10, 64) // a negative id, 19 digits, a leading zero
	return id, err == nil && strconv.FormatInt(id, 10) == d
}

// OrderStreamID is StreamID(stream, "order-"): the id domain.OrderStream named.
// The prefix is compared as a constant (a load and a compare, where
// StreamID calls memequal): every projection calls it for every order
// event of a replay.
func OrderStreamID(stream string) (int64, bool) {
	if len(stream) < len("order-") || stream[:len("order-")] != "order-" {
		return 0, false
	}
	return streamDigits(stream[len("order-"):])
}

// StreamMap maps stream names to values, an order stream (OrderStreamID)
// by its id and any other by a copy of its name, so that a read model
// keeping millions of orders neither hashes nor keeps their names: the
// events of a replay share their strings with the batch they came in
// (projections.Projection). The zero StreamMap is not usable: see
// NewStreamMap.
type StreamMap[V any] struct {
	ids   map[int64]V
	other map[string]V
}

// NewStreamMap returns an empty StreamMap.
func NewStreamMap[V any]() StreamMap[V] {
	return StreamMap[V]{ids: map[int64]V{}, other: map[string]V{}}
}

// Get returns stream's value and whether it has one.
func (m StreamMap[V]) Get(stream string) (V, bool) {
	if id, ok := OrderStreamID(stream); ok {
		v, ok := m.ids[id]
		return v, ok
	}
	v, ok := m.other[stream]
	return v, ok
}

// Put sets stream's value.
func (m StreamMap[V]) Put(stream string, v V) {
	if id, ok := OrderStreamID(stream); ok {
		m.ids[id] = v
		return
	}
	m.other[strings.Clone(stream)] = v // a map assignment stores its key again: a copy each time
}

// Delete removes stream's value, if any.
func (m StreamMap[V]) Delete(stream string) {
	if id, ok := OrderStreamID(stream); ok {
		delete(m.ids, id)
		return
	}
	delete(m.other, stream)
}

// DeleteFunc removes the values for which del returns true and returns
// them, in no particular order.
func (m StreamMap[V]) DeleteFunc(del func(V) bool) []V {
	var out []V
	for id, v := range m.ids {
		if del(v) {
			delete(m.ids, id)
			out = append(out, v)
		}
	}
	for stream, v := range m.other {
		if del(v) {
			delete(m.other, stream)
			out = append(out, v)
		}
	}
	return out
}

// Len returns how many streams have a value.
func (m StreamMap[V]) Len() int { return len(m.ids) + len(m.other) }

// Each calls f with every stream's value, in no particular order: an order
// stream by its id (stream ""), any other by its name (id 0). f must not
// change m.
func (m StreamMap[V]) Each(f func(id int64, stream string, v V)) {
	for id, v := range m.ids {
		f(id, "", v)
	}
	for stream, v := range m.other {
		f(0, stream, v)
	}
}

// PutID sets the value of the order stream of id (domain.OrderStream(id)).
func (m StreamMap[V]) PutID(id int64, v V) { m.ids[id] = v }
