package paper_test

import (
	"context"
	"fmt"
	"testing"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/paper"
)

// TestRestoreKeepsNoEventMemory: the simulator keys the orders it follows
// by copies of their streams, not the events' strings, which a replay's
// batch shares (projections.Projection): a stream's memory written over
// after Apply changes nothing. Order 1 is cancelled, order 2 rests again.
func TestRestoreKeepsNoEventMemory(t *testing.T) {
	clock := domain.NewManualClock(start)
	sim := paper.NewSimulator(clock)
	apply := func(stream string, version int64, typ string, data any) {
		t.Helper()
		b := []byte(stream)
		e := domain.NewEvent(clock, typ, data)
		e.Stream, e.Version = unsafe.String(unsafe.SliceData(b), len(b)), version
		if err := sim.Apply(&e); err != nil {
			t.Fatal(err)
		}
		copy(b, "scribble") // as the next use of a shared buffer would
	}
	for _, id := range []int64{1, 2} {
		apply(domain.OrderStream(id), 0, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "USDT-BTC",
			Side: domain.Buy, Kind: domain.KindLimit, Amount: domain.MustDecimal("0.001"), Price: domain.MustDecimal("1"), ClientOrderID: fmt.Sprint("c", id)})
		apply(domain.OrderStream(id), 1, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprint(id)})
	}
	apply(domain.OrderStream(1), 2, domain.TypeOrderCancelled, domain.OrderCancelled{})
	x, err := sim.Account("binance")
	if err != nil {
		t.Fatal(err)
	}
	open, err := x.OpenOrders(context.Background(), "USDT-BTC")
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 {
		t.Fatalf("open orders after the restore: %+v, want order 2 only", open)
	}
}
