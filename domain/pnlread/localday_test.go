package pnlread_test

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/pnlread"
)

func TestLocalDayStartWhereMidnightDoesNotExist(t *testing.T) {
	havana, err := time.LoadLocation("America/Havana")
	if err != nil {
		t.Fatal(err)
	}
	// 2024-03-10: Havana's clocks jump from 00:00 CST to 01:00 CDT.
	start := pnlread.LocalDayStart(2024, 3, 10, havana)
	if got := start.Format("2006-01-02 15:04 MST"); got != "2024-03-10 01:00 CDT" {
		t.Fatalf("start of 2024-03-10 in Havana: %s, want 2024-03-10 01:00 CDT", got)
	}
	if prev := start.Add(-time.Second).Format("2006-01-02 15:04:05"); prev != "2024-03-09 23:59:59" {
		t.Fatalf("the instant before the day: %s", prev)
	}
	if got := pnlread.DayStart(time.Date(2024, 3, 10, 15, 0, 0, 0, time.UTC), havana); !got.Equal(start) {
		t.Fatalf("DayStart: %s", got)
	}
	if got := pnlread.AddLocalDays(pnlread.LocalDayStart(2024, 3, 9, havana), 1, havana); !got.Equal(start) {
		t.Fatalf("the day after 2024-03-09: %s", got)
	}
	// A 23-hour day: the next day starts 23 hours later.
	if next := pnlread.AddLocalDays(start, 1, havana); next.Sub(start) != 23*time.Hour {
		t.Fatalf("2024-03-10 lasted %s in Havana", next.Sub(start))
	}
	// An ordinary midnight, and normalization of the date.
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	if got := pnlread.LocalDayStart(2024, 3, 32, ams).Format(time.RFC3339); got != "2024-04-01T00:00:00+02:00" {
		t.Fatalf("2024-03-32 in Amsterdam: %s", got)
	}
}

func TestOverviewPeriods(t *testing.T) {
	havana, _ := time.LoadLocation("America/Havana")
	now := time.Date(2024, 3, 17, 18, 0, 0, 0, time.UTC)
	p := pnlread.OverviewPeriods(now, havana)
	day := func(y int, m time.Month, d int) int64 { return pnlread.LocalDayStart(y, m, d, havana).Unix() }
	want := [6][2]int64{
		{day(2024, 3, 17), day(2024, 3, 18)},
		{day(2024, 3, 16), day(2024, 3, 17)},
		{day(2024, 3, 10), day(2024, 3, 18)}, // starts at 01:00 CDT, not 23:00 of the 9th
		{day(2024, 2, 17), day(2024, 3, 18)},
		{day(2023, 3, 17), day(2024, 3, 18)},
		{day(2023, 1, 1), day(2024, 1, 1)},
	}
	if p != want {
		t.Fatalf("periods %v, want %v", p, want)
	}
	if time.Unix(p[2][0], 0).In(havana).Hour() != 1 {
		t.Fatal("the week's first day must start when Havana's clocks jump")
	}
}

// LocalDays and DayNumber give the local date of every half hour as
// time.In does, across DST changes, a day skipped (Apia, 2011-12-30) and a
// midnight that does not exist (Havana).
func TestLocalDays(t *testing.T) {
	for _, zn := range []string{"UTC", "Europe/Amsterdam", "America/Havana", "Pacific/Apia", "Asia/Kathmandu", "Australia/Lord_Howe"} {
		loc, err := time.LoadLocation(zn)
		if err != nil {
			t.Fatal(err)
		}
		z := pnlread.LocalDays{Loc: loc}
		from := time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		for s := from; s < from+3*366*86400; s += 1800 {
			y, m, d := time.Unix(s, 0).In(loc).Date()
			want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
			if got := z.Day(s); got != want {
				t.Fatalf("%s: Day(%s) = %d, want %d", zn, time.Unix(s, 0).UTC(), got, want)
			}
			if got := pnlread.DayNumber(s*1000+999, loc); got != want {
				t.Fatalf("%s: DayNumber(%s) = %d, want %d", zn, time.Unix(s, 0).UTC(), got, want)
			}
		}
	}
}
