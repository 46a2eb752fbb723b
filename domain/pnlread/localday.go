package pnlread

import (
	"math"
	"time"
)

// Local days. A PNL day, an overview's periods and orders/day's days are
// local to the requested timezone. Where a zone's clocks jump over
// midnight (daylight saving time starting at 00:00, as in Havana,
// Santiago, Asunción or Beirut) there is no 00:00 that day, and
// time.Date(…, 0, 0, 0, 0, loc) may then answer 23:00 of the day before:
// a day would start in its predecessor and be labelled with its date.
// DayStart and LocalDayStart answer the day's first instant instead; both
// readers (the Ledger and ClickHouse) and the HTTP days use them, so a day
// is the same wherever it is read.

// LocalDayStart returns the first instant of local date y-m-d in loc:
// its midnight, or the instant the clocks jump where midnight does not
// exist. The date is normalized as time.Date normalizes it (day 0 is the
// last day of the month before; month 13 is January of the next year).
func LocalDayStart(y int, m time.Month, d int, loc *time.Location) time.Time {
	y, m, d = time.Date(y, m, d, 12, 0, 0, 0, loc).Date()
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if t.Day() != d { // midnight fell in a gap, on the day before
		if _, end := t.ZoneBounds(); !end.IsZero() {
			return end
		}
	}
	return t
}

// DayStart returns the first instant of t's local day in loc.
func DayStart(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return LocalDayStart(y, m, d, loc)
}

// AddLocalDays returns the first instant of the local day n days after
// (before, for n < 0) day's local date in loc.
func AddLocalDays(day time.Time, n int, loc *time.Location) time.Time {
	y, m, d := day.In(loc).Date()
	return LocalDayStart(y, m, d+n, loc)
}

// OverviewPeriods are the ranges of pnl/overview's period figures, in unix
// seconds [from, to), for now in loc: today, yesterday, the last week
// (today and the 7 days before), the last month, the last year (each up to
// the end of today) and the last calendar year.
func OverviewPeriods(now time.Time, loc *time.Location) [6][2]int64 {
	y, m, d := now.In(loc).Date()
	today := LocalDayStart(y, m, d, loc).Unix()
	tomorrow := LocalDayStart(y, m, d+1, loc).Unix()
	return [6][2]int64{
		{today, tomorrow},
		{LocalDayStart(y, m, d-1, loc).Unix(), today},
		{LocalDayStart(y, m, d-7, loc).Unix(), tomorrow},
		{LocalDayStart(y, m-1, d, loc).Unix(), tomorrow},
		{LocalDayStart(y-1, m, d, loc).Unix(), tomorrow},
		{LocalDayStart(y-1, 1, 1, loc).Unix(), LocalDayStart(y, 1, 1, loc).Unix()},
	}
}

// FloorDiv returns ⌊a ÷ b⌋ (Go's / truncates toward zero).
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// DayNumber returns the count of days from 1970-01-01 to the local date of
// ms (Unix milliseconds) in loc: the day number both PNL readers key
// their daily figures by.
func DayNumber(ms int64, loc *time.Location) int64 {
	y, m, d := time.UnixMilli(ms).In(loc).Date()
	return FloorDiv(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix(), 86400)
}

// DaySpan counts the local days in loc from first to last (ms), both
// included; 0 when both are 0 (no fills).
func DaySpan(first, last int64, loc *time.Location) int64 {
	if first == 0 && last == 0 {
		return 0
	}
	return DayNumber(last, loc) - DayNumber(first, loc) + 1
}

// LocalDays gives the day numbers (DayNumber) of many instants in Loc. It
// keeps the offset of the last instant's zone period, so that nearby
// instants cost no zone lookup: a day number is ⌊(t + offset at t) ÷
// 86400⌋. The zero value with Loc set is ready to use.
type LocalDays struct {
	Loc      *time.Location
	from, to int64 // the period of off (unix s), [from, to); empty at first
	off      int64
}

// Day returns the day number of Unix second t in z.Loc.
func (z *LocalDays) Day(t int64) int64 {
	if t < z.from || t >= z.to {
		tt := time.Unix(t, 0).In(z.Loc)
		_, off := tt.Zone()
		s, e := tt.ZoneBounds()
		z.off, z.from, z.to = int64(off), math.MinInt64, math.MaxInt64
		if !s.IsZero() {
			z.from = s.Unix()
		}
		if !e.IsZero() {
			z.to = e.Unix()
		}
	}
	return FloorDiv(t+z.off, 86400)
}
