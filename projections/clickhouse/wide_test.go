package clickhouse

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// bigOf returns x as a big.Int: the independent reference of these tests.
func bigOf(x i128) *big.Int {
	b := new(big.Int).Lsh(big.NewInt(x.hi), 64)
	return b.Add(b, new(big.Int).SetUint64(x.lo))
}

// unitsText returns a count of 10^-12 (a big.Int) as decimal text.
func unitsText(u *big.Int) string {
	r := new(big.Rat).SetFrac(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(12), nil))
	return r.FloatString(12)
}

var (
	maxI128 = i128{math.MaxInt64, math.MaxUint64}
	minI128 = i128{math.MinInt64, 0}
)

// The pnl_overview9 figures survive packing, from zero to the extremes of
// a Decimal; a figure that fits an int64 is encoding/binary's varint, byte
// for byte (so small counts stay one byte); a truncated or overlong varint,
// and −2^127 (beyond a Decimal), are refused.
func TestPackFigures(t *testing.T) {
	v := []i128{i64(0), i64(1), i64(-1), i64(63), i64(-64), i64(64), i64(300), i64(-300), i64(1 << 40),
		i64(math.MaxInt64), i64(math.MinInt64), {0, 1 << 63}, {-1, 1<<63 - 1}, {1, 0}, {-2, 5}, maxI128, {math.MinInt64, 1}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		v = append(v, i128{int64(rng.Uint64()) >> rng.IntN(64), rng.Uint64()})
	}
	s := packFigures(v)
	got := unpackFigures(nil, s)
	if len(got) != len(v) {
		t.Fatalf("unpacked %d figures, want %d", len(got), len(v))
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("figure %d: %v, want %v", i, bigOf(got[i]), bigOf(v[i]))
		}
	}
	for _, n := range []int64{0, 1, -1, 127, -129, 1 << 50, math.MaxInt64, math.MinInt64} {
		if got, want := packFigures([]i128{i64(n)}), string(binary.AppendVarint(nil, n)); got != want {
			t.Errorf("%d packs as % x, want binary's % x", n, got, want)
		}
	}
	if len(packFigures([]i128{i64(0), i64(-1), i64(1)})) != 3 {
		t.Fatal("small figures not one byte each")
	}
	if n := len(packFigures([]i128{maxI128})); n != 19 {
		t.Errorf("the widest figure takes %d bytes, want 19", n)
	}
	for name, bad := range map[string]string{
		"truncated":    s[:len(s)-1],
		"overlong":     strings.Repeat("\xff", 19) + "\x01",
		"beyond 2^128": strings.Repeat("\xff", 18) + "\x04",
		"−2^127":       packFigures([]i128{minI128}),
	} {
		if got := unpackFigures(nil, bad); got != nil {
			t.Errorf("%s: unpacked %v, want nil", name, got)
		}
	}
	if got := unpackFigures(nil, ""); len(got) != 0 {
		t.Fatalf("empty: %v", got)
	}
}

// Every Decimal is its count of 10^-12 and back, exactly, across the
// int64 edge and up to the Decimal's bounds; the text of a count is its
// exact value.
func TestUnitsExact(t *testing.T) {
	for _, s := range []string{"0", "0.000000000001", "-0.000000000001", "0.0000000012", "-1234.567890123456",
		"9223372.036854775807", "9223372.036854775808", "-9223372.036854775808", "-9223372.036854775809",
		"1000000000000000", "50000000.5", "-18446744.073709551616", "170141183460469231731687303.715884105727",
		"-170141183460469231731687303.715884105727"} {
		d := domain.MustDecimal(s)
		u := unitsOf(d)
		want, _ := new(big.Rat).SetString(s)
		want.Mul(want, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(12), nil)))
		if !want.IsInt() || bigOf(u).Cmp(want.Num()) != 0 {
			t.Errorf("units of %s = %v, want %v", s, bigOf(u), want.Num())
		}
		if got := u.dec(); got != d {
			t.Errorf("%s → %v → %s", s, bigOf(u), got)
		}
		if got, want := string(appendUnits(nil, u)), unitsText(bigOf(u)); got != want {
			t.Errorf("text of %s = %s, want %s", s, got, want)
		}
	}
	if unitsOf(domain.MaxDecimal) != maxI128 || unitsOf(domain.MaxDecimal.Neg()) != (i128{math.MinInt64, 1}) {
		t.Error("the Decimal bounds are not ±(2^127 − 1) units")
	}
	for _, s := range []string{"", "-", ".", "1.0000000000001", "1e5", "12a", "1.2.3", "340282366920938463463374607.431768211456"} {
		if _, ok := parseUnits([]byte(s)); ok {
			t.Errorf("parseUnits(%q) accepted", s)
		}
	}
}

// An amount an Int64 column holds is written as its count, any other as
// wideMark and text in the row's wide column; read back, each is the
// amount written. A mark without text is an error, not a zero.
func TestWideAmounts(t *testing.T) {
	amounts := map[string]string{"small": "-1234.567890123456", "edge": "9223372.036854775807",
		"big": "1000000000000000", "neg": "-9223372.036854775808", "price": "0.0000000012", "sum": "51720000"}
	names := []string{"small", "edge", "big", "neg", "price", "sum"}
	var w wideText
	cols := make([]int64, len(names))
	for i, n := range names {
		cols[i] = w.col(n, domain.MustDecimal(amounts[n]))
	}
	wide := w.text()
	if want := "big=1000000000000000 neg=-9223372.036854775808 sum=51720000"; wide != want {
		t.Errorf("wide text %q, want %q", wide, want)
	}
	for i, n := range names {
		if (cols[i] == wideMark) != strings.Contains(wide, n+"=") {
			t.Errorf("%s: column %d, wide %q", n, cols[i], wide)
		}
		got, err := amountOf(cols[i], n, wide)
		if err != nil || got != domain.MustDecimal(amounts[n]) {
			t.Errorf("%s read back as %s, %v; want %s", n, got, err, amounts[n])
		}
	}
	if w.col("x", domain.MustDecimal("1.5")); w.text() != "" {
		t.Error("the wide text of the previous row stayed")
	}
	if _, err := amountOf(wideMark, "missing", wide); err == nil {
		t.Error("a mark without its text read without error")
	}
}

// exactSum's two Int64 sums (each column's high and low 32 bits, as
// ClickHouse computes bitShiftRight and bitAnd) join into the exact sum,
// where a plain Int64 sum wraps.
func TestJoinSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 200; round++ {
		var hi, lo int64
		want := new(big.Int)
		for i := 0; i < 1+rng.IntN(2000); i++ {
			x := int64(rng.Uint64())
			if x == wideMark {
				continue
			}
			if round%2 == 0 {
				x >>= rng.IntN(63)
			}
			hi += x >> 32
			lo += x & 0xffffffff
			want.Add(want, big.NewInt(x))
		}
		if got := joinSum(hi, lo); bigOf(unitsOf(got)).Cmp(want) != 0 {
			t.Fatalf("round %d: joined %s, want %s", round, got, unitsText(want))
		}
	}
}
