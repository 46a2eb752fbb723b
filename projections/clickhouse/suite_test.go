package clickhouse

import (
	"context"
	"testing"

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
		if _, err := s.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := NewReader(url, m)
		if err := r.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	})
}
