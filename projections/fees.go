package projections

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Fees of order records. A fee is valued when its fill is folded
// (fold.ValueFee, at the rates of the log at or before the fill in trade
// order), and again when its pair is folded again (ledgerfold.go). The record keeps the fee as charged, with a code of its asset
// (books.go: 0 the quote, 1 the base, 2… a third asset); what showing it
// needs beyond that costs nothing for the common case:
//
//   - a fee in the quote is its own value;
//   - a fee in the base is worth amount × the fill's price (the same
//     product applyFill valued it with);
//   - a fee in a third asset, rare, has a feeEntry of the pair, found by the
//     record's (time, position): its value, the rate and the rate's time,
//     or that it had none (unconverted). Unconverted fees are summed from
//     these entries for the PNL answers' unconvertedFees.

// feeEntry is the valuation of a fee in a third asset of one of a pair's
// records.
type feeEntry struct {
	time     int64
	pos      uint64
	asset    string
	amount   decimal.Decimal
	quote    decimal.Decimal
	rate     decimal.Decimal
	rateTime int64
	valued   bool
}

// addFee keeps the valuation of the third-asset fee of the record at (t,
// pos).
func (b *pairBook) addFee(t int64, pos uint64, v *pnlmath.FeeValue) {
	e := feeEntry{time: t, pos: pos, asset: strings.Clone(v.Asset), amount: v.Amount, quote: v.Quote, rate: v.Rate, rateTime: v.RateTime, valued: v.Valued}
	n := len(b.fees)
	if n == 0 || !feeBefore(t, pos, &b.fees[n-1]) {
		b.fees = append(b.fees, e)
		return
	}
	i := sort.Search(n, func(i int) bool { return feeBefore(t, pos, &b.fees[i]) })
	b.fees = append(b.fees, feeEntry{})
	copy(b.fees[i+1:], b.fees[i:])
	b.fees[i] = e
}

// setFee sets the valuation of the third-asset fee of the record at k
// (folded again).
func (b *pairBook) setFee(k fold.Key, v *pnlmath.FeeValue) {
	i := sort.Search(len(b.fees), func(i int) bool {
		return !feeBefore(b.fees[i].time, b.fees[i].pos, &feeEntry{time: k.Time, pos: k.Pos})
	})
	if i == len(b.fees) || b.fees[i].time != k.Time || b.fees[i].pos != k.Pos {
		b.addFee(k.Time, k.Pos, v)
		return
	}
	e := &b.fees[i]
	e.quote, e.rate, e.rateTime, e.valued = v.Quote, v.Rate, v.RateTime, v.Valued
}

// feeBefore reports whether (t, pos) comes before e.
func feeBefore(t int64, pos uint64, e *feeEntry) bool {
	return t < e.time || (t == e.time && pos < e.pos)
}

// feeOf returns the fee of record r as charged and valued.
func (b *pairBook) feeOf(r *orderRecord) pnlmath.FeeValue {
	fee := b.recs.get(r.fee)
	f := pnlmath.FeeValue{Asset: b.feeAsset(r), Amount: fee}
	switch c := r.feeCode(); {
	case c == 0:
		if f.Asset == "" {
			f.Asset = b.quote
		}
		f.Quote, f.Rate, f.RateTime, f.Valued = fee, decimal.DecimalFromInt(1), r.time, true
	case c == 1:
		rate := b.recs.get(r.rate)
		f.Quote, f.Rate, f.RateTime, f.InBase, f.Valued = fee.Mul(rate), rate, r.time, true, true
	default:
		f.Third = true
		t, pos := r.time, r.pos()
		i := sort.Search(len(b.fees), func(i int) bool { e := &b.fees[i]; return e.time > t || (e.time == t && e.pos >= pos) })
		if i < len(b.fees) && b.fees[i].time == t && b.fees[i].pos == pos {
			e := &b.fees[i]
			f.Quote, f.Rate, f.RateTime, f.Valued = e.quote, e.rate, e.rateTime, e.valued
		}
	}
	return f
}

// appendFeeJSON appends the record's fee fields: feeAsset and feeAmount,
// then feeQuote, feeRate and feeRateTime when the fee was valued, or
// unconvertedFees when it was not.
func (o *OrderRecord) appendFeeJSON(b []byte) []byte {
	f := &o.Fee
	b = append(b, `,"feeAsset":`...)
	b = domain.AppendJSONString(b, f.Asset)
	b = append(b, `,"feeAmount":`...)
	b = appendNumber(b, f.Amount)
	if !f.Valued {
		b = append(b, `,"unconvertedFees":{`...)
		b = domain.AppendJSONString(b, f.Asset)
		b = append(b, ':')
		b = appendNumber(b, f.Amount)
		return append(b, '}')
	}
	b = append(b, `,"feeQuote":`...)
	b = appendNumber(b, f.Quote)
	b = append(b, `,"feeRate":`...)
	b = appendNumber(b, f.Rate)
	b = append(b, `,"feeRateTime":`...)
	return strconv.AppendInt(b, f.RateTime, 10)
}

// unconvertedFees adds to out the fees of b's fills in the buckets starting
// in [from, to) (unix s) that had no rate, by asset.
func (b *pairBook) unconvertedFees(from, to int64, out map[string]decimal.Decimal) {
	lo := sort.Search(len(b.fees), func(i int) bool { return bucketStart(b.fees[i].time) >= from })
	for i := lo; i < len(b.fees) && bucketStart(b.fees[i].time) < to; i++ {
		if e := &b.fees[i]; !e.valued {
			out[e.asset] = out[e.asset].Add(e.amount)
		}
	}
}

// bucketStart returns the start (unix s) of the PNL bucket of a time in ms.
func bucketStart(ms int64) int64 { return pnlread.FloorDiv(ms, BucketSeconds*1000) * BucketSeconds }

// feeNumbers returns fees as the answers show them (nil when empty).
func feeNumbers(fees map[string]decimal.Decimal) map[string]decimal.Number {
	if len(fees) == 0 {
		return nil
	}
	out := make(map[string]decimal.Number, len(fees))
	for a, v := range fees {
		out[a] = decimal.Number(v)
	}
	return out
}

// sawFeeAsset notes that a fill of exchange paid a fee in asset.
func (l *Ledger) sawFeeAsset(exchange, asset string) {
	for _, a := range l.feeAsts[exchange] {
		if a == asset {
			return
		}
	}
	if l.feeAsts == nil {
		l.feeAsts = map[string][]string{}
	}
	l.feeAsts[exchange] = append(l.feeAsts[exchange], strings.Clone(asset))
}

// FeeAssets returns the assets other than a pair's own that fills of
// exchange paid fees in (BNB …), in the order first seen: the core records
// their rates from then on (engine.Scheduler.FeeAssets).
func (l *Ledger) FeeAssets(exchange string) []string {
	l.rlock()
	defer l.mu.RUnlock()
	return append([]string(nil), l.feeAsts[exchange]...)
}
