package domain

import (
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
)

// DecimalPlaces is the fixed precision of every amount, price and fee.
const DecimalPlaces = 8

const decimalScale = 100_000_000 // 10^DecimalPlaces

// Decimal is an exact fixed-point number with 8 decimal places, stored as a
// count of 10^-8 units. Its range is ±92,233,720,368.54775807; operations
// that would leave it panic-free return an error from the Checked forms, and
// the plain forms saturate at the bounds (callers that take input from
// outside validate with ParseDecimal, which rejects what does not fit).
//
// In JSON a Decimal is a string with exactly 8 decimals ("0.00012300"), as
// events require; MarshalJSON on the HTTP edge converts with Float64.
//
// Code outside this file uses its methods only — no Go operators and no
// conversions, == and != excepted — so that its representation can change
// without touching its users. The zero value is 0.
type Decimal struct{ u int64 }

// Zero is the decimal 0.
var Zero = Decimal{}

// NewDecimal returns coef×10^exp. An exponent finer than the type's scale
// panics (it is meant for constants and counts in code and tests; numbers from
// outside go through ParseDecimal).
func NewDecimal(coef int64, exp int) Decimal {
	if exp < -DecimalPlaces {
		panic("domain.NewDecimal: exponent finer than the scale")
	}
	for ; exp > -DecimalPlaces; exp-- {
		coef *= 10
	}
	return Decimal{coef}
}

// DecimalFromInt returns the decimal n.
func DecimalFromInt(n int64) Decimal { return Decimal{n * decimalScale} }

// ParseDecimal parses a decimal string ("12", "-0.5", "1e-3" is refused) with
// at most 8 decimals. More decimals are an EINVALID error rather than a
// silent rounding, so that a price never changes on its way into the log.
func ParseDecimal(s string) (Decimal, error) { return parseDecimal(s) }

// parseDecimal is ParseDecimal for strings and byte slices alike, so that
// decoders parse without converting (and allocating) first.
func parseDecimal[T string | []byte](s T) (Decimal, error) {
	if len(s) == 0 {
		return Decimal{}, Errorf(EINVALID, "empty number")
	}
	neg := false
	i := 0
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		i = 1
	}
	var intPart, frac uint64
	digits, fracDigits := 0, 0
	seenDot := false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && !seenDot:
			seenDot = true
		case c >= '0' && c <= '9':
			digits++
			if seenDot {
				fracDigits++
				if fracDigits > DecimalPlaces {
					if c != '0' {
						return Decimal{}, Errorf(EINVALID, "%q has more than %d decimals", s, DecimalPlaces)
					}
					continue
				}
				frac = frac*10 + uint64(c-'0')
			} else {
				intPart = intPart*10 + uint64(c-'0')
				if intPart > math.MaxInt64/decimalScale {
					return Decimal{}, Errorf(EINVALID, "%q is too large", s)
				}
			}
		default:
			return Decimal{}, Errorf(EINVALID, "%q is not a decimal number", s)
		}
	}
	if digits == 0 {
		return Decimal{}, Errorf(EINVALID, "%q is not a decimal number", s)
	}
	for f := min(fracDigits, DecimalPlaces); f < DecimalPlaces; f++ {
		frac *= 10
	}
	v := intPart*decimalScale + frac
	if v > math.MaxInt64 {
		return Decimal{}, Errorf(EINVALID, "%q is too large", s)
	}
	if neg {
		return Decimal{-int64(v)}, nil
	}
	return Decimal{int64(v)}, nil
}

// MustDecimal parses s or panics; for constants in code and tests.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DecimalFromFloat converts a float received at the API edge. NaN, ±Inf,
// values out of range and values with more than 8 significant decimals
// (after rounding away binary noise) are EINVALID.
func DecimalFromFloat(f float64) (Decimal, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Decimal{}, Errorf(EINVALID, "not a finite number")
	}
	if math.Abs(f) >= float64(math.MaxInt64)/decimalScale {
		return Decimal{}, Errorf(EINVALID, "%g is too large", f)
	}
	// The shortest decimal that round-trips is the number the client meant.
	return ParseDecimal(strconv.FormatFloat(f, 'f', -1, 64))
}

// Units returns the count of 10^-8 units.
func (d Decimal) Units() int64 { return d.u }

// Float64 returns the nearest float64, for JSON numbers at the API edge.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// String formats with exactly 8 decimals: "-0.00012300".
func (d Decimal) String() string {
	return string(d.Append(make([]byte, 0, 24)))
}

// Append appends the String form to b.
func (d Decimal) Append(b []byte) []byte {
	b, frac := d.appendWhole(b)
	b = append(b, '.')
	var f [DecimalPlaces]byte
	for i := DecimalPlaces - 1; i >= 0; i-- {
		f[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, f[:]...)
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
	var f [DecimalPlaces + 1]byte
	f[0] = '.'
	for i := places; i >= 1; i-- {
		f[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, f[:places+1]...)
}

// appendWhole appends d's sign and whole part, and returns the fraction's
// digits as an integer (0 ≤ frac < 10^DecimalPlaces).
func (d Decimal) appendWhole(b []byte) (_ []byte, frac uint64) {
	u := uint64(d.u)
	if d.u < 0 {
		b = append(b, '-')
		u = uint64(-d.u)
	}
	return strconv.AppendUint(b, u/decimalScale, 10), u % decimalScale
}

// MarshalJSON writes the String form, quoted.
func (d Decimal) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 26)
	b = append(b, '"')
	b = d.Append(b)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a quoted decimal string (or, leniently, a bare JSON
// number written as a decimal literal).
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
func (d Decimal) Neg() Decimal { return Decimal{-d.u} }

// Abs returns |d|.
func (d Decimal) Abs() Decimal {
	if d.u < 0 {
		return Decimal{-d.u}
	}
	return d
}

// Sign returns -1, 0 or 1.
func (d Decimal) Sign() int {
	switch {
	case d.u < 0:
		return -1
	case d.u > 0:
		return 1
	}
	return 0
}

// IsZero reports whether d is 0.
func (d Decimal) IsZero() bool { return d.u == 0 }

// IsNeg reports whether d < 0.
func (d Decimal) IsNeg() bool { return d.u < 0 }

// IsPos reports whether d > 0.
func (d Decimal) IsPos() bool { return d.u > 0 }

// Add returns d+e, saturating at the bounds.
func (d Decimal) Add(e Decimal) Decimal {
	s, ok := d.CheckedAdd(e)
	if !ok {
		if e.u > 0 {
			return Decimal{math.MaxInt64}
		}
		return Decimal{math.MinInt64 + 1}
	}
	return s
}

// Sub returns d-e, saturating at the bounds.
func (d Decimal) Sub(e Decimal) Decimal { return d.Add(e.Neg()) }

// CheckedAdd returns d+e and whether it fit.
func (d Decimal) CheckedAdd(e Decimal) (Decimal, bool) {
	s := d.u + e.u
	if (e.u > 0 && s < d.u) || (e.u < 0 && s > d.u) {
		return Decimal{}, false
	}
	return Decimal{s}, true
}

// CheckedSub returns d-e and whether it fit.
func (d Decimal) CheckedSub(e Decimal) (Decimal, bool) { return d.CheckedAdd(e.Neg()) }

// Mul returns d×e rounded half away from zero to 8 decimals, saturating.
func (d Decimal) Mul(e Decimal) Decimal {
	p, ok := d.CheckedMul(e)
	if !ok {
		if (d.u < 0) != (e.u < 0) {
			return Decimal{math.MinInt64 + 1}
		}
		return Decimal{math.MaxInt64}
	}
	return p
}

// CheckedMul returns d×e rounded half away from zero, and whether it fit.
func (d Decimal) CheckedMul(e Decimal) (Decimal, bool) {
	neg := (d.u < 0) != (e.u < 0)
	hi, lo := bits.Mul64(uint64(d.Abs().u), uint64(e.Abs().u))
	return fromWide(hi, lo, decimalScale, neg)
}

// Div returns d÷e rounded half away from zero to 8 decimals, saturating;
// division by zero returns 0 (callers that can meet a zero divisor check
// first: every average in this package defines its empty case).
func (d Decimal) Div(e Decimal) Decimal {
	q, ok := d.CheckedDiv(e)
	if !ok {
		if e.u == 0 {
			return Decimal{}
		}
		if (d.u < 0) != (e.u < 0) {
			return Decimal{math.MinInt64 + 1}
		}
		return Decimal{math.MaxInt64}
	}
	return q
}

// CheckedDiv returns d÷e rounded half away from zero, and whether it fit
// (false also for a zero divisor).
func (d Decimal) CheckedDiv(e Decimal) (Decimal, bool) {
	if e.u == 0 {
		return Decimal{}, false
	}
	neg := (d.u < 0) != (e.u < 0)
	hi, lo := bits.Mul64(uint64(d.Abs().u), decimalScale)
	return fromWide(hi, lo, uint64(e.Abs().u), neg)
}

// MulInt returns d×n, saturating.
func (d Decimal) MulInt(n int64) Decimal { return d.Mul(DecimalFromInt(n)) }

// DivInt returns d÷n rounded half away from zero; n = 0 returns 0.
func (d Decimal) DivInt(n int64) Decimal { return d.Div(DecimalFromInt(n)) }

// fromWide divides the 128-bit (hi, lo) by div, rounding half away from zero.
func fromWide(hi, lo, div uint64, neg bool) (Decimal, bool) {
	if hi >= div {
		return Decimal{}, false
	}
	q, r := bits.Div64(hi, lo, div)
	if r >= div-r { // r ≥ div/2 without overflow
		q++
	}
	if q > math.MaxInt64 {
		return Decimal{}, false
	}
	if neg {
		return Decimal{-int64(q)}, true
	}
	return Decimal{int64(q)}, true
}

// MulDiv returns a×b÷c rounded half away from zero, computed in 128 bits so
// that no intermediate rounding happens (all three are Decimals, the result
// has their scale). c = 0 returns 0; a result out of range saturates.
func MulDiv(a, b, c Decimal) Decimal {
	if c.u == 0 {
		return Decimal{}
	}
	neg := (a.u < 0) != (b.u < 0) != (c.u < 0)
	hi, lo := bits.Mul64(uint64(a.Abs().u), uint64(b.Abs().u))
	q, ok := fromWide(hi, lo, uint64(c.Abs().u), neg)
	if !ok {
		if neg {
			return Decimal{math.MinInt64 + 1}
		}
		return Decimal{math.MaxInt64}
	}
	return q
}

// CmpProducts compares a×b with c×d exactly, for operands ≥ 0: -1, 0 or 1
// (a ratio a/d against c/b without dividing).
func CmpProducts(a, b, c, d Decimal) int {
	h1, l1 := bits.Mul64(uint64(a.u), uint64(b.u))
	h2, l2 := bits.Mul64(uint64(c.u), uint64(d.u))
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
	case d.u < e.u:
		return -1
	case d.u > e.u:
		return 1
	}
	return 0
}

// Less reports whether d < e.
func (d Decimal) Less(e Decimal) bool { return d.u < e.u }

// Min returns the smaller of d and e.
func (d Decimal) Min(e Decimal) Decimal {
	if e.u < d.u {
		return e
	}
	return d
}

// Max returns the larger of d and e.
func (d Decimal) Max(e Decimal) Decimal {
	if e.u > d.u {
		return e
	}
	return d
}

// Number is a Decimal that marshals as a JSON number, for API responses
// whose clients expect numbers (the spec's order records, PNL figures).
type Number Decimal

// MarshalJSON writes the decimal as a JSON number literal with trailing
// zeros trimmed: exact, and a float64 on the client's side.
func (n Number) MarshalJSON() ([]byte, error) {
	return Decimal(n).AppendTrimmed(make([]byte, 0, 24)), nil
}

var _ json.Marshaler = Number{}
