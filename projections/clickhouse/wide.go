package clickhouse

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// Amounts in the tables. An amount is the ledger's domain.Decimal: a count
// of 10^-12 in 128 bits (about ±1.7×10^26). Each amount column is an Int64
// count of 10^-12 (its name ends in _e12), which holds the amounts below
// about ±9.2×10^6; a row with an amount beyond that holds wideMark in that
// column and the amount's exact decimal text in the row's wide column,
// "name=value" pairs separated by spaces (name: the column's without _e12),
// '' when every amount fits. So the common rows cost 8 bytes an amount
// and the reads that scan many of them (the buckets) stay Int64 scans —
// clickhouse-go/v2 scans a Decimal128 through a big.Int per value — while
// every number the ledger holds is stored exactly: a BABYDOGE quantity, a
// price in KRW, a bot's volume of 50 million USDT.
//
// No sum of amounts is left to ClickHouse's own types: on 18.16 sum() of an
// Int64 and of a Decimal128 both wrap silently. The reads that sum in SQL
// sum each column's high and low 32 bits apart (exactSum: Int64 sums that
// cannot wrap) and join them in Go, adding the wide rows' text there; every
// sum in Go is of Decimals (domain.Decimal.Add, the Ledger's own), and
// pnl_overview9's figures are 128-bit counts.

// wideMark is what an Int64 amount column holds for an amount it cannot
// hold (the amount is in the row's wide text). No amount is stored as it:
// -2^63 units itself goes to the wide text too.
const wideMark = math.MinInt64

// wideMarkSQL is wideMark as a ClickHouse literal (an Int64).
const wideMarkSQL = "-9223372036854775808"

// wideText gathers, while a row is appended, the text of its amounts that
// their Int64 columns cannot hold. One row at a time: col for each amount,
// then text. In one call's argument list Go evaluates them left to right.
type wideText struct{ b []byte }

// col returns d's count of 10^-12 for the Int64 column of name (without
// _e12), or wideMark after adding d's exact text under name.
func (w *wideText) col(name string, d domain.Decimal) int64 {
	if c, ok := d.Coefficient(); ok && c != wideMark {
		return c
	}
	if len(w.b) > 0 {
		w.b = append(w.b, ' ')
	}
	w.b = append(w.b, name...)
	w.b = append(w.b, '=')
	w.b = d.AppendTrimmed(w.b)
	return wideMark
}

// text returns the row's wide text (empty when every amount fitted) and starts
// the next row.
func (w *wideText) text() string {
	if len(w.b) == 0 {
		return ""
	}
	s := string(w.b)
	w.b = w.b[:0]
	return s
}

// amountOf returns the amount of the column name (without _e12) of a row:
// its Int64 v, or the value its wide text holds for name when v is
// wideMark. A mark without its text is an error (not a row this package
// wrote).
func amountOf(v int64, name, wide string) (domain.Decimal, error) {
	if v != wideMark {
		return fromUnits(v), nil
	}
	s, ok := wideField(wide, name)
	if !ok {
		return domain.Zero, fmt.Errorf("clickhouse: amount %s marked wide, but the row's wide text %q lacks it", name, wide)
	}
	d, err := domain.ParseDecimal(s)
	if err != nil {
		return domain.Zero, fmt.Errorf("clickhouse: wide amount %s: %w", name, err)
	}
	return d, nil
}

// addWide returns sum plus the amounts of name in the wide texts (of rows
// whose Int64 column of name exactSum left out; a text without name adds
// nothing).
func addWide(sum domain.Decimal, wides []string, name string) (domain.Decimal, error) {
	for _, w := range wides {
		if s, ok := wideField(w, name); ok {
			d, err := domain.ParseDecimal(s)
			if err != nil {
				return sum, fmt.Errorf("clickhouse: wide amount %s: %w", name, err)
			}
			sum = sum.Add(d)
		}
	}
	return sum, nil
}

// wideField returns the value of name in a wide text.
func wideField(wide, name string) (string, bool) {
	for wide != "" {
		var f string
		f, wide, _ = strings.Cut(wide, " ")
		if k, v, ok := strings.Cut(f, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// fromUnits returns the Decimal of a count of 10^-12 as the Int64 columns
// hold it (not wideMark).
func fromUnits(units int64) domain.Decimal { return domain.NewDecimal(units, -domain.DecimalPlaces) }

// i128 is a signed 128-bit integer, two's complement: an amount's count of
// 10^-12 (every Decimal is one), or a count or a time, as pnl_overview9's
// figures and the joined SQL sums hold them.
type i128 struct {
	hi int64
	lo uint64
}

// i64 returns v as an i128.
func i64(v int64) i128 { return i128{v >> 63, uint64(v)} }

// int64 returns x when it fits an int64.
func (x i128) int64() (int64, bool) { return int64(x.lo), x.hi == int64(x.lo)>>63 }

// unitsOf returns d's exact count of 10^-12.
func unitsOf(d domain.Decimal) i128 {
	if c, ok := d.Coefficient(); ok {
		return i64(c)
	}
	x, _ := parseUnits(d.AppendTrimmed(make([]byte, 0, 48))) // a Decimal's own text always parses
	return x
}

// dec returns the Decimal whose count of 10^-12 is x. Every i128 but −2^127
// is one (a Decimal's range is ±(2^127−1) units); unpackFigures refuses
// that one, and −2^127 gives the Decimal bound −(2^127−1).
func (x i128) dec() domain.Decimal {
	if v, ok := x.int64(); ok {
		return fromUnits(v)
	}
	d, err := domain.ParseDecimal(string(appendUnits(make([]byte, 0, 48), x)))
	if err != nil {
		return domain.MaxDecimal.Neg()
	}
	return d
}

// mag returns |x| as an unsigned 128-bit number, and whether x < 0.
func (x i128) mag() (hi, lo uint64, neg bool) {
	if x.hi >= 0 {
		return uint64(x.hi), x.lo, false
	}
	lo, b := bits.Sub64(0, x.lo, 0)
	hi, _ = bits.Sub64(0, uint64(x.hi), b)
	return hi, lo, true
}

// fromMag returns the i128 of magnitude (hi, lo) and sign neg, and whether
// it is in range.
func fromMag(hi, lo uint64, neg bool) (i128, bool) {
	if neg {
		if hi > 1<<63 || (hi == 1<<63 && lo != 0) {
			return i128{}, false
		}
		lo, b := bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, b)
		return i128{int64(hi), lo}, true
	}
	if hi >= 1<<63 {
		return i128{}, false
	}
	return i128{int64(hi), lo}, true
}

// parseUnits reads a decimal text with at most 12 decimals ("-12.5") as a
// count of 10^-12.
func parseUnits(s []byte) (i128, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var hi, lo uint64
	digits, frac, point := 0, 0, false
	for _, c := range s {
		switch {
		case c == '.' && !point:
			point = true
			continue
		case c < '0' || c > '9':
			return i128{}, false
		}
		if point {
			if frac++; frac > domain.DecimalPlaces {
				return i128{}, false
			}
		}
		digits++
		var ok bool
		if hi, lo, ok = mulAdd(hi, lo, 10, uint64(c-'0')); !ok {
			return i128{}, false
		}
	}
	if digits == 0 {
		return i128{}, false
	}
	for ; frac < domain.DecimalPlaces; frac++ {
		var ok bool
		if hi, lo, ok = mulAdd(hi, lo, 10, 0); !ok {
			return i128{}, false
		}
	}
	return fromMag(hi, lo, neg)
}

// mulAdd returns (hi, lo)×m + a, and false when that leaves 128 bits.
func mulAdd(hi, lo, m, a uint64) (uint64, uint64, bool) {
	ph, pl := bits.Mul64(lo, m)
	oh, h := bits.Mul64(hi, m)
	h, c := bits.Add64(h, ph, 0)
	pl, c2 := bits.Add64(pl, a, 0)
	h, c3 := bits.Add64(h, 0, c2)
	return h, pl, oh == 0 && c == 0 && c3 == 0
}

// appendUnits appends x ÷ 10^12 as exact decimal text, 12 decimals.
func appendUnits(b []byte, x i128) []byte {
	hi, lo, neg := x.mag()
	var d [40]byte // 2^128 has 39 digits
	i := len(d)
	for hi != 0 || lo != 0 || i > len(d)-domain.DecimalPlaces-1 {
		var r uint64
		hi, r = bits.Div64(0, hi, 10)
		lo, r = bits.Div64(r, lo, 10)
		i--
		d[i] = byte('0' + r)
	}
	if neg {
		b = append(b, '-')
	}
	b = append(b, d[i:len(d)-domain.DecimalPlaces]...)
	b = append(b, '.')
	return append(b, d[len(d)-domain.DecimalPlaces:]...)
}

// exactSum returns the SQL of two Int64 sums, of the high and of the low
// 32 bits of the Int64 amount column col over the rows where cond holds
// (its wideMark rows left out: their text is added apart): neither can
// wrap below 2^31 rows, and joinSum makes them the exact sum.
func exactSum(col, cond string) string {
	c := col + " != " + wideMarkSQL
	if cond != "" {
		c = "(" + cond + ") AND " + c
	}
	return fmt.Sprintf("sumIf(bitShiftRight(%[1]s, 32), %[2]s), sumIf(bitAnd(%[1]s, 4294967295), %[2]s)", col, c)
}

// joinSum returns hi·2^32 + lo, exactSum's two sums joined, as a Decimal
// (|hi·2^32 + lo| < 2^96: always in range).
func joinSum(hi, lo int64) domain.Decimal {
	x := i128{hi >> 32, uint64(hi) << 32}
	l, c := bits.Add64(x.lo, uint64(lo), 0)
	x.lo, x.hi = l, x.hi+(lo>>63)+int64(c)
	return x.dec()
}

// appendVarint appends x as a zigzag varint (the bytes of
// encoding/binary's AppendVarint for an x that fits an int64; up to 19
// for the others).
func appendVarint(b []byte, x i128) []byte {
	sign := uint64(x.hi >> 63)
	zl := x.lo<<1 ^ sign
	zh := (uint64(x.hi)<<1 | x.lo>>63) ^ sign
	for zh != 0 || zl >= 0x80 {
		b = append(b, byte(zl)|0x80)
		zl = zl>>7 | zh<<57
		zh >>= 7
	}
	return append(b, byte(zl))
}

// packFigures encodes v as pnl_overview9's v column: zigzag varints, 1 byte
// for a zero or a count, 6 to 9 for most amounts in units of 10^-12, up to
// 19 for the widest, instead of 16 each.
func packFigures(v []i128) string {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = appendVarint(b, x)
	}
	return string(b)
}

// unpackFigures decodes a v column into dst (reused), or returns nil when s
// is not whole varints of 128-bit counts (−2^127, beyond a Decimal, is
// refused too). It reads the string in place: converting each row's string
// to a []byte would copy it.
func unpackFigures(dst []i128, s string) []i128 {
	dst = dst[:0]
	for i := 0; i < len(s); {
		var zh, zl uint64
		c := s[i]
		i++
		zl = uint64(c & 0x7f)
		for shift := uint(7); c >= 0x80; shift += 7 {
			if i == len(s) || shift > 126 {
				return nil
			}
			c = s[i]
			i++
			v := uint64(c & 0x7f)
			switch {
			case shift < 64:
				zl |= v << shift
				if shift > 57 {
					zh |= v >> (64 - shift)
				}
			default:
				zh |= v << (shift - 64)
			}
			if shift == 126 && v > 3 { // beyond 128 bits
				return nil
			}
		}
		if zh == math.MaxUint64 && zl == math.MaxUint64 { // −2^127
			return nil
		}
		neg := -(zl & 1)
		dst = append(dst, i128{int64((zh >> 1) ^ neg), (zl>>1 | zh<<63) ^ neg})
	}
	return dst
}
