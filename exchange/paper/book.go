package paper

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// level returns book level i of a side (ask when ask), before liquidity
// taken in this step.
func (a *Account) level(m *market, ask bool, i int) domain.BookLevel {
	off := a.sim.LevelStep * float64(i+1)
	price := m.pf * (1 - off)
	if ask {
		price = m.pf * (1 + off)
	}
	// A deterministic size per (step, level, side).
	z := m.bookSeed ^ uint64(m.idx)*0x9e3779b97f4a7c15 ^ uint64(i)*0xbf58476d1ce4e5b9
	if ask {
		z ^= 0x94d049bb133111eb
	}
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	frac := float64(z>>11) / float64(1<<53)
	qty := a.sim.LevelNotional / m.pf * (0.5 + frac) * (1 + 0.25*float64(i))
	return domain.BookLevel{Price: toDecimal(price), Quantity: toDecimal(qty)}
}

// available returns level i's quantity left in this step.
func (a *Account) available(m *market, ask bool, i int) domain.BookLevel {
	if m.takenIdx != m.idx {
		m.takenIdx, m.takenBid, m.takenAsk = m.idx, nil, nil
	}
	l := a.level(m, ask, i)
	taken := m.takenBid
	if ask {
		taken = m.takenAsk
	}
	if i < len(taken) {
		l.Quantity = l.Quantity.Sub(taken[i]).Max(decimal.Zero)
	}
	return l
}

func (a *Account) take(m *market, ask bool, i int, q decimal.Decimal) {
	taken := &m.takenBid
	if ask {
		taken = &m.takenAsk
	}
	for len(*taken) <= i {
		*taken = append(*taken, decimal.Zero)
	}
	(*taken)[i] = (*taken)[i].Add(q)
}

func (a *Account) depth() int {
	if a.sim.BookDepth > 0 {
		return a.sim.BookDepth
	}
	return DefaultBookDepth
}

// OrderBook returns up to depth levels a side (BookDepth at most), with
// the liquidity left in the current step.
func (a *Account) OrderBook(ctx context.Context, pair string, depth int) (domain.OrderBook, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	m, err := a.market(pair)
	if err != nil {
		return domain.OrderBook{}, err
	}
	if depth <= 0 || depth > a.depth() {
		depth = a.depth()
	}
	b := domain.OrderBook{Pair: pair, Time: a.sim.Clock.Now().UnixMilli()}
	for i := 0; i < depth; i++ {
		if l := a.available(m, false, i); l.Quantity.Sign() > 0 {
			b.Bids = append(b.Bids, l)
		}
		if l := a.available(m, true, i); l.Quantity.Sign() > 0 {
			b.Asks = append(b.Asks, l)
		}
	}
	return b, nil
}

// walk takes up to amount from the opposite side of the book, at prices no
// worse than limit (0: any), returning the fills and their cost. With take
// the liquidity is consumed.
func (a *Account) walk(m *market, side domain.Side, amount, limit decimal.Decimal, take bool) ([]domain.BookLevel, decimal.Decimal) {
	ask := side == domain.Buy
	var out []domain.BookLevel
	var cost decimal.Decimal
	left := amount
	for i := 0; i < a.depth() && left.Sign() > 0; i++ {
		l := a.available(m, ask, i)
		if limit.Sign() > 0 && ((ask && l.Price.Cmp(limit) > 0) || (!ask && l.Price.Cmp(limit) < 0)) {
			break
		}
		q := left.Min(l.Quantity)
		if q.Sign() <= 0 {
			continue
		}
		out = append(out, domain.BookLevel{Price: l.Price, Quantity: q})
		cost = cost.Add(q.Mul(l.Price))
		left = left.Sub(q)
		if take {
			a.take(m, ask, i, q)
		}
	}
	return out, cost
}
