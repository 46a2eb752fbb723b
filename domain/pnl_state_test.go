package domain

import (
	"reflect"
	"testing"
)

// TestLotsOfState: under every method, a Lots's state read back by LotsOf
// is the same Lots (its state, and what it gives next), wide amounts and
// lot tags included; a state no Lots could hold is EINVALID.
func TestLotsOfState(t *testing.T) {
	wide := pnlDec("123456789012345678.12345678") // beyond a Compact
	if _, ok := CompactOf(wide); ok {
		t.Fatal("the wide amount fits a Compact; pick a wider one")
	}
	for _, m := range []PnlMethod{FIFO, LIFO, Average, LOFO, HIFO} {
		l := Lots{Method: m}
		l.AddLot(Lot{Qty: pnlDec("1"), Cost: pnlDec("100"), Time: 1, Ref: 11})
		l.AddLot(Lot{Qty: pnlDec("2"), Cost: wide, Time: 2, Ref: 12})
		l.AddLot(Lot{Qty: pnlDec("0.5"), Cost: pnlDec("40"), Time: 3, Ref: 13})
		l.Take(pnlDec("0.25"))
		s := l.State()
		if len(s.Wide) == 0 || !s.Tagged {
			t.Fatalf("%s: the state has no wide amount or no tags: %+v", m, s)
		}
		got, err := LotsOf(&s)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if gs := got.State(); !reflect.DeepEqual(gs, s) {
			t.Fatalf("%s: read back\n%+v\nwant\n%+v", m, gs, s)
		}
		wq, wc, wl := l.TakeLots(pnlDec("2.5"), nil)
		gq, gc, gl := got.TakeLots(pnlDec("2.5"), nil)
		if gq != wq || gc != wc || !reflect.DeepEqual(gl, wl) {
			t.Errorf("%s: the state read back takes %s for %s (%v), want %s for %s (%v)", m, gq, gc, gl, wq, wc, wl)
		}
	}
	bad := []struct {
		name   string
		method PnlMethod
		edit   func(s *LotsState)
	}{
		{"a head before the queue", FIFO, func(s *LotsState) { s.Head = -1 }},
		{"a head past the queue", FIFO, func(s *LotsState) { s.Head = len(s.Queue) + 1 }},
		{"a tag missing", FIFO, func(s *LotsState) { s.Tags = s.Tags[1:] }},
		{"tags untagged", FIFO, func(s *LotsState) { s.Tagged = false }},
		{"heaped lots in order", FIFO, func(s *LotsState) { s.Heap = []HeapLot{{}} }},
		{"clamp keys in order", LIFO, func(s *LotsState) { s.Clamp = []ClampKey{{Seq: 1}} }},
		{"queued lots by price", LOFO, func(s *LotsState) { s.Queue = []HeldLot{{}} }},
		{"a free slot past the table", FIFO, func(s *LotsState) { s.Free = []int{len(s.Wide)} }},
		{"a queued amount past the table", FIFO, func(s *LotsState) { s.Queue[0].Cost = CompactRef(len(s.Wide)) }},
		{"a heaped amount past the table", HIFO, func(s *LotsState) { s.Heap[0].Qty = CompactRef(len(s.Wide) + 3) }},
	}
	for _, c := range bad {
		l := Lots{Method: c.method}
		l.AddLot(Lot{Qty: pnlDec("1"), Cost: wide, Time: 1, Ref: 1})
		l.AddLot(Lot{Qty: pnlDec("2"), Cost: pnlDec("3"), Time: 2, Ref: 2})
		s := l.State()
		c.edit(&s)
		if _, err := LotsOf(&s); ErrorCode(err) != EINVALID {
			t.Errorf("%s: err=%v, want EINVALID", c.name, err)
		}
	}
}
