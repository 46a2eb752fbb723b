package projections

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// orderListLog is a log with an order in every state, on two pairs and a
// pair no configuration names (the list does not read the configuration):
//
//	#1 binance/USDT-BTC buy 1, accepted, filled in two fills   D 10:00
//	#2 binance/USDT-BTC sell 2, accepted, resting              D 11:00
//	#3 binance/USDT-ETH buy 1, rejected                         D 12:00
//	#4 binance/USDT-BTC sell 1, 0.4 filled, then cancelled      D 13:00
//	#5 kraken/EUR-XRP buy 5, requested, no answer yet           D+1 09:00
//	#6 binance/USDT-ETH sell 1 stop-limit, triggered            D+1 10:00
//	#7 binance/USDT-ETH buy 1, expired                          D+1 11:00
//	#8 binance/USDT-BTC buy 1, 0.5 filled, cancel asked         D+1 12:00
func orderListLog(t *testing.T) *testLog {
	g := &testLog{t: t}
	g.order(1, "binance", "USDT-BTC", domain.Buy, "1", at(0, 10, 0))
	g.add(domain.OrderStream(1), domain.TypeOrderAccepted, at(0, 10, 0), domain.OrderAccepted{})
	g.fill(1, "100", "0.3", "0", "USDT", at(0, 10, 5))
	g.fill(1, "101", "0.7", "0", "USDT", at(0, 10, 6))
	g.order(2, "binance", "USDT-BTC", domain.Sell, "2", at(0, 11, 0))
	g.add(domain.OrderStream(2), domain.TypeOrderAccepted, at(0, 11, 0), domain.OrderAccepted{})
	g.order(3, "binance", "USDT-ETH", domain.Buy, "1", at(0, 12, 0))
	g.add(domain.OrderStream(3), domain.TypeOrderRejected, at(0, 12, 0), domain.OrderRejected{Reason: "insufficient funds"})
	g.order(4, "binance", "USDT-BTC", domain.Sell, "1", at(0, 13, 0))
	g.add(domain.OrderStream(4), domain.TypeOrderAccepted, at(0, 13, 0), domain.OrderAccepted{})
	g.fill(4, "120", "0.4", "0", "USDT", at(0, 13, 30))
	g.add(domain.OrderStream(4), domain.TypeOrderCancelled, at(0, 14, 0), domain.OrderCancelled{Remaining: dec("0.6")})
	g.order(5, "kraken", "EUR-XRP", domain.Buy, "5", at(1, 9, 0))
	g.add(domain.OrderStream(6), domain.TypeOrderRequested, at(1, 10, 0), domain.OrderRequested{OrderID: 6, Exchange: "binance",
		Pair: "USDT-ETH", Side: domain.Sell, Kind: domain.KindStopLimit, Amount: dec("1"), StopPrice: dec("9"), LimitPrice: dec("8.9")})
	g.add(domain.OrderStream(6), domain.TypeOrderAccepted, at(1, 10, 0), domain.OrderAccepted{})
	g.add(domain.OrderStream(6), domain.TypeStopTriggered, at(1, 10, 30), domain.StopTriggered{MarketPrice: dec("9"), LimitPrice: dec("8.9")})
	g.order(7, "binance", "USDT-ETH", domain.Buy, "1", at(1, 11, 0))
	g.add(domain.OrderStream(7), domain.TypeOrderAccepted, at(1, 11, 0), domain.OrderAccepted{})
	g.add(domain.OrderStream(7), domain.TypeOrderExpired, at(1, 11, 30), domain.OrderExpired{Reason: "GTD"})
	g.order(8, "binance", "USDT-BTC", domain.Buy, "1", at(1, 12, 0))
	g.add(domain.OrderStream(8), domain.TypeOrderAccepted, at(1, 12, 0), domain.OrderAccepted{})
	g.fill(8, "99", "0.5", "0", "USDT", at(1, 12, 10))
	g.add(domain.OrderStream(8), domain.TypeOrderCancelRequested, at(1, 12, 20), domain.OrderCancelRequested{})
	return g
}

func applyAll(t *testing.T, p Projection, events []domain.Event) {
	t.Helper()
	for i := range events {
		if err := p.Apply(&events[i]); err != nil {
			t.Fatalf("apply %s %s: %v", events[i].Stream, events[i].Type, err)
		}
	}
}

func pageIDs(p OrderPage) []int64 {
	ids := make([]int64, len(p.Orders))
	for i, o := range p.Orders {
		ids[i] = o.ID
	}
	return ids
}

func TestOrderListEveryStateNewestFirst(t *testing.T) {
	l := NewOrderList()
	applyAll(t, l, orderListLog(t).events)
	p := l.Page(OrderFilter{}, 0, 50)
	if got, want := pageIDs(p), []int64{8, 7, 6, 5, 4, 3, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	want := map[int64]ListedOrder{
		1: {ID: 1, Key: "binance/USDT-BTC", Time: at(0, 10, 0).UnixMilli(), Side: domain.Buy, Kind: domain.KindLimit, State: domain.OrderStateFilled, Filled: true},
		2: {ID: 2, Key: "binance/USDT-BTC", Time: at(0, 11, 0).UnixMilli(), Side: domain.Sell, Kind: domain.KindLimit, State: domain.OrderStateAccepted},
		3: {ID: 3, Key: "binance/USDT-ETH", Time: at(0, 12, 0).UnixMilli(), Side: domain.Buy, Kind: domain.KindLimit, State: domain.OrderStateRejected},
		4: {ID: 4, Key: "binance/USDT-BTC", Time: at(0, 13, 0).UnixMilli(), Side: domain.Sell, Kind: domain.KindLimit, State: domain.OrderStateCancelled, Filled: true},
		5: {ID: 5, Key: "kraken/EUR-XRP", Time: at(1, 9, 0).UnixMilli(), Side: domain.Buy, Kind: domain.KindLimit, State: domain.OrderStateRequested},
		6: {ID: 6, Key: "binance/USDT-ETH", Time: at(1, 10, 0).UnixMilli(), Side: domain.Sell, Kind: domain.KindStopLimit, State: domain.OrderStateTriggered},
		7: {ID: 7, Key: "binance/USDT-ETH", Time: at(1, 11, 0).UnixMilli(), Side: domain.Buy, Kind: domain.KindLimit, State: domain.OrderStateExpired},
		8: {ID: 8, Key: "binance/USDT-BTC", Time: at(1, 12, 0).UnixMilli(), Side: domain.Buy, Kind: domain.KindLimit, State: domain.OrderStateAccepted, Filled: true, CancelRequested: true},
	}
	for _, o := range p.Orders {
		if o != want[o.ID] {
			t.Errorf("order %d: %+v, want %+v", o.ID, o, want[o.ID])
		}
	}
	if p.Total != 8 {
		t.Errorf("total %d, want 8", p.Total)
	}
	wantCounts := map[domain.OrderState]int{"filled": 1, "accepted": 2, "rejected": 1, "cancelled": 1, "requested": 1, "triggered": 1, "expired": 1}
	if fmt.Sprint(p.Counts) != fmt.Sprint(wantCounts) {
		t.Errorf("counts %v, want %v", p.Counts, wantCounts)
	}
	if got, want := l.Keys(), []string{"binance/USDT-BTC", "binance/USDT-ETH", "kraken/EUR-XRP"}; !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
}

func TestOrderListFilters(t *testing.T) {
	l := NewOrderList()
	applyAll(t, l, orderListLog(t).events)
	cases := []struct {
		name  string
		f     OrderFilter
		page  int
		size  int
		ids   []int64
		total int
	}{
		{"state", OrderFilter{States: []domain.OrderState{domain.OrderStateCancelled, domain.OrderStateRejected}}, 0, 50, []int64{4, 3}, 2},
		{"open states", OrderFilter{States: []domain.OrderState{domain.OrderStateRequested, domain.OrderStateAccepted, domain.OrderStateTriggered}}, 0, 50, []int64{8, 6, 5, 2}, 4},
		{"side", OrderFilter{Side: domain.Sell}, 0, 50, []int64{6, 4, 2}, 3},
		{"pair", OrderFilter{Keys: []string{"binance/USDT-ETH", "kraken/EUR-XRP"}}, 0, 50, []int64{7, 6, 5, 3}, 4},
		{"unknown pair", OrderFilter{Keys: []string{"binance/USDT-DOGE"}}, 0, 50, []int64{}, 0},
		{"dates", OrderFilter{From: at(0, 11, 0).UnixMilli(), To: at(1, 10, 0).UnixMilli()}, 0, 50, []int64{5, 4, 3, 2}, 4},
		{"everything", OrderFilter{Keys: []string{"binance/USDT-BTC"}, Side: domain.Buy, States: []domain.OrderState{domain.OrderStateAccepted}, From: at(1, 0, 0).UnixMilli()}, 0, 50, []int64{8}, 1},
		{"second page", OrderFilter{}, 1, 3, []int64{5, 4, 3}, 8},
		{"last page", OrderFilter{}, 2, 3, []int64{2, 1}, 8},
		{"past the end", OrderFilter{}, 3, 3, []int64{}, 8},
		{"unknown state", OrderFilter{States: []domain.OrderState{"resting"}}, 0, 50, []int64{}, 0},
	}
	for _, c := range cases {
		p := l.Page(c.f, c.page, c.size)
		if got := pageIDs(p); !slices.Equal(got, c.ids) || p.Total != c.total {
			t.Errorf("%s: ids %v total %d, want %v total %d", c.name, got, p.Total, c.ids, c.total)
		}
	}
	// Counts ignore the state filter, not the others.
	p := l.Page(OrderFilter{Side: domain.Sell, States: []domain.OrderState{domain.OrderStateCancelled}}, 0, 50)
	if want := map[domain.OrderState]int{"accepted": 1, "cancelled": 1, "triggered": 1}; fmt.Sprint(p.Counts) != fmt.Sprint(want) {
		t.Errorf("sell counts %v, want %v", p.Counts, want)
	}
}

// Requests older than the newest entry take their place in time order,
// near the end (in place) and far back (sorted at the next read), with
// equal times in log order.
func TestOrderListLateRequests(t *testing.T) {
	l := NewOrderList()
	g := &testLog{t: t}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	n := insertReach + 100
	for i := 1; i <= n; i++ {
		g.order(int64(i), "binance", "USDT-BTC", domain.Buy, "1", base.Add(time.Duration(i)*time.Minute))
	}
	g.order(int64(n+1), "binance", "USDT-BTC", domain.Buy, "1", base.Add(time.Duration(n-5)*time.Minute)) // near the end
	g.order(int64(n+2), "binance", "USDT-BTC", domain.Buy, "1", base.Add(3*time.Minute))                  // far back: after #3, its equal
	g.order(int64(n+3), "binance", "USDT-BTC", domain.Buy, "1", base.Add(3*time.Minute))                  // and after #n+2
	applyAll(t, l, g.events)
	p := l.Page(OrderFilter{}, 0, n+3)
	ids := pageIDs(p)
	slices.Reverse(ids) // oldest first
	var want []int64
	for i := 1; i <= n; i++ {
		want = append(want, int64(i))
		switch i {
		case 3:
			want = append(want, int64(n+2), int64(n+3))
		case n - 5:
			want = append(want, int64(n+1))
		}
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("order of %d ids differs from time order; first ids %v, want %v", len(ids), ids[:8], want[:8])
	}
	// The sorted list keeps taking requests.
	g.events = g.events[:0]
	g.order(int64(n+4), "binance", "USDT-BTC", domain.Sell, "1", base)
	applyAll(t, l, g.events)
	if got := l.Page(OrderFilter{Side: domain.Sell}, 0, 10); !slices.Equal(pageIDs(got), []int64{int64(n + 4)}) {
		t.Fatalf("sells %v", pageIDs(got))
	}
	if got := l.Page(OrderFilter{}, 0, n+4); got.Orders[len(got.Orders)-1].ID != int64(n+4) {
		t.Fatalf("oldest is %d, want %d", got.Orders[len(got.Orders)-1].ID, n+4)
	}
}

// The index's state of every order is the state domain.Order.Apply folds
// from the order's stream, over random lives of orders (the one exception,
// a fill after the order finished, is left out: see OrderList).
func TestOrderListStatesAreTheOrderFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 33))
	g := &testLog{t: t}
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for id := int64(1); id <= 400; id++ {
		now = now.Add(time.Minute)
		kind := listKinds[rng.IntN(len(listKinds))]
		g.add(domain.OrderStream(id), domain.TypeOrderRequested, now, domain.OrderRequested{OrderID: id, Exchange: "binance",
			Pair: "USDT-BTC", Side: domain.Side([]string{"buy", "sell"}[rng.IntN(2)]), Kind: kind, Amount: dec("1"), Price: dec("10")})
		remaining := 100 // hundredths of the amount
		done := false
		for step := 0; step < rng.IntN(6) && !done; step++ {
			s := domain.OrderStream(id)
			switch rng.IntN(7) {
			case 0:
				g.add(s, domain.TypeOrderAccepted, now, domain.OrderAccepted{})
			case 1:
				q := 1 + rng.IntN(remaining)
				remaining -= q
				g.fill(id, "10", fmt.Sprintf("%d.%02d", q/100, q%100), "0", "USDT", now)
				done = remaining == 0
			case 2:
				g.add(s, domain.TypeStopTriggered, now, domain.StopTriggered{MarketPrice: dec("10"), LimitPrice: dec("10")})
			case 3:
				g.add(s, domain.TypeOrderCancelRequested, now, domain.OrderCancelRequested{})
			case 4:
				g.add(s, domain.TypeOrderCancelled, now, domain.OrderCancelled{})
				done = true
			case 5:
				g.add(s, domain.TypeOrderRejected, now, domain.OrderRejected{Reason: "no"})
				done = true
			case 6:
				g.add(s, domain.TypeOrderExpired, now, domain.OrderExpired{})
				done = true
			}
		}
	}
	l := NewOrderList()
	applyAll(t, l, g.events)
	folds := map[int64]*domain.Order{}
	for i := range g.events {
		e := &g.events[i]
		id, _ := streams.OrderStreamID(e.Stream)
		o := folds[id]
		if o == nil {
			no := domain.NewOrder()
			o = &no
			folds[id] = o
		}
		e.Version = o.Version + 1
		if err := o.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	p := l.Page(OrderFilter{}, 0, 1000)
	if len(p.Orders) != len(folds) {
		t.Fatalf("%d orders listed, want %d", len(p.Orders), len(folds))
	}
	for _, o := range p.Orders {
		f := folds[o.ID]
		if o.State != f.State || o.Kind != f.Kind || o.Side != f.Side || o.Filled != !f.Filled.IsZero() || o.CancelRequested != f.CancelRequested {
			t.Fatalf("order %d: listed %+v, the fold says state %s kind %s side %s filled %s cancel requested %v",
				o.ID, o, f.State, f.Kind, f.Side, f.Filled, f.CancelRequested)
		}
	}
}

func TestLedgerFillRecord(t *testing.T) {
	g := orderListLog(t)
	l := NewLedger(domain.LOFO)
	applyAll(t, l, g.events)
	// #4's fill: the event at index 10 of the log (position 11).
	e := g.events[10]
	if e.Type != domain.TypeOrderFilled || e.Stream != domain.OrderStream(4) {
		t.Fatalf("event 10 is %s %s", e.Stream, e.Type)
	}
	r, ok := l.FillRecord("binance/USDT-BTC", e.Time, e.Position)
	if !ok {
		t.Fatal("no record of #4's fill")
	}
	// A sell of 0.4 at 120 against #1's lot (0.3 @ 100, 0.7 @ 101; LOFO
	// takes 0.3 @ 100 and 0.1 @ 101): pnl 48 − 30 − 10.1 = 7.9.
	if r.ID != 4 || r.Pnl.String() != dec("7.9").String() || r.Amount.String() != dec("0.4").String() {
		t.Fatalf("record %+v", r)
	}
	if _, ok := l.FillRecord("binance/USDT-BTC", e.Time, e.Position+1); ok {
		t.Fatal("a record at a position without a fill")
	}
	if _, ok := l.FillRecord("binance/USDT-DOGE", e.Time, e.Position); ok {
		t.Fatal("a record of an unknown pair")
	}
}
