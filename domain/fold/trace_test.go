package fold

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// The traced fold is the fold: a pair's fills and moves, as the Ledger's
// fold holds them after random trades, transfers between two accounts,
// deposits from the outside and conversions recorded in any order, fed to
// a Traced of the same method in trade-time order (fees valued and moves
// valued and carried as that fold found them) give every fill's pnl and
// unmatched quantity, and the lots, coins of unknown cost and position
// the pair ends with, under every method.
func TestTracedIsTheFold(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO} {
			rng := rand.New(rand.NewPCG(seed, 40))
			o := newOwner()
			o.method = m
			keys := []string{"x/USDT-BTC", "y/USDT-BTC", "x/USDT-ETH"}
			for _, k := range keys {
				o.pair(k[:1], k[2:])
			}
			pos := uint64(0)
			var acts []func()
			for i := 0; i < 120; i++ {
				k := keys[rng.IntN(len(keys))]
				ex, pair := k[:1], k[2:]
				at := int64(1000 + rng.IntN(200)*60_000)
				qty := domain.MustDecimal(fmt.Sprintf("0.%02d", 1+rng.IntN(99)))
				switch rng.IntN(8) {
				case 0, 1: // a withdrawal, half of them to the other account's deposit
					w := domain.Transfer{Exchange: ex, ID: fmt.Sprint("w", i), Asset: pair[5:], Amount: qty, Fee: dq("0.001"),
						Status: domain.TransferCompleted, Time: at, TxID: fmt.Sprint("t", i)}
					acts = append(acts, func() { pos++; o.ps.Transfer(false, &w, pos) })
					if rng.IntN(2) == 0 && pair == "USDT-BTC" {
						d := w
						d.Exchange, d.ID, d.Time, d.Status = map[string]string{"x": "y", "y": "x"}[ex], fmt.Sprint("d", i), at+60_000, domain.TransferCredited
						d.Fee = domain.Zero
						acts = append(acts, func() { pos++; o.ps.Transfer(true, &d, pos) })
					}
				case 2: // a deposit from the outside
					d := domain.Transfer{Exchange: ex, ID: fmt.Sprint("o", i), Asset: pair[5:], Amount: qty, Status: domain.TransferCredited, Time: at}
					acts = append(acts, func() { pos++; o.ps.Transfer(true, &d, pos) })
				case 3: // a conversion between the account's bases
					c := domain.Conversion{Exchange: "x", ID: fmt.Sprint("c", i), FromAsset: "BTC", FromAmount: qty, ToAsset: "ETH",
						ToAmount: qty.MulInt(20), Time: at}
					if rng.IntN(2) == 0 {
						c.FromAsset, c.ToAsset = "ETH", "BTC"
					}
					acts = append(acts, func() { pos++; o.ps.Convert(&c, pos) })
				default:
					side := domain.Buy
					if rng.IntN(5) < 2 {
						side = domain.Sell
					}
					f := Fill{Key: Key{Time: at}, Order: int64(i % 7), Side: side, Price: domain.MustDecimal(fmt.Sprint(100 + rng.IntN(50))), Qty: qty}
					if rng.IntN(2) == 0 {
						f.Fee, f.FeeAsset = qty.Mul(dq("0.001")), pair[5:]
					}
					idx := o.keys[k]
					acts = append(acts, func() { pos++; f.Pos = pos; o.fill(idx, f) })
				}
			}
			for _, i := range rng.Perm(len(acts)) {
				acts[i]()
				if rng.IntN(4) == 0 {
					o.settle()
				}
			}
			o.settle()
			for _, k := range keys {
				p, j := o.pairs[o.keys[k]], o.js[o.keys[k]]
				tr := NewTraced(p.Quote, p.Base, m)
				moves := p.Moves()
				mi := 0
				where := fmt.Sprintf("seed %d %s %s", seed, m, k)
				for i := 0; i <= j.Len(); i++ {
					var f Fill
					var out Out
					if i < j.Len() {
						f, out = j.At(i)
					}
					for ; mi < len(moves) && (i == j.Len() || moves[mi].Key.Less(f.Key)); mi++ {
						mv := moves[mi].clone()
						tr.Move(&mv)
					}
					if i == j.Len() {
						break
					}
					fee := ValueFee(&o.ps.Rates, f.Fee, f.FeeAsset, p.Quote, p.Base, f.Price, f.Key)
					r, _ := tr.Fill(&f, &fee)
					if r.Out() != out {
						t.Fatalf("%s: fill %d %+v: traced %+v, the fold's %+v", where, i, f, r.Out(), out)
					}
				}
				if tr.Lots().Qty() != p.Lots().Qty() || tr.Lots().Cost() != p.Lots().Cost() || tr.Unknown() != p.Unknown() || tr.Position() != p.Position() {
					t.Fatalf("%s: traced lots %s for %s, unknown %s, position %s; the fold's %v", where, tr.Lots().Qty(), tr.Lots().Cost(),
						tr.Unknown(), tr.Position(), o.state()[k])
				}
			}
		}
	}
}

// A traced fold dates and references every lot and every coin of unknown
// cost, and says per step what it added and took: a sale lists the lots
// it consumed (an order's, one bought by hand, a conversion's), then the
// coins of unknown cost (when they arrived), then what no coin held; a
// withdrawal's Taken dates what it took beyond every coin by itself; a
// carry into a pair of another quote brings the coins' dates, pro rata,
// not their cost.
func TestTraceDatesLots(t *testing.T) {
	tr := NewTraced("USDT", "BTC", domain.FIFO)
	none := domain.FeeValue{Valued: true}
	buy := func(at, order int64, price, qty string) *Trace {
		_, x := tr.Fill(&Fill{Key: Key{Time: at, Pos: uint64(at)}, Order: order, Side: domain.Buy, Price: dq(price), Qty: dq(qty)}, &none)
		return x
	}
	if x := buy(1000, 7, "100", "1"); x.In != dq("1") || x.InCost != dq("100") || len(x.Used) != 0 {
		t.Fatalf("a buy: %+v", x)
	}
	buy(2000, 0, "110", "1")
	if _, x := tr.Move(&Movement{Key: Key{Time: 3000, Pos: 3000}, Kind: Deposit, Qty: dq("0.5")}); x.InUnknown != dq("0.5") || x.In != domain.Zero {
		t.Fatalf("a deposit of unknown cost: %+v", x)
	}
	tr.Move(&Movement{Key: Key{Time: 3500, Pos: 3500}, Kind: ConvertIn, Qty: dq("0.2"), Counter: "USDT", CounterQty: dq("30"), Value: dq("30"), Priced: true})
	r, x := tr.Fill(&Fill{Key: Key{Time: 4000, Pos: 4000}, Order: 9, Side: domain.Sell, Price: dq("120"), Qty: dq("2.8")}, &none)
	wantUsed := []domain.Lot{{Qty: dq("1"), Cost: dq("100"), Time: 1000, Ref: 7}, {Qty: dq("1"), Cost: dq("110"), Time: 2000, Ref: RefExternal},
		{Qty: dq("0.2"), Cost: dq("30"), Time: 3500, Ref: RefConversion}}
	if !reflect.DeepEqual(x.Used, wantUsed) || x.Out != dq("2.2") || x.OutCost != dq("240") {
		t.Fatalf("the sale took %+v (%s for %s), want %+v", x.Used, x.Out, x.OutCost, wantUsed)
	}
	if !reflect.DeepEqual(x.Unknown, []Coins{{dq("0.5"), 3000}}) || x.UnknownQty != dq("0.5") || x.Unheld != dq("0.1") {
		t.Fatalf("the sale's coins of unknown cost %+v (%s), unheld %s", x.Unknown, x.UnknownQty, x.Unheld)
	}
	if r.Pnl != dq("24") || r.Unmatched != dq("0.6") || r.Unknown != dq("0.5") {
		t.Fatalf("the sale's figures %+v", r)
	}
	w := Movement{Key: Key{Time: 5000, Pos: 5000}, Kind: Withdrawal, Qty: dq("0.1"), Flow: "w"}
	if _, x := tr.Move(&w); x.Unheld != dq("0.1") || !reflect.DeepEqual(w.Taken.Dated, []Coins{{dq("0.1"), 5000}}) || w.Taken.Unknown != dq("0.1") {
		t.Fatalf("a withdrawal of nothing held: %+v, took %+v", x, w.Taken)
	}
	if tr.Position() != dq("-0.2") || tr.Unknown() != domain.Zero || tr.Lots().Qty() != domain.Zero {
		t.Fatalf("after: position %s, unknown %s, lots %s", tr.Position(), tr.Unknown(), tr.Lots().Qty())
	}

	eur := NewTraced("EUR", "BTC", domain.FIFO)
	c := &Carry{Quote: "USDT", Lots: []domain.Lot{{Qty: dq("0.5"), Cost: dq("50"), Time: 1000, Ref: 7}}, Unknown: dq("0.5"),
		Dated: []Coins{{dq("0.5"), 900}}, Total: dq("1")}
	if _, x := eur.Move(&Movement{Key: Key{Time: 6000}, Kind: Deposit, Qty: dq("0.5"), Peer: "w", Carry: c}); x.InUnknown != dq("0.5") || x.In != domain.Zero {
		t.Fatalf("a carry into another quote: %+v", x)
	}
	if _, x := eur.Fill(&Fill{Key: Key{Time: 7000}, Order: 3, Side: domain.Sell, Price: dq("90"), Qty: dq("0.5")}, &none); !reflect.DeepEqual(x.Unknown,
		[]Coins{{dq("0.25"), 1000}, {dq("0.25"), 900}}) {
		t.Fatalf("the carried coins sold: %+v, want their dates pro rata", x.Unknown)
	}
}
