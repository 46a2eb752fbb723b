package paper

import (
	"context"
	"fmt"
	"sort"
	"strings"

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
// the book) plus the fee, a sell its base. depth is how much of the
// amount the book holds for a market buy (the amount itself otherwise).
func (a *Account) reservation(m *market, req domain.PlaceOrderRequest) (asset string, need, depth domain.Decimal) {
	if req.Side != domain.Buy {
		return m.base, req.Amount, req.Amount
	}
	if req.Kind == domain.KindLimit {
		return m.quote, a.withFee(req.Amount.Mul(req.Price)), req.Amount
	}
	levels, cost := a.walk(m, domain.Buy, req.Amount, domain.Zero, false)
	for _, l := range levels {
		depth = depth.Add(l.Quantity)
	}
	return m.quote, a.withFee(cost), depth
}

// reserve moves need of asset from available to on order, or refuses with
// EINVALID "insufficient funds: …" saying, in the terms of req, what is
// missing (see refusal) when less is available.
func (a *Account) reserve(m *market, req domain.PlaceOrderRequest, asset string, need, depth domain.Decimal) error {
	b := a.bal(asset)
	if b.available.Cmp(need) < 0 {
		return domain.Errorf(domain.EINVALID, "insufficient funds: %s", refusal(m, req, asset, need, depth, b.available))
	}
	b.available, b.onOrder = b.available.Sub(need), b.onOrder.Add(need)
	return nil
}

// refusal says why req cannot be paid for: what the whole order needs and
// what is available, or, for a market buy larger than the book, how much
// the book holds and what that part alone would cost (so that the figure
// is never taken for the cost of the whole amount).
func refusal(m *market, req domain.PlaceOrderRequest, asset string, need, depth, available domain.Decimal) string {
	have := plain(available) + " " + asset + " available"
	switch {
	case req.Side != domain.Buy:
		return fmt.Sprintf("selling %s %s needs %s %s, %s", plain(req.Amount), m.base, plain(need), asset, have)
	case req.Kind == domain.KindLimit:
		return fmt.Sprintf("buying %s %s at %s %s needs %s %s with the fee, %s", plain(req.Amount), m.base, plain(req.Price), m.quote, plain(need), asset, have)
	case depth.Cmp(req.Amount) < 0:
		return fmt.Sprintf("a market buy of %s %s needs more than the book holds: it holds %s %s, which alone would cost %s %s with the fee; %s",
			plain(req.Amount), m.base, plain(depth), m.base, plain(need), asset, have)
	}
	return fmt.Sprintf("buying %s %s at market needs %s %s with the fee, %s", plain(req.Amount), m.base, plain(need), asset, have)
}

// plain formats d without trailing zeros ("24.3", "10000").
func plain(d domain.Decimal) string {
	s := d.String()
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
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
