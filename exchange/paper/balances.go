package paper

import (
	"context"
	"fmt"
	"sort"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

type balance struct{ available, onOrder decimal.Decimal }

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
func (a *Account) reservation(m *market, req domain.PlaceOrderRequest) (asset string, need, depth decimal.Decimal) {
	if req.Side != domain.Buy {
		return m.base, req.Amount, req.Amount
	}
	if req.Kind == domain.KindLimit {
		return m.quote, a.withFee(req.Amount.Mul(req.Price)), req.Amount
	}
	levels, cost := a.walk(m, domain.Buy, req.Amount, decimal.Zero, false)
	for _, l := range levels {
		depth = depth.Add(l.Quantity)
	}
	return m.quote, a.withFee(cost), depth
}

// reserve moves need of asset from available to on order, or refuses with
// EINVALID "insufficient funds: …" saying, in the terms of req, what is
// missing (see refusal) when less is available.
func (a *Account) reserve(m *market, req domain.PlaceOrderRequest, asset string, need, depth decimal.Decimal) error {
	b := a.bal(asset)
	if b.available.Cmp(need) < 0 {
		return domain.Errorf(domain.EINVALID, "insufficient funds: %s", refusal(m, req, asset, need, depth, b.available))
	}
	b.available, b.onOrder = b.available.Sub(need), b.onOrder.Add(need)
	return nil
}

// refusal says why req cannot be paid for, in the order's own terms and
// the market's precision (domain.PrecisionOf at the market's price; quote
// amounts in the quote's, what is needed rounded up and what is available
// rounded down, so that the two never look equal when they are not): what
// the whole order needs and what is available. A market buy larger than
// the book has two causes, each said apart: what the part the book holds
// would cost against the funds, then that the book cannot fill the rest
// (never that part's cost as if it were the order's).
func refusal(m *market, req domain.PlaceOrderRequest, asset string, need, depth, available decimal.Decimal) string {
	ref, _ := decimal.DecimalFromFloat(m.pf)
	p := domain.PrecisionOf(m.quote, domain.MarketFilters{}, ref)
	base := func(d decimal.Decimal) string { return decimal.AmountText(d, p.Amount, decimal.TextExact, m.base) }
	needs, have := decimal.AmountText(need, p.Amount, decimal.TextUp, asset), decimal.AmountText(available, p.Amount, decimal.TextDown, asset)
	if asset == m.quote {
		places := decimal.CurrencyDecimals(m.quote)
		needs, have = decimal.AmountText(need, places, decimal.TextUp, asset), decimal.AmountText(available, places, decimal.TextDown, asset)
	}
	switch {
	case req.Side != domain.Buy:
		return fmt.Sprintf("selling %s needs %s; %s available", base(req.Amount), needs, have)
	case req.Kind == domain.KindLimit:
		return fmt.Sprintf("buying %s at %s needs %s with the fee; %s available",
			base(req.Amount), decimal.AmountText(req.Price, p.Price, decimal.TextExact, m.quote), needs, have)
	case depth.Cmp(req.Amount) < 0:
		return fmt.Sprintf("the %s the book holds would cost %s with the fee; %s available. "+
			"Besides, the book cannot fill a market buy of %s: it holds %s",
			base(depth), needs, have, base(req.Amount), base(depth))
	}
	return fmt.Sprintf("buying %s at market needs %s with the fee at the book's prices; %s available", base(req.Amount), needs, have)
}

func (a *Account) withFee(notional decimal.Decimal) decimal.Decimal {
	return notional.Add(notional.Mul(a.fee))
}

// consume spends v of o's reservation (and, for rounding dust beyond it,
// of the available balance).
func (a *Account) consume(o *order, b *balance, v decimal.Decimal) {
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
	o.reserved = decimal.Zero
	if rs := a.resting[o.Pair]; len(rs) > 0 {
		for i, r := range rs {
			if r == o {
				a.resting[o.Pair] = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
	}
}
