package fold

import (
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// UnconvertedBook gathers what a mixed-quote answer could not convert, per
// quote currency, as both PNL readers report it. The zero value is empty.
type UnconvertedBook struct {
	m map[string]*pnlread.Unconverted
}

func (u *UnconvertedBook) entry(q string) *pnlread.Unconverted {
	if u.m == nil {
		u.m = map[string]*pnlread.Unconverted{}
	}
	e := u.m[q]
	if e == nil {
		e = &pnlread.Unconverted{}
		u.m[q] = e
	}
	return e
}

// AddFills adds the range's fills of pairs quoted in q that had no rate:
// their realized pnl and invested in q, and their count. A range without
// such fills (trades 0) adds no entry.
func (u *UnconvertedBook) AddFills(q string, pnl, invested decimal.Decimal, trades int64) {
	if trades == 0 {
		return
	}
	e := u.entry(q)
	e.Pnl = decimal.Number(decimal.Decimal(e.Pnl).Add(pnl))
	e.Invested = decimal.Number(decimal.Decimal(e.Invested).Add(invested))
	e.Trades += trades
}

// Unrealized converts x, the unrealized pnl of a pair quoted in q, into
// unit along path (ok: a path exists now), or adds it to q's entry and
// returns 0.
func (u *UnconvertedBook) Unrealized(q, unit string, x decimal.Decimal, path RatePath, ok bool) decimal.Decimal {
	if q == unit || x.IsZero() {
		return x
	}
	if ok {
		return path.Convert(x)
	}
	e := u.entry(q)
	e.UnrealizedPnl = decimal.Number(decimal.Decimal(e.UnrealizedPnl).Add(x))
	return decimal.Zero
}

// Result returns the entries (empty, not nil, when there are none).
func (u *UnconvertedBook) Result() map[string]pnlread.Unconverted {
	out := make(map[string]pnlread.Unconverted, len(u.m))
	for q, e := range u.m {
		out[q] = *e
	}
	return out
}
