package fold

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

func rdec(s string) decimal.Decimal { return decimal.MustDecimal(s) }

// convertAt converts x and returns the result in its shortest form, or
// "none" without a path.
func convertAt(b *RateBook, x, from, to string, t, maxAge int64) string {
	p, ok := b.Path(from, to, t, maxAge)
	if !ok {
		return "none"
	}
	return string(p.Convert(rdec(x)).AppendTrimmed(nil))
}

func TestRateBookOneHop(t *testing.T) {
	var b RateBook
	b.Observe("USDT", "BTC", 10, 1, rdec("50000"))
	b.Observe("USDT", "BTC", 30, 2, rdec("64000"))
	for _, c := range []struct {
		x, from, to string
		t           int64
		want        string
	}{
		{"2", "BTC", "USDT", 10, "100000"},   // 2 × 50000 (at its own time)
		{"2", "BTC", "USDT", 29, "100000"},   // the latest at or before 29 is 10's
		{"2", "BTC", "USDT", 30, "128000"},   // 2 × 64000
		{"1000", "USDT", "BTC", 20, "0.02"},  // 1000 ÷ 50000
		{"1600", "USDT", "BTC", 40, "0.025"}, // 1600 ÷ 64000
		{"2", "BTC", "USDT", 9, "none"},      // no rate yet at 9
		{"2", "BTC", "EUR", 40, "none"},      // no link
		{"7", "USDT", "USDT", 40, "7"},       // same currency
	} {
		if got := convertAt(&b, c.x, c.from, c.to, c.t, 0); got != c.want {
			t.Errorf("%s %s → %s at %d = %s, want %s", c.x, c.from, c.to, c.t, got, c.want)
		}
	}
}

// Every point is kept, whatever order they were recorded in: an amount
// converts with the latest at or before its time, and a point recorded
// late (an import) is used from its time on; points of one millisecond go
// by log position.
func TestRateBookKeepsEveryPointInTradeTime(t *testing.T) {
	var b RateBook
	b.Observe("USDT", "BTC", 30, 1, rdec("64000"))
	b.Observe("USDT", "BTC", 10, 2, rdec("50000")) // recorded after the one at 30
	if got := convertAt(&b, "1", "BTC", "USDT", 20, 0); got != "50000" {
		t.Errorf("at 20: %s, want 50000 (the point at 10, recorded late)", got)
	}
	b.Observe("USDT", "BTC", 30, 0, rdec("60000")) // same time, an earlier position
	if got := convertAt(&b, "1", "BTC", "USDT", 30, 0); got != "64000" {
		t.Errorf("at 30: %s, want 64000 (the later position of the millisecond)", got)
	}
	if p, ok := b.PathAsOf("BTC", "USDT", 40, 0, 1); !ok || p.Rate() != rdec("64000") {
		t.Errorf("as of position 1 at 40: %v %v, want 64000", p, ok)
	}
	if _, ok := b.PathAsOf("BTC", "USDT", 20, 0, 1); ok {
		t.Errorf("as of position 1 at 20: a rate, want none (the point at 10 came at position 2)")
	}
}

// EUR → USDT through BTC: 100 EUR ÷ 40000 = 0.0025 BTC × 50000 = 125 USDT.
func TestRateBookTwoHops(t *testing.T) {
	var b RateBook
	b.Observe("EUR", "BTC", 10, 6, rdec("40000"))
	b.Observe("USDT", "BTC", 10, 7, rdec("50000"))
	if got := convertAt(&b, "100", "EUR", "USDT", 20, 0); got != "125" {
		t.Errorf("100 EUR → USDT = %s, want 125", got)
	}
	p, _ := b.Path("EUR", "USDT", 20, 0)
	if len(p.Hops) != 2 || !p.Hops[0].Inverse || p.Hops[1].Inverse || p.Rate() != rdec("1.25") {
		t.Errorf("path %+v, rate %s; want ÷40000 then ×50000, rate 1.25", p.Hops, p.Rate())
	}
}

// Two paths of two hops from BNB to USDT: through BTC and through ETH. The
// tie rule takes the one whose currencies come first in byte order (BTC <
// ETH); a direct rate, once there, is shorter than both.
func TestRateBookTieRule(t *testing.T) {
	var b RateBook
	b.Observe("ETH", "BNB", 10, 8, rdec("0.2"))     // 1 BNB = 0.2 ETH;  ETH = 2500 USDT → 500
	b.Observe("USDT", "ETH", 10, 9, rdec("2500"))   //
	b.Observe("BTC", "BNB", 10, 10, rdec("0.01"))   // 1 BNB = 0.01 BTC; BTC = 40000 USDT → 400
	b.Observe("USDT", "BTC", 10, 11, rdec("40000")) //
	if got := convertAt(&b, "1", "BNB", "USDT", 20, 0); got != "400" {
		t.Errorf("BNB → USDT = %s, want 400 (through BTC)", got)
	}
	b.Observe("USDT", "BNB", 15, 12, rdec("450"))
	if got := convertAt(&b, "1", "BNB", "USDT", 20, 0); got != "450" {
		t.Errorf("BNB → USDT = %s, want 450 (direct)", got)
	}
	// Before the direct rate's time the direct link has none: the shortest
	// path with rates is the one through BTC again.
	if got := convertAt(&b, "1", "BNB", "USDT", 12, 0); got != "400" {
		t.Errorf("BNB → USDT at 12 = %s, want 400 (the direct rate is from 15)", got)
	}
}

// maxAge refuses a rate older than the amount's time by more than maxAge,
// on every hop.
func TestRateBookMaxAge(t *testing.T) {
	var b RateBook
	b.Observe("USDT", "BNB", 1000, 13, rdec("500"))
	if got := convertAt(&b, "0.01", "BNB", "USDT", 1000+3600, 3600); got != "5" {
		t.Errorf("at exactly maxAge: %s, want 5", got)
	}
	if got := convertAt(&b, "0.01", "BNB", "USDT", 1000+3601, 3600); got != "none" {
		t.Errorf("older than maxAge: %s, want none", got)
	}
	b.Observe("BTC", "BNB", 5000, 14, rdec("0.01"))
	b.Observe("USDT", "BTC", 100, 15, rdec("40000"))
	// BNB → BTC is fresh, BTC → USDT (from 100) is not.
	if got := convertAt(&b, "1", "BNB", "USDT", 5000, 3600); got != "none" {
		t.Errorf("a stale second hop: %s, want none", got)
	}
}

// Reporting: the configured currency, else the quote with the most fills
// (ties: byte order). Targets: the other quotes with fills (and the
// configured currency) joined to a quote by links.
func TestRateBookReportingAndTargets(t *testing.T) {
	var b RateBook
	b.CountFill("USDT")
	b.CountFill("BTC")
	if got := b.Reporting(); got != "BTC" {
		t.Errorf("reporting with a tie = %q, want BTC", got)
	}
	b.CountFill("USDT")
	if got := b.Reporting(); got != "USDT" {
		t.Errorf("reporting = %q, want USDT", got)
	}
	if got := b.Targets("USDT"); len(got) != 0 {
		t.Errorf("targets without links = %v", got)
	}
	b.Observe("USDT", "ETH", 1, 16, rdec("2000"))
	b.Observe("BTC", "ETH", 1, 17, rdec("0.05"))
	if got := b.Targets("USDT"); len(got) != 1 || got[0] != "BTC" {
		t.Errorf("targets of USDT = %v, want [BTC] (through ETH)", got)
	}
	b.SetReporting("EUR")
	if got := b.Reporting(); got != "EUR" {
		t.Errorf("configured reporting = %q", got)
	}
	b.Observe("EUR", "BTC", 1, 18, rdec("40000"))
	if got := b.Targets("USDT"); len(got) != 2 || got[0] != "BTC" || got[1] != "EUR" {
		t.Errorf("targets of USDT = %v, want [BTC EUR]", got)
	}
}
