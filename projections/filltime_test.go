package projections

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Order records and PNL days go by a fill's exchange time (exchangeTime),
// not by when the service recorded it; a fill recorded without one (older
// logs) goes by its envelope time, as it always did.
func TestFillTimeIsTheExchangesTime(t *testing.T) {
	g := &testLog{t: t}
	g.order(1, "binance", "USDT-BTC", domain.Buy, "1", at(0, 10, 0))
	g.fill(1, "100", "1", "0", "USDT", at(0, 10, 0)) // no exchangeTime: the envelope's
	g.order(2, "binance", "USDT-BTC", domain.Sell, "1", at(0, 23, 58))
	// Filled by the exchange at D 23:59, recorded two minutes later, on D+1.
	g.add(domain.OrderStream(2), domain.TypeOrderFilled, at(1, 0, 1), domain.OrderFilled{FillID: "f2", Price: dec("110"),
		Quantity: dec("1"), FeeAsset: "USDT", ExchangeTime: at(0, 23, 59).UnixMilli()})
	l := replay(t, domain.LOFO, g.events)

	recs := l.Orders("binance/USDT-BTC")
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	if got, want := recs[0].Time, at(0, 23, 59).UnixMilli(); recs[0].ID != 2 || got != want {
		t.Fatalf("sell record #%d time %d, want the exchange's %d", recs[0].ID, got, want)
	}
	if got, want := recs[1].Time, at(0, 10, 0).UnixMilli(); got != want {
		t.Fatalf("buy record time %d, want the envelope's %d", got, want)
	}
	days, _, _, err := l.Daily(DailyQuery{Scope: PnlScope{Keys: []string{"binance/USDT-BTC"}}, Loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].Date != "2024-03-10" || decimal.Decimal(days[0].Pnl) != dec("10") {
		t.Fatalf("days %+v, want the sell's pnl of 10 on 2024-03-10", days)
	}
}
