package fold

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

func TestPnlAggMerge(t *testing.T) {
	// a: two closing trades, best +5 at t=20, worst -3 at t=10.
	a := PnlAgg[int32]{Trades: 3, Buys: 1, Sells: 2, Wins: 1, Losses: 1, Priced: 2, Pnl: decimal.NewDecimal(2, -8), Profit: decimal.NewDecimal(5, -8), Loss: decimal.NewDecimal(-3, -8),
		Hero: decimal.NewDecimal(5, -8), HeroT: 20, Fuck: decimal.NewDecimal(-3, -8), FuckT: 10, FirstT: 5, LastT: 20, Invested: decimal.NewDecimal(100, -8)}
	// o: a tie on the best trade, earlier (t=15), and a worse one, -4 at t=30.
	o := PnlAgg[int32]{Trades: 2, Sells: 2, Wins: 1, Losses: 1, Priced: 2, Pnl: decimal.NewDecimal(1, -8), Profit: decimal.NewDecimal(5, -8), Loss: decimal.NewDecimal(-4, -8),
		Hero: decimal.NewDecimal(5, -8), HeroT: 15, Fuck: decimal.NewDecimal(-4, -8), FuckT: 30, FirstT: 3, LastT: 30, Invested: decimal.NewDecimal(50, -8)}
	a.Merge(&o)
	if a.Trades != 5 || a.Sells != 4 || a.Priced != 4 || a.Pnl != decimal.NewDecimal(3, -8) || a.Invested != decimal.NewDecimal(150, -8) {
		t.Fatalf("sums: %+v", a)
	}
	if a.Hero != decimal.NewDecimal(5, -8) || a.HeroT != 15 || a.Fuck != decimal.NewDecimal(-4, -8) || a.FuckT != 30 {
		t.Fatalf("hero %v@%d fuck %v@%d, want 5@15 and -4@30", a.Hero, a.HeroT, a.Fuck, a.FuckT)
	}
	if a.FirstT != 3 || a.LastT != 30 {
		t.Fatalf("first %d last %d, want 3 and 30", a.FirstT, a.LastT)
	}
	// Unpriced trades (no rate) never set the hero, and nothing merges from an empty side.
	var b PnlAgg[int64]
	b.Merge(&PnlAgg[int64]{Trades: 1, Sells: 1, Wins: 1, Hero: decimal.NewDecimal(9, -8), HeroT: 1, FirstT: 1, LastT: 1})
	b.Merge(&PnlAgg[int64]{})
	if !b.Hero.IsZero() || b.Trades != 1 || b.Wins != 1 {
		t.Fatalf("unpriced merge: %+v", b)
	}
}
