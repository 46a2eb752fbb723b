package paper

import "testing"

// TestByStream: streams as OrderStream writes them go by id, every other
// by itself, and no two streams share an entry.
func TestByStream(t *testing.T) {
	m := newByStream[int]()
	streams := []string{"order-0", "order-1", "order-01", "order-00", "order--1", "order-", "order-+1", "order-1x",
		"order-123456789012345678", "order-1234567890123456789", "orders-1", "oco-1", ""}
	for i, s := range streams {
		m.put(s, i)
	}
	if got, want := m.len(), len(streams); got != want {
		t.Fatalf("%d entries, want %d", got, want)
	}
	if got, want := len(m.ids), 3; got != want {
		t.Fatalf("%d streams by id, want %d (order-0, order-1, the 18-digit one)", got, want)
	}
	for i, s := range streams {
		if v, ok := m.get(s); !ok || v != i {
			t.Fatalf("get(%q) = %v, %v; want %d", s, v, ok, i)
		}
	}
	for _, s := range streams {
		m.del(s)
	}
	if m.len() != 0 {
		t.Fatalf("%d entries left", m.len())
	}
}
