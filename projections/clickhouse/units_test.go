package clickhouse

import (
	"math"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// The tables hold exact counts of 10^-12: a value with 12 decimals goes in
// and comes back as it was; one beyond an Int64's range at that scale, or
// a sum that leaves it, is refused (never rounded, cut or wrapped).
func TestUnitsExactOrRefused(t *testing.T) {
	for _, s := range []string{"0.000000000001", "0.0000000012", "-1234.567890123456", "9223372.036854775806"} {
		d := domain.MustDecimal(s)
		if u := decUnits(d); tooWide(u) || fromUnits(u) != d {
			t.Errorf("%s → %d → %s", s, u, fromUnits(u))
		}
	}
	for _, s := range []string{"9223372.036854775807", "1000000000000", "-9223372.036854775807"} {
		if u := decUnits(domain.MustDecimal(s)); !tooWide(u) {
			t.Errorf("%s fit: %d", s, u)
		}
	}
	big := decUnits(domain.MustDecimal("5000000"))
	if s := addUnits(big, big); !tooWide(s) || s != math.MaxInt64 {
		t.Errorf("5e6 + 5e6 = %d, want refused", s)
	}
	if s := addUnits(-big, -big); !tooWide(s) {
		t.Errorf("-5e6 - 5e6 = %d, want refused", s)
	}
	if s := addUnits(addUnits(big, big), -big); !tooWide(s) {
		t.Errorf("a refused sum came back: %d", s)
	}
	if s := addUnits(big, -big/2); s != big-big/2 {
		t.Errorf("sum %d", s)
	}
	if err := (rangeChecked{}).Append("x", int64(7), int64(math.MaxInt64)); err != errTooWide {
		t.Errorf("a too wide row: %v, want errTooWide", err)
	}
}
