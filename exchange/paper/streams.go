package paper

import "strings"

// byStream maps order streams to values: a stream named as
// domain.OrderStream names one ("order-" and the id as strconv.FormatInt
// writes it) by its id, any other by a copy of the stream. A replay counts
// millions of orders: an id is hashed and stored without a copy of the
// event's string (which a replay's batch shares, projections.Projection).
type byStream[V any] struct {
	ids   map[int64]V
	other map[string]V
}

func newByStream[V any]() byStream[V] {
	return byStream[V]{ids: map[int64]V{}, other: map[string]V{}}
}

// orderID returns the id of an order stream as domain.OrderStream writes
// it: no sign, no leading zero, so that two streams never share an id.
func orderID(stream string) (int64, bool) {
	d, ok := strings.CutPrefix(stream, "order-")
	if !ok || d == "" || len(d) > 18 || (d[0] == '0' && len(d) > 1) {
		return 0, false
	}
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

func (m byStream[V]) get(stream string) (V, bool) {
	if id, ok := orderID(stream); ok {
		v, ok := m.ids[id]
		return v, ok
	}
	v, ok := m.other[stream]
	return v, ok
}

func (m byStream[V]) put(stream string, v V) {
	if id, ok := orderID(stream); ok {
		m.ids[id] = v
		return
	}
	m.other[strings.Clone(stream)] = v // a map assignment stores its key again: a copy each time
}

func (m byStream[V]) del(stream string) {
	if id, ok := orderID(stream); ok {
		delete(m.ids, id)
		return
	}
	delete(m.other, stream)
}

func (m byStream[V]) len() int { return len(m.ids) + len(m.other) }
