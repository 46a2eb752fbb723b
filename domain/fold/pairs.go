package fold

import (
	"math"
	"sort"
)

// Pairs is what a reader folding several pairs keeps beside them: the
// rates of the log, the currencies each quote's figures convert into, the
// pairs whose figures depend on rates, and the pairs waiting for a
// re-fold. A late fill makes its pair dirty; a rate recorded before a
// fill already folded makes every pair that depends on rates and folded
// past it dirty; a quote that gains a currency to convert into makes its
// pairs dirty from their start. The owner folds the dirty pairs again
// (TakeDirty, Refold) before it answers. Both PNL readers keep one.
type Pairs struct {
	Rates   RateBook
	pairs   []*Pair
	listed  []bool
	dirty   []int
	deps    []int
	targets map[string][]string
	gen     uint64
	fl      flows // the account's flows: deposits, withdrawals, conversions (flows.go)
}

// Add registers p (its quote set) and returns its index.
func (ps *Pairs) Add(p *Pair) int {
	ps.pairs = append(ps.pairs, p)
	ps.listed = append(ps.listed, false)
	return len(ps.pairs) - 1
}

// Late marks pair i dirty from k.
func (ps *Pairs) Late(i int, k Key) {
	ps.pairs[i].Late(k)
	if !ps.listed[i] {
		ps.listed[i] = true
		ps.dirty = append(ps.dirty, i)
	}
}

// RatePoint makes the pairs whose figures depend on rates dirty from a
// rate recorded at k when they folded a fill after it; except is a pair
// it does not concern (the pair of the fill that is the rate), or -1.
func (ps *Pairs) RatePoint(k Key, except int) {
	ps.Targets("")
	for _, i := range ps.deps {
		if i == except {
			continue
		}
		if last, ok := ps.pairs[i].Last(); ok && k.Less(last) {
			ps.Late(i, k)
		}
	}
}

// Valued notes that pair i folded a fee charged in a third asset: its
// figures now depend on rates.
func (ps *Pairs) Valued(i int) {
	for _, d := range ps.deps {
		if d == i {
			return
		}
	}
	ps.setDeps()
}

// FeeMaxAge sets the rates' bound of a fee in a third asset: when it
// changes, every pair with such a fee is folded again.
func (ps *Pairs) FeeMaxAge(ms int64) {
	if ms == ps.Rates.FeeMaxAge {
		return
	}
	ps.Rates.FeeMaxAge = ms
	for i, p := range ps.pairs {
		if p.UsesRates() {
			ps.Late(i, Key{Time: math.MinInt64})
		}
	}
}

// Targets returns the currencies pairs quoted in quote are converted into
// (RateBook.Targets), as of the rate book's generation; a quote that
// gains one makes its pairs dirty from their start. Targets("") brings
// the cache up to date.
func (ps *Pairs) Targets(quote string) []string {
	if g := ps.Rates.Generation(); g != ps.gen || ps.targets == nil {
		next := map[string][]string{}
		quotes, _ := ps.Rates.FillCounts()
		for _, q := range quotes {
			ts := ps.Rates.Targets(q)
			if len(ts) > 0 {
				next[q] = ts
			}
			if !containsAll(ps.targets[q], ts) {
				for i, p := range ps.pairs {
					if _, started := p.Last(); started && p.Quote == q {
						ps.Late(i, Key{Time: math.MinInt64})
					}
				}
			}
		}
		ps.targets, ps.gen = next, g
		ps.setDeps()
	}
	return ps.targets[quote]
}

// containsAll reports whether every element of b is in a (both sorted).
func containsAll(a, b []string) bool {
	for _, x := range b {
		i := sort.SearchStrings(a, x)
		if i == len(a) || a[i] != x {
			return false
		}
	}
	return true
}

// setDeps lists the pairs whose figures depend on rates: a fee in a third
// asset, or figures in other currencies.
func (ps *Pairs) setDeps() {
	ps.deps = ps.deps[:0]
	for i, p := range ps.pairs {
		p.converted = len(ps.targets[p.Quote]) > 0
		if p.UsesRates() || p.converted {
			ps.deps = append(ps.deps, i)
		}
	}
}

// Unsettled reports whether a pair waits for a re-fold, or a matched
// deposit for what its withdrawal took (flows.go).
func (ps *Pairs) Unsettled() bool { return len(ps.dirty) > 0 || ps.carrying() }

// TakeDirty returns the dirty pairs' indexes, in the order they became
// dirty, and forgets them (a re-fold may make more dirty: call again until
// none). Deposits whose withdrawals took other lots since the last call
// get them first, which makes their pairs dirty.
func (ps *Pairs) TakeDirty() []int {
	ps.propagate()
	d := ps.dirty
	ps.dirty = nil
	for _, i := range d {
		ps.listed[i] = false
	}
	return d
}

// TakeDirtyOne returns the pair that became dirty first and forgets it
// (false: none is dirty), after the deposits' propagation TakeDirty does:
// the step of a settle that folds one pair at a time. Folding each pair it
// returns until it returns false leaves the pairs as settled as TakeDirty's
// rounds do.
func (ps *Pairs) TakeDirtyOne() (int, bool) {
	ps.propagate()
	if len(ps.dirty) == 0 {
		return 0, false
	}
	i := ps.dirty[0]
	ps.dirty = ps.dirty[1:]
	ps.listed[i] = false
	return i, true
}

// TargetsState returns the targets cache and the generation it is of (a
// snapshot's), and SetTargets installs one read back.
func (ps *Pairs) TargetsState() (map[string][]string, uint64) { return ps.targets, ps.gen }

// SetTargets installs a targets cache of generation gen (TargetsState's)
// and lists the pairs that depend on rates.
func (ps *Pairs) SetTargets(t map[string][]string, gen uint64) {
	ps.targets, ps.gen = t, gen
	ps.setDeps()
}

// Deps returns the indexes of the pairs whose figures depend on rates.
func (ps *Pairs) Deps() []int { return ps.deps }

// Refold folds p again (Pair.Refold) and rebuilds what the readers derive
// from its fills in slots: own, the pair's own series, and conv[k], its
// series in targets[k], from the first slot re-folded on (unique win/loss
// counts moved in the slots kept too); emit sees each fill re-folded with
// its Result, and each conversion leg among the pair's moves at index −1
// (move.go). It returns the Rebuild and the slots kept whose counts
// moved.
func Refold[C int32 | int64](p *Pair, j Journal, rates *RateBook, own *Series[C], targets []string, conv []*ConvSeries[C],
	emit func(i int, f *Fill, r *Result)) (Rebuild, []int64) {
	var fresh Series[C]
	freshConv := make([]ConvSeries[C], len(targets))
	rb := p.Refold(j, rates, func(i int, f *Fill, r *Result) {
		emit(i, f, r)
		fx := r.Agg(f)
		fresh.Add(&fx)
		for k, to := range targets {
			freshConv[k].Add(rates, p.Quote, to, f.Key, &fx, Move{})
		}
	})
	if rb.Prefix.Trades > 0 && len(fresh.Slots) > 0 { // the restart's slot had fills before it
		pre := aggOf[C](&rb.Prefix)
		fresh.Slots[0].Merge(&pre)
	}
	var moved []int64
	for _, m := range rb.Moves {
		if m.Slot >= rb.FromSlot {
			fresh.Move(m)
			for k := range freshConv {
				freshConv[k].Conv.Move(m)
			}
			continue
		}
		own.Move(m)
		for _, c := range conv {
			c.Conv.Move(m)
		}
		moved = append(moved, m.Slot)
	}
	own.Replace(rb.FromSlot, fresh.Slots)
	for k, c := range conv {
		c.Conv.Replace(rb.FromSlot, freshConv[k].Conv.Slots)
		c.Unconv.Replace(rb.FromSlot, freshConv[k].Unconv.Slots)
	}
	return rb, moved
}

// aggOf returns a with counts of type C.
func aggOf[C int32 | int64](a *PnlAgg[int64]) PnlAgg[C] {
	return PnlAgg[C]{Trades: C(a.Trades), Buys: C(a.Buys), Sells: C(a.Sells), Wins: C(a.Wins), Losses: C(a.Losses),
		Evens: C(a.Evens), Priced: C(a.Priced), UBuys: C(a.UBuys), USells: C(a.USells), UWins: C(a.UWins), ULosses: C(a.ULosses),
		Pnl: a.Pnl, Profit: a.Profit, Loss: a.Loss, Fees: a.Fees, CpWins: a.CpWins, CpLosses: a.CpLosses, BuyValue: a.BuyValue,
		SellValue: a.SellValue, Volume: a.Volume, Unmatched: a.Unmatched, Invested: a.Invested, Hero: a.Hero, Fuck: a.Fuck,
		HeroT: a.HeroT, FuckT: a.FuckT, FirstT: a.FirstT, LastT: a.LastT}
}
