package domain

import (
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
)

// DecimalPlaces is the fixed precision of every amount, price and fee: a
// Decimal is a whole count of 10^-12.
const DecimalPlaces = 12

// eventPlaces is the number of decimals a Decimal's String form always
// writes (more only when the value has finer digits), so that the event
// strings of values that fit it stay those of the 8-decimal type before.
const eventPlaces = 8

const decimalScale = 1_000_000_000_000 // 10^DecimalPlaces

// Decimal is an exact fixed-point number: a signed 128-bit count of 10^-12
// units. Its range is ±170,141,183,460,469,231,731,687,303.715884105727
// (about ±1.7×10^26), which holds a quantity of 10^15 units at a price of
// 10^9 and sums of many of them, and its scale holds the prices and fees of
// sub-cent tokens down to 10^-12.
//
// Sums and differences are exact. Products and quotients (Mul, Div, MulDiv,
// DivInt, Round) are rounded once, half to even, to 12 decimals (Round: to the
// places asked) — the one rounding rule of the ledger, in roundQuo. The plain
// forms saturate at the bounds of the range; the Checked forms report
// overflow instead, and code that takes numbers from outside uses them (or
// ParseDecimal, which refuses what does not fit rather than rounding it).
//
// In JSON a Decimal is a string (events keep decimal strings): with exactly
// 8 decimals when the value has no finer digit ("0.00012300", byte-identical
// to the 8-decimal type it replaced, so that logs, hashes and golden files
// stay as they were), else with the digits it has up to the 12th and no
// trailing zero ("0.0000000012"). MarshalJSON on the HTTP edge goes through
// Number, which writes a JSON number with the exact digits.
//
// Code outside this file uses its methods only — no Go operators and no
// conversions, == and != excepted (equal values have one representation) —
// so that its representation can change without touching its users. The
// zero value is 0.
type Decimal struct {
	hi int64  // high 64 bits of the two's complement 128-bit coefficient
	lo uint64 // low 64 bits
}

// Zero is the decimal 0.
var Zero = Decimal{}

// MaxDecimal is the largest Decimal; −MaxDecimal is the smallest.
var MaxDecimal = Decimal{math.MaxInt64, math.MaxUint64}

// pow10 holds 10^0 … 10^19.
var pow10 = [20]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
	1e17, 1e18, 1e19}

// fromInt64 returns the Decimal of coefficient c (c×10^-12).
func fromInt64(c int64) Decimal { return Decimal{c >> 63, uint64(c)} }

// fromMag returns the Decimal of magnitude (hi, lo) and sign neg, and whether
// it is in range (magnitude < 2^127).
func fromMag(hi, lo uint64, neg bool) (Decimal, bool) {
	if hi > math.MaxInt64 {
		return Decimal{}, false
	}
	if neg {
		lo, b := bits.Sub64(0, lo, 0)
		hi, _ := bits.Sub64(0, hi, b)
		return Decimal{int64(hi), lo}, true
	}
	return Decimal{int64(hi), lo}, true
}

// mag returns d's magnitude and whether d is negative.
func (d Decimal) mag() (hi, lo uint64, neg bool) {
	if d.hi < 0 {
		lo, b := bits.Sub64(0, d.lo, 0)
		hi, _ := bits.Sub64(0, uint64(d.hi), b)
		return hi, lo, true
	}
	return uint64(d.hi), d.lo, false
}

// small returns d's coefficient when it fits an int64.
func (d Decimal) small() (int64, bool) { return int64(d.lo), d.hi == int64(d.lo)>>63 }

// saturate returns the bound on the side of neg.
func saturate(neg bool) Decimal {
	if neg {
		return MaxDecimal.Neg()
	}
	return MaxDecimal
}

// NewDecimal returns coef×10^exp. An exponent below −12, or a value out of
// range, panics: it is meant for constants and counts in code and tests;
// numbers from outside go through ParseDecimal.
func NewDecimal(coef int64, exp int) Decimal {
	if exp < -DecimalPlaces {
		panic("domain.NewDecimal: exponent finer than the scale")
	}
	neg := coef < 0
	u := uint64(coef)
	if neg {
		u = -u
	}
	var hi uint64
	lo, ok := u, true
	for e := exp + DecimalPlaces; e > 0 && ok; e -= 19 {
		hi, lo, ok = mulAdd128(hi, lo, pow10[min(e, 19)], 0)
	}
	d, fits := fromMag(hi, lo, neg)
	if !ok || !fits {
		panic("domain.NewDecimal: out of range")
	}
	return d
}

// DecimalFromInt returns the decimal n.
func DecimalFromInt(n int64) Decimal { return NewDecimal(n, 0) }

// ParseDecimal parses a decimal string ("12", "-0.5", "+3."; "1e-3" is
// refused) with at most 12 decimals (zeros beyond them are allowed). More
// decimals, or a value beyond the range, are an EINVALID error rather than a
// silent rounding, so that a number never changes on its way into the log.
func ParseDecimal(s string) (Decimal, error) { return parseDecimal(s) }

// parseDecimal is ParseDecimal for strings and byte slices alike, so that
// decoders parse without converting (and allocating) first.
func parseDecimal[T string | []byte](s T) (Decimal, error) {
	if d, ok := canonicalDecimal(s); ok {
		return d, nil
	}
	if len(s) == 0 {
		return Decimal{}, Errorf(EINVALID, "empty number")
	}
	neg := false
	i := 0
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		i = 1
	}
	// The coefficient is gathered in one uint64 while it has at most 19
	// digits (the common case), then in 128 bits.
	var hi, lo uint64
	digits, fracDigits, n := 0, 0, 0
	seenDot := false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && !seenDot:
			seenDot = true
		case c >= '0' && c <= '9':
			digits++
			if seenDot {
				if fracDigits == DecimalPlaces {
					if c != '0' {
						return Decimal{}, Errorf(EINVALID, "%q has more than %d decimals", s, DecimalPlaces)
					}
					continue
				}
				fracDigits++
			}
			if n < 19 {
				lo = lo*10 + uint64(c-'0')
				if lo != 0 {
					n++
				}
				continue
			}
			var ok bool
			if hi, lo, ok = mulAdd128(hi, lo, 10, uint64(c-'0')); !ok {
				return Decimal{}, Errorf(EINVALID, "%q is too large", s)
			}
		default:
			return Decimal{}, Errorf(EINVALID, "%q is not a decimal number", s)
		}
	}
	if digits == 0 {
		return Decimal{}, Errorf(EINVALID, "%q is not a decimal number", s)
	}
	hi, lo, ok := mulAdd128(hi, lo, pow10[DecimalPlaces-fracDigits], 0)
	if !ok {
		return Decimal{}, Errorf(EINVALID, "%q is too large", s)
	}
	d, ok := fromMag(hi, lo, neg)
	if !ok {
		return Decimal{}, Errorf(EINVALID, "%q is too large", s)
	}
	return d, nil
}

// mulAdd128 returns (hi, lo)×m + a, and false when it exceeds 128 bits.
func mulAdd128(hi, lo, m, a uint64) (uint64, uint64, bool) {
	h1, l1 := bits.Mul64(lo, m)
	h2, l2 := bits.Mul64(hi, m)
	if h2 != 0 {
		return 0, 0, false
	}
	var c uint64
	hi, c = bits.Add64(h1, l2, 0)
	if c != 0 {
		return 0, 0, false
	}
	lo, c = bits.Add64(l1, a, 0)
	hi, c = bits.Add64(hi, 0, c)
	return hi, lo, c == 0
}

// fromCanonical returns the Decimal of the coefficient u with frac decimals
// (frac ≤ 12), negated when neg: for decoders that have read the digits.
func fromCanonical(u uint64, frac int, neg bool) Decimal {
	hi, lo := bits.Mul64(u, pow10[DecimalPlaces-frac])
	d, _ := fromMag(hi, lo, neg) // < 2^64 × 10^12 < 2^127
	return d
}

// MustDecimal parses s or panics; for constants in code and tests.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DecimalFromFloat converts a float received at the API edge: the shortest
// decimal that reads back as f (the number the client meant). NaN, ±Inf,
// values out of range and values with more than 12 decimals are EINVALID.
func DecimalFromFloat(f float64) (Decimal, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Decimal{}, Errorf(EINVALID, "not a finite number")
	}
	if math.Abs(f) >= 1e26 {
		return Decimal{}, Errorf(EINVALID, "%g is too large", f)
	}
	return ParseDecimal(strconv.FormatFloat(f, 'f', -1, 64))
}

// Float64 returns the nearest float64, for indicators and clients that
// take binary floats; never on the way into the log.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// String formats with 8 decimals, or with up to 12 when d has finer digits
// (no trailing zeros beyond the 8th): "-0.00012300", "0.0000000012".
func (d Decimal) String() string {
	return string(d.Append(make([]byte, 0, 48)))
}

// Append appends the String form to b.
func (d Decimal) Append(b []byte) []byte {
	b, frac := d.appendWhole(b)
	places := DecimalPlaces
	if frac%pow10[DecimalPlaces-eventPlaces] == 0 {
		frac /= pow10[DecimalPlaces-eventPlaces]
		places = eventPlaces
	} else {
		for frac%10 == 0 {
			frac /= 10
			places--
		}
	}
	return appendFrac(b, frac, places)
}

// AppendTrimmed appends d in its shortest exact form: no trailing zeros,
// and no point for a whole number ("12.5", "3", "-0.00012").
func (d Decimal) AppendTrimmed(b []byte) []byte {
	b, frac := d.appendWhole(b)
	if frac == 0 {
		return b
	}
	places := DecimalPlaces
	for frac%10 == 0 {
		frac /= 10
		places--
	}
	return appendFrac(b, frac, places)
}

// appendFrac appends '.' and frac as exactly places digits.
func appendFrac(b []byte, frac uint64, places int) []byte {
	var f [DecimalPlaces + 1]byte
	f[0] = '.'
	for i := places; i >= 1; i-- {
		f[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, f[:places+1]...)
}

// appendWhole appends d's sign and whole part, and returns the fraction's
// digits as an integer (0 ≤ frac < 10^12).
func (d Decimal) appendWhole(b []byte) (_ []byte, frac uint64) {
	hi, lo, neg := d.mag()
	if neg {
		b = append(b, '-')
	}
	if hi == 0 {
		return strconv.AppendUint(b, lo/decimalScale, 10), lo % decimalScale
	}
	// whole = (hi, lo) / 10^12 < 2^88: its top digits, then 19 more.
	wh, r := bits.Div64(0, hi, decimalScale)
	wl, frac := bits.Div64(r, lo, decimalScale)
	top, rest := bits.Div64(wh, wl, pow10[19])
	if top == 0 {
		return strconv.AppendUint(b, rest, 10), frac
	}
	b = strconv.AppendUint(b, top, 10)
	var digits [19]byte
	for i := 18; i >= 0; i-- {
		digits[i] = byte('0' + rest%10)
		rest /= 10
	}
	return append(b, digits[:]...), frac
}

// MarshalJSON writes the String form, quoted.
func (d Decimal) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 48)
	b = append(b, '"')
	b = d.Append(b)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a quoted decimal string (or, leniently, a bare JSON
// number written as a decimal literal), as ParseDecimal does.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	v, err := parseDecimal(b)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Neg returns -d.
func (d Decimal) Neg() Decimal {
	lo, b := bits.Sub64(0, d.lo, 0)
	hi, _ := bits.Sub64(0, uint64(d.hi), b)
	return Decimal{int64(hi), lo}
}

// Abs returns |d|.
func (d Decimal) Abs() Decimal {
	if d.hi < 0 {
		return d.Neg()
	}
	return d
}

// Sign returns -1, 0 or 1.
func (d Decimal) Sign() int {
	switch {
	case d.hi < 0:
		return -1
	case d.hi > 0 || d.lo != 0:
		return 1
	}
	return 0
}

// Words returns d's representation as two machine words (the high and low
// halves of its 128-bit two's complement coefficient of 10^-12), for binary
// forms that keep it as it is (read-model snapshots, domain/snap);
// DecimalFromWords is its inverse.
func (d Decimal) Words() (hi int64, lo uint64) { return d.hi, d.lo }

// DecimalFromWords returns the Decimal whose Words are hi and lo, and
// false for the one pair that is no Decimal's: −2^127, below −MaxDecimal.
func DecimalFromWords(hi int64, lo uint64) (Decimal, bool) {
	return Decimal{hi, lo}, hi != math.MinInt64 || lo != 0
}

// IsZero reports whether d is 0.
func (d Decimal) IsZero() bool { return d.hi == 0 && d.lo == 0 }

// IsNeg reports whether d < 0.
func (d Decimal) IsNeg() bool { return d.hi < 0 }

// IsPos reports whether d > 0.
func (d Decimal) IsPos() bool { return d.hi > 0 || (d.hi == 0 && d.lo != 0) }

// IsInt reports whether d is a whole number.
func (d Decimal) IsInt() bool {
	hi, lo, _ := d.mag()
	_, r := bits.Div64(hi%decimalScale, lo, decimalScale)
	return r == 0
}

// Int64 returns d as an int64 when it is a whole number that fits one.
func (d Decimal) Int64() (int64, bool) {
	hi, lo, neg := d.mag()
	if hi >= decimalScale {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, decimalScale)
	if r != 0 || q > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(q), true
	}
	return int64(q), true
}

// Coefficient returns d as a whole count of 10^-12 when that fits an int64
// (|d| below about 9.2×10^6): for stores whose columns hold such counts.
func (d Decimal) Coefficient() (int64, bool) { return d.small() }

// Add returns d+e, saturating at the bounds.
func (d Decimal) Add(e Decimal) Decimal {
	s, ok := d.CheckedAdd(e)
	if !ok {
		return saturate(e.hi < 0)
	}
	return s
}

// Sub returns d-e, saturating at the bounds.
func (d Decimal) Sub(e Decimal) Decimal { return d.Add(e.Neg()) }

// CheckedAdd returns d+e and whether it is in range.
func (d Decimal) CheckedAdd(e Decimal) (Decimal, bool) {
	lo, c := bits.Add64(d.lo, e.lo, 0)
	hi := d.hi + e.hi + int64(c)
	if (d.hi^hi)&(e.hi^hi) < 0 || (hi == math.MinInt64 && lo == 0) {
		return Decimal{}, false
	}
	return Decimal{hi, lo}, true
}

// CheckedSub returns d-e and whether it is in range.
func (d Decimal) CheckedSub(e Decimal) (Decimal, bool) { return d.CheckedAdd(e.Neg()) }

// Mul returns d×e rounded half to even to 12 decimals, saturating.
func (d Decimal) Mul(e Decimal) Decimal {
	p, ok := d.CheckedMul(e)
	if !ok {
		return saturate((d.hi < 0) != (e.hi < 0))
	}
	return p
}

// CheckedMul returns d×e rounded half to even to 12 decimals, and whether
// it is in range.
func (d Decimal) CheckedMul(e Decimal) (Decimal, bool) {
	if a, ok := d.small(); ok {
		if b, ok := e.small(); ok { // |a×b| < 2^126: one hardware division
			hi, lo := bits.Mul64(abs64(a), abs64(b))
			qh, rh := hi/decimalScale, hi%decimalScale
			ql, r := bits.Div64(rh, lo, decimalScale)
			if r > decimalScale/2 || (r == decimalScale/2 && ql&1 == 1) { // half to even, as roundQuo
				var c uint64
				ql, c = bits.Add64(ql, 1, 0)
				qh += c
			}
			return fromMag(qh, ql, (a < 0) != (b < 0))
		}
	}
	ah, al, an := d.mag()
	bh, bl, bn := e.mag()
	return roundQuo(mul128(ah, al, bh, bl), [2]uint64{decimalScale}, an != bn)
}

// Div returns d÷e rounded half to even to 12 decimals, saturating; division
// by zero returns 0 (callers that can meet a zero divisor check first: every
// average in this package defines its empty case).
func (d Decimal) Div(e Decimal) Decimal {
	q, ok := d.CheckedDiv(e)
	if !ok {
		if e.IsZero() {
			return Decimal{}
		}
		return saturate((d.hi < 0) != (e.hi < 0))
	}
	return q
}

// CheckedDiv returns d÷e rounded half to even to 12 decimals, and whether
// it is in range (false also for a zero divisor).
func (d Decimal) CheckedDiv(e Decimal) (Decimal, bool) {
	if e.IsZero() {
		return Decimal{}, false
	}
	if a, ok := d.small(); ok {
		if b, ok := e.small(); ok { // |a×10^12| < 2^103 over a 64-bit divisor
			nh, nl := bits.Mul64(abs64(a), decimalScale)
			return quoSmall(nh, nl, abs64(b), (a < 0) != (b < 0))
		}
	}
	ah, al, an := d.mag()
	bh, bl, bn := e.mag()
	return roundQuo(mul128(ah, al, 0, decimalScale), [2]uint64{bl, bh}, an != bn)
}

// MulInt returns d×n, saturating.
func (d Decimal) MulInt(n int64) Decimal { return d.Mul(DecimalFromInt(n)) }

// DivInt returns d÷n rounded half to even to 12 decimals; n = 0 returns 0.
func (d Decimal) DivInt(n int64) Decimal { return d.Div(DecimalFromInt(n)) }

// MulDiv returns a×b÷c rounded half to even to 12 decimals, with no rounding
// in between (the product is kept in 256 bits). c = 0 returns 0; a result
// out of range saturates.
func MulDiv(a, b, c Decimal) Decimal {
	q, ok := CheckedMulDiv(a, b, c)
	if !ok {
		if c.IsZero() {
			return Decimal{}
		}
		return saturate((a.hi < 0) != (b.hi < 0) != (c.hi < 0))
	}
	return q
}

// CheckedMulDiv is MulDiv reporting whether the result is in range (false
// also for c = 0).
func CheckedMulDiv(a, b, c Decimal) (Decimal, bool) {
	if c.IsZero() {
		return Decimal{}, false
	}
	if x, ok := a.small(); ok {
		if y, ok := b.small(); ok {
			if z, ok := c.small(); ok { // a 128-bit product over a 64-bit divisor
				hi, lo := bits.Mul64(abs64(x), abs64(y))
				return quoSmall(hi, lo, abs64(z), (x < 0) != (y < 0) != (z < 0))
			}
		}
	}
	ah, al, an := a.mag()
	bh, bl, bn := b.mag()
	ch, cl, cn := c.mag()
	return roundQuo(mul128(ah, al, bh, bl), [2]uint64{cl, ch}, an != bn != cn)
}

// Round returns d rounded half to even to places decimals (0 ≤ places ≤ 12).
func (d Decimal) Round(places int) Decimal {
	if places >= DecimalPlaces {
		return d
	}
	hi, lo, neg := d.mag()
	unit := pow10[DecimalPlaces-places]
	q, ok := roundQuo([4]uint64{lo, hi}, [2]uint64{unit}, neg)
	if !ok {
		return d
	}
	r, ok := q.CheckedMul(DecimalFromInt(int64(unit)))
	if !ok { // rounding up past the range: the nearest multiple below
		return d.Sub(d.Rem(NewDecimal(1, -places)))
	}
	return r
}

// Rem returns the remainder of d÷e truncated towards zero (d − e×trunc(d/e),
// with the sign of d), exact; e = 0 returns 0. d.Sub(d.Rem(step)) rounds a
// non-negative d down to a multiple of step.
func (d Decimal) Rem(e Decimal) Decimal {
	if e.IsZero() {
		return Decimal{}
	}
	ah, al, an := d.mag()
	bh, bl, _ := e.mag()
	_, r := divmod([4]uint64{al, ah}, [2]uint64{bl, bh})
	v, _ := fromMag(r[1], r[0], an)
	return v
}

// quoSmall is roundQuo for a 128-bit n and a 64-bit d ≠ 0: two hardware
// divisions, the same rounding (half to even).
func quoSmall(hi, lo, d uint64, neg bool) (Decimal, bool) {
	qh, r := bits.Div64(0, hi, d)
	ql, r := bits.Div64(r, lo, d)
	if r > d-r || (r == d-r && ql&1 == 1) {
		var c uint64
		ql, c = bits.Add64(ql, 1, 0)
		qh += c
	}
	return fromMag(qh, ql, neg)
}

// roundQuo returns n ÷ d (magnitudes, d ≠ 0) rounded half to even, with the
// sign of neg, and whether it is in range: every rounding of the type.
func roundQuo(n [4]uint64, d [2]uint64, neg bool) (Decimal, bool) {
	q, r := divmod(n, d)
	// Round up when r > d−r, or r = d−r (a half) and q is odd.
	t1, b := bits.Sub64(d[0], r[0], 0)
	t2, _ := bits.Sub64(d[1], r[1], b)
	if r[1] > t2 || (r[1] == t2 && (r[0] > t1 || (r[0] == t1 && q[0]&1 == 1))) {
		var c uint64
		q[0], c = bits.Add64(q[0], 1, 0)
		q[1], c = bits.Add64(q[1], 0, c)
		q[2], c = bits.Add64(q[2], 0, c)
		q[3] += c
	}
	if q[2] != 0 || q[3] != 0 {
		return Decimal{}, false
	}
	return fromMag(q[1], q[0], neg)
}

// mul128 returns (ah, al)×(bh, bl) as 4 little-endian 64-bit limbs.
func mul128(ah, al, bh, bl uint64) [4]uint64 {
	var p [4]uint64
	h00, l00 := bits.Mul64(al, bl)
	p[0] = l00
	if ah == 0 && bh == 0 {
		p[1] = h00
		return p
	}
	h01, l01 := bits.Mul64(al, bh)
	h10, l10 := bits.Mul64(ah, bl)
	h11, l11 := bits.Mul64(ah, bh)
	var c1, c2 uint64
	p[1], c1 = bits.Add64(h00, l01, 0)
	p[1], c2 = bits.Add64(p[1], l10, 0)
	p[2], c1 = bits.Add64(h01, h10, c1)
	p[3] = h11 + c1
	p[2], c1 = bits.Add64(p[2], l11, c2)
	p[3] += c1
	return p
}

// divmod divides the 256-bit n by the 128-bit d ≠ 0 (little-endian limbs)
// and returns the quotient and remainder.
func divmod(n [4]uint64, d [2]uint64) (q [4]uint64, r [2]uint64) {
	if d[1] == 0 {
		var rem uint64
		i := 3
		for i > 0 && n[i] == 0 {
			i--
		}
		for ; i >= 0; i-- {
			q[i], rem = bits.Div64(rem, n[i], d[0])
		}
		return q, [2]uint64{rem}
	}
	// Knuth's algorithm D with two-limb divisor: normalise so that the
	// divisor's top bit is set, estimate each quotient limb from the top
	// two limbs of the remainder, correct it at most twice.
	s := uint(bits.LeadingZeros64(d[1]))
	d1 := d[1]<<s | d[0]>>(64-s)
	d0 := d[0] << s
	var u [5]uint64
	u[4] = n[3] >> (64 - s)
	for i := 3; i > 0; i-- {
		u[i] = n[i]<<s | n[i-1]>>(64-s)
	}
	u[0] = n[0] << s
	for j := 2; j >= 0; j-- {
		var qh, rh uint64
		big := false // rh ≥ 2^64
		if u[j+2] >= d1 {
			qh = math.MaxUint64
			var c uint64
			rh, c = bits.Add64(u[j+1], d1, 0)
			big = c != 0
		} else {
			qh, rh = bits.Div64(u[j+2], u[j+1], d1)
		}
		for !big {
			ph, pl := bits.Mul64(qh, d0)
			if ph < rh || (ph == rh && pl <= u[j]) {
				break
			}
			qh--
			var c uint64
			rh, c = bits.Add64(rh, d1, 0)
			big = c != 0
		}
		// u[j..j+2] -= qh × (d1, d0)
		ph0, pl0 := bits.Mul64(qh, d0)
		ph1, pl1 := bits.Mul64(qh, d1)
		p1, c := bits.Add64(pl1, ph0, 0)
		p2 := ph1 + c
		var b uint64
		u[j], b = bits.Sub64(u[j], pl0, 0)
		u[j+1], b = bits.Sub64(u[j+1], p1, b)
		u[j+2], b = bits.Sub64(u[j+2], p2, b)
		if b != 0 { // qh was one too large: add the divisor back
			qh--
			u[j], c = bits.Add64(u[j], d0, 0)
			u[j+1], c = bits.Add64(u[j+1], d1, c)
			u[j+2] += c
		}
		q[j] = qh
	}
	r[0] = u[0]>>s | u[1]<<(64-s)
	r[1] = u[1]>>s | u[2]<<(64-s)
	return q, r
}

func abs64(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

// CmpProducts compares a×b with c×d exactly, for operands ≥ 0: -1, 0 or 1
// (a ratio a/d against c/b without dividing).
func CmpProducts(a, b, c, d Decimal) int {
	if x, ok := a.small(); ok {
		if y, ok := b.small(); ok {
			if z, ok := c.small(); ok {
				if w, ok := d.small(); ok {
					h1, l1 := bits.Mul64(uint64(x), uint64(y))
					h2, l2 := bits.Mul64(uint64(z), uint64(w))
					return cmp128(h1, l1, h2, l2)
				}
			}
		}
	}
	p := mul128(uint64(a.hi), a.lo, uint64(b.hi), b.lo)
	q := mul128(uint64(c.hi), c.lo, uint64(d.hi), d.lo)
	for i := 3; i >= 0; i-- {
		if p[i] != q[i] {
			if p[i] < q[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func cmp128(h1, l1, h2, l2 uint64) int {
	switch {
	case h1 < h2 || (h1 == h2 && l1 < l2):
		return -1
	case h1 == h2 && l1 == l2:
		return 0
	}
	return 1
}

// Cmp returns -1, 0 or 1 as d is less than, equal to or greater than e.
func (d Decimal) Cmp(e Decimal) int {
	switch {
	case d.hi < e.hi || (d.hi == e.hi && d.lo < e.lo):
		return -1
	case d == e:
		return 0
	}
	return 1
}

// Less reports whether d < e.
func (d Decimal) Less(e Decimal) bool { return d.hi < e.hi || (d.hi == e.hi && d.lo < e.lo) }

// Min returns the smaller of d and e.
func (d Decimal) Min(e Decimal) Decimal {
	if e.Less(d) {
		return e
	}
	return d
}

// Max returns the larger of d and e.
func (d Decimal) Max(e Decimal) Decimal {
	if d.Less(e) {
		return e
	}
	return d
}

// Number is a Decimal that marshals as a JSON number, for API responses
// whose clients expect numbers (the spec's order records, PNL figures).
type Number Decimal

// MarshalJSON writes the decimal as a JSON number literal with trailing
// zeros trimmed: exact text (a client that reads it as a float64 gets the
// nearest float; one that keeps the text keeps every digit).
func (n Number) MarshalJSON() ([]byte, error) {
	return Decimal(n).AppendTrimmed(make([]byte, 0, 48)), nil
}

// String returns the Decimal's String form (for messages and logs).
func (n Number) String() string { return Decimal(n).String() }

// UnmarshalJSON reads a JSON number literal exactly (ParseDecimal): what
// MarshalJSON writes reads back to the same Number. A number with more
// decimals or range than a Decimal holds is an error, never rounded.
func (n *Number) UnmarshalJSON(b []byte) error {
	d, err := ParseDecimal(string(b))
	if err != nil {
		return err
	}
	*n = Number(d)
	return nil
}

var (
	_ json.Marshaler   = Number{}
	_ json.Unmarshaler = (*Number)(nil)
)
