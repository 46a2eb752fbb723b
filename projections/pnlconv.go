package projections

import (
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
)

// Currency conversion for PNL scopes over several quote currencies (issue
// 14 §2, issue 28 §5). Amounts of a pair are in its quote currency; a scope
// whose pairs use several quotes (["All"] on a bot trading USDT and BTC
// pairs) is answered in one reporting currency R, with each quote's own
// figures beside it and what could not be converted reported apart.
//
// Reporting currency. bot.REPORTING_CURRENCY when set; otherwise the quote
// currency with the most fills in the whole ledger (ties: alphabetical),
// fold.RateBook.Reporting.
//
// Rates and paths are fold.RateBook's, which the ClickHouse sink keeps the
// same way: RateObserved events and every fill's price, pooled across
// exchanges; an amount converts along the shortest chain of pairs with a
// rate at or before its trade time (ties: alphabetical), among every rate
// of the log, whenever it was recorded (a rate recorded late folds the
// pairs that depend on it again from its time, ledgerfold.go). A pair's
// figures are converted into every other quote currency with fills (and
// the configured reporting currency) that a chain of pairs joins to its
// quote, fill by fill (fold.Convert); a fill without a rate on some hop at
// its time is not converted and is reported in unconverted, in its own
// currency; it is never guessed. Unrealized pnl (lots still held, valued
// now) converts at the latest rates.

// convKey names the conversion of one pair's figures into a currency.
type convKey struct {
	b  *pairBook
	to string
}

// convBook holds the pairs' fold bookkeeping (fold.Pairs: the rates, the
// currencies each quote converts into, the pairs to fold again) and the
// converted series of the Ledger.
type convBook struct {
	fold.Pairs
	pairs map[convKey]*fold.ConvSeries[int32]
}

// setReporting sets bot.REPORTING_CURRENCY.
func (c *convBook) setReporting(r string) { c.Rates.SetReporting(r) }

// reportingCurrency returns bot.REPORTING_CURRENCY, or the quote with the
// most fills (ties: alphabetical), or "" without fills.
func (c *convBook) reportingCurrency() string { return c.Rates.Reporting() }

// convertFill adds fx, a fill of b folded in order with its unique
// win/loss move m, to b's series in every currency its quote converts
// into.
func (l *Ledger) convertFill(b *pairBook, k fold.Key, fx *fold.PnlFill, m fold.Move) {
	for _, to := range l.conv.Targets(b.quote) {
		l.convSeries(b, to).Add(&l.conv.Rates, b.quote, to, k, fx, m)
	}
}

// convSeries returns b's series in to, creating it.
func (l *Ledger) convSeries(b *pairBook, to string) *fold.ConvSeries[int32] {
	k := convKey{b, to}
	pc := l.conv.pairs[k]
	if pc == nil {
		pc = &fold.ConvSeries[int32]{}
		if l.conv.pairs == nil {
			l.conv.pairs = map[convKey]*fold.ConvSeries[int32]{}
		}
		l.conv.pairs[k] = pc
	}
	return pc
}

// inCurrency returns b's series with money in to, and the part that has no
// rate in b's own quote (nil when b is quoted in to).
func (l *Ledger) inCurrency(b *pairBook, to string) (conv, unconv *series) {
	if b.quote == to {
		return &b.series, nil
	}
	if pc := l.conv.pairs[convKey{b, to}]; pc != nil {
		return &pc.Conv, &pc.Unconv
	}
	s := b.series.CountsOnly()
	return &s, &b.series
}

// mixed returns the scope's pairs seen in the reporting currency.
func (l *Ledger) mixed(sc *scoped) *fold.Mixed[int32] {
	v := &fold.Mixed[int32]{Unit: l.conv.reportingCurrency()}
	for _, b := range sc.books {
		if b == nil {
			continue
		}
		c, u := l.inCurrency(b, v.Unit)
		v.Add(b.quote, c, u)
	}
	return v
}

// unrealizedIn converts the unrealized pnl x of a pair quoted in q at the
// latest rates, or adds it to q's unconverted entry and returns 0.
func (l *Ledger) unrealizedIn(v *fold.Mixed[int32], q string, x decimal.Decimal) decimal.Decimal {
	return v.Unrealized(&l.conv.Rates, q, x)
}
