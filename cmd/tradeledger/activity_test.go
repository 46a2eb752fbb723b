package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// An order event whose payload does not decode gives no activity line and
// is not skipped in silence: serve logs the activity log's failure with the
// event's stream, version and position.
func TestActivityLogReportsUndecodableEvents(t *testing.T) {
	logger, logs := observed()
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", ""
	m.Logger, m.ManualCycles = logger, true
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	bad := map[string]string{
		domain.TypeOrderAccepted:  `{"exchangeOrderId":7}`,
		domain.TypeOrderFilled:    `{"fillId":"f1","price":"not a number","quantity":"1"}`,
		domain.TypeOrderCancelled: `{"remaining":"1,5"}`,
		domain.TypeOrderRejected:  `{"reason":["no"]}`,
		domain.TypePasswordSet:    `{"generation":"first"}`,
	}
	positions := map[string]uint64{} // type → position
	for _, typ := range []string{domain.TypeOrderAccepted, domain.TypeOrderFilled, domain.TypeOrderCancelled, domain.TypeOrderRejected, domain.TypePasswordSet} {
		e := domain.NewEvent(m.Clock, typ, json.RawMessage(bad[typ]))
		res, err := m.DataDir.Store.Append(ctx, "order-990001", domain.Any, e)
		if err != nil {
			t.Fatal(err)
		}
		positions[typ] = res.LastPosition
	}
	var head uint64
	for _, p := range positions {
		head = max(head, p)
	}
	if err := m.Runner.WaitFor(ctx, head); err != nil {
		t.Fatal(err)
	}
	for typ, pos := range positions {
		found := 0
		for _, entry := range logs.All() {
			f := entry.ContextMap()
			if f["position"] != pos {
				continue
			}
			if entry.Message != "projection failed to apply event" {
				if f["actor"] != nil { // an activity line: it would show zero values
					t.Errorf("%s at %d logged %q %v, want no activity line", typ, pos, entry.Message, f)
				}
				continue
			}
			if f["projection"] == "activity-log" && entry.Level == zap.ErrorLevel && f["stream"] == "order-990001" {
				found++
			}
		}
		if found != 1 {
			t.Errorf("%s at position %d: %d activity-log failures logged, want 1:\n%s", typ, pos, found, messages(logs))
		}
	}
}
