package snap

import (
	"maps"
	"slices"
)

// TextMap writes m as its length, then each key (Text) followed by what
// put writes of its value, in key order, so that the same map always
// gives the same bytes. Its reader reads Len, then that many keys and
// values.
func TextMap[V any](e *Encoder, m map[string]V, put func(V)) {
	e.Len(len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e.Text(k)
		put(m[k])
	}
}
