package projections

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// randomLog is a deterministic random trading log over pairs (USDT quoted),
// times spread over days, with equal times on purpose.
func randomLog(t testing.TB, seed int64, orders, pairs int) []domain.Event {
	rng := rand.New(rand.NewSource(seed))
	base := day0
	var evs []domain.Event
	pos := uint64(0)
	add := func(stream, typ string, tm int64, data []byte) {
		pos++
		evs = append(evs, domain.Event{Stream: stream, Type: typ, Time: tm, Position: pos, Data: data})
	}
	for i := 0; i < orders; i++ {
		id := int64(i + 1)
		p := rng.Intn(pairs)
		side := "buy"
		if rng.Intn(2) == 0 {
			side = "sell"
		}
		tm := base.Add(time.Duration(i/3) * 7 * time.Minute).UnixMilli() // groups of 3 share a time
		price := 100 + rng.Intn(50)
		add(domain.OrderStream(id), domain.TypeOrderRequested, tm, []byte(fmt.Sprintf(
			`{"orderId":%d,"exchange":"ex","pair":"USDT-C%d","side":"%s","kind":"limit","amount":"1.00000000","price":"%d.00000000","clientOrderId":"c%d"}`,
			id, p, side, price, id)))
		add(domain.OrderStream(id), domain.TypeOrderFilled, tm, []byte(fmt.Sprintf(
			`{"fillId":"f%d","price":"%d.00000000","quantity":"1.00000000","fee":"0.10000000","feeAsset":"USDT"}`, id, price)))
	}
	return evs
}

// Invariants over a random log: pages (single and multi) concatenate to the
// full newest-first list with no duplicates; Σ daily pnl = total in several
// zones; All = Σ pairs.
func TestInvariantsRandom(t *testing.T) {
	const pairs = 5
	evs := randomLog(t, 1, 3000, pairs)
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.Average} {
		l := replay(t, m, evs)
		var keys []string
		for p := 0; p < pairs; p++ {
			keys = append(keys, fmt.Sprintf("ex/USDT-C%d", p))
		}
		// single-key pages
		full := l.Orders(keys[0])
		var got []OrderRecord
		for page := 0; ; page++ {
			recs, total, err := l.Page(keys[0], page, 7)
			if err != nil || total != len(full) {
				t.Fatalf("page %d: total %d err %v", page, total, err)
			}
			if len(recs) == 0 {
				break
			}
			got = append(got, recs...)
		}
		samePositions(t, "single", got, full)
		// multi-key pages over 3 keys vs a merge by (time desc, key order, position desc)
		sel := []string{keys[2], keys[0], keys[4]}
		var want []OrderRecord
		for _, k := range sel {
			want = append(want, l.Orders(k)...)
		}
		order := map[string]int{sel[0]: 0, sel[1]: 1, sel[2]: 2}
		sortRecords(want, order)
		got = nil
		for page := 0; ; page++ {
			recs, total, err := l.PageMulti(append(sel, sel[0]), page, 13)
			if err != nil || total != len(want) {
				t.Fatalf("multi page %d: total %d (want %d) err %v", page, total, len(want), err)
			}
			if len(recs) == 0 {
				break
			}
			got = append(got, recs...)
		}
		samePositions(t, "multi", got, want)

		// Σ daily = total, in zones with 0, +5:45, +8:45 and −3:30 offsets
		for _, z := range []string{"UTC", "Asia/Kathmandu", "Australia/Eucla", "America/St_Johns"} {
			loc, _ := LoadZone(z)
			var all decimal.Decimal
			for _, k := range keys {
				days, _, _, err := l.Daily(DailyQuery{Scope: PnlScope{Keys: []string{k}}, Loc: loc})
				if err != nil {
					t.Fatal(err)
				}
				var s decimal.Decimal
				for _, d := range days {
					s = s.Add(decimal.Decimal(d.Pnl))
				}
				tot, _ := l.Total(k)
				if s != decimal.Decimal(tot.Pnl) {
					t.Errorf("%s %s %s: Σ daily %s != total %s", m, z, k, s, decimal.Decimal(tot.Pnl))
				}
				all = all.Add(s)
			}
			o, err := l.Overview(OverviewQuery{Scope: PnlScope{Keys: []string{"All"}}, Loc: loc, Now: day0.AddDate(0, 0, 3)})
			if err != nil {
				t.Fatal(err)
			}
			var daySum decimal.Decimal
			for _, d := range o.DailyHistory {
				daySum = daySum.Add(decimal.Decimal(d.Pnl))
			}
			var perPair decimal.Decimal
			for _, p := range o.PnlsPerPair {
				perPair = perPair.Add(decimal.Decimal(p.Pnl))
			}
			if decimal.Decimal(o.Total.Pnl) != all || daySum != all || perPair != all {
				t.Errorf("%s %s: All total %s, Σ days %s, Σ pairs %s, want %s", m, z, decimal.Decimal(o.Total.Pnl), daySum, perPair, all)
			}
		}
	}
}

func sortRecords(rs []OrderRecord, keyOrder map[string]int) {
	less := func(a, b OrderRecord) bool {
		if a.Time != b.Time {
			return a.Time > b.Time
		}
		if keyOrder[a.Key] != keyOrder[b.Key] {
			return keyOrder[a.Key] < keyOrder[b.Key]
		}
		return a.Position > b.Position
	}
	for i := 1; i < len(rs); i++ { // insertion sort keeps it obvious
		for j := i; j > 0 && less(rs[j], rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

func samePositions(t *testing.T, name string, got, want []OrderRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", name, len(got), len(want))
	}
	seen := map[uint64]bool{}
	for i := range got {
		if seen[got[i].Position] {
			t.Fatalf("%s: duplicate position %d", name, got[i].Position)
		}
		seen[got[i].Position] = true
		if got[i].Position != want[i].Position {
			t.Fatalf("%s: record %d is position %d, want %d", name, i, got[i].Position, want[i].Position)
		}
	}
}
