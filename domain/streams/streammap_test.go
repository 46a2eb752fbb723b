package streams

import (
	"strconv"
	"strings"
	"testing"
)

var streamNames = []string{"order-0", "order-1", "order-7", "order-01", "order-00", "order-007", "order--1", "order-",
	"order-+1", "order-1x", "order-x", "order-123456789012345678", "order-1234567890123456789",
	"order-9223372036854775807", "order-9223372036854775808", "order-00000000000000000001", "orders-1", "oco-1", "",
	"order", "Order-1", "xorder-1"}

// TestStreamID: ok exactly for the names domain.OrderStream writes, with their id.
func TestStreamID(t *testing.T) {
	for _, s := range streamNames {
		id, ok := OrderStreamID(s)
		d, _ := strings.CutPrefix(s, "order-")
		want, err := strconv.ParseInt(d, 10, 64)
		wantOK := err == nil && "order-"+strconv.FormatInt(want, 10) == s
		if ok != wantOK || (ok && id != want) {
			t.Errorf("OrderStreamID(%q) = %d, %v; want %d, %v", s, id, ok, want, wantOK)
		}
	}
	if id, ok := StreamID("oco-42", "oco-"); !ok || id != 42 {
		t.Errorf("StreamID(%q, oco-) = %d, %v", "oco-42", id, ok)
	}
}

// TestStreamMap: order streams go by id, every other by itself, and no
// two streams share an entry.
func TestStreamMap(t *testing.T) {
	m := NewStreamMap[int]()
	for i, s := range streamNames {
		m.Put(s, i)
	}
	if got, want := m.Len(), len(streamNames); got != want {
		t.Fatalf("%d entries, want %d", got, want)
	}
	if got, want := len(m.ids), 7; got != want {
		t.Fatalf("%d streams by id, want %d (0, 1, 7, -1, 18 and 19 digits, the largest int64)", got, want)
	}
	for i, s := range streamNames {
		if v, ok := m.Get(s); !ok || v != i {
			t.Fatalf("Get(%q) = %v, %v; want %d", s, v, ok, i)
		}
	}
	for _, s := range streamNames[:4] {
		m.Delete(s)
	}
	if _, ok := m.Get(streamNames[0]); ok || m.Len() != len(streamNames)-4 {
		t.Fatalf("after 4 deletes: Get(%q) = %v, %d entries", streamNames[0], ok, m.Len())
	}
	odd := m.DeleteFunc(func(v int) bool { return v%2 == 1 })
	if m.Len()+len(odd) != len(streamNames)-4 {
		t.Fatalf("DeleteFunc returned %d and left %d, of %d", len(odd), m.Len(), len(streamNames)-4)
	}
	for _, v := range odd {
		if v%2 != 1 {
			t.Fatalf("DeleteFunc returned %d", v)
		}
		if _, ok := m.Get(streamNames[v]); ok {
			t.Fatalf("%q still there", streamNames[v])
		}
	}
	for i, s := range streamNames[4:] {
		if _, ok := m.Get(s); ok != ((i+4)%2 == 0) {
			t.Fatalf("Get(%q) = %v after DeleteFunc", s, ok)
		}
	}
}
