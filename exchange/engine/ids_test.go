package engine_test

import (
	"context"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/gunbot"
	"github.com/tradeledger/tradeledger/eventstore"
)

// An import's orders keep their ids (2^51 and up), and this service's own
// orders go on from its own last one: #1, #2, an import, then #3 — also
// after a restart, which replays the log.
func TestImportedIDsLeaveTheNextIDAlone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for want := int64(1); want <= 2; want++ {
		id, err := e.tr.Submit(ctx, limit(domain.Buy, "0.001", "1000"))
		if err != nil || id != want {
			t.Fatalf("order %d: id %d, %v", want, id, err)
		}
	}
	im := &gunbot.Importer{Clock: e.clock}
	o := gunbot.Order{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Time: e.clock.Now().UnixMilli(),
		Rate: decimal.MustDecimal("60000"), Amount: decimal.MustDecimal("0.01"), SourceID: "42"}
	o.ID = gunbot.OrderID(o.Time, [32]byte{1, 2, 3})
	if o.ID < domain.ImportedOrderIDs {
		t.Fatalf("imported id %d below the range", o.ID)
	}
	u := im.Order(o)
	res, err := eventstore.NewCommands(e.store, nil).AppendBatch(ctx, []domain.StreamAppend{u.StreamAppend})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.runner.WaitFor(ctx, res[0].LastPosition); err != nil {
		t.Fatal(err)
	}
	id, err := e.tr.Submit(ctx, limit(domain.Buy, "0.001", "1000"))
	if err != nil || id != 3 {
		t.Fatalf("the order after an import: id %d, %v; want 3", id, err)
	}
	e.close()
	e.open()
	if id, err := e.tr.Submit(ctx, limit(domain.Buy, "0.001", "1000")); err != nil || id != 4 {
		t.Fatalf("the order after a restart: id %d, %v; want 4", id, err)
	}
}
