//go:build ccxt

package ccxt

import (
	"math"
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Where ccxt keeps only a float, it is formatted with the market's
// precision (or as its shortest exact text): the exchange's own digits
// come back where the float holds them, and where it cannot (more than 15
// significant digits) or the text has more than 12 decimals, the number is
// refused, never rounded.
func TestFromFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		step string
		want string // "" = refused
	}{
		{1.2e-9, "0.0000000001", "0.0000000012"},
		{0.1 + 0.2, "0.01", "0.3"},
		{1e12, "1", "1000000000000"},
		{0.0312, "0", "0.0312"},
		{30000.1, "0.1", "30000.1"},
		{1e-13, "0", ""},
		{123456789.123456789, "0.000000001", ""},
		{math.NaN(), "0", ""},
		{math.Inf(1), "0.1", ""},
	} {
		d, p := fromFloat("x", c.f, decimal.MustDecimal(c.step))
		if c.want == "" {
			if p == nil {
				t.Errorf("fromFloat(%v, %s) = %s, want refused", c.f, c.step, d)
			}
			continue
		}
		if p != nil || d != decimal.MustDecimal(c.want) {
			t.Errorf("fromFloat(%v, %s) = %s, %+v; want %s", c.f, c.step, d, p, c.want)
		}
	}
}
