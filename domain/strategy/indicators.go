package strategy

import (
	"math"
	"strconv"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Technical indicators over a series of values (usually candle closes,
// oldest first). They work in float64: indicators are estimates shown on
// charts and compared against prices, never stored as amounts; a strategy
// that turns one into an order price converts it with DecimalFromFloat
// after rounding (see RoundDecimal).
//
// Every function returns a slice as long as its input. Positions before the
// indicator has enough data ("warm-up") hold NaN; the HTTP layer shows them
// as null. A period < 1 or longer than the input gives all NaN.

// SMA is the simple moving average: out[i] = mean(v[i-period+1 .. i]),
// defined from i = period-1.
func SMA(v []float64, period int) []float64 {
	out := nanSlice(len(v))
	if period < 1 || period > len(v) {
		return out
	}
	var sum float64
	for i, x := range v {
		sum += x
		if i >= period {
			sum -= v[i-period]
		}
		if i >= period-1 {
			out[i] = sum / float64(period)
		}
	}
	return out
}

// EMA is the exponential moving average with smoothing k = 2/(period+1),
// seeded with the SMA of the first period values (the usual convention, so
// out[period-1] = SMA), then out[i] = v[i]·k + out[i-1]·(1-k).
func EMA(v []float64, period int) []float64 {
	out := nanSlice(len(v))
	if period < 1 || period > len(v) {
		return out
	}
	k := 2 / float64(period+1)
	var sum float64
	for i := 0; i < period; i++ {
		sum += v[i]
	}
	prev := sum / float64(period)
	out[period-1] = prev
	for i := period; i < len(v); i++ {
		prev = v[i]*k + prev*(1-k)
		out[i] = prev
	}
	return out
}

// Bollinger returns Bollinger bands: middle = SMA(period), upper and lower =
// middle ± k·σ, where σ is the population standard deviation of the same
// window (as in Bollinger's definition and most charting tools). Typical
// parameters are period 20, k 2.
func Bollinger(v []float64, period int, k float64) (upper, middle, lower []float64) {
	middle = SMA(v, period)
	upper, lower = nanSlice(len(v)), nanSlice(len(v))
	if period < 1 || period > len(v) {
		return upper, middle, lower
	}
	for i := period - 1; i < len(v); i++ {
		m := middle[i]
		var ss float64
		for _, x := range v[i-period+1 : i+1] {
			ss += (x - m) * (x - m)
		}
		sd := math.Sqrt(ss / float64(period))
		upper[i] = m + k*sd
		lower[i] = m - k*sd
	}
	return upper, middle, lower
}

// RSI is Wilder's relative strength index (0..100): the first average gain
// and loss are the simple means of the first period changes (defined at
// i = period), later ones are smoothed as avg = (prev·(period-1) + x)/period.
// RSI = 100 - 100/(1 + avgGain/avgLoss); 100 when there was no loss, 50
// when the price did not move at all.
func RSI(v []float64, period int) []float64 {
	out := nanSlice(len(v))
	if period < 1 || period >= len(v) {
		return out
	}
	var gain, loss float64
	for i := 1; i <= period; i++ {
		d := v[i] - v[i-1]
		if d > 0 {
			gain += d
		} else {
			loss -= d
		}
	}
	gain /= float64(period)
	loss /= float64(period)
	out[period] = rsi(gain, loss)
	for i := period + 1; i < len(v); i++ {
		d := v[i] - v[i-1]
		g, l := 0.0, 0.0
		if d > 0 {
			g = d
		} else {
			l = -d
		}
		gain = (gain*float64(period-1) + g) / float64(period)
		loss = (loss*float64(period-1) + l) / float64(period)
		out[i] = rsi(gain, loss)
	}
	return out
}

func rsi(gain, loss float64) float64 {
	switch {
	case gain == 0 && loss == 0:
		return 50
	case loss == 0:
		return 100
	}
	return 100 - 100/(1+gain/loss)
}

// Closes returns the close prices of candles as float64, oldest first.
func Closes(candles []domain.Candle) []float64 {
	out := make([]float64, len(candles))
	for i, c := range candles {
		out[i] = c.Close.Float64()
	}
	return out
}

// RoundDecimal converts an indicator value to a Decimal, its binary value
// rounded half to even to 12 decimals (a sub-cent token's price keeps its
// digits); NaN, ±Inf and values beyond 10^26 give ok = false.
func RoundDecimal(f float64) (d decimal.Decimal, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1e26 {
		return decimal.Zero, false
	}
	d, err := decimal.ParseDecimal(strconv.FormatFloat(f, 'f', decimal.DecimalPlaces, 64))
	return d, err == nil
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
