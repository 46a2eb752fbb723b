package books

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// January 2024 on goldenSource under FIFO, USDT-SOL:
//
//	opening  A {1, 10} + B {2, 60}            3 for 70, position 3
//	acquired C {1, 20} + D {1, 40}            2 for 60
//	disposed A + 1 of B                       2: proceeds 70, fees 0.2, cost 40, gain 29.8
//	closing  B {1, 30} + C + D                3 for 90 = 70 + 60 − 40
//	closing price 35: unrealized 3 × 35 − 90 = 15
//
// In EUR: gain 1.9 (realized report), fees 0.2 × 0.5 = 0.1, closing value
// 105 × 0.5 = 52.5, unrealized 15 × 0.5 = 7.5. BTC-ETH has no rate to EUR:
// its line is listed unconverted.
func TestStatementGolden(t *testing.T) {
	s, err := StatementReport(goldenSource(), Query{From: day(2024, 1, 1, 0), To: day(2024, 2, 1, 0), Method: domain.FIFO, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Lines) != 2 || s.Lines[0].Key != "binance/BTC-ETH" || s.Lines[1].Key != "binance/USDT-SOL" {
		t.Fatalf("lines %+v", s.Lines)
	}
	l := s.Lines[1]
	eqN(t, "opening quantity", l.Opening.Quantity, "3")
	eqN(t, "opening cost", l.Opening.CostBasis, "70")
	eqN(t, "opening position", l.OpeningPosition, "3")
	eqN(t, "acquired quantity", l.Acquired.Quantity, "2")
	eqN(t, "acquired cost", l.Acquired.Cost, "60")
	eqN(t, "disposed quantity", l.Disposed.Quantity, "2")
	eqN(t, "disposed proceeds", l.Disposed.Proceeds, "70")
	eqN(t, "disposed fees", l.Disposed.Fees, "0.2")
	eqN(t, "disposed cost", l.Disposed.CostBasis, "40")
	eqN(t, "realized", l.RealizedGain, "29.8")
	eqN(t, "fees", l.Fees, "0.2")
	eqN(t, "closing quantity", l.Closing.Quantity, "3")
	eqN(t, "closing cost", l.Closing.CostBasis, "90")
	eqN(t, "closing position", l.ClosingPosition, "3")
	if l.ClosingPrice == nil || l.UnrealizedGain == nil {
		t.Fatalf("no closing price: %+v", l)
	}
	eqN(t, "closing price", *l.ClosingPrice, "35")
	eqN(t, "unrealized", *l.UnrealizedGain, "15")
	c := l.InCurrency
	if c == nil || c.RealizedGain == nil || c.Fees == nil || c.ClosingValue == nil || c.UnrealizedGain == nil {
		t.Fatalf("in EUR: %+v", c)
	}
	eqN(t, "EUR realized", *c.RealizedGain, "1.9")
	eqN(t, "EUR fees", *c.Fees, "0.1")
	eqN(t, "EUR closing value", *c.ClosingValue, "52.5")
	eqN(t, "EUR unrealized", *c.UnrealizedGain, "7.5")
	if s.InCurrency == nil || len(s.InCurrency.Unconverted) != 1 || s.InCurrency.Unconverted[0] != "binance/BTC-ETH" {
		t.Fatalf("statement in EUR: %+v", s.InCurrency)
	}
	eqN(t, "EUR total realized", s.InCurrency.Total.RealizedGain, "1.9")
	e := s.Lines[0]
	if len(e.UnconvertedFees) != 1 || e.UnconvertedFees[0].Asset != "BNB" {
		t.Errorf("ETH unconverted fees %+v", e.UnconvertedFees)
	}
	eqN(t, "ETH unmatched", e.Unmatched.Quantity, "0.5")
	eqN(t, "ETH closing position", e.ClosingPosition, "-0.5")
	eqN(t, "ETH closing lots", e.Closing.Quantity, "0")
	// A period before any fill of SOL's but after ETH's: no SOL line.
	s, _ = StatementReport(goldenSource(), Query{From: 0, To: day(2023, 1, 1, 0), Method: domain.FIFO})
	if len(s.Lines) != 0 {
		t.Errorf("lines before any fill: %+v", s.Lines)
	}
}

// randomLog fills a source with random fills on three pairs: buys and
// sells of odd quantities (partial lots round), equal and out-of-order
// times, fees in quote, in base (valued at the price) and in a third
// asset (not valued), rebates.
func randomLog(r *rand.Rand, n int) *memSource {
	m := newMemSource()
	keys := []string{m.pair("a", "USDT", "BTC"), m.pair("b", "USDT", "ETH"), m.pair("b", "BTC", "ETH")}
	t0 := day(2024, 1, 1, 0)
	for i := 0; i < n; i++ {
		k := keys[r.IntN(len(keys))]
		t := t0 + r.Int64N(400)*3600_000 // equal times happen, and the log is out of time order
		price := domain.NewDecimal(1+r.Int64N(5_000_000), -4)
		qty := domain.NewDecimal(1+r.Int64N(300_000_000), -8)
		var fee Fee
		switch r.IntN(5) {
		case 0:
		case 1:
			a := domain.MulDiv(price.Mul(qty), domain.DecimalFromInt(1), domain.DecimalFromInt(1000))
			fee = Fee{Asset: "Q", Amount: a, Quote: a, Rate: domain.DecimalFromInt(1), RateTime: t, Valued: true}
		case 2: // in base, valued at the price
			a := domain.MulDiv(qty, domain.DecimalFromInt(1), domain.DecimalFromInt(1000))
			fee = Fee{Asset: "B", Amount: a, Quote: a.Mul(price), Rate: price, RateTime: t, Valued: true}
		case 3:
			fee = Fee{Asset: "BNB", Amount: domain.NewDecimal(r.Int64N(1000), -6)}
		case 4: // a rebate
			a := domain.MulDiv(price.Mul(qty), domain.DecimalFromInt(-1), domain.DecimalFromInt(10000))
			fee = Fee{Asset: "Q", Amount: a, Quote: a, Rate: domain.DecimalFromInt(1), RateTime: t, Valued: true}
		}
		f := Fill{Time: t, OrderID: int64(i), Price: price, Qty: qty, Fee: fee, Sell: r.IntN(5) < 2}
		if f.Sell && r.IntN(4) == 0 {
			f.Qty = f.Qty.MulInt(3)
		}
		m.fill(k, f)
	}
	return m
}

// randomAccountLog is randomLog with the accounts' other activity as the
// Ledger routes it to pairs (package fold's move.go): a fourth pair,
// c/USDT-BTC, another account of the same pair; trades placed by hand;
// deposits from the outside, at a price or of unknown cost; withdrawals with network fees, some matched
// to a later deposit on another pair of the same base (a transfer, the
// deposit at most the amount sent) — some of them into a pair of another
// quote —; conversions' legs, priced and not.
func randomAccountLog(r *rand.Rand, n int) *memSource {
	m := randomLog(r, n)
	keys := []string{"a/USDT-BTC", "b/USDT-ETH", "b/BTC-ETH", m.pair("c", "USDT", "BTC")}
	peers := map[string][]string{"a/USDT-BTC": {"c/USDT-BTC"}, "c/USDT-BTC": {"a/USDT-BTC"}, "b/USDT-ETH": {"b/BTC-ETH"}, "b/BTC-ETH": {"b/USDT-ETH"}}
	t0 := day(2024, 1, 1, 0)
	qty := func() domain.Decimal { return domain.NewDecimal(1+r.Int64N(200_000_000), -8) }
	for i := 0; i < n/4; i++ {
		k := keys[r.IntN(len(keys))]
		t := t0 + r.Int64N(400)*3600_000
		ex, _, _ := strings.Cut(k, "/")
		switch r.IntN(6) {
		case 0: // a trade placed by hand
			f := Fill{Time: t, Price: domain.NewDecimal(1+r.Int64N(5_000_000), -4), Qty: qty(), Fee: Fee{Valued: true}, Kind: KindExternal,
				Sell: r.IntN(2) == 0}
			m.fill(k, f)
		case 1: // from the outside: at the log's price, or of unknown cost
			id := fmt.Sprintf("deposit:%s:o%d", ex, i)
			pos := m.flow(Flow{ID: id, Kind: "deposit", Exchange: ex, Time: t})
			m.move(k, pos, Fill{Time: t, Qty: qty(), Kind: KindDeposit, Flow: id, Value: domain.NewDecimal(1+r.Int64N(50_000_000_000), -6),
				Priced: r.IntN(2) == 0})
		case 2, 3: // a withdrawal, to the outside or to another account
			id := fmt.Sprintf("withdrawal:%s:w%d", ex, i)
			sent, fee := qty(), domain.NewDecimal(r.Int64N(100_000), -8)
			w := Fill{Time: t, Qty: sent, NetworkFee: fee, Kind: KindWithdrawal, Flow: id}
			var dep *Fill
			to := peers[k][0]
			if r.IntN(3) > 0 {
				did := fmt.Sprintf("deposit:%s:d%d", strings.Split(to, "/")[0], i)
				amount := sent
				if r.IntN(2) == 0 {
					amount = sent.Sub(fee)
				}
				w.Peer = did
				dep = &Fill{Time: t + 1 + r.Int64N(5*3600_000), Qty: amount, Kind: KindDeposit, Flow: did, Peer: id}
			}
			pos := m.flow(Flow{ID: id, Kind: "withdrawal", Exchange: ex, Time: t})
			m.move(k, pos, w)
			if dep != nil {
				pos := m.flow(Flow{ID: dep.Flow, Kind: "deposit", Exchange: strings.Split(to, "/")[0], Time: dep.Time})
				m.move(to, pos, *dep)
			}
		default: // a conversion's leg
			id := fmt.Sprintf("conversion:%s:c%d", ex, i)
			f := Fill{Time: t, Qty: qty(), Kind: KindConvertIn, Flow: id, Counter: "X", CounterQty: qty(),
				Value: domain.NewDecimal(1+r.Int64N(50_000_000_000), -6), Priced: r.IntN(4) > 0}
			if r.IntN(2) == 0 {
				f.Kind, f.Sell = KindConvertOut, true
			}
			pos := m.flow(Flow{ID: id, Kind: "conversion", Exchange: ex, Time: t})
			m.move(k, pos, f)
		}
	}
	return m
}

// The statement's identities hold exactly for every method and scope over
// random logs of trades and of the accounts' other activity (transfers,
// conversions, coins of unknown cost), and random periods: opening +
// flows = closing for the lots' quantity and cost, for the coins of
// unknown cost and for the position (statement.go); a period's opening is
// the closing of the period that ends where it starts; the disposed gain
// is the realized report's; and with no period bounds and only trades the
// closing lots are those of one Lots fed every fill in (time, position)
// order.
func TestStatementOpeningPlusFlowsIsClosing(t *testing.T) {
	methods := []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO}
	for seed := uint64(0); seed < 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 31))
		src := randomLog(r, 50+r.IntN(300))
		if seed%2 == 1 {
			src = randomAccountLog(r, 50+r.IntN(300))
		}
		from := day(2024, 1, 1, 0) + r.Int64N(400)*3600_000
		to := from + r.Int64N(200)*3600_000 + 1
		for _, m := range methods {
			sc := domain.CostBasisScope(r.IntN(2))
			where := fmt.Sprintf("seed %d %s %s [%d, %d)", seed, m, sc, from, to)
			s, err := StatementReport(src, Query{From: from, To: to, Method: m, Scope: sc})
			if err != nil {
				t.Fatal(err)
			}
			before, err := StatementReport(src, Query{From: 0, To: from, Method: m, Scope: sc})
			if err != nil {
				t.Fatal(err)
			}
			closedBefore := map[string]Line{}
			for _, l := range before.Lines {
				closedBefore[l.Key] = l
			}
			rz, err := RealizedReport(src, Query{From: from, To: to, Method: m, Scope: sc}, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var gain, realized domain.Decimal
			for _, tot := range rz.Totals {
				realized = realized.Add(domain.Decimal(tot.Gain))
			}
			for _, l := range s.Lines {
				D := func(n domain.Number) domain.Decimal { return domain.Decimal(n) }
				a, dis, dep, wd := &l.Acquired, &l.Disposed, &l.Deposited, &l.Withdrawn
				q := D(l.Opening.Quantity).Add(D(a.Quantity)).Sub(D(dis.Quantity)).Sub(D(dis.Unpriced.Quantity)).
					Add(D(dep.Quantity)).Sub(D(wd.Quantity))
				c := D(l.Opening.CostBasis).Add(D(a.Cost)).Sub(D(dis.CostBasis)).Sub(D(dis.Unpriced.CostBasis)).
					Add(D(dep.Cost)).Sub(D(wd.CostBasis))
				u := D(l.Opening.UnknownCostQuantity).Add(D(a.UnknownCostQuantity)).Add(D(dep.UnknownCostQuantity)).
					Sub(D(dis.UnknownCostQuantity)).Sub(D(wd.UnknownCostQuantity))
				p := D(l.OpeningPosition).Add(D(a.Quantity)).Add(D(a.UnknownCostQuantity)).Add(D(dep.Quantity)).
					Add(D(dep.UnknownCostQuantity)).Sub(D(dis.Quantity)).Sub(D(dis.Unpriced.Quantity)).
					Sub(D(dis.UnknownCostQuantity)).Sub(D(l.Unmatched.Quantity)).Sub(D(wd.Quantity)).
					Sub(D(wd.UnknownCostQuantity)).Sub(D(wd.Unheld))
				if q != D(l.Closing.Quantity) || c != D(l.Closing.CostBasis) || u != D(l.Closing.UnknownCostQuantity) || p != D(l.ClosingPosition) {
					t.Fatalf("%s %s: opening+flows = %s for %s, %s of unknown cost (position %s), closing %s for %s, %s (position %s)",
						where, l.Key, q, c, u, p, D(l.Closing.Quantity), D(l.Closing.CostBasis), D(l.Closing.UnknownCostQuantity),
						D(l.ClosingPosition))
				}
				if b, ok := closedBefore[l.Key]; ok {
					if b.Closing != l.Opening || b.ClosingPosition != l.OpeningPosition {
						t.Fatalf("%s %s: opening %+v (position %s), the period before closed at %+v (%s)", where, l.Key,
							l.Opening, D(l.OpeningPosition), b.Closing, D(b.ClosingPosition))
					}
				} else if !D(l.Opening.Quantity).IsZero() || !D(l.OpeningPosition).IsZero() {
					t.Fatalf("%s %s: opening %+v with no fill before", where, l.Key, l.Opening)
				}
				gain = gain.Add(D(l.Disposed.Gain))
			}
			if gain != realized {
				t.Fatalf("%s: statement gain %s, realized report %s", where, gain, realized)
			}
		}
	}
	// The whole log: the closing lots are one Lots' fed every fill in order.
	r := rand.New(rand.NewPCG(7, 7))
	src := randomLog(r, 500)
	for _, m := range methods {
		s, _ := StatementReport(src, Query{Method: m})
		for _, l := range s.Lines {
			lots := domain.Lots{Method: m}
			for _, f := range src.fills[l.Key] {
				side, fee := domain.Buy, domain.Zero
				if f.Sell {
					side = domain.Sell
				}
				if f.Fee.Valued {
					fee = f.Fee.Quote
				}
				lots.ApplyFill(side, f.Price, f.Qty, fee)
			}
			if domain.Decimal(l.Closing.Quantity) != lots.Qty() || domain.Decimal(l.Closing.CostBasis) != lots.Cost() {
				t.Errorf("%s %s: closing %+v, lots %s for %s", m, l.Key, l.Closing, lots.Qty(), lots.Cost())
			}
		}
	}
}

// The statement's disposals are the realized report's, summed: over
// random logs of trades and of the accounts' other activity, under every
// method and scope, the lines' disposed quantity, proceeds, matched fees,
// cost basis, coins of unknown cost, unpriced lots and unmatched sales add
// up to the realized report's totals; and each disposal's proceeds and
// fees are split over the lots and the coins of unknown cost it took pro
// rata of their quantity, the last one taking the rounding (so that they
// add up exactly).
func TestStatementDisposedIsRealized(t *testing.T) {
	D := func(n domain.Number) domain.Decimal { return domain.Decimal(n) }
	methods := []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO}
	unknownSplits := 0
	for seed := uint64(0); seed < 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 37))
		src := randomLog(r, 50+r.IntN(300))
		if seed%2 == 1 {
			src = randomAccountLog(r, 50+r.IntN(300))
		}
		from := day(2024, 1, 1, 0) + r.Int64N(400)*3600_000
		q := Query{From: from, To: from + r.Int64N(200)*3600_000 + 1}
		for _, m := range methods {
			q.Method, q.Scope = m, domain.CostBasisScope(r.IntN(2))
			where := fmt.Sprintf("seed %d %s %s", seed, m, q.Scope)
			s, err := StatementReport(src, q)
			if err != nil {
				t.Fatal(err)
			}
			rz, err := RealizedReport(src, q, 0, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			var st, rt [11]domain.Decimal
			for _, l := range s.Lines {
				x := &l.Disposed
				for i, v := range []domain.Number{x.Quantity, x.Proceeds, x.Fees, x.CostBasis, x.Gain, x.UnknownCostQuantity,
					x.UnknownCostProceeds, x.Unpriced.Quantity, x.Unpriced.CostBasis, l.Unmatched.Quantity, l.Unmatched.Proceeds} {
					st[i] = st[i].Add(D(v))
				}
			}
			for _, x := range rz.Totals {
				for i, v := range []domain.Number{x.Quantity, x.Proceeds, x.Fees, x.CostBasis, x.Gain, x.UnknownCost.Quantity,
					x.UnknownCost.Proceeds, x.Unpriced.Quantity, x.Unpriced.CostBasis, x.Unmatched.Quantity, x.Unmatched.Proceeds} {
					rt[i] = rt[i].Add(D(v))
				}
			}
			if st != rt {
				t.Fatalf("%s: statement's disposed %v, realized report's %v", where, st, rt)
			}
			for _, d := range rz.Rows {
				for i, u := range d.Lots {
					if i == len(d.Lots)-1 {
						break
					}
					if f := domain.MulDiv(D(d.MatchedFee), D(u.Quantity), D(d.Matched)); D(u.Fee) != f {
						t.Fatalf("%s: disposal at %d: lot %d's fee %s, want %s of %s", where, d.DisposedAt, i, D(u.Fee), f, D(d.MatchedFee))
					}
				}
				c := &d.UnknownCost
				var sumP, sumF domain.Decimal
				for _, u := range d.UnknownLots {
					sumP, sumF = sumP.Add(D(u.Proceeds)), sumF.Add(D(u.Fee))
				}
				if len(d.UnknownLots) > 0 && (sumP != D(c.Proceeds) || sumF != D(c.Fees)) {
					t.Fatalf("%s: disposal at %d: coins of unknown cost add up to proceeds %s, fee %s, want %s, %s", where, d.DisposedAt,
						sumP, sumF, D(c.Proceeds), D(c.Fees))
				}
				for i, u := range d.UnknownLots {
					if i == len(d.UnknownLots)-1 {
						break
					}
					p, f := domain.MulDiv(D(c.Proceeds), D(u.Quantity), D(c.Quantity)), domain.MulDiv(D(c.Fees), D(u.Quantity), D(c.Quantity))
					if D(u.Proceeds) != p || D(u.Fee) != f {
						t.Fatalf("%s: disposal at %d: coins %d of unknown cost: proceeds %s, fee %s, want %s, %s", where, d.DisposedAt, i,
							D(u.Proceeds), D(u.Fee), p, f)
					}
					if !f.IsZero() {
						unknownSplits++
					}
				}
			}
		}
	}
	if unknownSplits == 0 {
		t.Fatal("no disposal split a fee over coins of unknown cost: the logs test nothing of it")
	}
}
