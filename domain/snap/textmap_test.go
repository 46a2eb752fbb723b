package snap

import (
	"bytes"
	"reflect"
	"testing"
)

// TextMap writes a map in key order: maps built in different orders give
// the same bytes, read back as Len, then keys and values.
func TestTextMapInKeyOrder(t *testing.T) {
	encode := func(keys []string) []byte {
		m := map[string]int64{}
		for _, k := range keys {
			m[k] = int64(len(k) * 100) // the value depends on the key only
		}
		var buf bytes.Buffer
		e := NewEncoder(&buf)
		TextMap(e, m, e.Varint)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a := encode([]string{"b", "a", "ccc", "dd"})
	b := encode([]string{"dd", "ccc", "a", "b"})
	if !bytes.Equal(a, b) {
		t.Fatalf("the same map in another insertion order gave other bytes:\n%x\n%x", a, b)
	}
	d := NewDecoder(bytes.NewReader(a), int64(len(a)))
	var keys []string
	var vals []int64
	for range d.Len(2) {
		keys = append(keys, d.Text())
		vals = append(vals, d.Varint())
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keys, []string{"a", "b", "ccc", "dd"}) || !reflect.DeepEqual(vals, []int64{100, 100, 300, 200}) {
		t.Fatalf("read back %v %v", keys, vals)
	}
}
