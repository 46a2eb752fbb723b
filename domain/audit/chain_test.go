package audit_test

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// A clock that steps back mid-stream does not make the envelope time go
// backwards: Chain raises it to the previous event's, and the chain
// verifies.
func TestChainKeepsStreamTimeMonotonic(t *testing.T) {
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_010_000))
	first := []domain.Event{domain.NewEvent(clock, "Tested", map[string]int{"n": 0})}
	tip := audit.Chain("s", audit.NoStreamTip, first)
	clock.Set(time.UnixMilli(1_700_000_000_000)) // ten seconds back
	later := []domain.Event{
		domain.NewEvent(clock, "Tested", map[string]int{"n": 1}),
		domain.NewEvent(clock, "Tested", map[string]int{"n": 2}),
	}
	later[1].Time += 20_000 // past the first event: kept as stamped
	tip = audit.Chain("s", tip, later)
	log := append(first, later...)
	for i := range log {
		log[i].Position = uint64(i + 1)
	}
	if got, want := []int64{log[0].Time, log[1].Time, log[2].Time}, []int64{1_700_000_010_000, 1_700_000_010_000, 1_700_000_020_000}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("times %v, want %v", got, want)
	}
	if tip.Version != 2 || tip.Hash != log[2].Hash || tip.Time != log[2].Time || log[1].PrevHash != log[0].Hash || log[0].PrevHash != (domain.Hash{}) {
		t.Fatalf("tip %+v, chain %v→%v", tip, log[0].Hash, log[1].PrevHash)
	}
	if s := verifyAll(log); !s.OK {
		t.Fatalf("chain with a clock step back: %+v", s.Faults)
	}
	// TipOf recomputes the hash from the contents, whatever the stored one.
	damaged := log[2]
	damaged.Hash = domain.Hash{}
	if got := audit.TipOf(&damaged); got != tip {
		t.Fatalf("TipOf a zeroed hash = %+v, want %+v", got, tip)
	}
}

// DecideFill stamps OrderFilled with the clock, like every event; the
// exchange's fill time goes in the payload, and FillTime reads it back
// (the envelope time for fills recorded without one).
func TestDecideFillExchangeTime(t *testing.T) {
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_005_000))
	o := domain.NewOrder()
	o.State, o.Exchange, o.Amount = domain.OrderStateAccepted, "paper", decimal.MustDecimal("1")
	evs := o.DecideFill(clock, domain.Fill{ID: "f1", Price: decimal.MustDecimal("10"), Quantity: decimal.MustDecimal("1"), Time: 1_700_000_004_000})
	if len(evs) != 1 {
		t.Fatalf("events %v", evs)
	}
	var f domain.OrderFilled
	if err := evs[0].Decode(&f); err != nil {
		t.Fatal(err)
	}
	if evs[0].Time != 1_700_000_005_000 || f.ExchangeTime != 1_700_000_004_000 || domain.FillTime(&evs[0], &f) != 1_700_000_004_000 {
		t.Fatalf("envelope time %d, exchangeTime %d, want the clock's and the exchange's", evs[0].Time, f.ExchangeTime)
	}
	old := domain.OrderFilled{FillID: "f0"}
	if got := domain.FillTime(&evs[0], &old); got != evs[0].Time {
		t.Fatalf("FillTime without exchangeTime = %d, want the envelope's %d", got, evs[0].Time)
	}
}
