package clickhouse

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Day numbers format as time formats the same UTC day, over years 0 to
// 9999 and beyond (where appendDate falls back to time).
func TestAppendDate(t *testing.T) {
	for _, n := range []int64{-719528, -719162, -1, 0, 1, 59, 60, 365, 10957, 11016, 11017, 19358, 19782, 20747, 2932896, 2932897} {
		want := time.Unix(n*86400, 0).UTC().Format(time.DateOnly)
		if got := string(appendDate(nil, n)); got != want {
			t.Errorf("appendDate(%d) = %s, want %s", n, got, want)
		}
	}
	for n := int64(-800_000); n < 3_000_000; n += 97 {
		want := time.Unix(n*86400, 0).UTC().Format(time.DateOnly)
		if got := string(appendDate(nil, n)); got != want {
			t.Fatalf("appendDate(%d) = %s, want %s", n, got, want)
		}
	}
}

// A series grows both ways and keeps its days; days never written are
// zero; pnl sums a range of days clipped to the series.
func TestDaySeries(t *testing.T) {
	var s daySeries
	want := map[int64]int64{}
	for i, n := range []int64{100, 101, 99, 150, 40, 41, 300, 7, 1000, 100} {
		s.at(n).add(ints(1, 0, int64(i+1), 0, 0))
		want[n] += int64(i + 1)
	}
	for n := s.first; n <= s.last(); n++ {
		if got := s.at(n).Pnl; got != fromUnits(want[n]) {
			t.Fatalf("day %d pnl %s, want %d units", n, got, want[n])
		}
	}
	if s.first > 7 || s.last() < 1000 {
		t.Fatalf("series spans %d..%d", s.first, s.last())
	}
	if got, want := s.pnl(0, 101), want[7]+want[40]+want[41]+want[99]+want[100]; got != fromUnits(want) {
		t.Errorf("pnl(0, 101) = %s, want %d units", got, want)
	}
	if got := s.pnl(2000, 3000); !got.IsZero() {
		t.Errorf("pnl after the series = %s", got)
	}
	if got := foldDays(map[string]*daySeries{"a": &s}, []string{"b"}); got == nil || len(got) != 0 {
		t.Errorf("foldDays without days = %#v, want an empty slice", got)
	}
}

// foldDays merges pairs by day, leaves days without fills out and keeps
// the running sums.
func TestFoldDays(t *testing.T) {
	a, b := newSeries(19000, 19002), &daySeries{}
	a.at(19000).add(ints(2, 10, 5, 1, 100))
	a.at(19002).add(ints(1, 10, -2, 0, 50))
	b.at(19002).add(ints(1, 5, 1, 0, 50))
	b.at(18990).add(ints(3, 7, 4, 0, 0))
	b.at(19010) // no fills
	got := foldDays(map[string]*daySeries{"a": a, "b": b}, []string{"a", "b"})
	type day struct {
		date             string
		trades, pnl, cum int64
	}
	want := []day{{"2021-12-29", 3, 4, 4}, {"2022-01-08", 2, 5, 9}, {"2022-01-10", 2, -1, 8}}
	if len(got) != len(want) {
		t.Fatalf("days %+v", got)
	}
	for i, w := range want {
		g := got[i]
		if g.Date != w.date || g.NumberOfTrades != w.trades || decimal.Decimal(g.Pnl) != fromUnits(w.pnl) || decimal.Decimal(g.CumulativePnl) != fromUnits(w.cum) {
			t.Errorf("day %d = %+v, want %+v", i, g, w)
		}
	}
}

// A series made from a released one's days starts empty: days it grows
// into read zero, whatever the released series held there.
func TestSeriesReused(t *testing.T) {
	for round := 0; round < 3; round++ {
		s := newSeries(100, 200)
		if len(s.v) != 0 {
			t.Fatalf("round %d: new series holds %d days", round, len(s.v))
		}
		for _, n := range []int64{100, 150, 190, 300, 40} {
			if a := s.at(n); *a != (dayAgg{}) {
				t.Fatalf("round %d: day %d reads %+v before any fill", round, n, *a)
			}
		}
		for n := s.first; n <= s.last(); n++ {
			s.at(n).add(ints(1, 2, 3, 4, 5))
		}
		releaseSeries(map[string]*daySeries{"k": s})
	}
}

// ints returns v as figures (counts, or amounts in units of 10^-12).
func ints(v ...int64) []i128 {
	out := make([]i128, len(v))
	for i, x := range v {
		out[i] = i64(x)
	}
	return out
}
