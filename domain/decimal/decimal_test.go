package decimal

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

func TestDecimalAppendTrimmed(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"0", "0"},
		{"3", "3"},
		{"-3", "-3"},
		{"12.5", "12.5"},
		{"12.50000000", "12.5"},
		{"-0.00012", "-0.00012"},
		{"0.00000001", "0.00000001"},
		{"1000.10000001", "1000.10000001"},
		{"92233720368.54775807", "92233720368.54775807"},
		{"-92233720368.54775807", "-92233720368.54775807"},
	} {
		if got := string(MustDecimal(c.in).AppendTrimmed([]byte("x"))); got != "x"+c.want {
			t.Errorf("AppendTrimmed(%s) = %q, want %q", c.in, got, "x"+c.want)
		}
	}
}

// AppendTrimmed is Append with the trailing zeros (and a bare point) cut,
// for any value; and Number marshals with it.
func TestDecimalAppendTrimmedMatchesAppend(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 100000; i++ {
		d := NewDecimal(rng.Int63n(1<<uint(rng.Intn(63))), -8)
		if rng.Intn(2) == 0 {
			d = d.Neg()
		}
		full := string(d.Append(nil))
		want := strings.TrimSuffix(strings.TrimRight(full, "0"), ".")
		if got := string(d.AppendTrimmed(nil)); got != want {
			t.Fatalf("AppendTrimmed(%s) = %q, want %q", full, got, want)
		}
		b, _ := json.Marshal(Number(d))
		if string(b) != want {
			t.Fatalf("Number(%s) marshals to %s, want %s", full, b, want)
		}
	}
}

// The String form of a value that fits 8 decimals is the 8-decimal type's
// (logs and their hashes do not move); finer digits are written, up to 12,
// without trailing zeros beyond the 8th.
func TestDecimalString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "0.00000000"},
		{"-0", "0.00000000"},
		{"0.000123", "0.00012300"},
		{"-12.5", "-12.50000000"},
		{"92233720368.54775807", "92233720368.54775807"},
		{"0.0000000012", "0.0000000012"},
		{"0.000000001200", "0.0000000012"},
		{"1.123456789", "1.123456789"},
		{"-0.000000000001", "-0.000000000001"},
		{"1000000000000", "1000000000000.00000000"},
		{"1000000000000000.123456789012", "1000000000000000.123456789012"},
		{"170141183460469231731687303.715884105727", "170141183460469231731687303.715884105727"},
		{"-170141183460469231731687303.715884105727", "-170141183460469231731687303.715884105727"},
		{"12345678901234567890123.5", "12345678901234567890123.50000000"},
	} {
		d, err := ParseDecimal(c.in)
		if err != nil {
			t.Fatalf("ParseDecimal(%q): %v", c.in, err)
		}
		if got := d.String(); got != c.want {
			t.Errorf("String(%s) = %q, want %q", c.in, got, c.want)
		}
		if b, _ := json.Marshal(d); string(b) != `"`+c.want+`"` {
			t.Errorf("MarshalJSON(%s) = %s", c.in, b)
		}
		var back Decimal
		if err := json.Unmarshal([]byte(`"`+c.want+`"`), &back); err != nil || back != d {
			t.Errorf("UnmarshalJSON(%q) = %s, %v; want %s", c.want, back, err, d)
		}
	}
	if MaxDecimal.String() != "170141183460469231731687303.715884105727" {
		t.Fatalf("MaxDecimal = %s", MaxDecimal)
	}
}

// ParseDecimal refuses what does not fit (never rounds): more than 12
// decimals, beyond the range, and what is not a plain decimal.
func TestParseDecimalRefuses(t *testing.T) {
	for _, s := range []string{"0.0000000000001", "1.1234567890123", "170141183460469231731687303.715884105728",
		"1000000000000000000000000000", "-170141183460469231731687303.715884105728", "1e30", "", "-", ".", "1.2.3",
		"0x10", " 1", "1 ", "NaN", "Inf", "1_000", "--1"} {
		if d, err := ParseDecimal(s); err == nil {
			t.Errorf("ParseDecimal(%q) = %s, want EINVALID", s, d)
		} else if pe := (*ParseError)(nil); !errors.As(err, &pe) || pe.Message == "" {
			t.Errorf("ParseDecimal(%q): error %v, want a *ParseError (EINVALID) with a message", s, err)
		}
	}
	for s, want := range map[string]string{"1.0000000000000000": "1.00000000", "+3.": "3.00000000", ".5": "0.50000000",
		"007": "7.00000000", "0.0000000000010": "0.000000000001"} {
		if d, err := ParseDecimal(s); err != nil || d.String() != want {
			t.Errorf("ParseDecimal(%q) = %s, %v; want %s", s, d, err, want)
		}
	}
}

// bigOf returns d's coefficient (d×10^12) as a big.Int.
func bigOf(d Decimal) *big.Int {
	v := new(big.Int).SetInt64(d.hi)
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(d.lo))
}

var (
	bigScale = new(big.Int).SetUint64(decimalScale)
	bigMax   = bigOf(MaxDecimal)
)

// bigRound returns n÷d rounded half to even (d ≠ 0), the reference for
// roundQuo.
func bigRound(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	c := r2.Cmp(new(big.Int).Abs(d))
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		if (n.Sign() < 0) != (d.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// fitsBig reports whether the coefficient v is in range.
func fitsBig(v *big.Int) bool { return new(big.Int).Abs(v).Cmp(bigMax) <= 0 }

// randDecimal draws coefficients of every magnitude, both signs, and the
// edges (0, ±1 unit, ±MaxDecimal, round numbers).
func randDecimal(r *rand.Rand) Decimal {
	var d Decimal
	switch r.Intn(8) {
	case 0:
		d = []Decimal{Zero, NewDecimal(1, -12), MaxDecimal, DecimalFromInt(1), NewDecimal(5, -13+1), DecimalFromInt(1_000_000_000_000_000)}[r.Intn(6)]
	case 1: // small coefficients
		d = fromInt64(r.Int63n(1 << uint(r.Intn(63))))
	case 2: // 8 decimals, as every log before
		d = NewDecimal(r.Int63n(1<<uint(r.Intn(62))), -8)
	default: // up to 127 bits
		bitsN := uint(r.Intn(127))
		v := new(big.Int).Rand(r, new(big.Int).Lsh(big.NewInt(1), bitsN+1))
		d = Decimal{int64(new(big.Int).Rsh(v, 64).Uint64()), v.Uint64()}
	}
	if r.Intn(2) == 0 {
		d = d.Neg()
	}
	return d
}

// Every operation against math/big on random operands of every size: the
// exact result, rounded half to even where the operation rounds, and
// reported out of range exactly when it is.
func TestDecimalArithmeticMatchesBig(t *testing.T) {
	r := rand.New(rand.NewSource(28))
	check := func(op string, a, b Decimal, got Decimal, ok bool, want *big.Int) {
		t.Helper()
		if wantOK := want != nil && fitsBig(want); ok != wantOK || (ok && bigOf(got).Cmp(want) != 0) {
			t.Fatalf("%s(%s, %s) = %s, %v; want %v (coefficient)", op, a, b, got, ok, want)
		}
	}
	for i := 0; i < 200_000; i++ {
		a, b, c := randDecimal(r), randDecimal(r), randDecimal(r)
		A, B, C := bigOf(a), bigOf(b), bigOf(c)
		s, ok := a.CheckedAdd(b)
		check("Add", a, b, s, ok, new(big.Int).Add(A, B))
		s, ok = a.CheckedSub(b)
		check("Sub", a, b, s, ok, new(big.Int).Sub(A, B))
		p, ok := a.CheckedMul(b)
		check("Mul", a, b, p, ok, bigRound(new(big.Int).Mul(A, B), bigScale))
		var want *big.Int
		if b.Sign() != 0 {
			want = bigRound(new(big.Int).Mul(A, bigScale), B)
		}
		q, ok := a.CheckedDiv(b)
		check("Div", a, b, q, ok, want)
		want = nil
		if c.Sign() != 0 {
			want = bigRound(new(big.Int).Mul(A, B), C)
		}
		m, ok := CheckedMulDiv(a, b, c)
		check("MulDiv", a, b, m, ok, want)
		if b.Sign() != 0 {
			check("Rem", a, b, a.Rem(b), true, new(big.Int).Rem(A, B))
		}
		places := r.Intn(13)
		unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(12-places)), nil)
		rw := new(big.Int).Mul(bigRound(A, unit), unit)
		if fitsBig(rw) {
			check("Round", a, DecimalFromInt(int64(places)), a.Round(places), true, rw)
		}
		if got, want := a.Cmp(b), A.Cmp(B); got != want || a.Less(b) != (want < 0) {
			t.Fatalf("Cmp(%s, %s) = %d, want %d", a, b, got, want)
		}
		if got, want := a.Sign(), A.Sign(); got != want || a.IsNeg() != (want < 0) || a.IsPos() != (want > 0) || a.IsZero() != (want == 0) {
			t.Fatalf("Sign(%s) = %d, want %d", a, got, want)
		}
		x, y, z, w := a.Abs(), b.Abs(), c.Abs(), randDecimal(r).Abs()
		if got, want := CmpProducts(x, y, z, w), new(big.Int).Mul(bigOf(x), bigOf(y)).Cmp(new(big.Int).Mul(bigOf(z), bigOf(w))); got != want {
			t.Fatalf("CmpProducts(%s, %s, %s, %s) = %d, want %d", x, y, z, w, got, want)
		}
		if back, err := ParseDecimal(a.String()); err != nil || back != a {
			t.Fatalf("ParseDecimal(%q) = %s, %v", a.String(), back, err)
		}
		if back, err := ParseDecimal(string(a.AppendTrimmed(nil))); err != nil || back != a {
			t.Fatalf("ParseDecimal(%q) = %s, %v", a.AppendTrimmed(nil), back, err)
		}
		if a.String() != bigString(A) {
			t.Fatalf("String = %s, want %s", a.String(), bigString(A))
		}
	}
}

// bigString formats a coefficient as String does, for the reference.
func bigString(v *big.Int) string {
	s := new(big.Int).Abs(v).String()
	for len(s) < 13 {
		s = "0" + s
	}
	whole, frac := s[:len(s)-12], s[len(s)-12:]
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 8 {
		frac += "0"
	}
	if v.Sign() < 0 {
		whole = "-" + whole
	}
	return whole + "." + frac
}

// The plain forms saturate at the bounds; the Checked forms say so.
func TestDecimalOverflow(t *testing.T) {
	one := NewDecimal(1, -12)
	if _, ok := MaxDecimal.CheckedAdd(one); ok {
		t.Fatal("MaxDecimal + 1 unit fit")
	}
	if got := MaxDecimal.Add(one); got != MaxDecimal {
		t.Fatalf("MaxDecimal + 1 unit = %s", got)
	}
	if got := MaxDecimal.Neg().Sub(one); got != MaxDecimal.Neg() {
		t.Fatalf("-MaxDecimal - 1 unit = %s", got)
	}
	big := MustDecimal("10000000000000000") // 10^16
	if _, ok := big.CheckedMul(big); ok {
		t.Fatal("10^16 × 10^16 fit")
	}
	if got := big.Mul(big.Neg()); got != MaxDecimal.Neg() {
		t.Fatalf("10^16 × -10^16 = %s", got)
	}
	if _, ok := big.CheckedDiv(Zero); ok || !big.Div(Zero).IsZero() || !MulDiv(big, big, Zero).IsZero() {
		t.Fatal("a division by zero")
	}
	// A BABYDOGE-sized position: 10^12 units at 1.2×10^-9.
	q, p := MustDecimal("1000000000000"), MustDecimal("0.0000000012")
	if v, ok := q.CheckedMul(p); !ok || v != DecimalFromInt(1200) {
		t.Fatalf("10^12 × 1.2e-9 = %s, %v", v, ok)
	}
	if v := DecimalFromInt(1200).Div(q); v != p {
		t.Fatalf("1200 / 10^12 = %s", v)
	}
}

// Rounding is half to even, once: ties go to the even neighbour, and
// anything above a tie goes up.
func TestDecimalRoundsHalfToEven(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"0.000000000001", "0.5", "0"},              // 0.0000000000005 → 0
		{"0.000000000003", "0.5", "0.000000000002"}, // 0.0000000000015 → …2
		{"0.000000000005", "0.5", "0.000000000002"}, // …25 → …2
		{"0.000000000007", "0.5", "0.000000000004"}, // …35 → …4
		{"-0.000000000003", "0.5", "-0.000000000002"},
		{"0.000000000003", "0.50000001", "0.000000000002"},
		{"0.000000000001", "0.50000001", "0.000000000001"},
	} {
		if got := MustDecimal(c.a).Mul(MustDecimal(c.b)); got != MustDecimal(c.want) {
			t.Errorf("%s × %s = %s, want %s", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		in     string
		places int
		want   string
	}{{"2.5", 0, "2"}, {"3.5", 0, "4"}, {"-2.5", 0, "-2"}, {"3.125", 2, "3.12"}, {"3.135", 2, "3.14"}, {"3.1251", 2, "3.13"},
		{"1.23456789", 12, "1.23456789"}} {
		if got := MustDecimal(c.in).Round(c.places); got != MustDecimal(c.want) {
			t.Errorf("Round(%s, %d) = %s, want %s", c.in, c.places, got, c.want)
		}
	}
}

func TestDecimalIntegers(t *testing.T) {
	for _, c := range []struct {
		in    string
		n     int64
		ok    bool
		isInt bool
	}{{"0", 0, true, true}, {"-7", -7, true, true}, {"7.5", 0, false, false}, {"9223372036854775807", math.MaxInt64, true, true},
		{"9223372036854775808", 0, false, true}, {"-9223372036854775807", -math.MaxInt64, true, true}, {"0.000000000001", 0, false, false},
		{"100000000000000000000", 0, false, true}} {
		d := MustDecimal(c.in)
		if n, ok := d.Int64(); n != c.n || ok != c.ok || d.IsInt() != c.isInt {
			t.Errorf("%s: Int64 = %d, %v; IsInt %v", c.in, n, ok, d.IsInt())
		}
	}
	if NewDecimal(12, -10) != MustDecimal("0.0000000012") || NewDecimal(-3, 2) != DecimalFromInt(-300) {
		t.Fatal("NewDecimal")
	}
}

var plainDecimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$`)

// FuzzParseDecimal: what parses formats and parses back to itself, and
// agrees with math/big's reading of the same text.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-1.5", "0.0000000012", "1000000000000", "170141183460469231731687303.715884105727", "1e3", ".5", "+.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDecimal(s)
		r, ok := new(big.Rat).SetString(s)
		if err != nil {
			if plainDecimal.MatchString(s) {
				v := new(big.Rat).Mul(r, new(big.Rat).SetInt(bigScale))
				if v.IsInt() && fitsBig(v.Num()) {
					t.Fatalf("ParseDecimal(%q) refused a value that fits: %v", s, err)
				}
			}
			return
		}
		if !ok {
			t.Fatalf("ParseDecimal(%q) = %s, but it is not a number", s, d)
		}
		if new(big.Rat).SetFrac(bigOf(d), bigScale).Cmp(r) != 0 {
			t.Fatalf("ParseDecimal(%q) = %s", s, d)
		}
		if back, err := ParseDecimal(d.String()); err != nil || back != d {
			t.Fatalf("round trip of %q: %q → %s, %v", s, d.String(), back, err)
		}
	})
}

// Compact holds every value it accepts exactly, accepts what fits its
// scales, and tells side-table references apart.
func TestCompact(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 200_000; i++ {
		d := randDecimal(r)
		if i%3 == 0 { // round numbers of every scale
			d = d.Round(r.Intn(13))
		}
		c, ok := CompactOf(d)
		if !ok {
			// it must really not fit: more than 60 bits at every scale it holds exactly
			for tag := 0; tag < 7; tag++ {
				unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(2*tag)), nil)
				q, m := new(big.Int).QuoRem(bigOf(d), unit, new(big.Int))
				if m.Sign() == 0 && new(big.Int).Abs(q).Cmp(new(big.Int).Lsh(big.NewInt(1), 60)) < 0 {
					t.Fatalf("CompactOf(%s) refused, but it fits tag %d", d, tag)
				}
			}
			continue
		}
		if _, isRef := c.Ref(); isRef || c.Decimal() != d {
			t.Fatalf("CompactOf(%s) = %#x → %s (ref %v)", d, int64(c), c.Decimal(), isRef)
		}
	}
	for _, s := range []string{"0", "1152921.504606846975", "-1152921.504606846976", "11529215046.06846975", "1152921504606846975",
		"0.0000000012", "1000000000000", "30123.45"} {
		if c, ok := CompactOf(MustDecimal(s)); !ok || c.Decimal() != MustDecimal(s) {
			t.Errorf("CompactOf(%s) = %v, %v", s, c.Decimal(), ok)
		}
	}
	for _, s := range []string{"1152921.504606846976", "11529215046.068469761", "1152921504606846976", "1000000000000.000000000001"} {
		if _, ok := CompactOf(MustDecimal(s)); ok {
			t.Errorf("CompactOf(%s) fit", s)
		}
	}
	if i, ok := CompactRef(12345).Ref(); !ok || i != 12345 {
		t.Fatalf("Ref = %d, %v", i, ok)
	}
	if c, _ := CompactOf(Zero); c != 0 {
		t.Fatal("zero is not the zero Compact")
	}
}

// TestCanonicalDecimal: the short path reads MarshalJSON's form with
// parseDecimal's value, and leaves everything else to parseDecimal.
func TestCanonicalDecimal(t *testing.T) {
	for _, s := range []string{"0.00000000", "-0.00000000", "1.50000000", "-1.50000000", "9999999999.99999999", "-9999999999.99999999", "00.00000000",
		"92233720368.54775807", "12345678901.00000000", "99999999999.99999999", "0.0000000012", "-0.000000000001", "1.000000000",
		"9999999.999999999999", "-1234567.123456789012"} {
		want, err := parseDecimal(s)
		if got, ok := canonicalDecimal([]byte(s)); !ok || err != nil || got != want {
			t.Fatalf("canonicalDecimal(%q) = %v, %v; parseDecimal %v, %v", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"100000000000.00000000", "10000000.000000000000", "1.0000000", "1.0000000000000", "+1.00000000",
		"1.0000000a", "a.00000000", ".00000000", "-.00000000", "1,00000000", "--1.00000000", "1e1.0000000", "1.00.000000", ""} {
		if got, ok := canonicalDecimal([]byte(s)); ok {
			t.Fatalf("canonicalDecimal(%q) = %v, want it left to parseDecimal", s, got)
		}
	}
}
