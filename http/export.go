package http

import (
	"net/http"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain/books"
)

// Exports (domain/books): GET export/{fills,koinly,cointracking,
// cointracker,realized}.csv with the reports' parameters (reports.go:
// from, to, timezone, method, currency, keys, asOf). The CSV is written
// as the Ledger's fills are read (bounded memory at any size) with
// Content-Disposition naming the file; the same log, cut and parameters
// give the same bytes. Every parameter is checked before the first byte:
// a bad one is a JSON error; a failure once rows are out (the client went
// away) ends the response there and is logged.
func (h *booksHandler) registerExports(r *mux.Router) {
	for _, f := range books.Formats {
		r.Handle("/export/"+string(f)+".csv", handlerFunc(func(w http.ResponseWriter, r *http.Request) error { return h.serveExport(w, r, f) })).Methods("GET")
	}
}

// serveExport streams the export f of the request's books.
func (h *booksHandler) serveExport(w http.ResponseWriter, r *http.Request, f books.Format) error {
	req, err := h.parseBooksRequest(w, r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+exportName(f, req)+`"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if rows, err := books.Export(w, req.src, f, req.q, nil); err != nil {
		// The rows are out: the failure ends the response here.
		logger(r).Info("export ended early", zap.String("format", string(f)), zap.Int64("rows", rows), zap.Error(err))
	}
	return nil
}
