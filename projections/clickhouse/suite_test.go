package clickhouse

import (
	"context"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/pnltest"
)

// The ClickHouse reader passes the PNL read contract's suite: the case's
// log goes into an embedded store, the sink exports it, the reader answers
// from the tables (skipped without TRADELEDGER_TEST_CLICKHOUSE).
func TestReaderPnlSuite(t *testing.T) {
	pnltest.Run(t, func(t *testing.T, log []pnltest.Entry, m domain.PnlMethod) projections.PnlReader {
		url := testURL(t)
		store := openStore(t)
		for _, e := range log {
			if _, err := store.Append(context.Background(), e.Stream, domain.Any, e.Event); err != nil {
				t.Fatal(err)
			}
		}
		s := NewSink(url, store)
		s.Method = m
		// A sink that cannot write a row retries: bounded, so that the case
		// fails instead of hanging.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s.Export(ctx); err != nil {
			t.Fatalf("export: %v (last ClickHouse error: %v)", err, s.Err())
		}
		r := NewReader(url, m)
		if err := r.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	})
}
