package paper

import (
	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Fees in another asset than the quote. An exchange's FeeAsset setting
// says what its fills' fees are charged in, always FeeRate of the notional
// in value:
//
//   - "" (the default): the quote, added to what a buy spends and taken
//     from what a sell brings;
//   - FeeInReceived: the asset the order receives, as Binance charges an
//     account that pays no fees in BNB — a buy gets its quantity less
//     quantity × FeeRate, a sell brings notional less the fee in quote;
//   - an asset X (e.g. "BNB"): the fee's value converted into X at X's
//     simulated price in the pair's quote (the market quote-X, or through
//     USDT: USDT-X ÷ USDT-quote), taken from the X balance; when the
//     balance is short, or X has no price in the quote, the fee is charged
//     in the quote instead (as Binance does when BNB runs out).
//
// The account lists USDT-X (at FeeAssetPrice, a walk of its own) when its
// markets do not, and starts with DefaultFeeAssetBalance of X unless its
// balances name it.

// FeeInReceived is the FeeAsset setting that charges fees in the asset an
// order receives.
const FeeInReceived = "received"

// Defaults of a third fee asset.
var (
	// DefaultFeeAssetPrice is the starting USDT price of a fee asset's
	// market that the account adds.
	DefaultFeeAssetPrice = decimal.MustDecimal("600")
	// DefaultFeeAssetBalance is the starting balance of a fee asset that
	// the account's balances do not name.
	DefaultFeeAssetBalance = decimal.MustDecimal("10")
)

// thirdFeeAsset reports whether asset is a FeeAsset setting naming an
// asset (not the quote, not FeeInReceived).
func thirdFeeAsset(asset string) bool { return asset != "" && asset != FeeInReceived }

// withFeeMarket returns pairs with USDT-<fee asset> added when the
// settings name a fee asset the pairs do not list, and starts its balance.
func (a *Account) withFeeMarket(pairs []PairSpec, set ExchangeSettings) []PairSpec {
	x := set.FeeAsset
	if !thirdFeeAsset(x) {
		return pairs
	}
	if _, ok := set.Balances[x]; !ok && a.balances[x] == nil {
		a.balances[x] = &balance{available: DefaultFeeAssetBalance}
	}
	listed := false
	for _, p := range pairs {
		if p.Pair == "USDT-"+x {
			listed = true
		}
	}
	if listed || x == "USDT" {
		return pairs
	}
	price := DefaultFeeAssetPrice
	if set.FeeAssetPrice != nil && set.FeeAssetPrice.IsPos() {
		price = *set.FeeAssetPrice
	}
	return append(append([]PairSpec(nil), pairs...), PairSpec{Pair: "USDT-" + x, Price: price})
}

// chargeFee returns the asset o's fill of q (worth notional in quote) pays
// its fee in, and the fee in that asset. a.mu is held.
func (a *Account) chargeFee(o *order, q, notional decimal.Decimal) (string, decimal.Decimal) {
	inQuote := notional.Mul(a.fee)
	switch x := a.feeAsset; {
	case x == "" || x == o.quote:
		return o.quote, inQuote
	case x == FeeInReceived || x == o.base:
		if o.Side == domain.Buy {
			return o.base, q.Mul(a.fee)
		}
		return o.quote, inQuote
	default:
		p, ok := a.priceIn(x, o.quote)
		if !ok || inQuote.IsZero() {
			return o.quote, inQuote
		}
		fee := inQuote.Div(p)
		if fee.IsZero() || a.bal(x).available.Cmp(fee) < 0 {
			return o.quote, inQuote
		}
		return x, fee
	}
}

// priceIn returns the last price of asset in quote: the market
// quote-asset, or USDT-asset ÷ USDT-quote.
func (a *Account) priceIn(asset, quote string) (decimal.Decimal, bool) {
	if m, ok := a.markets[quote+"-"+asset]; ok {
		return m.last(), m.last().IsPos()
	}
	mx, okx := a.markets["USDT-"+asset]
	mq, okq := a.markets["USDT-"+quote]
	if !okx || !okq || !mq.last().IsPos() {
		return decimal.Zero, false
	}
	p := mx.last().Div(mq.last())
	return p, p.IsPos()
}
