package projections

import (
	"fmt"
	"math/rand/v2"
	"strings"
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
	g.filled(1, "binance", "USDT-BTC", domain.Buy, "100", "1", "0.001", "BTC", at(0, 10, 0))
	g.filled(2, "binance", "USDT-BTC", domain.Buy, "90", "1", "0.09", "USDT", at(0, 11, 0))
	g.add(domain.RateStream("binance"), domain.TypeRateObserved, at(1, 0, 0), domain.RateObserved{Exchange: "binance", Base: "USDT", Quote: "EUR", Rate: dec("0.5")})
	g.filled(3, "binance", "USDT-BTC", domain.Sell, "110", "1.5", "0.5", "BNB", at(1, 9, 0))
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

// The books' gains are the Ledger's pnl: random logs of the service's
// orders, trades placed by hand, transfers between two accounts, deposits
// from the outside and conversions, recorded in random orders (late fills
// with earlier trade times), replayed into a Ledger of each method; the
// realized report under the same method sums, per pair, to the Ledger's
// pnl/total, and each order's disposals to its record's pnl: the books
// fold the pairs with the Ledger's own fold (fold.Traced), not a second
// walk of their own.
func TestBooksGainIsLedgerPnl(t *testing.T) {
	keys := []string{"binance/USDT-BTC", "binance/USDT-ETH", "bitstamp/USDT-BTC"}
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 38))
		g := &accountLog{testLog{t: t}}
		var groups [][]domain.Event
		group := func(build func()) {
			n := len(g.events)
			build()
			groups = append(groups, g.events[n:])
		}
		for id := int64(1); id <= 3; id++ { // every pair known from the start
			k := keys[id-1]
			group(func() {
				g.order(900+id, k[:strings.IndexByte(k, '/')], k[strings.IndexByte(k, '/')+1:], domain.Buy, "1", at(0, 0, 0))
			})
		}
		for i := 0; i < 80; i++ {
			k := keys[rng.IntN(len(keys))]
			ex, pair := k[:strings.IndexByte(k, '/')], k[strings.IndexByte(k, '/')+1:]
			base := pair[5:]
			day, hh, mm := 1+rng.IntN(5), rng.IntN(24), rng.IntN(60)
			qty := fmt.Sprintf("0.%02d", 1+rng.IntN(99))
			price := fmt.Sprint(90 + rng.IntN(40))
			side := domain.Buy
			if rng.IntN(5) < 2 {
				side = domain.Sell
			}
			fee, feeAsset := "0", "USDT"
			switch rng.IntN(3) {
			case 0:
				fee = "0.05"
			case 1:
				if side == domain.Buy {
					fee, feeAsset = "0.0001", base
				}
			}
			id := int64(i + 1)
			switch rng.IntN(9) {
			case 0: // a withdrawal to the other account, and its deposit
				if base != "BTC" {
					continue
				}
				to := map[string]string{"binance": "bitstamp", "bitstamp": "binance"}[ex]
				tx := fmt.Sprint("T", i)
				group(func() {
					g.transfer(false, domain.Transfer{Exchange: ex, ID: fmt.Sprint("w", i), Asset: "BTC", Amount: dec(qty), Fee: dec("0.0005"), TxID: tx}, day, hh, mm)
				})
				group(func() {
					g.transfer(true, domain.Transfer{Exchange: to, ID: fmt.Sprint("d", i), Asset: "BTC", Amount: dec(qty), TxID: tx,
						Status: domain.TransferCredited}, day, hh, mm+1)
				})
			case 1: // from the outside
				group(func() {
					g.transfer(true, domain.Transfer{Exchange: ex, ID: fmt.Sprint("o", i), Asset: base, Amount: dec(qty), Status: domain.TransferCredited}, day, hh, mm)
				})
			case 2: // a conversion between binance's bases
				from, to := "BTC", "ETH"
				if rng.IntN(2) == 0 {
					from, to = to, from
				}
				group(func() {
					g.convert(domain.Conversion{Exchange: "binance", ID: fmt.Sprint("c", i), Kind: domain.ConversionConvert, FromAsset: from,
						FromAmount: dec(qty), ToAsset: to, ToAmount: dec(qty).MulInt(3)}, day, hh)
				})
			case 3: // placed by hand
				group(func() { g.external(ex, pair, fmt.Sprint("h", i), side, price, qty, fee, feeAsset, day, hh) })
			default: // an order of the service's, in one or two fills
				group(func() {
					g.order(id, ex, pair, side, "1", at(day, hh, mm))
					g.fill(id, price, qty, fee, feeAsset, at(day, hh, mm))
					if rng.IntN(3) == 0 {
						g.fill(id, price, qty, "0", "USDT", at(day+rng.IntN(2), rng.IntN(24), 0))
					}
				})
			}
		}
		var events []domain.Event
		for _, i := range rng.Perm(len(groups)) {
			events = append(events, groups[i]...)
		}
		for i := range events {
			events[i].Position = uint64(i + 1)
		}
		for _, m := range []domain.PnlMethod{domain.FIFO, domain.LIFO, domain.HIFO, domain.LOFO, domain.Average} {
			l := replay(t, m, events)
			r, err := books.RealizedReport(l, books.Query{Method: m}, 0, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			type orderKey struct {
				key string
				id  int64
			}
			gains, byOrder := map[string]decimal.Decimal{}, map[orderKey]decimal.Decimal{}
			for _, d := range r.Rows {
				gains[d.Key] = gains[d.Key].Add(decimal.Decimal(d.Gain))
				byOrder[orderKey{d.Key, d.OrderID}] = byOrder[orderKey{d.Key, d.OrderID}].Add(decimal.Decimal(d.Gain))
			}
			for _, k := range keys {
				tot, err := l.Total(k)
				if err != nil {
					t.Fatal(err)
				}
				if decimal.Decimal(tot.Pnl) != gains[k] {
					t.Errorf("seed %d %s %s: the books' gains %s, the Ledger's pnl %s", seed, m, k, gains[k], decimal.Decimal(tot.Pnl))
				}
				records := map[int64]decimal.Decimal{} // a record per fill; the pair's total has the rest (by hand, conversions)
				for _, rec := range l.Orders(k) {
					if rec.ID != 0 {
						records[rec.ID] = records[rec.ID].Add(rec.Pnl)
					}
				}
				for id, pnl := range records {
					if got := byOrder[orderKey{k, id}]; got != pnl {
						t.Errorf("seed %d %s %s: order %d's disposals gain %s, its records' pnl %s", seed, m, k, id, got, pnl)
					}
				}
			}
			if r.Disposals == 0 {
				t.Fatalf("seed %d: no disposal", seed)
			}
		}
	}
}
