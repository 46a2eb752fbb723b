package strategy

import (
	"math"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Expected values below are computed by hand; the comments show the work.

func sameSeries(t *testing.T, name string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len=%d, want %d", name, len(got), len(want))
	}
	for i := range want {
		if math.IsNaN(want[i]) {
			if !math.IsNaN(got[i]) {
				t.Fatalf("%s[%d]=%v, want NaN (warm-up)", name, i, got[i])
			}
			continue
		}
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("%s[%d]=%v, want %v", name, i, got[i], want[i])
		}
	}
}

var nan = math.NaN()

func TestSMA(t *testing.T) {
	// windows of 3: (1+2+3)/3=2, (2+3+4)/3=3, (3+4+8)/3=5
	sameSeries(t, "SMA3", SMA([]float64{1, 2, 3, 4, 8}, 3), []float64{nan, nan, 2, 3, 5})
	sameSeries(t, "SMA1", SMA([]float64{7, 9}, 1), []float64{7, 9})
	sameSeries(t, "SMA too long", SMA([]float64{1, 2}, 3), []float64{nan, nan})
	sameSeries(t, "SMA0", SMA([]float64{1, 2}, 0), []float64{nan, nan})
	sameSeries(t, "SMA empty", SMA(nil, 3), []float64{})
}

func TestEMA(t *testing.T) {
	// period 3: k = 2/4 = 0.5; seed (2+4+6)/3 = 4;
	// 8·0.5 + 4·0.5 = 6; 12·0.5 + 6·0.5 = 9; 10·0.5 + 9·0.5 = 9.5
	sameSeries(t, "EMA3", EMA([]float64{2, 4, 6, 8, 12, 10}, 3), []float64{nan, nan, 4, 6, 9, 9.5})
	// period 4: k = 2/5 = 0.4; seed (10+11+12+13)/4 = 11.5; 20·0.4 + 11.5·0.6 = 14.9
	sameSeries(t, "EMA4", EMA([]float64{10, 11, 12, 13, 20}, 4), []float64{nan, nan, nan, 11.5, 14.9})
	sameSeries(t, "EMA too long", EMA([]float64{1}, 2), []float64{nan})
}

func TestBollinger(t *testing.T) {
	// mean 5; deviations² 9,1,1,1,0,0,4,16 → variance 32/8 = 4, σ = 2;
	// bands 5 ± 2·2 = 9 and 1
	up, mid, lo := Bollinger([]float64{2, 4, 4, 4, 5, 5, 7, 9}, 8, 2)
	w := []float64{nan, nan, nan, nan, nan, nan, nan}
	sameSeries(t, "upper", up, append(append([]float64{}, w...), 9))
	sameSeries(t, "middle", mid, append(append([]float64{}, w...), 5))
	sameSeries(t, "lower", lo, append(append([]float64{}, w...), 1))

	// period 2 over 1,3,3: windows (1,3): mean 2 σ 1 → 4, 0; (3,3): σ 0 → 3, 3
	up, mid, lo = Bollinger([]float64{1, 3, 3}, 2, 2)
	sameSeries(t, "upper2", up, []float64{nan, 4, 3})
	sameSeries(t, "middle2", mid, []float64{nan, 2, 3})
	sameSeries(t, "lower2", lo, []float64{nan, 0, 3})
}

func TestRSI(t *testing.T) {
	// changes +1, -1, +2, 0 with period 2:
	// i=2: gain (1+0)/2 = 0.5, loss (0+1)/2 = 0.5 → RS 1 → 50
	// i=3: gain (0.5·1+2)/2 = 1.25, loss (0.5·1+0)/2 = 0.25 → RS 5 → 100-100/6
	// i=4: gain 1.25/2 = 0.625, loss 0.25/2 = 0.125 → RS 5 → 100-100/6
	r := 100 - 100.0/6
	sameSeries(t, "RSI2", RSI([]float64{1, 2, 1, 3, 3}, 2), []float64{nan, nan, 50, r, r})
	sameSeries(t, "RSI up only", RSI([]float64{1, 2, 3}, 2), []float64{nan, nan, 100})
	sameSeries(t, "RSI flat", RSI([]float64{4, 4, 4}, 2), []float64{nan, nan, 50})
	sameSeries(t, "RSI short", RSI([]float64{4, 4}, 2), []float64{nan, nan})
}

func TestRoundDecimal(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
		ok   bool
	}{
		{14.9, "14.90000000", true},
		{0.123456785, "0.123456785", true},
		{1.2e-9, "0.0000000012", true},            // a sub-cent token's price keeps its digits
		{0.1234567890125, "0.123456789012", true}, // binary ≈ …01249999…: rounds down
		{-2.5, "-2.50000000", true},
		{nan, "0.00000000", false},
		{math.Inf(1), "0.00000000", false},
		{1e12, "1000000000000.00000000", true},
		{1e26, "0.00000000", false},
	} {
		d, ok := RoundDecimal(c.f)
		if ok != c.ok || (ok && d.String() != c.want) {
			t.Errorf("RoundDecimal(%v) = %s, %v; want %s, %v", c.f, d, ok, c.want, c.ok)
		}
	}
}

func TestCloses(t *testing.T) {
	got := Closes([]domain.Candle{{Close: decimal.MustDecimal("1.5")}, {Close: decimal.MustDecimal("0.00000001")}})
	if len(got) != 2 || got[0] != 1.5 || got[1] != 1e-8 {
		t.Fatalf("Closes = %v", got)
	}
}
