package fold

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// foldRun is a pair folded by the rules an owner follows: a fill in trade
// order folded at once (Next, its order's figures kept), a late one put in
// its place and the pair folded again before the next look (Refold), its
// slots rebuilt.
type foldRun struct {
	p      *Pair
	j      List
	rates  RateBook
	own    Series[int64]
	orders map[int64]*Order
	res    map[Key]Result
}

func newFoldRun(m domain.PnlMethod) *foldRun {
	return &foldRun{p: NewPair("USDT", "BTC", m), orders: map[int64]*Order{}, res: map[Key]Result{}}
}

func (r *foldRun) add(f Fill) {
	if !r.p.InOrder(f.Key) {
		r.j.Insert(f, PendingOut(&f))
		r.p.Late(f.Key)
		return
	}
	o := r.orders[f.Order]
	if o == nil || f.Order == 0 {
		o = &Order{}
		r.orders[f.Order] = o
	}
	var res Result
	r.p.Next(&f, o, &r.rates, &res)
	r.j.Insert(f, res.Out())
	a := res.Agg(&f)
	r.own.Add(&a)
	r.own.Move(res.Unique)
	r.res[f.Key] = res
}

func (r *foldRun) settle() {
	if _, dirty := r.p.Dirty(); !dirty {
		return
	}
	rb, _ := Refold[int64](r.p, &r.j, &r.rates, &r.own, nil, nil, func(i int, f *Fill, res *Result) {
		r.j.Set(i, res.Out())
		r.res[f.Key] = *res
	})
	for id, o := range rb.Orders {
		c := *o
		r.orders[id] = &c
	}
}

// randomFills returns fills of a pair: orders of one to three fills, some
// of no order (0), buys and sells, fees in quote and base, at distinct
// times over a few days.
func randomFills(rng *rand.Rand) []Fill {
	var out []Fill
	used := map[int64]bool{}
	pos := uint64(0)
	for id := int64(1); id <= 60; id++ {
		order := id
		if rng.IntN(8) == 0 {
			order = 0
		}
		side := domain.Buy
		if rng.IntN(5) < 2 {
			side = domain.Sell
		}
		t := rng.Int64N(4 * 24 * 3600_000)
		for k := 0; k < 1+rng.IntN(3); k++ {
			t += 1 + rng.Int64N(3600_000)
			for used[t] {
				t++
			}
			used[t] = true
			pos++
			f := Fill{Key: Key{Time: t, Pos: pos}, Order: order, Side: side,
				Price: decimal.MustDecimal(fmt.Sprintf("%d.%d", 900+rng.IntN(200), rng.IntN(10))),
				Qty:   decimal.MustDecimal(fmt.Sprintf("0.%02d", 1+rng.IntN(99)))}
			switch rng.IntN(3) {
			case 0:
				f.Fee, f.FeeAsset = decimal.MustDecimal("0.1"), "USDT"
			case 1:
				f.Fee, f.FeeAsset = f.Qty.Mul(decimal.MustDecimal("0.001")), "BTC"
			}
			out = append(out, f)
		}
	}
	return out
}

// TestRefoldEqualsTradeOrder: a pair's fills arriving in any order, folded
// again whenever one came late (at once, or after several), give the
// results, slots and order figures of the same fills folded in trade
// order, under every method, restart points taken every few fills or as
// rarely as a pair of this size gets none.
func TestRefoldEqualsTradeOrder(t *testing.T) {
	defer func(m int) { markEvery = m }(markEvery)
	marks := 0
	for seed := uint64(1); seed <= 20; seed++ {
		markEvery = []int{MarkEvery, 2, 5}[seed%3]
		rng := rand.New(rand.NewPCG(seed, 5))
		fills := randomFills(rng)
		for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average, domain.LIFO, domain.HIFO} {
			sorted := append([]Fill(nil), fills...)
			sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key.Less(sorted[j].Key) })
			want := newFoldRun(m)
			for _, f := range sorted {
				want.add(f)
			}
			shuffled := append([]Fill(nil), fills...)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			got := newFoldRun(m)
			for i, f := range shuffled {
				got.add(f)
				if rng.IntN(4) == 0 || i == len(shuffled)-1 {
					got.settle()
				}
			}
			name := fmt.Sprintf("seed %d %s", seed, m)
			if !reflect.DeepEqual(got.res, want.res) {
				for k, w := range want.res {
					if g := got.res[k]; !reflect.DeepEqual(g, w) {
						t.Fatalf("%s: the fill at %v: %+v, in trade order %+v", name, k, g, w)
					}
				}
			}
			if !reflect.DeepEqual(got.own.Slots, want.own.Slots) || !reflect.DeepEqual(got.own.Total, want.own.Total) {
				t.Fatalf("%s: slots differ:\n%+v\n%+v", name, got.own.Total, want.own.Total)
			}
			for id, o := range want.orders {
				if id != 0 && !reflect.DeepEqual(*got.orders[id], *o) {
					t.Fatalf("%s: order %d: %+v, in trade order %+v", name, id, *got.orders[id], *o)
				}
			}
			if gs, ws := got.p.State(), want.p.State(); !reflect.DeepEqual(gs, ws) {
				t.Fatalf("%s: the pairs' states differ:\n%+v\n%+v", name, gs, ws)
			}
			marks += len(want.p.Marks())
		}
	}
	if marks == 0 {
		t.Fatal("no restart point was taken")
	}
}
