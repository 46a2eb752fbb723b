package projections

import (
	"math/rand"
	"sort"
	"testing"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// TestRecListMatchesSlice inserts records in random (time, pos) order,
// mostly at the end and some far back, across several chunks, and checks
// the list against a sorted slice of the same records.
func TestRecListMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var b pairBook
	var want []orderRecord
	for i := 0; i < 3*recChunk+17; i++ {
		tm := int64(i)
		if rng.Intn(10) == 0 {
			tm = rng.Int63n(int64(i) + 1) // a late fill
		}
		r := orderRecord{time: tm, posSide: uint64(i + 1), id: int64(i)}
		if i%3 == 0 {
			r.posSide |= recSell
		}
		b.insert(r)
		want = append(want, r)
	}
	sort.SliceStable(want, func(i, j int) bool { return recLess(&want[i], &want[j]) })
	if got := b.recs.len(); got != len(want) {
		t.Fatalf("len=%d, want %d", got, len(want))
	}
	for i := range want {
		if got := *b.recs.at(i); got != want[i] {
			t.Fatalf("record %d = %+v, want %+v", i, got, want[i])
		}
	}
	for i, c := range b.recs.chunks[:len(b.recs.chunks)-1] {
		if len(c) != recChunk {
			t.Fatalf("chunk %d holds %d records, want %d", i, len(c), recChunk)
		}
	}
	mid := want[len(want)/2].time
	if got, want := b.recs.search(func(r *orderRecord) bool { return r.time >= mid }),
		sort.Search(len(want), func(i int) bool { return want[i].time >= mid }); got != want {
		t.Fatalf("search=%d, want %d", got, want)
	}
}

// TestOrderRecordSize guards the stored record's size, which is most of
// the heap per order (issue 19: ≤ 150 B per order for all read models).
func TestOrderRecordSize(t *testing.T) {
	if got, want := unsafe.Sizeof(orderRecord{}), uintptr(104); got != want {
		t.Fatalf("orderRecord is %d bytes, want %d", got, want)
	}
	r := orderRecord{posSide: 42 | recSell}
	if r.pos() != 42 || !r.sell() {
		t.Fatalf("pos=%d sell=%v, want 42 true", r.pos(), r.sell())
	}
}

// Amounts too wide for a record's compact form (a 10^12-unit BABYDOGE
// fill at 10^-10 prices, a price with 12 decimals above 10^6, sums beyond
// 10^10 with finer digits) come back exact from the side table, beside
// ones that fit.
func TestOrderRecordWideAmounts(t *testing.T) {
	g := &testLog{t: t}
	g.filled(1, "kraken", "USDT-BABYDOGE", domain.Buy, "0.0000000012", "1000000000000", "1.2", "USDT", at(0, 1, 0))
	g.filled(2, "kraken", "USDT-BABYDOGE", domain.Sell, "0.0000000013", "999999999999.5", "0.000000000013", "USDT", at(0, 2, 0))
	g.filled(3, "binance", "IDR-BTC", domain.Buy, "1234567890.123456789012", "0.123456789", "0", "IDR", at(0, 3, 0))
	l := replay(t, domain.LOFO, g.events)
	recs := l.Orders("kraken/USDT-BABYDOGE")
	if len(recs) != 2 {
		t.Fatalf("records %+v", recs)
	}
	// Newest first: the sell, then the buy.
	sell, buy := recs[0], recs[1]
	for _, c := range []struct {
		name      string
		got, want decimal.Decimal
	}{
		{"buy amount", buy.Amount, dec("1000000000000")},
		{"buy rate", buy.Rate, dec("0.0000000012")},
		{"buy cost", buy.Cost, dec("1200")},
		{"buy baseValue", buy.BaseValue, dec("1201.2")},
		{"buy balance", buy.Balance, dec("1000000000000")},
		// 1201.2 ÷ 10^12 = 0.0000000012012, rounded at 12 decimals
		{"buy ABP", buy.ABP, dec("0.000000001201")},
		{"sell amount", sell.Amount, dec("999999999999.5")},
		{"sell fee", sell.Fees, dec("0.000000000013")},
		// 999999999999.5 × 0.0000000013 = 1299.99999999935
		{"sell cost", sell.Cost, dec("1299.99999999935")},
		{"sell balance", sell.Balance, dec("0.5")},
		// proceeds 1299.99999999935 − fee 0.000000000013 − lots 1201.199999999399
		// (1201.2 × 999999999999.5 ÷ 10^12 = 1201.1999999993994, rounded)
		{"sell pnl", sell.Pnl, dec("98.799999999938")},
		// −1201.2 + 1299.99999999935 − 0.000000000013
		{"sell baseBalance", sell.BaseBalance, dec("98.799999999337")},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	idr := l.Orders("binance/IDR-BTC")
	// 1234567890.123456789012 × 0.123456789 = 152415787.517146788751672…
	if len(idr) != 1 || idr[0].Rate != dec("1234567890.123456789012") || idr[0].Cost != dec("152415787.517146788752") ||
		idr[0].BaseBalance != dec("-152415787.517146788752") {
		t.Fatalf("IDR record %+v", idr)
	}
}
