package fold

import (
	"math"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Conversion of a pair's figures into other currencies (answers over
// several quote currencies, in the reporting currency). A fill's money
// figures (value, baseValue, fee, pnl, unmatched value, invested) convert
// one by one at the rates of its trade time (RateBook.Path; one rounding
// per hop), then add up; a fill without a rate at its time counts in the
// other currency without money (its trade, win or loss) and is reported
// apart in its own quote, never guessed. Counts are currency-free and
// always complete. Both PNL readers convert with Convert.

// Convert returns f, a fill of a pair quoted in quote folded at k, in
// currency to: its money converted at the rates at or before k (priced),
// or without money (NoMoney) when no rate converts it.
func Convert(rates *RateBook, quote, to string, k Key, f *PnlFill) (out PnlFill, priced bool) {
	out = *f
	p, ok := rates.PathAt(quote, to, k, 0, math.MaxUint64)
	if !ok {
		out.Value, out.Net, out.Fee, out.Pnl, out.Unmatched, out.Invested = decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero
		out.NoMoney = true
		return out, false
	}
	for _, x := range []*decimal.Decimal{&out.Value, &out.Net, &out.Fee, &out.Pnl, &out.Unmatched, &out.Invested} {
		*x = p.Convert(*x)
	}
	return out, true
}

// ConvSeries is one pair's figures in another currency: Conv holds every
// fill, its money converted or none (Convert), and the unique win/loss
// counts; Unconv holds the fills without a rate, in the pair's quote
// (money and trades only).
type ConvSeries[C int32 | int64] struct {
	Conv, Unconv Series[C]
}

// Add adds fill f of a pair quoted in quote, folded at k, to s in
// currency to, with the unique win/loss move m of the fill.
func (s *ConvSeries[C]) Add(rates *RateBook, quote, to string, k Key, f *PnlFill, m Move) {
	c, priced := Convert(rates, quote, to, k, f)
	s.Conv.Add(&c)
	s.Conv.Move(m)
	if !priced {
		s.Unconv.Add(f)
	}
}

// Mixed is a scope over several quote currencies seen in one unit (the
// reporting currency): each pair's series in the unit, and, per quote, the
// series of the fills that had no rate. Both PNL readers answer a mixed
// scope through it.
type Mixed[C int32 | int64] struct {
	Unit        string
	Conv        []*Series[C] // each pair's series in Unit
	unconv      map[string][]*Series[C]
	Unconverted UnconvertedBook
}

// Add adds a pair quoted in quote: its series in the unit, and its fills
// without a rate (nil for a pair quoted in the unit).
func (m *Mixed[C]) Add(quote string, conv, unconv *Series[C]) {
	m.Conv = append(m.Conv, conv)
	if unconv == nil {
		return
	}
	if m.unconv == nil {
		m.unconv = map[string][]*Series[C]{}
	}
	m.unconv[quote] = append(m.unconv[quote], unconv)
}

// Fold adds the fills without a rate of the slots starting in [from, to)
// (unix s) to Unconverted.
func (m *Mixed[C]) Fold(from, to int64) {
	for q, ss := range m.unconv {
		var s PnlAgg[C]
		for _, x := range ss {
			y := x.Sum(from, to)
			s.Merge(&y)
		}
		m.Unconverted.AddFills(q, s.Pnl, s.Invested, int64(s.Trades))
	}
}

// Unrealized converts x, the unrealized pnl of a pair quoted in q, into
// the unit at the latest rates of rates, or adds it to q's unconverted
// entry and returns 0.
func (m *Mixed[C]) Unrealized(rates *RateBook, q string, x decimal.Decimal) decimal.Decimal {
	p, ok := rates.Path(q, m.Unit, MaxTime, 0)
	return m.Unconverted.Unrealized(q, m.Unit, x, p, ok)
}
