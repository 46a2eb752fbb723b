package decimal

import "strings"

// Amounts as a person reads them, for the messages the API returns (an
// order's refusal names what it needs and what there is): each in its
// currency's or its market's precision, the whole part grouped by
// thousands, the unit after. The dashboard's formatting module
// (http/dashboard/fmt.js) applies the same rules to what it shows, so a
// refusal reads like the page around it. (domain.PrecisionOf gives a
// market's places.)

// CurrencyDecimals returns how many decimals an amount of currency cur is
// shown with: 2 for fiat money and stablecoins, 8 for BTC (and XBT), 6 for
// ETH and BNB, 8 for any other currency.
func CurrencyDecimals(cur string) int {
	switch strings.ToUpper(cur) {
	case "USD", "USDT", "USDC", "BUSD", "FDUSD", "TUSD", "DAI", "USDP", "EUR", "EURI", "GBP", "CHF", "AUD", "CAD",
		"TRY", "BRL", "ZAR", "PLN", "RUB", "UAH", "NGN", "ARS", "MXN", "IDR", "INR", "KRW", "JPY":
		return 2
	case "ETH", "BNB":
		return 6
	}
	return 8
}

// Places returns how many decimals d has, trailing zeros aside
// (0.001 → 3, 10 → 0).
func (d Decimal) Places() int {
	s := string(d.AppendTrimmed(nil))
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// TextRounding says how AmountText fits a figure to its places.
type TextRounding int

const (
	// TextExact drops no digit: a figure with more decimals than places
	// shows them all (a quantity, a price someone typed).
	TextExact TextRounding = iota
	// TextUp rounds up (towards +∞): what an order needs never shows
	// as less than it is.
	TextUp
	// TextDown rounds down (towards −∞): the funds there are never show
	// as more than they are.
	TextDown
)

// AmountText returns d with places decimals (0 to 12) fitted by r, its
// whole part grouped by thousands with commas, a minus sign when
// negative, then a space and unit (nothing when unit is ""):
// AmountText(59059, 2, TextUp, "USDT") = "59,059.00 USDT".
func AmountText(d Decimal, places int, r TextRounding, unit string) string {
	places = min(DecimalPlaces, max(0, places))
	step := NewDecimal(1, -places)
	switch rem := d.Rem(step); {
	case rem.IsZero():
	case r == TextExact:
		places = d.Places()
	case r == TextUp:
		d = d.Sub(rem)
		if rem.IsPos() {
			d = d.Add(step)
		}
	case r == TextDown:
		d = d.Sub(rem)
		if rem.IsNeg() {
			d = d.Sub(step)
		}
	}
	s := string(d.Abs().AppendTrimmed(nil))
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if d.IsNeg() {
		b.WriteByte('-')
	}
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if places > 0 {
		b.WriteByte('.')
		b.WriteString(frac)
		b.WriteString(strings.Repeat("0", places-len(frac)))
	}
	if unit != "" {
		b.WriteByte(' ')
		b.WriteString(unit)
	}
	return b.String()
}
