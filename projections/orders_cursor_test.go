package projections

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// OrdersOlder, piece by piece from the zero cursor, gives exactly Orders:
// every record once, newest first, for every piece size. A fill added in
// the middle of the walk shows up only if it is older than the cursor.
func TestOrdersOlderWalksEveryRecordOnce(t *testing.T) {
	build := func() (*Ledger, *testLog) {
		g := &testLog{t: t}
		for i := int64(1); i <= 9; i++ {
			g.order(i, "binance", "USDT-BTC", domain.Buy, "1", at(0, int(i), 0))
			g.fill(i, "100", "1", "0", "USDT", at(0, int(i), 0))
		}
		l := NewLedger(domain.LOFO)
		for i := range g.events {
			if err := l.Apply(&g.events[i]); err != nil {
				t.Fatal(err)
			}
		}
		return l, g
	}
	l, _ := build()
	const key = "binance/USDT-BTC"
	all := l.Orders(key)
	for size := 1; size <= 10; size++ {
		var got []int64
		recs, cur := l.OrdersOlder(key, OrdersCursor{}, size)
		for ; len(recs) > 0; recs, cur = l.OrdersOlder(key, cur, size) {
			for _, r := range recs {
				got = append(got, r.ID)
			}
		}
		if len(got) != len(all) {
			t.Fatalf("pieces of %d: %d records, want %d", size, len(got), len(all))
		}
		for i := range all {
			if got[i] != all[i].ID {
				t.Fatalf("pieces of %d: record %d is order %d, want %d", size, i, got[i], all[i].ID)
			}
		}
	}

	l, g := build()
	recs, cur := l.OrdersOlder(key, OrdersCursor{}, 4) // orders 9…6
	apply := func(id int64, when time.Time) {
		n := len(g.events)
		g.order(id, "binance", "USDT-BTC", domain.Buy, "1", when)
		g.fill(id, "100", "1", "0", "USDT", when)
		for i := n; i < len(g.events); i++ {
			if err := l.Apply(&g.events[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply(10, at(0, 12, 0)) // newer than the walk's start: left out
	apply(11, at(0, 2, 30)) // older than the cursor: comes in its place
	var got []int64
	for ; len(recs) > 0; recs, cur = l.OrdersOlder(key, cur, 4) {
		for _, r := range recs {
			got = append(got, r.ID)
		}
	}
	want := []int64{9, 8, 7, 6, 5, 4, 3, 11, 2, 1}
	if len(got) != len(want) {
		t.Fatalf("walk with late fills: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("walk with late fills: %v, want %v", got, want)
		}
	}
}
