package clickhouse

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The analytics rows go by a fill's exchange time (exchangeTime), as the
// Ledger does, and by the envelope time for fills recorded without one.
func TestRowsUseTheFillsExchangeTime(t *testing.T) {
	day := time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return day.Add(d).UnixMilli() }
	ev := func(stream, typ string, at int64, pos uint64, data any) domain.Event {
		b, _ := json.Marshal(data)
		return domain.Event{Stream: stream, Type: typ, Time: at, Position: pos, Data: b}
	}
	log := []domain.Event{
		ev("order-1", domain.TypeOrderRequested, ms(10*time.Hour), 1, domain.OrderRequested{OrderID: 1, Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("1")}),
		ev("order-1", domain.TypeOrderFilled, ms(10*time.Hour), 2, domain.OrderFilled{FillID: "f1", Price: decimal.MustDecimal("100"), Quantity: decimal.MustDecimal("1"), FeeAsset: "USDT"}),
		ev("order-2", domain.TypeOrderRequested, ms(23*time.Hour+58*time.Minute), 3, domain.OrderRequested{OrderID: 2, Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindMarket, Amount: decimal.MustDecimal("1")}),
		// Filled at D 23:59 by the exchange, recorded on D+1.
		ev("order-2", domain.TypeOrderFilled, ms(24*time.Hour+time.Minute), 4, domain.OrderFilled{FillID: "f2", Price: decimal.MustDecimal("110"), Quantity: decimal.MustDecimal("1"), FeeAsset: "USDT", ExchangeTime: ms(23*time.Hour + 59*time.Minute)}),
	}
	st, b := newState(domain.LOFO), newBatch()
	for i := range log {
		if err := st.apply(&log[i], b); err != nil {
			t.Fatal(err)
		}
	}
	b.prepare()
	if len(b.fills) != 2 || b.fills[0].TimeMs != ms(10*time.Hour) || b.fills[1].TimeMs != ms(23*time.Hour+59*time.Minute) {
		t.Fatalf("fill rows %+v", b.fills)
	}
	if len(b.daily) != 1 {
		t.Fatalf("daily rows %+v, want both fills on 2024-03-10", b.daily)
	}
	for k, d := range b.daily {
		if k.Day != dayOf(day.UnixMilli()) || d.Trades != 2 {
			t.Fatalf("daily row %+v %+v", k, d)
		}
	}
}
