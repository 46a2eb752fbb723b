// Package decimalbench compares decimal.Decimal with a well-kept decimal
// library on what a replay does with every fill (issue 28): parse the
// event's decimal strings, multiply price by quantity, add to running sums,
// compare, and format. domain imports the standard library only, so a
// library type could not be the domain type itself; this benchmark is what
// the choice of a fixed point of our own rests on. Run:
//
//	go test -run '^$' -bench . -benchmem ./domain/decimalbench
package decimalbench

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/quagmt/udecimal"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// fills are the strings of a replay: 8-decimal prices and quantities as
// the logs written so far hold them, and sub-cent tokens with 10 to 12
// decimals and 10^12-unit quantities.
var fills = func() [][2]string {
	var out [][2]string
	for i := 0; i < 64; i++ {
		out = append(out, [2]string{strconv.Itoa(1000+i*37) + "." + strconv.Itoa(10+i) + "000000", "0." + strconv.Itoa(10+i) + "000000"})
	}
	for i := 0; i < 16; i++ {
		out = append(out, [2]string{"0.00000000" + strconv.Itoa(10+i), strconv.Itoa(1000000000000 + i*1000)})
	}
	return out
}()

// BenchmarkReplayOps: per fill, parse price and quantity, value = price ×
// quantity, add value and quantity to sums, compare the value with the
// previous one, and format the sum.
func BenchmarkReplayOps(b *testing.B) {
	b.Run("domain.Decimal", func(b *testing.B) {
		b.ReportMetric(float64(unsafe.Sizeof(decimal.Decimal{})), "B/value")
		var sum, pos, prev decimal.Decimal
		n := 0
		for i := 0; i < b.N; i++ {
			f := fills[i%len(fills)]
			p, err1 := decimal.ParseDecimal(f[0])
			q, err2 := decimal.ParseDecimal(f[1])
			if err1 != nil || err2 != nil {
				b.Fatal(err1, err2)
			}
			v := p.Mul(q)
			sum, pos = sum.Add(v), pos.Add(q)
			if v.Less(prev) {
				n++
			}
			prev = v
			n += len(sum.String())
		}
		sink = n
	})
	b.Run("udecimal", func(b *testing.B) {
		b.ReportMetric(float64(unsafe.Sizeof(udecimal.Decimal{})), "B/value")
		var sum, pos, prev udecimal.Decimal
		n := 0
		for i := 0; i < b.N; i++ {
			f := fills[i%len(fills)]
			p, err1 := udecimal.Parse(f[0])
			q, err2 := udecimal.Parse(f[1])
			if err1 != nil || err2 != nil {
				b.Fatal(err1, err2)
			}
			v := p.Mul(q)
			sum, pos = sum.Add(v), pos.Add(q)
			if v.LessThan(prev) {
				n++
			}
			prev = v
			n += len(sum.String())
		}
		sink = n
	})
}

// BenchmarkParse, BenchmarkMul, BenchmarkDiv (a value divided by its
// quantity: an average price), BenchmarkAdd, BenchmarkString: the same
// operations one at a time.
func BenchmarkParse(b *testing.B) {
	b.Run("domain.Decimal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d, _ := decimal.ParseDecimal(fills[i%len(fills)][0])
			sinkD = d
		}
	})
	b.Run("udecimal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d, _ := udecimal.Parse(fills[i%len(fills)][0])
			sinkU = d
		}
	})
}

func BenchmarkMul(b *testing.B) {
	ds, us := parsed()
	b.Run("domain.Decimal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f := ds[i%len(ds)]
			sinkD = f[0].Mul(f[1])
		}
	})
	b.Run("udecimal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f := us[i%len(us)]
			sinkU = f[0].Mul(f[1])
		}
	})
}

func BenchmarkDiv(b *testing.B) {
	ds, us := parsed()
	b.Run("domain.Decimal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f := ds[i%len(ds)]
			sinkD = f[0].Mul(f[1]).Div(f[1])
		}
	})
	b.Run("udecimal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f := us[i%len(us)]
			sinkU, _ = f[0].Mul(f[1]).Div(f[1])
		}
	})
}

func BenchmarkAdd(b *testing.B) {
	ds, us := parsed()
	b.Run("domain.Decimal", func(b *testing.B) {
		var s decimal.Decimal
		for i := 0; i < b.N; i++ {
			s = s.Add(ds[i%len(ds)][0])
		}
		sinkD = s
	})
	b.Run("udecimal", func(b *testing.B) {
		var s udecimal.Decimal
		for i := 0; i < b.N; i++ {
			s = s.Add(us[i%len(us)][0])
		}
		sinkU = s
	})
}

func BenchmarkString(b *testing.B) {
	ds, us := parsed()
	b.Run("domain.Decimal", func(b *testing.B) {
		n := 0
		for i := 0; i < b.N; i++ {
			n += len(ds[i%len(ds)][0].String())
		}
		sink = n
	})
	b.Run("udecimal", func(b *testing.B) {
		n := 0
		for i := 0; i < b.N; i++ {
			n += len(us[i%len(us)][0].String())
		}
		sink = n
	})
}

// The two agree on every product of the benchmark's fills (both exact
// there: the products have at most 12 decimals … or are rounded at 12 by
// decimal.Decimal, which udecimal at 19 does not need).
func TestSameProducts(t *testing.T) {
	ds, us := parsed()
	for i := range ds {
		d, u := ds[i][0].Mul(ds[i][1]), us[i][0].Mul(us[i][1])
		if back, err := udecimal.Parse(string(d.AppendTrimmed(nil))); err != nil || !back.Equal(u) {
			t.Fatalf("%s × %s: domain %s, udecimal %s", ds[i][0], ds[i][1], d, u)
		}
	}
}

func parsed() ([][2]decimal.Decimal, [][2]udecimal.Decimal) {
	ds := make([][2]decimal.Decimal, len(fills))
	us := make([][2]udecimal.Decimal, len(fills))
	for i, f := range fills {
		ds[i] = [2]decimal.Decimal{decimal.MustDecimal(f[0]), decimal.MustDecimal(f[1])}
		us[i] = [2]udecimal.Decimal{udecimal.MustParse(f[0]), udecimal.MustParse(f[1])}
	}
	return ds, us
}

var (
	sink  int
	sinkD decimal.Decimal
	sinkU udecimal.Decimal
)
