package metrics

import (
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// TestOrdersCountedFromEvents: placed on OrderRequested, filled once the
// fills add up to the amount (not at a partial fill), rejected by the
// order's exchange; a cancelled order is forgotten; failed logins counted.
func TestOrdersCountedFromEvents(t *testing.T) {
	m := New()
	clock := domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	apply := func(stream, typ string, data any) {
		t.Helper()
		e := domain.NewEvent(clock, typ, data)
		e.Stream = stream
		if err := m.Apply(&e); err != nil {
			t.Fatal(err)
		}
	}
	req := func(id int64, exchange, amount string) {
		apply(domain.OrderStream(id), domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: exchange, Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal(amount), Price: decimal.MustDecimal("1")})
	}
	fill := func(id int64, qty string) {
		apply(domain.OrderStream(id), domain.TypeOrderFilled, domain.OrderFilled{FillID: "f", Price: decimal.MustDecimal("1"), Quantity: decimal.MustDecimal(qty)})
	}
	req(1, "binance", "1")
	req(2, "binance", "2")
	req(3, "kraken", "1")
	req(4, "kraken", "1")
	fill(1, "1")
	fill(2, "1.5")
	apply(domain.OrderStream(3), domain.TypeOrderRejected, domain.OrderRejected{Reason: "no funds"})
	apply(domain.OrderStream(4), domain.TypeOrderCancelled, struct{}{})
	apply(domain.StreamAuth, domain.TypeLoginFailed, domain.LoginFailed{RemoteAddr: "127.0.0.1", Reason: "password"})

	for _, c := range []struct {
		exchange, outcome string
		want              float64
	}{
		{"binance", "placed", 2}, {"binance", "filled", 1}, {"binance", "rejected", 0},
		{"kraken", "placed", 2}, {"kraken", "filled", 0}, {"kraken", "rejected", 1},
	} {
		if got := testutil.ToFloat64(m.orders.WithLabelValues(c.exchange, c.outcome)); got != c.want {
			t.Errorf("orders{%s,%s} = %v, want %v", c.exchange, c.outcome, got, c.want)
		}
	}
	fill(2, "0.5") // the rest of order 2
	if got := testutil.ToFloat64(m.orders.WithLabelValues("binance", "filled")); got != 2 {
		t.Errorf("orders{binance,filled} after the last fill = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.loginFailures); got != 1 {
		t.Errorf("login failures = %v, want 1", got)
	}
	if m.open.Len() != 0 {
		t.Errorf("%d orders still remembered, want none", m.open.Len())
	}
}

// TestOpenOrdersKeepNoEventMemory: the open orders' keys are ids or
// copies, not the events' strings, which a replay's batch shares
// (Projection): a stream's memory written over after Apply changes
// nothing, for a stream as OrderStream writes it and for another.
func TestOpenOrdersKeepNoEventMemory(t *testing.T) {
	for _, stream := range []string{"order-1", "order-007"} {
		m := New()
		clock := domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		apply := func(typ string, data any) {
			t.Helper()
			b := []byte(stream)
			e := domain.NewEvent(clock, typ, data)
			e.Stream = unsafe.String(unsafe.SliceData(b), len(b))
			if err := m.Apply(&e); err != nil {
				t.Fatal(err)
			}
			copy(b, "scribble") // as the next use of a shared buffer would
		}
		apply(domain.TypeOrderRequested, domain.OrderRequested{OrderID: 1, Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("2"), Price: decimal.MustDecimal("1")})
		apply(domain.TypeOrderFilled, domain.OrderFilled{FillID: "f1", Price: decimal.MustDecimal("1"), Quantity: decimal.MustDecimal("1")})
		apply(domain.TypeOrderFilled, domain.OrderFilled{FillID: "f2", Price: decimal.MustDecimal("1"), Quantity: decimal.MustDecimal("1")})
		if got := testutil.ToFloat64(m.orders.WithLabelValues("binance", "filled")); got != 1 {
			t.Errorf("%s: orders{binance,filled} = %v, want 1", stream, got)
		}
		if m.open.Len() != 0 {
			t.Errorf("%s: %d orders still remembered, want none", stream, m.open.Len())
		}
	}
}
