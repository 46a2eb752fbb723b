package fold

import (
	"math"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
)

// Fee valuation: the one rule, shared by the in-memory Ledger and the
// ClickHouse sink, that turns a fill's fee — in whatever asset the exchange
// charged it — into the pair's quote currency (pnlmath.FeeValue), and says
// what a buy received.
//
//   - A fee in the quote (or with no asset named) is its own value.
//   - A fee in the base is valued at the fill's price (fee × price). On a
//     buy the exchange took it from the coins bought: the quantity received
//     is filled − fee, and the lot holds that quantity at the full cost
//     price × filled (the fee is in the higher unit cost, not added again).
//     On a sell it is valued the same way and comes off the proceeds.
//   - A fee in a third asset (BNB, KCS, OKB …) is valued at the rate of the
//     fill's trade time in the RateBook (RateObserved events and the fills
//     of pairs between the currencies), along the shortest path of rates
//     each no older than the book's FeeMaxAge (bot.FEE_RATE_MAX_AGE,
//     default one hour) before the fill: fee × rate. Without such a rate
//     the fee is unconverted: it counts 0 in every figure in quote and is
//     listed in its own asset (unconvertedFees) wherever the fill is, never
//     silently dropped.
//
// The valuation uses every rate of the log at or before the fill's trade
// time, whenever it was recorded: a rate recorded late re-values the fees
// after it (the fold re-folds the pairs it concerns), so a replay, a live
// service and any order of arrival give the same valuation.
//
// Worked example (pair USDT-ETH, fills at 10:00): buy 2 @ 1000 with fee
// 0.001 BNB, BNB observed at 500 USDT at 09:30 → feeQuote = 0.001 × 500 =
// 0.5, lot {2, 2000.5}. Buy 2 @ 1000 with fee 0.002 ETH → received 1.998,
// feeQuote 2, lot {1.998, 2000}. Buy 2 @ 1000 with fee 0.001 BNB and the
// last BNB rate at 08:30 (older than an hour) → unconverted: lot {2, 2000},
// unconvertedFees {BNB: 0.001}.

// ValueFee values a fill's fee (see the file comment): fee in asset on a
// pair quote-base filled at price at k (its trade time and log position).
// A third asset is valued with b's rates at or before k; b may be nil for
// fills that have no third-asset fee.
func ValueFee(b *RateBook, fee decimal.Decimal, asset, quote, base string, price decimal.Decimal, k Key) pnlmath.FeeValue {
	t := k.Time
	v := pnlmath.FeeValue{Asset: asset, Amount: fee, Rate: decimal.DecimalFromInt(1), RateTime: t, Valued: true}
	switch {
	case asset == "" || asset == quote || SameCurrency(asset, quote): // equal first: the common case, cheaply
		v.Asset, v.Quote = quote, fee
	case asset == base || SameCurrency(asset, base):
		v.Asset, v.InBase, v.Rate, v.Quote = base, true, price, fee.Mul(price)
	default:
		v.Third = true
		if fee.IsZero() {
			v.Rate = decimal.Zero
			return v
		}
		if b == nil {
			v.Valued, v.Rate, v.RateTime = false, decimal.Zero, 0
			return v
		}
		p, ok := b.PathAt(asset, quote, k, b.feeMaxAge(), math.MaxUint64)
		if !ok {
			v.Valued, v.Rate, v.RateTime = false, decimal.Zero, 0
			return v
		}
		v.Quote, v.Rate, v.RateTime = p.Convert(fee), p.Rate(), p.Time(t)
	}
	return v
}

// FeeThird reports whether a fee charged in asset on a pair quote-base is
// in a third asset (valued at a rate from the book).
func FeeThird(asset, quote, base string) bool {
	return asset != "" && !SameCurrency(asset, quote) && !SameCurrency(asset, base)
}

func (b *RateBook) feeMaxAge() int64 {
	if b.FeeMaxAge <= 0 {
		return DefaultFeeRateMaxAge
	}
	return b.FeeMaxAge
}
