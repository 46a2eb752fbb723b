package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// readCounter counts the streams read from a store.
type readCounter struct {
	domain.EventStore
	reads int
}

func (r *readCounter) ReadStream(ctx context.Context, stream string, from int64, max int) domain.EventIterator {
	r.reads++
	return r.EventStore.ReadStream(ctx, stream, from, max)
}

// TestOrderFinderReadsTheOrderFound: the account sync's lookup of a finished
// order by the client order id an exchange lists it by, among 300 orders of
// the pair requested 3 ms apart (a third of make bench-ab's placement rate):
// each is found, the oldest too (before, only the newest 100 around the id's
// time were looked at, so its trade would have been taken for another
// account's), with one stream read each (before: one per order listed
// before it, up to 100); an id no order carries is not found.
func TestOrderFinderReadsTheOrderFound(t *testing.T) {
	ctx := context.Background()
	st, list, clients, clock := finderLog(t, 300)
	const orders = 300
	rc := &readCounter{EventStore: st}
	find := orderFinder(list, rc)
	for _, id := range []int64{1, 50, 200, orders} {
		rc.reads = 0
		got, ok, err := find(ctx, "binance", "USDT-BTC", clients[id])
		if err != nil || !ok || got != id {
			t.Fatalf("order %d: found %d %v %v", id, got, ok, err)
		}
		if rc.reads != 1 {
			t.Errorf("order %d: %d streams read, want 1", id, rc.reads)
		}
	}
	other := domain.ClientOrderID(domain.NewEventID(clock.Now().Add(-500 * time.Millisecond)))
	if got, ok, err := find(ctx, "binance", "USDT-BTC", other); err != nil || ok {
		t.Fatalf("an id no order carries: found %d %v %v", got, ok, err)
	}
}

// finderLog is a log of n limit buys on binance/USDT-BTC requested 3 ms
// apart (a third of make bench-ab's placement rate), their order index and
// client order ids (by order id, from 1).
func finderLog(t testing.TB, n int) (*sqlite.Store, *projections.OrderList, []string, *domain.ManualClock) {
	ctx := context.Background()
	st := sqlite.NewStore(filepath.Join(t.TempDir(), "log.db"))
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	list := projections.NewOrderList()
	clock := domain.NewManualClock(time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC))
	orders := int64(n)
	clients := make([]string, orders+1)
	for id := int64(1); id <= orders; id++ {
		clock.Advance(3 * time.Millisecond)
		eventID := domain.NewEventID(clock.Now())
		clients[id] = domain.ClientOrderID(eventID)
		e := domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "USDT-BTC",
			Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("1"), Price: decimal.MustDecimal("100"), ClientOrderID: clients[id]})
		e.ID = eventID
		res, err := st.Append(ctx, domain.OrderStream(id), domain.NoStream, e)
		if err != nil {
			t.Fatal(err)
		}
		stored := st.ReadStream(ctx, domain.OrderStream(id), 0, 1)
		if !stored.Next() {
			t.Fatalf("order %d not stored (%+v): %v", id, res, stored.Err())
		}
		ev := stored.Event()
		stored.Close()
		if err := list.Apply(&ev); err != nil {
			t.Fatal(err)
		}
	}
	return st, list, clients, clock
}

// BenchmarkOrderFinder: the account sync's lookup of a finished order by
// its client order id (orderFinder), over 1,000 orders of one pair requested
// 3 ms apart, each found once per op; before is the lookup before aa127bc
// (the newest 100 orders within two seconds of the id's time, each stream
// read until the one): lookups that found nothing are counted (missed).
func BenchmarkOrderFinder(b *testing.B) {
	const n = 1000
	st, list, clients, _ := finderLog(b, n)
	ctx := context.Background()
	before := func(ctx context.Context, exchange, pair, client string) (int64, bool, error) {
		t, _ := domain.ClientOrderTime(client)
		page := list.Page(projections.OrderFilter{Keys: []string{domain.PairKey(exchange, pair)}, From: t - 2000, To: t + 2000}, 0, 100)
		for _, o := range page.Orders {
			if found, err := requestedAs(ctx, st, o.ID, client); err != nil || found {
				return o.ID, found, err
			}
		}
		return 0, false, nil
	}
	for _, c := range []struct {
		name string
		find func(ctx context.Context, exchange, pair, client string) (int64, bool, error)
	}{{"before", before}, {"now", orderFinder(list, st)}} {
		b.Run(c.name, func(b *testing.B) {
			missed := 0
			for i := 0; i < b.N; i++ {
				for id := 1; id <= n; id++ {
					if _, ok, err := c.find(ctx, "binance", "USDT-BTC", clients[id]); err != nil {
						b.Fatal(err)
					} else if !ok {
						missed++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/lookup")
			b.ReportMetric(float64(missed)/float64(b.N), "missed/op")
		})
	}
}
