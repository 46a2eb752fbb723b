package projections

import (
	"bytes"
	"math/rand"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// encodeAll is what the page JSON must be: every record encoded afresh.
func encodeAll(recs []OrderRecord) []byte {
	var b []byte
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = recs[i].AppendJSON(b)
	}
	return b
}

// checkPagesJSON compares AppendPageJSON and AppendPageMultiJSON with the
// records of Page and PageMulti, freshly encoded, on every page.
func checkPagesJSON(t *testing.T, l *Ledger, keys []string, size int) {
	t.Helper()
	for _, key := range keys {
		for page := 0; ; page++ {
			recs, total, err := l.Page(key, page, size)
			if err != nil {
				t.Fatal(err)
			}
			got, gotTotal, err := l.AppendPageJSON([]byte("x"), key, page, size)
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]byte("x"), encodeAll(recs)...); !bytes.Equal(got, want) || gotTotal != total {
				t.Fatalf("%s page %d of %d: JSON (total %d)\n%s\nwant (total %d)\n%s", key, page, size, gotTotal, got, total, want)
			}
			if len(recs) == 0 {
				break
			}
		}
	}
	for page := 0; ; page++ {
		recs, total, err := l.PageMulti(keys, page, size)
		if err != nil {
			t.Fatal(err)
		}
		got, gotTotal, err := l.AppendPageMultiJSON(nil, keys, page, size)
		if err != nil {
			t.Fatal(err)
		}
		if want := encodeAll(recs); !bytes.Equal(got, want) || gotTotal != total {
			t.Fatalf("multi page %d of %d: JSON (total %d)\n%s\nwant (total %d)\n%s", page, size, gotTotal, got, total, want)
		}
		if len(recs) == 0 {
			break
		}
	}
}

// The cached JSON of the order pages is always what encoding the records
// afresh gives: while orders are open (toCancel) and after they close, after
// late fills shift the records, after an id is requested again, and with a
// cache too small to hold a pair.
func TestPageJSONMatchesRecords(t *testing.T) {
	for _, budget := range []int{DefaultPageCacheBytes, 3 * encBlock * 300, 0} {
		t.Run(strconv.Itoa(budget), func(t *testing.T) {
			rng := rand.New(rand.NewSource(3))
			g := &testLog{t: t}
			l := NewLedger(domain.LOFO)
			l.PageCacheBytes = budget
			keys := []string{"binance/USDT-BTC", "binance/USDT-ETH", "kraken/BTC-ETH"}
			pairs := [][2]string{{"binance", "USDT-BTC"}, {"binance", "USDT-ETH"}, {"kraken", "BTC-ETH"}}
			apply := func() {
				for i := range g.events {
					if err := l.Apply(&g.events[i]); err != nil {
						t.Fatal(err)
					}
				}
				g.events = g.events[:0]
			}
			var open []int64
			for id := int64(1); id <= 700; id++ {
				p := pairs[rng.Intn(len(pairs))]
				side := domain.Buy
				if rng.Intn(2) == 0 {
					side = domain.Sell
				}
				tm := at(0, 0, int(id))
				g.order(id, p[0], p[1], side, "2", tm)
				if rng.Intn(8) == 0 {
					tm = at(0, 0, int(id)-rng.Intn(200)) // a late fill
				}
				qty := "2"
				if rng.Intn(5) == 0 {
					qty = "1" // stays open
					open = append(open, id)
				}
				g.fill(id, strconv.Itoa(90+rng.Intn(20)), qty, "0.01", "USDT", tm)
			}
			apply()
			checkPagesJSON(t, l, keys, 100)
			checkPagesJSON(t, l, keys, 64)
			// The open orders close; some are requested again under their id.
			for _, id := range open {
				g.add(domain.OrderStream(id), domain.TypeOrderCancelled, at(1, 0, 0), domain.OrderCancelled{})
			}
			apply()
			checkPagesJSON(t, l, keys, 100)
			for i, id := range open {
				if i%7 == 0 {
					g.order(id, "binance", "USDT-BTC", domain.Buy, "3", at(1, 0, 1))
				}
			}
			apply()
			checkPagesJSON(t, l, keys, 100)
			// Late fills move records of every pair.
			for id := int64(701); id <= 760; id++ {
				p := pairs[int(id)%len(pairs)]
				g.order(id, p[0], p[1], domain.Buy, "1", at(0, 0, 0))
				g.fill(id, "100", "1", "0", "USDT", at(0, 0, rng.Intn(700)).Add(time.Second))
			}
			apply()
			checkPagesJSON(t, l, keys, 100)
			checkPagesJSON(t, l, keys, 7)
		})
	}
}

// Day lists the window's newest MaxDayOrders records across keys exactly as
// sorting all of them would: newest first, equal times in key order (a key
// given twice twice), then newest position first.
func TestDayMergesNewestFirst(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	g := &testLog{t: t}
	pairs := []string{"USDT-BTC", "USDT-ETH", "USDT-SOL"}
	for id := int64(1); id <= MaxDayOrders+1500; id++ {
		tm := at(0, 1, 0).Add(time.Duration(rng.Intn(3000)) * time.Second) // many equal times
		side := domain.Buy
		if id%3 == 0 {
			side = domain.Sell
		}
		g.order(id, "binance", pairs[rng.Intn(len(pairs))], side, "1", tm)
		g.fill(id, strconv.Itoa(90+rng.Intn(20)), "1", "0.01", "USDT", tm)
	}
	l := NewLedger(domain.LOFO)
	for i := range g.events {
		if err := l.Apply(&g.events[i]); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"binance/USDT-SOL", "binance/USDT-BTC", "binance/USDT-ETH", "binance/USDT-BTC", "binance/USDT-XRP"}
	from, to := at(0, 1, 10).UnixMilli(), at(0, 1, 45).UnixMilli()
	var want []OrderRecord
	for _, key := range keys {
		for _, o := range l.Orders(key) {
			if o.Time >= from && o.Time < to {
				want = append(want, o)
			}
		}
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].Time > want[j].Time })
	_, got, closes := l.Day(keys, "2024-03-10", from, to)
	if len(want) > MaxDayOrders {
		want = want[:MaxDayOrders]
	} else {
		t.Fatalf("the window holds %d records, not more than MaxDayOrders", len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	nClose := 0
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
		if want[i].closing {
			nClose++
		}
	}
	if len(closes) != nClose {
		t.Fatalf("%d closing records, want %d", len(closes), nClose)
	}
}
