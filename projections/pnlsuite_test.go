package projections_test

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/pnltest"
)

// The in-memory Ledger passes the PNL read contract's suite.
func TestLedgerPnlSuite(t *testing.T) {
	pnltest.Run(t, func(t *testing.T, log []pnltest.Entry, m domain.PnlMethod) projections.PnlReader {
		l := projections.NewLedger(m)
		for i, e := range log {
			ev := e.Event
			ev.Stream, ev.Position = e.Stream, uint64(i+1)
			if err := l.Apply(&ev); err != nil {
				t.Fatalf("apply %d (%s): %v", i, ev.Type, err)
			}
		}
		return l
	})
}
