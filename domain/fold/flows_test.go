package fold

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// owner is a reader of several pairs as the Ledger and the sink are: each
// pair's fills in a List, folded at once in trade order and again when
// dirty (settle), the accounts' flows in Pairs.
type owner struct {
	ps     Pairs
	pairs  []*Pair
	js     []*List
	keys   map[string]int
	method domain.PnlMethod
}

func newOwner() *owner { return &owner{keys: map[string]int{}, method: domain.FIFO} }

// pair returns the index of exchange's pair, registering it.
func (o *owner) pair(exchange, pair string) int {
	k := exchange + "/" + pair
	if i, ok := o.keys[k]; ok {
		return i
	}
	q, b, _ := domain.SplitPair(pair)
	p := NewPair(q, b, o.method)
	i := o.ps.AddOn(p, exchange)
	o.pairs, o.js, o.keys[k] = append(o.pairs, p), append(o.js, &List{}), i
	return i
}

func (o *owner) fill(i int, f Fill) {
	p, j := o.pairs[i], o.js[i]
	o.ps.Rates.ObserveFill(p.Quote, p.Base, f.Time, f.Pos, f.Price)
	if !p.InOrder(f.Key) {
		j.Insert(f, PendingOut(&f))
		o.ps.Late(i, f.Key)
		return
	}
	var r Result
	p.Next(&f, &Order{}, &o.ps.Rates, &r)
	j.Insert(f, r.Out())
}

func (o *owner) settle() {
	for o.ps.Unsettled() {
		for _, i := range o.ps.TakeDirty() {
			j := o.js[i]
			o.pairs[i].Refold(j, &o.ps.Rates, func(k int, f *Fill, r *Result) {
				if k >= 0 {
					j.Set(k, r.Out())
				}
			})
		}
	}
}

// state is what the owner's pairs hold, by key, for comparing.
func (o *owner) state() map[string]string {
	out := map[string]string{}
	for k, i := range o.keys {
		p := o.pairs[i]
		out[k] = fmt.Sprintf("lots %s for %s, unknown %s, position %s, moves %d", p.Lots().Qty(), p.Lots().Cost(), p.Unknown(),
			p.Position(), len(p.Moves()))
	}
	return out
}

func dq(s string) decimal.Decimal { return decimal.MustDecimal(s) }

// A flow goes to its asset's home pair on its account: none before the
// account has a pair of it, the first one known after, and the pair with
// the alphabetically first quote once it is known (the other pair folds
// again without it).
func TestFlowsGoToTheHomePair(t *testing.T) {
	o := newOwner()
	o.ps.Transfer(true, &domain.Transfer{Exchange: "x", ID: "d1", Asset: "BTC", Amount: dq("2"), Status: domain.TransferCompleted, Time: 1000}, 1)
	o.settle()
	if f, _ := o.ps.Flow(FlowID(FlowDeposit, "x", "d1")); f.Pairs[0] != -1 {
		t.Fatalf("routed to %d before the account had a pair of BTC", f.Pairs[0])
	}
	usdt := o.pair("x", "USDT-BTC")
	o.settle()
	if got := o.pairs[usdt].Unknown(); got != dq("2") {
		t.Fatalf("USDT-BTC holds %s of unknown cost, want the deposit's 2", got)
	}
	o.pair("y", "EUR-BTC") // another account: not a home of x's flows
	eur := o.pair("x", "EUR-BTC")
	o.settle()
	if o.pairs[usdt].Unknown() != decimal.Zero || o.pairs[usdt].Position() != decimal.Zero || o.pairs[eur].Unknown() != dq("2") {
		t.Fatalf("after EUR-BTC: %v", o.state())
	}
	// A later status with another time moves the deposit there (once).
	o.ps.Transfer(true, &domain.Transfer{Exchange: "x", ID: "d3", Asset: "BTC", Amount: dq("1"), Status: domain.TransferCredited, Time: 1200}, 5)
	o.ps.Transfer(true, &domain.Transfer{Exchange: "x", ID: "d3", Asset: "BTC", Amount: dq("1"), Status: domain.TransferCompleted, Time: 1500}, 6)
	o.ps.Transfer(true, &domain.Transfer{Exchange: "x", ID: "d3", Asset: "BTC", Amount: dq("1"), Status: domain.TransferPending, Time: 1100}, 7)
	o.settle()
	if ms := o.pairs[eur].Moves(); len(ms) != 2 || ms[1].Time != 1500 || o.pairs[eur].Position() != dq("3") {
		t.Fatalf("moves %+v after a later status at another time", ms)
	}
	// A pending deposit moves nothing; once failed neither.
	o.ps.Transfer(true, &domain.Transfer{Exchange: "x", ID: "d2", Asset: "BTC", Amount: dq("5"), Status: domain.TransferPending, Time: 2000}, 9)
	o.settle()
	if o.pairs[eur].Position() != dq("3") {
		t.Fatalf("a pending deposit moved the position: %v", o.state())
	}
}

// A withdrawal takes its amount and network fee from the lots; the
// deposit it is matched to (txid, or amount and time) brings those lots,
// their cost whole, scaled to what arrived; a sale of them realizes
// against that cost. Folded in any order, the figures are the same.
func TestTransferCarriesLots(t *testing.T) {
	type ev struct {
		kind string
		f    func(o *owner, pos uint64)
	}
	evs := []ev{
		{"buy", func(o *owner, pos uint64) {
			o.fill(o.pair("x", "USDT-BTC"), Fill{Key: Key{Time: 1000, Pos: pos}, Order: 1, Side: domain.Buy, Price: dq("100"), Qty: dq("1")})
		}},
		{"withdraw", func(o *owner, pos uint64) {
			o.ps.Transfer(false, &domain.Transfer{Exchange: "x", ID: "w", Asset: "BTC", Amount: dq("0.5"), Fee: dq("0.001"),
				Status: domain.TransferCompleted, Time: 2000}, pos)
		}},
		{"deposit", func(o *owner, pos uint64) {
			o.ps.Transfer(true, &domain.Transfer{Exchange: "y", ID: "d", Asset: "BTC", Amount: dq("0.499"),
				Status: domain.TransferCredited, Time: 3000}, pos)
		}},
		{"pair y", func(o *owner, pos uint64) { o.pair("y", "USDT-BTC") }},
		{"sell", func(o *owner, pos uint64) {
			o.fill(o.pair("y", "USDT-BTC"), Fill{Key: Key{Time: 4000, Pos: pos}, Order: 2, Side: domain.Sell, Price: dq("150"), Qty: dq("0.499")})
		}},
	}
	var want map[string]string
	rng := rand.New(rand.NewPCG(3, 8))
	for round := 0; round < 30; round++ {
		order := rng.Perm(len(evs))
		if round == 0 {
			order = []int{0, 1, 2, 3, 4}
		}
		o := newOwner()
		for k, i := range order {
			evs[i].f(o, uint64(10+k))
			if rng.IntN(2) == 0 {
				o.settle()
			}
		}
		o.settle()
		got := o.state()
		if round == 0 {
			want = got
			// 0.501 of the lot {1, 100} went: cost 50.1; 0.499 arrived
			// with it: sold at 150, 74.85 − 50.1 = 24.75.
			y := o.pairs[o.keys["y/USDT-BTC"]]
			x := o.pairs[o.keys["x/USDT-BTC"]]
			if x.Lots().Cost() != dq("49.9") || y.Lots().Qty() != decimal.Zero || y.Unknown() != decimal.Zero {
				t.Fatalf("after the transfer and the sale: %v", got)
			}
			_, out := o.js[o.keys["y/USDT-BTC"]].At(0)
			if out.Pnl != dq("24.75") || out.Unmatched != decimal.Zero {
				t.Fatalf("the sale of the carried lot: %+v, want pnl 24.75", out)
			}
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if got[k] != want[k] {
				t.Fatalf("order %v: %s %s, in trade order %s", order, k, got[k], want[k])
			}
		}
	}
}

// A conversion's legs: a disposal at the counter's value in the quote
// (exact on a pair of both assets), an acquisition likewise; without a
// rate the acquisition holds coins of unknown cost and the disposal
// realizes nothing.
func TestConversionLegs(t *testing.T) {
	o := newOwner()
	eth := o.pair("x", "BTC-ETH")
	btc := o.pair("x", "USDT-BTC")
	o.fill(eth, Fill{Key: Key{Time: 1000, Pos: 1}, Order: 1, Side: domain.Buy, Price: dq("0.05"), Qty: dq("2")})
	o.ps.Convert(&domain.Conversion{Exchange: "x", ID: "c", FromAsset: "ETH", FromAmount: dq("1"), ToAsset: "BTC", ToAmount: dq("0.06"), Time: 2000}, 2)
	o.settle()
	var out Movement
	for _, m := range o.pairs[eth].Moves() {
		out = m
	}
	if out.Kind != ConvertOut || !out.Priced || out.Value != dq("0.06") {
		t.Fatalf("ETH's leg %+v: a sale for 0.06 BTC", out)
	}
	if o.pairs[eth].Lots().Qty() != dq("1") || o.pairs[eth].Lots().Cost() != dq("0.05") {
		t.Fatalf("ETH lots %s for %s", o.pairs[eth].Lots().Qty(), o.pairs[eth].Lots().Cost())
	}
	// No rate BTC→USDT before 2000 (no USDT-BTC fill, no rate): BTC of
	// unknown cost.
	if o.pairs[btc].Unknown() != dq("0.06") || o.pairs[btc].Lots().Qty() != decimal.Zero {
		t.Fatalf("BTC: %v", o.state())
	}
	// A rate of ETH in USDT at its time values it (the pair folds again).
	o.ps.Rates.Observe("USDT", "ETH", 1500, 3, dq("3000"))
	o.ps.RatePoint(Key{Time: 1500, Pos: 3}, -1)
	o.settle()
	if o.pairs[btc].Lots().Qty() != dq("0.06") || o.pairs[btc].Lots().Cost() != dq("3000") || o.pairs[btc].Unknown() != decimal.Zero {
		t.Fatalf("BTC after a rate of ETH: %v", o.state())
	}
}

// A deposit from the outside is a lot at the log's price of its time (no
// older than the fee rates' bound), else coins of unknown cost; one of a
// transfer is never valued at market, even when its withdrawal moved no
// pair's lots.
func TestDepositAtTheLogsPrice(t *testing.T) {
	o := newOwner()
	btc := o.pair("x", "USDT-BTC")
	o.fill(btc, Fill{Key: Key{Time: 1000, Pos: 1}, Order: 1, Side: domain.Buy, Price: dq("100"), Qty: dq("1")})
	dep := func(id string, at int64, pos uint64, amount string) {
		o.ps.Transfer(true, &domain.Transfer{Exchange: "x", ID: id, Asset: "BTC", Amount: dq(amount), Status: domain.TransferCredited, Time: at}, pos)
	}
	dep("d1", 1500, 2, "2")              // the fill's price, half a second old
	dep("d2", 1000+2*3600_000, 3, "0.5") // two hours later: no price within the hour
	o.ps.Transfer(false, &domain.Transfer{Exchange: "y", ID: "w", Asset: "BTC", Amount: dq("0.25"), Status: domain.TransferCompleted, Time: 2000, TxID: "T"}, 4)
	dep("d3", 3000, 5, "0.25")
	o.ps.Transfer(true, &domain.Transfer{Exchange: "x", ID: "d3", Asset: "BTC", Amount: dq("0.25"), Status: domain.TransferCompleted, Time: 3000, TxID: "T"}, 6)
	o.settle()
	p := o.pairs[btc]
	if p.Lots().Qty() != dq("3") || p.Lots().Cost() != dq("300") || p.Unknown() != dq("0.75") {
		t.Fatalf("lots %s for %s, unknown %s: want the bought 1 and d1's 2 at 100, d2 and d3 of unknown cost", p.Lots().Qty(), p.Lots().Cost(), p.Unknown())
	}
	if f, _ := o.ps.Flow(FlowID(FlowDeposit, "x", "d3")); f.Peer == "" {
		t.Fatalf("d3 is w's other side (txid T): %+v", f)
	}
}
