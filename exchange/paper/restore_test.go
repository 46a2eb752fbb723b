package paper_test

import (
	"context"
	"fmt"
	"testing"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/paper"
)

// TestRestoreKeepsNoEventMemory: the simulator keys the orders it follows
// by their ids or copies of their streams, not the events' strings, which
// a replay's batch shares (projections.Projection): a stream's memory
// written over after Apply changes nothing. Order 1 is cancelled, order 2
// rests again. Only streams as domain.OrderStream writes them are orders:
// the events of "order-02" are not followed.
func TestRestoreKeepsNoEventMemory(t *testing.T) {
	for _, tt := range []struct {
		format string
		open   int
	}{{"order-%d", 1}, {"order-0%d", 0}} {
		format := tt.format
		clock := domain.NewManualClock(start)
		sim := paper.NewSimulator(clock)
		apply := func(id, version int64, typ string, data any) {
			t.Helper()
			b := []byte(fmt.Sprintf(format, id))
			e := domain.NewEvent(clock, typ, data)
			e.Stream, e.Version = unsafe.String(unsafe.SliceData(b), len(b)), version
			if err := sim.Apply(&e); err != nil {
				t.Fatal(err)
			}
			copy(b, "scribble") // as the next use of a shared buffer would
		}
		for _, id := range []int64{1, 2} {
			apply(id, 0, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "USDT-BTC",
				Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("0.001"), Price: decimal.MustDecimal("1"), ClientOrderID: fmt.Sprint("c", id)})
			apply(id, 1, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprint(id)})
		}
		apply(1, 2, domain.TypeOrderCancelled, domain.OrderCancelled{})
		x, err := sim.Account("binance")
		if err != nil {
			t.Fatal(err)
		}
		open, err := x.OpenOrders(context.Background(), "USDT-BTC")
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != tt.open || (tt.open == 1 && open[0].ID != "2") {
			t.Fatalf("%s: open orders after the restore: %+v, want %d (order 2)", format, open, tt.open)
		}
	}
}
