package fold

import (
	"math"
	"sort"
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Series is a run of 15-minute slots (SlotMs) of one pair, one quote
// currency or one pair in another currency, each the aggregate of its
// fills (PnlAgg.Add), with the running pnl, and the aggregate of all of
// them. Both PNL readers answer from Series the same way: the Ledger keeps
// them in memory, the ClickHouse reader builds them from its rows. Ranges
// are in unix seconds: a slot is in [from, to) when its start is.
//
// C is the count type: int32 where the memory of each slot matters (the
// Ledger), int64 where a database returns the sums.
type Series[C int32 | int64] struct {
	Slots []Slot[C]
	Total PnlAgg[C]
}

// Slot is one slot's aggregate: Cum is the pnl of it and every slot
// before it in its series.
type Slot[C int32 | int64] struct {
	Slot int64 // start ÷ SlotMs
	Cum  decimal.Decimal
	PnlAgg[C]
}

// SlotSeconds is a slot's width in seconds.
const SlotSeconds = SlotMs / 1000

// at returns the index of slot, creating it in order.
func (s *Series[C]) at(slot int64) int {
	n := len(s.Slots)
	if n > 0 && s.Slots[n-1].Slot == slot {
		return n - 1
	}
	if n == 0 || s.Slots[n-1].Slot < slot {
		cum := decimal.Zero
		if n > 0 {
			cum = s.Slots[n-1].Cum
		}
		s.Slots = append(s.Slots, Slot[C]{Slot: slot, Cum: cum})
		return n
	}
	i := sort.Search(n, func(i int) bool { return s.Slots[i].Slot >= slot })
	if s.Slots[i].Slot == slot {
		return i
	}
	cum := decimal.Zero
	if i > 0 {
		cum = s.Slots[i-1].Cum
	}
	s.Slots = append(s.Slots, Slot[C]{})
	copy(s.Slots[i+1:], s.Slots[i:])
	s.Slots[i] = Slot[C]{Slot: slot, Cum: cum}
	return i
}

// SlotIndex returns the index of slot in s, or -1 when s has none.
func (s *Series[C]) SlotIndex(slot int64) int {
	i := sort.Search(len(s.Slots), func(i int) bool { return s.Slots[i].Slot >= slot })
	if i < len(s.Slots) && s.Slots[i].Slot == slot {
		return i
	}
	return -1
}

// Add adds a fill to its slot and to the total.
func (s *Series[C]) Add(f *PnlFill) {
	i := s.at(SlotOf(f.T))
	s.Slots[i].Add(f)
	s.Total.Add(f)
	if f.Closing && !f.Pnl.IsZero() && !f.NoMoney {
		for j := i; j < len(s.Slots); j++ { // only the last slot, but for a slot before it
			s.Slots[j].Cum = s.Slots[j].Cum.Add(f.Pnl)
		}
	}
}

// Move moves a unique win/loss count in its slot and in the total.
func (s *Series[C]) Move(m Move) {
	if m.From == m.To {
		return
	}
	s.Slots[s.at(m.Slot)].Unique(m.From, m.To)
	s.Total.Unique(m.From, m.To)
}

// Span returns the index range [i, j) of the slots starting in [from, to)
// (unix s).
func (s *Series[C]) Span(from, to int64) (int, int) {
	i := sort.Search(len(s.Slots), func(k int) bool { return s.Slots[k].Slot*SlotSeconds >= from })
	j := sort.Search(len(s.Slots), func(k int) bool { return s.Slots[k].Slot*SlotSeconds >= to })
	return i, max(i, j)
}

// RangePnl returns the pnl of the slots starting in [from, to) (unix s).
func (s *Series[C]) RangePnl(from, to int64) decimal.Decimal {
	i, j := s.Span(from, to)
	if i >= j {
		return decimal.Zero
	}
	before := decimal.Zero
	if i > 0 {
		before = s.Slots[i-1].Cum
	}
	return s.Slots[j-1].Cum.Sub(before)
}

// Unbounded are the bounds of a range with no start or no end (unix s).
const (
	MinTime = -1 << 50
	MaxTime = 1 << 50
)

// Sum returns the merge of the slots starting in [from, to), the total
// when the range is unbounded.
func (s *Series[C]) Sum(from, to int64) PnlAgg[C] {
	if from <= MinTime && to >= MaxTime {
		return s.Total
	}
	var out PnlAgg[C]
	i, j := s.Span(from, to)
	for k := i; k < j; k++ {
		out.Merge(&s.Slots[k].PnlAgg)
	}
	return out
}

// Clone returns a copy of s that shares nothing with it.
func (s *Series[C]) Clone() Series[C] {
	return Series[C]{Slots: append([]Slot[C](nil), s.Slots...), Total: s.Total}
}

// CountsOnly returns a copy of s without money: every fill as if it had
// no rate (counted, adding nothing else).
func (s *Series[C]) CountsOnly() Series[C] {
	out := Series[C]{Slots: make([]Slot[C], len(s.Slots)), Total: s.Total.CountsOnly()}
	for i := range s.Slots {
		out.Slots[i] = Slot[C]{Slot: s.Slots[i].Slot, PnlAgg: s.Slots[i].CountsOnly()}
	}
	return out
}

// Replace drops the slots from slot from on and puts fresh in their
// place (ascending, every slot from on), then sets the running pnl and
// the total again.
func (s *Series[C]) Replace(from int64, fresh []Slot[C]) {
	i := sort.Search(len(s.Slots), func(k int) bool { return s.Slots[k].Slot >= from })
	s.Slots = append(s.Slots[:i], fresh...)
	s.Finish(i)
}

// Finish sets the running pnl of the slots from index i on, and the
// total (after slots were changed or read in).
func (s *Series[C]) Finish(i int) {
	cum := decimal.Zero
	if i > 0 {
		cum = s.Slots[i-1].Cum
	}
	for k := i; k < len(s.Slots); k++ {
		cum = cum.Add(s.Slots[k].Pnl)
		s.Slots[k].Cum = cum
	}
	s.Total = PnlAgg[C]{}
	for k := range s.Slots {
		s.Total.Merge(&s.Slots[k].PnlAgg)
	}
}

// CountsOnly returns a without money (counts and times only).
func (a *PnlAgg[C]) CountsOnly() PnlAgg[C] {
	return PnlAgg[C]{Trades: a.Trades, Buys: a.Buys, Sells: a.Sells, Wins: a.Wins, Losses: a.Losses, Evens: a.Evens,
		UBuys: a.UBuys, USells: a.USells, UWins: a.UWins, ULosses: a.ULosses, FirstT: a.FirstT, LastT: a.LastT}
}

// Days folds the slots of ss starting in [from, to) (unix s) into days of
// loc (the local date of each slot's start), oldest first, days without
// fills left out, with the running sums: a daily history (pnlread.DayPnl).
func Days[C int32 | int64](ss []*Series[C], from, to int64, loc *time.Location) []pnlread.DayPnl {
	type day struct {
		trades                   int64
		volume, pnl, unm, invest decimal.Decimal
	}
	zone := pnlread.LocalDays{Loc: loc}
	var days []int64
	var acc []day            // by index in days
	byDay := map[int64]int{} // several series: a day's index in days
	for _, s := range ss {
		i, j := s.Span(from, to)
		last := int64(math.MinInt64)
		cur := -1
		for k := i; k < j; k++ {
			a := &s.Slots[k].PnlAgg
			if a.Trades == 0 {
				continue
			}
			n := zone.Day(s.Slots[k].Slot * SlotSeconds)
			if n != last || cur < 0 {
				last = n
				var ok bool
				if len(ss) == 1 { // one series: its days come in order
					ok, cur = len(days) > 0 && days[len(days)-1] == n, len(days)-1
				} else {
					cur, ok = byDay[n]
				}
				if !ok {
					cur = len(days)
					days, acc = append(days, n), append(acc, day{})
					if len(ss) > 1 {
						byDay[n] = cur
					}
				}
			}
			x := &acc[cur]
			x.trades += int64(a.Trades)
			x.volume, x.pnl = x.volume.Add(a.Volume), x.pnl.Add(a.Pnl)
			x.unm, x.invest = x.unm.Add(a.Unmatched), x.invest.Add(a.Invested)
		}
	}
	if len(days) == 0 {
		return nil
	}
	order := make([]int, len(days))
	for i := range order {
		order[i] = i
	}
	if len(ss) > 1 {
		sort.Slice(order, func(i, j int) bool { return days[order[i]] < days[order[j]] })
	}
	out := make([]pnlread.DayPnl, len(days))
	var cum, inv decimal.Decimal
	for i, o := range order {
		n, x := days[o], &acc[o]
		cum, inv = cum.Add(x.pnl), inv.Add(x.invest)
		out[i] = pnlread.DayPnl{Date: time.Unix(n*86400, 0).UTC().Format("2006-01-02"), NumberOfTrades: x.trades,
			TotalVolume: decimal.Number(x.volume), Pnl: decimal.Number(x.pnl), CumulativePnl: decimal.Number(cum),
			CumulativePnlPercent: decimal.Number(pnlmath.PnlPercent(cum, inv)), UnmatchedBaseValue: decimal.Number(x.unm)}
	}
	return out
}

// Total returns an aggregate as the overview's total section, with the
// unrealized pnl of the lots held (buyPnl).
func Total[C int32 | int64](t *PnlAgg[C], unrealized decimal.Decimal) pnlread.PnlTotal {
	closes := int64(t.Wins + t.Losses + t.Evens)
	out := pnlread.PnlTotal{
		Pnl:            decimal.Number(t.Pnl),
		NumberOfTrades: int64(t.Trades),
		AveragePnl:     decimal.Number(pnlmath.AveragePnl(t.Pnl, closes)),
		SellCount:      int64(t.Sells),
		BuyCount:       int64(t.Buys),
		Winning:        int64(t.Wins),
		Losing:         int64(t.Losses),
		Breakeven:      int64(t.Evens),
		WinRate:        pnlmath.WinRate(int64(t.Wins), int64(t.Losses), int64(t.Evens)),
		BuyPnl:         decimal.Number(unrealized),
		SellPnl:        decimal.Number(t.Pnl),
		BuyBaseValue:   decimal.Number(t.BuyValue),
		SellBaseValue:  decimal.Number(t.SellValue),
		UnmatchedValue: decimal.Number(t.Unmatched),
	}
	if closes > 0 {
		out.HeroTrade = pnlread.TradeRef{Pnl: decimal.Number(t.Hero), Time: t.HeroT}
		out.FuckupTrade = pnlread.TradeRef{Pnl: decimal.Number(t.Fuck), Time: t.FuckT}
	}
	return out
}

// Detail returns a pair's aggregate as an element of the overview's
// detailedPerPair.
func Detail[C int32 | int64](key string, s *PnlAgg[C], unrealized decimal.Decimal, strategy string, loc *time.Location) pnlread.PairDetail {
	return pnlread.PairDetail{
		Strategy:                  strategy,
		CumulativePnl:             decimal.Number(s.Pnl),
		CumulativeProfit:          decimal.Number(s.Profit),
		CumulativeLoss:            decimal.Number(s.Loss),
		CumulativeFees:            decimal.Number(s.Fees),
		CumulativeCostProceedWins: decimal.Number(s.CpWins),
		CumulativeCostProceedLoss: decimal.Number(s.CpLosses),
		ProfitCount:               int64(s.Wins),
		LossCount:                 int64(s.Losses),
		UniqueProfitCount:         int64(s.UWins),
		UniqueLossCount:           int64(s.ULosses),
		BuyCount:                  int64(s.Buys),
		SellCount:                 int64(s.Sells),
		UniqueBuyCount:            int64(s.UBuys),
		UniqueSellCount:           int64(s.USells),
		CumulativeBuyValue:        decimal.Number(s.BuyValue),
		CumulativeSellValue:       decimal.Number(s.SellValue),
		UnrealizedPnl:             decimal.Number(unrealized),
		DailyPnlPerThousand:       pnlmath.DailyPnlPerThousand(s.Pnl, s.Invested, pnlread.DaySpan(s.FirstT, s.LastT, loc)),
		Key:                       key,
	}
}
