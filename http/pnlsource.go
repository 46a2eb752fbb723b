package http

import (
	"net/http"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// PnlReader is what the PNL routes (pnl.go) and assets/total (assets.go)
// read: the one contract, domain.PnlReader, which the in-memory Ledger
// and the ClickHouse reader implement.
type PnlReader = domain.PnlReader

// LedgerReader is the in-memory Ledger's read side, as cmd fills
// Server.Ledger with it (projections.Ledger). Each route group is given
// only the part it reads: the PNL routes and assets/total a PnlReader
// (unless Server.Pnl serves them), the order history an OrderHistory
// (orders.go), chart/marks a MarkReader (chart.go), the reports and
// exports a BooksReader (reports.go), orders/all the FillPnl of its
// fills (orderlist.go), and the routes that take asOf and method its
// LotMethod (asof.go).
type LedgerReader interface {
	PnlReader
	OrderHistory
	MarkReader
	BooksReader
	FillPnl
	LotMethod
}

// pnlReaders returns the reader the PNL routes answer from: Server.Pnl
// when set, else the in-memory Ledger; nil with neither.
func pnlReaders(pnl PnlReader, ledger LedgerReader) PnlReader {
	if pnl != nil {
		return pnl
	}
	if ledger != nil {
		return ledger
	}
	return nil
}

// errNoLedger is the answer of the routes of the Ledger (and the PNL
// routes, which fall back to it) on a server without one.
var errNoLedger = domain.Errorf(domain.EUNAVAILABLE, "order history is not configured")

// ready is errNoLedger without a live PNL reader.
func (h *pnlHandler) ready() error {
	if h.reader == nil {
		return errNoLedger
	}
	return nil
}

// readerAt is the reader for a request that names asOf and method as p
// (asof.go): the live reader when it names neither (or the live method),
// else the Ledger of the past state, marked on w. now is the instant the
// answer speaks of: the server's clock or asOf.
func (h *pnlHandler) readerAt(w http.ResponseWriter, r *http.Request, p pastRead) (PnlReader, time.Time, error) {
	live := h.past.liveMethod()
	if !p.past && (!p.named || p.method == live) {
		return h.reader, h.past.clock.Now(), h.ready()
	}
	method := p.method
	if !p.named {
		method = live
	}
	l, err := h.past.pnl(r, p, method)
	if err != nil {
		return nil, time.Time{}, err
	}
	markAsOf(w, p)
	if !p.past {
		return l, h.past.clock.Now(), nil
	}
	return l, time.UnixMilli(p.asOf), nil
}
