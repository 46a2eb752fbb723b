package pnlmath

import (
	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// A fill's fee as charged and valued in the pair's quote currency
// (FeeValue), what a buy received and what a fill cost or brought
// (Received, Net), and the lots it adds or consumes (Lots.ApplyFee). The
// valuation itself — in quote, in base, or in a third asset at the rate of
// the fill's trade time — is domain/fold.ValueFee, the one rule every PNL
// reader uses.

// FeeValue is the valuation of a fill's fee.
type FeeValue struct {
	Asset    string          // the asset the fee was charged in (the quote when the fill named none)
	Amount   decimal.Decimal // the fee in Asset
	Quote    decimal.Decimal // its value in the pair's quote; 0 when unconverted
	Rate     decimal.Decimal // 1 Asset = Rate quote (1 for the quote, the fill's price for the base)
	RateTime int64           // time (ms) of the oldest rate the valuation used; the fill's own for quote and base
	InBase   bool            // charged in the pair's base: a buy received Amount less
	Third    bool            // charged in a third asset
	Valued   bool            // false: a third asset without a rate (unconverted)
}

// Received returns the quantity a fill of qty brought into the account's
// base: qty, less the fee on a buy whose fee was charged in the base (never
// below 0).
func (v *FeeValue) Received(side domain.Side, qty decimal.Decimal) decimal.Decimal {
	if side != domain.Buy || !v.InBase {
		return qty
	}
	return qty.Sub(v.Amount).Max(decimal.Zero)
}

// Net returns the fill's baseValue: what it cost (a buy) or brought (a
// sell) in quote, fees valued in — value + fee on a buy whose fee was paid
// apart from the quantity (quote or third asset), value on a buy whose fee
// came out of the coins received (base), value − fee on a sell.
func (v *FeeValue) Net(side domain.Side, value decimal.Decimal) decimal.Decimal {
	switch {
	case side == domain.Sell:
		return value.Sub(v.Quote)
	case v.InBase:
		return value
	}
	return value.Add(v.Quote)
}

// ApplyFee applies a fill with its valued fee to the lots: ApplyFill with
// the fee in quote, except a buy whose fee was charged in the base, which
// adds a lot of the quantity received (qty − fee) costing price × qty.
// FillPnl.Fee is the fee's value in quote either way (0 when unconverted);
// Matched is the quantity the lot holds.
func (l *Lots) ApplyFee(side domain.Side, price, qty decimal.Decimal, fee *FeeValue) FillPnl {
	return l.ApplyFeeTraced(side, price, qty, fee, nil)
}

// ApplyFeeTraced is ApplyFee with ApplyFillTraced's trace (the new lot's
// time and reference, the lots a sell consumed); tr may be nil.
func (l *Lots) ApplyFeeTraced(side domain.Side, price, qty decimal.Decimal, fee *FeeValue, tr *LotTrace) FillPnl {
	feeQuote := decimal.Zero
	if fee.Valued {
		feeQuote = fee.Quote
	}
	if side != domain.Buy || !fee.InBase || qty.Sign() <= 0 {
		return l.ApplyFillTraced(side, price, qty, feeQuote, tr)
	}
	r := FillPnl{Value: price.Mul(qty), Fee: feeQuote}
	r.Matched = fee.Received(side, qty)
	r.LotCost = r.Value
	n := Lot{Qty: r.Matched, Cost: r.LotCost}
	if tr != nil {
		n.Time, n.Ref = tr.Time, tr.Ref
	}
	l.AddLot(n)
	return r
}
