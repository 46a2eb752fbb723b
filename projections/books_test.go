package projections

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// booksLog is the Ledger's side of the books (UTC, day D = 2024-03-10),
// with bot.REPORTING_CURRENCY EUR and bot.PNL_METHOD fifo:
//
//	binance/USDT-BTC
//	 #1 buy 1 @ 100 fee 0.001 BTC         D 10:00  fee in base: 0.001 × 100 = 0.1 USDT, taken from the
//	                                               coins bought: lot A {0.999, 100}
//	 #2 buy 1 @ 90 fee 0.09 USDT          D 11:00  lot B {1, 90.09}
//	 #3 sell 1.5 @ 110 fee 0.5 BNB        D+1 09:00  BNB is not valued: the fee counts 0 and is listed
//	RateObserved EUR/USDT 0.8 (1 USDT = 0.8 EUR) D 00:00, 0.5 at D+1 00:00
//
// FIFO: #3 takes A (0.999, 100) + 0.501 of B (90.09 × 0.501 = 45.13509) =
// 145.13509; proceeds 165; gain 19.86491; in EUR: proceeds 82.5 (165 at
// 0.5), cost 100 × 0.8 = 80 and 45.13509 × 0.8 = 36.108072: gain 82.5 −
// 116.108072 = −33.608072.
func booksLog(t *testing.T) []domain.Event {
	g := &testLog{t: t}
	g.add(domain.StreamConfig, domain.TypeConfigReplaced, at(0, 0, 0), map[string]any{"config": map[string]any{
		"bot": map[string]any{"REPORTING_CURRENCY": "EUR", "PNL_METHOD": "fifo"}, "pairs": map[string]any{}}})
	g.add(domain.RateStream("binance"), domain.TypeRateObserved, at(0, 0, 0), domain.RateObserved{Exchange: "binance", Base: "USDT", Quote: "EUR", Rate: dec("0.8")})
	g.order(1, "binance", "USDT-BTC", domain.Buy, "1", at(0, 10, 0))
	g.fill(1, "100", "1", "0.001", "BTC", at(0, 10, 0))
	g.order(2, "binance", "USDT-BTC", domain.Buy, "1", at(0, 11, 0))
	g.fill(2, "90", "1", "0.09", "USDT", at(0, 11, 0))
	g.add(domain.RateStream("binance"), domain.TypeRateObserved, at(1, 0, 0), domain.RateObserved{Exchange: "binance", Base: "USDT", Quote: "EUR", Rate: dec("0.5")})
	g.order(3, "binance", "USDT-BTC", domain.Sell, "1.5", at(1, 9, 0))
	g.fill(3, "110", "1.5", "0.5", "BNB", at(1, 9, 0))
	return g.events
}

func TestLedgerAsBooksSource(t *testing.T) {
	l := replay(t, domain.FIFO, booksLog(t))
	m, cur, _ := l.BookDefaults()
	if m != domain.FIFO || cur != "EUR" {
		t.Fatalf("defaults %s %s, want fifo EUR", m, cur)
	}
	r, err := books.RealizedReport(l, books.Query{Method: m, Currency: cur}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r.Disposals != 1 || len(r.Rows[0].Lots) != 2 {
		t.Fatalf("report %+v", r)
	}
	d := r.Rows[0]
	if d.Fee.Asset != "BNB" || d.Fee.Valued || decimal.Decimal(d.Fee.Amount) != dec("0.5") {
		t.Errorf("fee %+v, want 0.5 BNB not valued", d.Fee)
	}
	for name, c := range map[string]struct {
		got  decimal.Number
		want string
	}{
		"cost basis":   {d.CostBasis, "145.13509"},
		"gain":         {d.Gain, "19.86491"},
		"lot A cost":   {d.Lots[0].CostBasis, "100"},
		"lot B cost":   {d.Lots[1].CostBasis, "45.13509"},
		"gain in EUR":  {d.InCurrency.Gain, "-33.608072"},
		"A cost (EUR)": {d.Lots[0].InCurrency.CostBasis, "80"},
	} {
		if decimal.Decimal(c.got) != dec(c.want) {
			t.Errorf("%s = %s, want %s", name, decimal.Decimal(c.got), c.want)
		}
	}
	if len(r.Totals[0].UnconvertedFees) != 1 || r.Totals[0].UnconvertedFees[0].Asset != "BNB" {
		t.Errorf("unconverted fees %+v", r.Totals[0].UnconvertedFees)
	}
	// The order records still show the fees in quote as before: #1's base
	// fee valued at its price, #3's BNB fee as 0.
	recs := l.Orders("binance/USDT-BTC")
	if recs[2].Fees != dec("0.1") || recs[1].Fees != dec("0.09") || !recs[0].Fees.IsZero() {
		t.Errorf("record fees %s %s %s", recs[2].Fees, recs[1].Fees, recs[0].Fees)
	}
	// The Ledger's pnl of #3 is the report's gain (the same method, the
	// same lots in the same order).
	if recs[0].Pnl != decimal.Decimal(d.Gain) {
		t.Errorf("record pnl %s, report gain %s", recs[0].Pnl, decimal.Decimal(d.Gain))
	}
}

// A report reads the Ledger as of its snapshot: fills and rates applied
// after it are not seen.
func TestLedgerBooksSnapshot(t *testing.T) {
	events := booksLog(t)
	l := replay(t, domain.FIFO, events[:len(events)-1]) // without #3's fill
	s := l.BookSnapshot()
	if err := l.Apply(&events[len(events)-1]); err != nil {
		t.Fatal(err)
	}
	g := &testLog{t: t, events: events}
	g.add(domain.RateStream("binance"), domain.TypeRateObserved, at(0, 12, 0), domain.RateObserved{Exchange: "binance", Base: "USDT", Quote: "EUR", Rate: dec("0.7")})
	if err := l.Apply(&g.events[len(g.events)-1]); err != nil {
		t.Fatal(err)
	}
	fills, _ := l.BookFills(s, "binance/USDT-BTC", books.Cursor{}, 10, nil)
	if len(fills) != 2 {
		t.Errorf("%d fills under the old snapshot, want 2", len(fills))
	}
	c, ok := l.BookConvert(s, dec("10"), "USDT", "EUR", at(0, 13, 0).UnixMilli())
	if !ok || c.Amount != dec("8") {
		t.Errorf("conversion under the old snapshot %+v %v, want 8 at 0.8", c, ok)
	}
	c, _ = l.BookConvert(l.BookSnapshot(), dec("10"), "USDT", "EUR", at(0, 13, 0).UnixMilli())
	if c.Amount != dec("7") || c.RateTime != at(0, 12, 0).UnixMilli() {
		t.Errorf("conversion now %+v, want 7 at 0.7 from 12:00", c)
	}
	// From a cursor: the fills after it, in order.
	fills, cur := l.BookFills(l.BookSnapshot(), "binance/USDT-BTC", books.After(at(0, 11, 0).UnixMilli()), 1, nil)
	if len(fills) != 1 || fills[0].OrderID != 2 {
		t.Fatalf("after 11:00: %+v", fills)
	}
	fills, _ = l.BookFills(l.BookSnapshot(), "binance/USDT-BTC", cur, 5, nil)
	if len(fills) != 1 || fills[0].OrderID != 3 || !fills[0].Sell || fills[0].Time != at(1, 9, 0).UnixMilli() {
		t.Fatalf("after #2: %+v", fills)
	}
}
