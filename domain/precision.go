package domain

import (
	"math"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// MarketPrecision is how many decimals a pair's prices (in its quote) and
// amounts (of its base) are shown with (decimal.AmountText writes them).
type MarketPrecision struct {
	Price, Amount int
}

// PrecisionOf returns the precision of a pair quoted in quote: the
// decimals of its filters' tick and step when the exchange has them;
// otherwise, from a reference price ref of the pair (its last, or the
// order's), prices to about five significant digits (2 to 8 decimals) and
// amounts so that their last digit is worth about a hundredth of a quote
// unit (0 to 8 decimals; more for a quote shown with more than 2). Without
// either, prices get 2 decimals and amounts 4.
func PrecisionOf(quote string, f MarketFilters, ref decimal.Decimal) MarketPrecision {
	p := MarketPrecision{Price: 2, Amount: 4}
	if ref.IsPos() {
		mag := int(math.Floor(math.Log10(ref.Float64())))
		p.Price = min(8, max(2, 4-mag))
		p.Amount = min(8, max(0, mag+1+decimal.CurrencyDecimals(quote)-2))
	}
	if f.TickSize.IsPos() {
		p.Price = f.TickSize.Places()
	}
	if f.StepSize.IsPos() {
		p.Amount = f.StepSize.Places()
	}
	return p
}
