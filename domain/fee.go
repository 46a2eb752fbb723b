package domain

// Fee valuation: the one rule, shared by the in-memory Ledger and the
// ClickHouse sink, that turns a fill's fee — in whatever asset the exchange
// charged it — into the pair's quote currency, and says what a buy
// received.
//
//   - A fee in the quote (or with no asset named) is its own value.
//   - A fee in the base is valued at the fill's price (fee × price). On a
//     buy the exchange took it from the coins bought: the quantity received
//     is filled − fee, and the lot holds that quantity at the full cost
//     price × filled (the fee is in the higher unit cost, not added again).
//     On a sell it is valued the same way and comes off the proceeds.
//   - A fee in a third asset (BNB, KCS, OKB …) is valued at the rate of the
//     fill's time in the RateBook (RateObserved events and the fills of
//     pairs between the currencies), along the shortest path of rates each
//     no older than the book's FeeMaxAge (bot.FEE_RATE_MAX_AGE, default one
//     hour) before the fill: fee × rate. Without such a rate the fee is
//     unconverted: it counts 0 in every figure in quote and is listed in
//     its own asset (unconvertedFees) wherever the fill is, never silently
//     dropped.
//
// The valuation is decided when the fill is applied, from the rates the
// book holds at that point of the log: replaying the log gives the same
// valuation whatever was observed after the fill.
//
// Worked example (pair USDT-ETH, fills at 10:00): buy 2 @ 1000 with fee
// 0.001 BNB, BNB observed at 500 USDT at 09:30 → feeQuote = 0.001 × 500 =
// 0.5, lot {2, 2000.5}. Buy 2 @ 1000 with fee 0.002 ETH → received 1.998,
// feeQuote 2, lot {1.998, 2000}. Buy 2 @ 1000 with fee 0.001 BNB and the
// last BNB rate at 08:30 (older than an hour) → unconverted: lot {2, 2000},
// unconvertedFees {BNB: 0.001}.

// FeeValue is the valuation of a fill's fee.
type FeeValue struct {
	Asset    string  // the asset the fee was charged in (the quote when the fill named none)
	Amount   Decimal // the fee in Asset
	Quote    Decimal // its value in the pair's quote; 0 when unconverted
	Rate     Decimal // 1 Asset = Rate quote (1 for the quote, the fill's price for the base)
	RateTime int64   // time (ms) of the oldest rate the valuation used; the fill's own for quote and base
	InBase   bool    // charged in the pair's base: a buy received Amount less
	Third    bool    // charged in a third asset
	Valued   bool    // false: a third asset without a rate (unconverted)
}

// ValueFee values a fill's fee (see the file comment): fee in asset on a
// pair quote-base filled at price at time t (ms). A third asset is valued
// with b's rates (and anchored in b, so that its rates keep their history
// from now on); b may be nil for fills that have no third-asset fee.
func ValueFee(b *RateBook, fee Decimal, asset, quote, base string, price Decimal, t int64) FeeValue {
	v := FeeValue{Asset: asset, Amount: fee, Rate: DecimalFromInt(1), RateTime: t, Valued: true}
	switch {
	case asset == "" || asset == quote || SameCurrency(asset, quote): // equal first: the common case, cheaply
		v.Asset, v.Quote = quote, fee
	case asset == base || SameCurrency(asset, base):
		v.Asset, v.InBase, v.Rate, v.Quote = base, true, price, fee.Mul(price)
	default:
		v.Third = true
		if fee.IsZero() {
			v.Rate = Zero
			return v
		}
		if b == nil {
			v.Valued, v.Rate, v.RateTime = false, Zero, 0
			return v
		}
		asset = b.Anchor(asset)
		maxAge := b.FeeMaxAge
		if maxAge <= 0 {
			maxAge = DefaultFeeRateMaxAge
		}
		p, ok := b.Path(asset, quote, t, maxAge)
		if !ok {
			v.Valued, v.Rate, v.RateTime = false, Zero, 0
			return v
		}
		v.Quote, v.Rate, v.RateTime = p.Convert(fee), p.Rate(), p.Time(t)
	}
	return v
}

// Fill folds a fill of a pair quote-base at price at time t (ms) into b
// and values its fee: the price is recorded as a rate (Observe), the fill
// counted (CountFill), then the fee valued (ValueFee). Every reader applies
// a fill's rates in this order, so that the same log gives the same
// valuations everywhere.
func (b *RateBook) Fill(quote, base string, t int64, price, fee Decimal, feeAsset string) FeeValue {
	b.Observe(quote, base, t, price)
	b.CountFill(quote)
	return ValueFee(b, fee, feeAsset, quote, base, price, t)
}

// Received returns the quantity a fill of qty brought into the account's
// base: qty, less the fee on a buy whose fee was charged in the base (never
// below 0).
func (v *FeeValue) Received(side Side, qty Decimal) Decimal {
	if side != Buy || !v.InBase {
		return qty
	}
	return qty.Sub(v.Amount).Max(Zero)
}

// Net returns the fill's baseValue: what it cost (a buy) or brought (a
// sell) in quote, fees valued in — value + fee on a buy whose fee was paid
// apart from the quantity (quote or third asset), value on a buy whose fee
// came out of the coins received (base), value − fee on a sell.
func (v *FeeValue) Net(side Side, value Decimal) Decimal {
	switch {
	case side == Sell:
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
func (l *Lots) ApplyFee(side Side, price, qty Decimal, fee *FeeValue) FillPnl {
	return l.ApplyFeeTraced(side, price, qty, fee, nil)
}

// ApplyFeeTraced is ApplyFee with ApplyFillTraced's trace (the new lot's
// time and reference, the lots a sell consumed); tr may be nil.
func (l *Lots) ApplyFeeTraced(side Side, price, qty Decimal, fee *FeeValue, tr *LotTrace) FillPnl {
	feeQuote := Zero
	if fee.Valued {
		feeQuote = fee.Quote
	}
	if side != Buy || !fee.InBase || qty.Sign() <= 0 {
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
