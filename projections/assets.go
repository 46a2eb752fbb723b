package projections

import (
	"sort"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Asset value history. BalancesObserved events give an exchange's holdings
// (available + on order per asset) at the event's time; fills give prices.
// A point values one snapshot in the requested currency:
//
//	amount = Σ qty(asset) × price(asset in base) at the snapshot's time
//
// price(base) is 1; otherwise the last fill price of the pair base-asset
// (quote base) on that exchange, or 1 ÷ the last price of asset-base; an
// asset with neither pair, or no fill of it yet, is left out of the sum
// and named in the point's unpriced list.
// Prices come only from fills in the log, so a replay gives the same points.
//
// Prices are kept as the last fill price in each 15-minute UTC slot (a
// snapshot is valued with its slot's price). The history returns a point
// per snapshot: balances are observed when they change, so a point per
// change (ten fills in a minute are ten points, not one per slot). Point
// ids are the snapshot's sequence number on its exchange (from 1), so an
// id always names the same snapshot.

type pricePoint struct {
	slot  int64
	price decimal.Decimal
}

// addPrice records the price of a fill at t (ms), just recorded among
// the pair's records, as its slot's price when it is the slot's last fill
// in trade-time order (a late fill before it in the slot changes nothing;
// last says the fill is the pair's last record, the common case).
func (b *pairBook) addPrice(t int64, price decimal.Decimal, last bool) {
	slot := pnlread.FloorDiv(t, BucketSeconds*1000)
	if !last {
		end := (slot + 1) * BucketSeconds * 1000
		if j := b.recs.search(func(r *orderRecord) bool { return r.time >= end }); j > 0 {
			price = b.recs.get(b.recs.at(j - 1).rate) // the slot's last fill
		}
	}
	n := len(b.prices)
	switch {
	case n > 0 && b.prices[n-1].slot == slot:
		b.prices[n-1].price = price
	case n == 0 || b.prices[n-1].slot < slot:
		b.prices = append(b.prices, pricePoint{slot, price})
	default:
		i := sort.Search(n, func(i int) bool { return b.prices[i].slot >= slot })
		if b.prices[i].slot == slot {
			b.prices[i].price = price
			return
		}
		b.prices = append(b.prices, pricePoint{})
		copy(b.prices[i+1:], b.prices[i:])
		b.prices[i] = pricePoint{slot, price}
	}
}

// priceAt returns the pair's price in t's slot or the last slot before.
func (b *pairBook) priceAt(t int64) (decimal.Decimal, bool) {
	slot := pnlread.FloorDiv(t, BucketSeconds*1000)
	i := sort.Search(len(b.prices), func(i int) bool { return b.prices[i].slot > slot })
	if i == 0 {
		return decimal.Zero, false
	}
	return b.prices[i-1].price, true
}

type assetQty struct {
	asset string
	qty   decimal.Decimal
}

type assetSnap struct {
	time int64
	hold []assetQty
}

type exchangeAssets struct {
	snaps []assetSnap
	pairs map[[2]string]uint32 // {quote, base} → pair index
}

type assetBook struct {
	exchanges map[string]*exchangeAssets
}

func newAssetBook() assetBook { return assetBook{exchanges: map[string]*exchangeAssets{}} }

func (a *assetBook) exchange(name string) *exchangeAssets {
	x := a.exchanges[name]
	if x == nil {
		x = &exchangeAssets{pairs: map[[2]string]uint32{}}
		a.exchanges[name] = x
	}
	return x
}

func (a *assetBook) addPair(exchange, quote, base string, i uint32) {
	a.exchange(exchange).pairs[[2]string{quote, base}] = i
}

func (a *assetBook) observe(t int64, b *domain.BalancesObserved) {
	x := a.exchange(b.Exchange)
	s := assetSnap{time: t}
	for _, ab := range b.Balances {
		if q := ab.Available.Add(ab.OnOrder); !q.IsZero() {
			s.hold = append(s.hold, assetQty{ab.Asset, q})
		}
	}
	x.snaps = append(x.snaps, s)
}

// AssetHistory returns the value in base of exchange's holdings at each
// snapshot with start ≤ time ≤ end (ms), oldest first (see the file
// comment). An exchange without snapshots gives none.
func (l *Ledger) AssetHistory(exchange, base string, start, end int64) []AssetPoint {
	l.rlock()
	defer l.mu.RUnlock()
	out := []AssetPoint{}
	x := l.assets.exchanges[exchange]
	if x == nil {
		return out
	}
	i := sort.Search(len(x.snaps), func(i int) bool { return x.snaps[i].time >= start })
	for ; i < len(x.snaps) && x.snaps[i].time <= end; i++ {
		s := &x.snaps[i]
		var v decimal.Decimal
		var unpriced []string
		for _, h := range s.hold {
			if p, ok := l.priceIn(x, h.asset, base, s.time); ok {
				v = v.Add(h.qty.Mul(p))
			} else {
				unpriced = append(unpriced, h.asset)
			}
		}
		sort.Strings(unpriced)
		out = append(out, AssetPoint{ID: int64(i + 1), BaseKey: exchange + "/" + base, Amount: decimal.Number(v), Timestamp: s.time, Unpriced: unpriced})
	}
	return out
}

func (l *Ledger) priceIn(x *exchangeAssets, asset, base string, t int64) (decimal.Decimal, bool) {
	if asset == base {
		return decimal.DecimalFromInt(1), true
	}
	if i, ok := x.pairs[[2]string{base, asset}]; ok {
		if p, ok := l.pairs[i].priceAt(t); ok {
			return p, true
		}
	}
	if i, ok := x.pairs[[2]string{asset, base}]; ok {
		if p, ok := l.pairs[i].priceAt(t); ok && p.IsPos() {
			return decimal.DecimalFromInt(1).Div(p), true
		}
	}
	return decimal.Zero, false
}
