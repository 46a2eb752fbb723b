package engine_test

import (
	"context"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// A rate the core observes is a command like every other write: appended
// by the core on the exchange's rate stream and applied by the read models
// before ObserveRate returns; a rate that is not one appends nothing.
func TestObserveRateIsACommand(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rate := domain.RateObserved{Exchange: "binance", Base: "BTC", Quote: "USDT", Rate: decimal.MustDecimal("60000")}
	if err := e.eng.Reconciler.ObserveRate(ctx, rate); err != nil {
		t.Fatal(err)
	}
	head := e.head()
	if got := e.runner.Position(); got != head {
		t.Fatalf("runner at %d after ObserveRate, want the head %d (read-your-writes)", got, head)
	}
	it := e.store.ReadStream(ctx, domain.RateStream("binance"), 0, 0)
	defer it.Close()
	var got []domain.Event
	for it.Next() {
		got = append(got, it.Event())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Type != domain.TypeRateObserved || got[0].Actor != domain.ActorCore {
		t.Fatalf("rate stream %+v, want one RateObserved by %s", got, domain.ActorCore)
	}
	rate.Rate = decimal.Zero
	if err := e.eng.Reconciler.ObserveRate(ctx, rate); domain.ErrorCode(err) != domain.EINVALID || e.head() != head {
		t.Fatalf("a zero rate: err=%v head %d→%d, want EINVALID and nothing appended", err, head, e.head())
	}
}
