package domain

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The precision of a market: the dashboard's rule (fmt.js Market), from
// the filters or from a reference price.
func TestPrecisionOf(t *testing.T) {
	for _, c := range []struct {
		quote string
		f     MarketFilters
		ref   string
		want  MarketPrecision
	}{
		{"USDT", MarketFilters{}, "60000", MarketPrecision{Price: 2, Amount: 5}},
		{"USDT", MarketFilters{}, "3000", MarketPrecision{Price: 2, Amount: 4}},
		{"USDT", MarketFilters{}, "0.5", MarketPrecision{Price: 5, Amount: 0}},
		{"BTC", MarketFilters{}, "0.0488", MarketPrecision{Price: 6, Amount: 5}},
		{"USDT", MarketFilters{}, "0", MarketPrecision{Price: 2, Amount: 4}},
		{"USDT", MarketFilters{TickSize: decimal.MustDecimal("0.01"), StepSize: decimal.MustDecimal("0.00001")}, "60000", MarketPrecision{Price: 2, Amount: 5}},
		{"USDT", MarketFilters{TickSize: decimal.MustDecimal("0.1"), StepSize: decimal.MustDecimal("1")}, "60000", MarketPrecision{Price: 1, Amount: 0}},
	} {
		if got := PrecisionOf(c.quote, c.f, decimal.MustDecimal(c.ref)); got != c.want {
			t.Errorf("PrecisionOf(%s, %+v, %s) = %+v, want %+v", c.quote, c.f, c.ref, got, c.want)
		}
	}
}
