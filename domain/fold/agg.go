package fold

import (
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// PnlAgg is the aggregate of a run of fills as every PNL reader folds it:
// trade counts, money and the best and worst closing trades. C is the
// count type: int32 where the memory of each aggregate matters (the
// in-memory Ledger's 15-minute buckets), int64 where a database returns
// the sums (the ClickHouse reader). Both readers merge with Merge, so they
// answer the same figures for the same fills.
type PnlAgg[C int32 | int64] struct {
	Trades, Buys, Sells C
	Wins, Losses, Evens C // closing trades by the sign of their pnl
	Priced              C // closing trades whose pnl is in Pnl (all but unconverted ones)
	UBuys, USells       C // orders by their first fill
	UWins, ULosses      C // sell orders by the sign of their summed pnl

	Pnl, Profit, Loss, Fees     decimal.Decimal
	CpWins, CpLosses            decimal.Decimal // Σ costProceed of winning / losing closing trades
	BuyValue, SellValue, Volume decimal.Decimal // Σ baseValue of buys / sells; Σ rate×amount
	Unmatched, Invested         decimal.Decimal // Σ unmatchedBaseValue; Σ cost of consumed lots
	Hero, Fuck                  decimal.Decimal // the highest and lowest pnl of a closing trade
	HeroT, FuckT                int64           // their times (ms)
	FirstT, LastT               int64           // first and last fill time (ms)
}

// Merge adds o into a: counts and money are summed (money saturating, as
// decimal.Decimal.Add does), FirstT is the earlier and LastT the later, and the
// hero and fuckup trades are the highest and lowest pnl of either side,
// the earlier on ties, taken only from a side with priced closing trades.
// An o without trades changes nothing.
func (a *PnlAgg[C]) Merge(o *PnlAgg[C]) {
	if o.Trades == 0 {
		return
	}
	if o.Priced > 0 {
		if a.Priced == 0 || a.Hero.Less(o.Hero) || (o.Hero == a.Hero && o.HeroT < a.HeroT) {
			a.Hero, a.HeroT = o.Hero, o.HeroT
		}
		if a.Priced == 0 || o.Fuck.Less(a.Fuck) || (o.Fuck == a.Fuck && o.FuckT < a.FuckT) {
			a.Fuck, a.FuckT = o.Fuck, o.FuckT
		}
	}
	if a.Trades == 0 || o.FirstT < a.FirstT {
		a.FirstT = o.FirstT
	}
	a.LastT = max(a.LastT, o.LastT)
	a.Trades += o.Trades
	a.Buys += o.Buys
	a.Sells += o.Sells
	a.Wins += o.Wins
	a.Losses += o.Losses
	a.Evens += o.Evens
	a.Priced += o.Priced
	a.UBuys += o.UBuys
	a.USells += o.USells
	a.UWins += o.UWins
	a.ULosses += o.ULosses
	a.Pnl = a.Pnl.Add(o.Pnl)
	a.Profit = a.Profit.Add(o.Profit)
	a.Loss = a.Loss.Add(o.Loss)
	a.Fees = a.Fees.Add(o.Fees)
	a.CpWins = a.CpWins.Add(o.CpWins)
	a.CpLosses = a.CpLosses.Add(o.CpLosses)
	a.BuyValue = a.BuyValue.Add(o.BuyValue)
	a.SellValue = a.SellValue.Add(o.SellValue)
	a.Volume = a.Volume.Add(o.Volume)
	a.Unmatched = a.Unmatched.Add(o.Unmatched)
	a.Invested = a.Invested.Add(o.Invested)
}

// PnlFill is what one fill adds to an aggregate (PnlAgg.Add): its trade
// time (ms), side, whether it closed lots (a sell that matched some) and is
// its order's first fill, the sign of its pnl in its own currency, and its
// money: Value (rate × amount), Net (its costProceed), Fee, Pnl, Unmatched
// (unmatchedBaseValue of a sell) and Invested (cost of the lots it closed).
// NoMoney marks a fill counted without money (no rate to the aggregate's
// currency): its trade and its win or loss count, nothing else.
type PnlFill struct {
	T                                         int64
	Sell, Closing, First, NoMoney             bool
	Sign                                      int8
	Value, Net, Fee, Pnl, Unmatched, Invested decimal.Decimal
}

// Add adds one fill to a, by the rules every PNL reader shares: every fill
// is a trade with its volume and fee, a buy or a sell with its
// costProceed (and a sell its unmatched value), and an order's first fill
// counts the order once; a closing fill is a win, loss or breakeven by the
// sign of its pnl and, when priced, adds its pnl and invested cost, its
// profit or loss, and may become the hero (highest pnl, earliest on ties)
// or fuckup (lowest) trade.
func (a *PnlAgg[C]) Add(f *PnlFill) {
	if a.Trades == 0 || f.T < a.FirstT {
		a.FirstT = f.T
	}
	if f.T > a.LastT {
		a.LastT = f.T
	}
	a.Trades++
	a.Volume = a.Volume.Add(f.Value)
	a.Fees = a.Fees.Add(f.Fee)
	if f.Sell {
		a.Sells++
		a.SellValue = a.SellValue.Add(f.Net)
		a.Unmatched = a.Unmatched.Add(f.Unmatched)
		if f.First {
			a.USells++
		}
	} else {
		a.Buys++
		a.BuyValue = a.BuyValue.Add(f.Net)
		if f.First {
			a.UBuys++
		}
	}
	if !f.Closing {
		return
	}
	switch f.Sign {
	case 1:
		a.Wins++
	case -1:
		a.Losses++
	default:
		a.Evens++
	}
	if f.NoMoney {
		return
	}
	closes := a.Priced
	a.Priced++
	a.Pnl = a.Pnl.Add(f.Pnl)
	a.Invested = a.Invested.Add(f.Invested)
	switch f.Sign {
	case 1:
		a.Profit = a.Profit.Add(f.Pnl)
		a.CpWins = a.CpWins.Add(f.Net)
	case -1:
		a.Loss = a.Loss.Add(f.Pnl)
		a.CpLosses = a.CpLosses.Add(f.Net)
	}
	if closes == 0 || a.Hero.Less(f.Pnl) || (f.Pnl == a.Hero && f.T < a.HeroT) {
		a.Hero, a.HeroT = f.Pnl, f.T
	}
	if closes == 0 || f.Pnl.Less(a.Fuck) || (f.Pnl == a.Fuck && f.T < a.FuckT) {
		a.Fuck, a.FuckT = f.Pnl, f.T
	}
}

// Unique moves a sell order's unique win/loss count from sign from to sign
// to (1 win, -1 loss, 0 breakeven and 2 not counted: neither counts).
func (a *PnlAgg[C]) Unique(from, to int8) {
	switch from {
	case 1:
		a.UWins--
	case -1:
		a.ULosses--
	}
	switch to {
	case 1:
		a.UWins++
	case -1:
		a.ULosses++
	}
}
