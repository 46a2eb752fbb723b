package projections

import (
	"sort"
	"time"
	_ "time/tzdata" // zones on a bare machine: days are local to the requested timezone

	"github.com/tradeledger/tradeledger/domain"
)

// Days of a PNL history: IANA zones, the days of a zone as runs of whole
// buckets, and ranges in ms turned into bucket bounds.

// foldDays folds the buckets of ss starting in [from, to) (unix s) into
// days of loc, oldest first; days without fills are left out.
func foldDays(ss []*series, from, to int64, loc *time.Location) []DayPnl {
	var days []dayAcc
	merge := len(ss) > 1
	idx := map[int64]int{}
	for _, s := range ss {
		i, j := s.span(from, to)
		var ds, de int64 = 1, 0
		cur := -1
		for k := i; k < j; k++ {
			bk := &s.b[k]
			if bk.Trades == 0 {
				continue
			}
			st := bk.slot * BucketSeconds
			if st < ds || st >= de {
				m := domain.DayStart(time.Unix(st, 0), loc)
				ds = m.Unix()
				de = domain.AddLocalDays(m, 1, loc).Unix()
				if merge {
					var ok bool
					if cur, ok = idx[ds]; !ok {
						cur = len(days)
						idx[ds] = cur
						days = append(days, dayAcc{start: ds, DayPnl: DayPnl{Date: m.Format("2006-01-02")}})
					}
				} else {
					cur = len(days)
					days = append(days, dayAcc{start: ds, DayPnl: DayPnl{Date: m.Format("2006-01-02")}})
				}
			}
			dp := &days[cur]
			dp.NumberOfTrades += int64(bk.Trades)
			dp.TotalVolume = domain.Number(domain.Decimal(dp.TotalVolume).Add(bk.Volume))
			dp.Pnl = domain.Number(domain.Decimal(dp.Pnl).Add(bk.Pnl))
			dp.UnmatchedBaseValue = domain.Number(domain.Decimal(dp.UnmatchedBaseValue).Add(bk.Unmatched))
			dp.invested = dp.invested.Add(bk.Invested)
		}
	}
	if merge {
		sort.Slice(days, func(i, j int) bool { return days[i].start < days[j].start })
	}
	if days == nil {
		return nil
	}
	out := make([]DayPnl, len(days))
	var cum, inv domain.Decimal
	for i := range days {
		cum = cum.Add(domain.Decimal(days[i].Pnl))
		inv = inv.Add(days[i].invested)
		out[i] = days[i].DayPnl
		out[i].CumulativePnl = domain.Number(cum)
		out[i].CumulativePnlPercent = domain.Number(domain.PnlPercent(cum, inv))
	}
	return out
}

// dayAcc is a day being folded: its start (unix s) and invested.
type dayAcc struct {
	DayPnl
	start    int64
	invested domain.Decimal
}

// rangeSeconds turns a [from, to) range in ms (0: unbounded) into bucket
// bounds in unix seconds: a bucket is in the range when its start lies in
// [from rounded down to its bucket, to).
func rangeSeconds(fromMs, toMs int64) (int64, int64) {
	from, to := int64(minTime), int64(maxTime)
	if fromMs != 0 {
		from = domain.FloorDiv(fromMs, BucketSeconds*1000) * BucketSeconds
	}
	if toMs != 0 {
		to = -domain.FloorDiv(-toMs, 1000) // ceil: buckets starting before toMs
	}
	return from, to
}
