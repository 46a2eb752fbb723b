package paper

import (
	"context"
	"sort"

	"github.com/tradeledger/tradeledger/domain"
)

type balance struct{ available, onOrder domain.Decimal }

// Balances returns every asset's balance, sorted by asset.
func (a *Account) Balances(ctx context.Context) ([]domain.AssetBalance, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	out := make([]domain.AssetBalance, 0, len(a.balances))
	for asset, b := range a.balances {
		out = append(out, domain.AssetBalance{Asset: asset, Available: b.available, OnOrder: b.onOrder})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asset < out[j].Asset })
	return out, nil
}

func (a *Account) bal(asset string) *balance {
	b, ok := a.balances[asset]
	if !ok {
		b = &balance{}
		a.balances[asset] = b
	}
	return b
}

// reservation is what req holds on order while it is open: a buy the
// quote it can spend (limit: amount×price; market: the cost of walking
// the book) plus the fee, a sell its base.
func (a *Account) reservation(m *market, req domain.PlaceOrderRequest) (asset string, need domain.Decimal) {
	if req.Side != domain.Buy {
		return m.base, req.Amount
	}
	if req.Kind == domain.KindLimit {
		return m.quote, a.withFee(req.Amount.Mul(req.Price))
	}
	_, cost := a.walk(m, domain.Buy, req.Amount, domain.Zero, false)
	return m.quote, a.withFee(cost)
}

// reserve moves need of asset from available to on order, or refuses
// (EINVALID, "insufficient funds …") when less is available.
func (a *Account) reserve(asset string, need domain.Decimal) error {
	b := a.bal(asset)
	if b.available.Cmp(need) < 0 {
		return domain.Errorf(domain.EINVALID, "insufficient funds: need %s %s, available %s", need, asset, b.available)
	}
	b.available, b.onOrder = b.available.Sub(need), b.onOrder.Add(need)
	return nil
}

func (a *Account) withFee(notional domain.Decimal) domain.Decimal {
	return notional.Add(notional.Mul(a.fee))
}

// consume spends v of o's reservation (and, for rounding dust beyond it,
// of the available balance).
func (a *Account) consume(o *order, b *balance, v domain.Decimal) {
	r := v.Min(o.reserved)
	o.reserved = o.reserved.Sub(r)
	b.onOrder = b.onOrder.Sub(r)
	b.available = b.available.Sub(v.Sub(r))
}

// release returns what is left of o's reservation to the available balance.
func (a *Account) release(o *order) {
	asset := o.base
	if o.Side == domain.Buy {
		asset = o.quote
	}
	b := a.bal(asset)
	b.onOrder = b.onOrder.Sub(o.reserved)
	b.available = b.available.Add(o.reserved)
	o.reserved = domain.Zero
	if rs := a.resting[o.Pair]; len(rs) > 0 {
		for i, r := range rs {
			if r == o {
				a.resting[o.Pair] = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
	}
}
