package projections

import "reflect"

// OrderListDiff names the fields of two order indexes that differ.
func OrderListDiff(a, b *OrderList) []string {
	var out []string
	for _, c := range []struct {
		n    string
		x, y any
	}{{"keys", a.keys, b.keys}, {"byName", a.byName, b.byName}, {"states", a.states, b.states},
		{"entries", a.entries, b.entries}, {"open", a.open, b.open}, {"unsorted", a.unsorted, b.unsorted}} {
		if !reflect.DeepEqual(c.x, c.y) {
			out = append(out, c.n)
		}
	}
	return out
}
