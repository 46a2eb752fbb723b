package fold

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
)

// ValueFee by asset, on a USDT-BTC fill at 20000 (time 10,000 ms), with
// BNB at 500 USDT from 9,000 ms. Arithmetic in the comments.
func TestValueFee(t *testing.T) {
	var b RateBook
	b.FeeMaxAge = 3600_000
	b.Observe("USDT", "BNB", 9000, 1, rdec("500"))
	tests := []struct {
		fee, asset       string
		wantAsset, quote string
		rate             string
		rateTime         int64
		inBase, valued   bool
	}{
		{"0.5", "USDT", "USDT", "0.5", "1", 10000, false, true},
		{"0.5", "", "USDT", "0.5", "1", 10000, false, true},
		{"0.001", "BTC", "BTC", "20", "20000", 10000, true, true}, // 0.001 × 20000
		{"0.01", "BNB", "BNB", "5", "500", 9000, false, true},     // 0.01 × 500, the rate's time
		{"2", "KCS", "KCS", "0", "0", 0, false, false},            // no rate: unconverted
		{"0", "KCS", "KCS", "0", "0", 10000, false, true},         // nothing to value
	}
	for _, tt := range tests {
		v := ValueFee(&b, rdec(tt.fee), tt.asset, "USDT", "BTC", rdec("20000"), Key{Time: 10000})
		if v.Asset != tt.wantAsset || v.Quote != rdec(tt.quote) || v.Rate != rdec(tt.rate) || v.RateTime != tt.rateTime ||
			v.InBase != tt.inBase || v.Valued != tt.valued || v.Amount != rdec(tt.fee) {
			t.Errorf("ValueFee(%s %s) = %+v; want asset %s quote %s rate %s at %d, inBase %v valued %v",
				tt.fee, tt.asset, v, tt.wantAsset, tt.quote, tt.rate, tt.rateTime, tt.inBase, tt.valued)
		}
	}
	// An hour and a millisecond after the rate: too old.
	if v := ValueFee(&b, rdec("0.01"), "BNB", "USDT", "BTC", rdec("20000"), Key{Time: 9000 + 3600_001}); v.Valued {
		t.Errorf("a rate older than FeeMaxAge valued the fee: %+v", v)
	}
}

// A buy whose fee is in the base holds the quantity received at the full
// cost; a sell-all of that quantity leaves nothing (no dust).
//
//	buy 2 @ 1000 fee 0.002 ETH: received 1.998, lot {1.998, 2000}, fee valued 2
//	sell 1.998 @ 1100 fee 2.1978 USDT: proceeds 2197.8 − 2.1978 − 2000 = 195.6022
func TestApplyFeeBaseOnBuy(t *testing.T) {
	var b RateBook
	l := pnlmath.Lots{Method: domain.FIFO}
	fee := ValueFee(&b, rdec("0.002"), "ETH", "USDT", "ETH", rdec("1000"), Key{Time: 1})
	r := l.ApplyFee(domain.Buy, rdec("1000"), rdec("2"), &fee)
	if r.Matched != rdec("1.998") || r.LotCost != rdec("2000") || r.Fee != rdec("2") || l.Qty() != rdec("1.998") {
		t.Fatalf("buy: %+v, lots qty %s", r, l.Qty())
	}
	if got := fee.Net(domain.Buy, r.Value); got != rdec("2000") {
		t.Errorf("baseValue of the buy = %s, want 2000 (the fee came out of the coins)", got)
	}
	sf := ValueFee(&b, rdec("2.1978"), "USDT", "USDT", "ETH", rdec("1100"), Key{Time: 2})
	r = l.ApplyFee(domain.Sell, rdec("1100"), rdec("1.998"), &sf)
	if r.Pnl != rdec("195.6022") || !r.Unmatched.IsZero() || !l.Qty().IsZero() || !l.Cost().IsZero() {
		t.Errorf("sell-all: %+v, left %s / %s", r, l.Qty(), l.Cost())
	}
	// The same fee in quote: the lot holds all 2 at 2000 + 2.
	l = pnlmath.Lots{Method: domain.FIFO}
	qf := ValueFee(&b, rdec("2"), "USDT", "USDT", "ETH", rdec("1000"), Key{Time: 1})
	if r := l.ApplyFee(domain.Buy, rdec("1000"), rdec("2"), &qf); r.LotCost != rdec("2002") || l.Qty() != rdec("2") {
		t.Errorf("quote fee: %+v", r)
	}
}
