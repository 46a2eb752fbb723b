package http

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/projections"
)

// booksHandler serves the reports and the exports (export.go) for an
// accountant (domain/books) from a BooksReader (the Ledger; 503 without
// one), or as of a past time from the past states: the realized gains, each
// disposal with the lots it consumed, and the period statement, computed
// from the Ledger's fills (live, or as of asOf) under any lot matching
// method. Parameters, all optional:
//
//	from, to   the period: a date (YYYY-MM-DD in timezone: from its first
//	           instant, to the end of the to day), RFC 3339 or ms; to is
//	           exclusive when an instant. Default: from the first fill, to
//	           asOf or no end.
//	timezone   IANA zone of dates and holding days (default UTC)
//	method     lofo, fifo, lifo, hifo or average (default bot.PNL_METHOD,
//	           else lofo)
//	scope      cost basis scope: account (lots per exchange account and
//	           pair) or universal (per pair across accounts) (default
//	           bot.COST_BASIS_SCOPE, else account)
//	currency   reporting currency (default bot.REPORTING_CURRENCY, else the
//	           quote with the most fills; "none": each pair's quote only)
//	keys       pair keys, comma separated or repeated (default every pair)
//	asOf       read the books as they stood then (asof.go)
//
// and for the realized report holdingPeriodDays (default 365), page (from
// 0) and pageSize (default 100, at most 1000) of its disposals, or
// format=csv for all of them as the realized CSV (export.go).
type booksHandler struct {
	books BooksReader
	past  pastReads
}

func (h *booksHandler) register(r *mux.Router) {
	r.Handle("/reports/realized", handlerFunc(h.handleRealized)).Methods("GET")
	r.Handle("/reports/statement", handlerFunc(h.handleStatement)).Methods("GET")
	h.registerExports(r)
}

// BooksReader is the Ledger as the books' source (projections.Ledger):
// each pair's fills in trade-time order, the rates recorded, and the
// deployment's defaults of lot matching, reporting currency and cost basis
// scope (bot.PNL_METHOD, bot.REPORTING_CURRENCY, bot.COST_BASIS_SCOPE).
type BooksReader interface {
	books.Source
	BookDefaults() (method domain.PnlMethod, currency string, scope domain.CostBasisScope)
}

// DefaultReportPageSize is the realized report's page size when the
// request names none.
const DefaultReportPageSize = 100

// booksRequest is a report or export request, parsed.
type booksRequest struct {
	src  books.Source
	q    books.Query
	asOf pastRead
}

// parseBooksRequest reads the parameters the reports and exports share
// and resolves their source: the live Ledger, or the past state's.
func (h *booksHandler) parseBooksRequest(w http.ResponseWriter, r *http.Request) (*booksRequest, error) {
	l := h.books
	if l == nil {
		return nil, errNoLedger
	}
	qv := r.URL.Query()
	loc, err := queryZone(qv, false)
	if err != nil {
		return nil, err
	}
	asOf, err := h.past.query(qv)
	if err != nil {
		return nil, err
	}
	defMethod, defCurrency, defScope := l.BookDefaults()
	req := &booksRequest{src: l, asOf: asOf, q: books.Query{Loc: loc, Method: defMethod, Currency: defCurrency, Scope: defScope}}
	if asOf.named {
		req.q.Method = asOf.method
	}
	if sc, ok, err := queryScope(qv); err != nil {
		return nil, err
	} else if ok {
		req.q.Scope = sc
	}
	switch c := qv.Get("currency"); {
	case strings.EqualFold(c, "none"):
		req.q.Currency = ""
	case c != "":
		if len(c) > domain.MaxPairLen || !isSymbol(c) {
			return nil, domain.Errorf(domain.EINVALID, "currency must be a currency symbol of letters and digits (e.g. EUR), or none")
		}
		req.q.Currency = c
	}
	if err := queryPeriodBounds(qv, loc, &req.q.From, &req.q.To); err != nil {
		return nil, err
	}
	if qv.Get("to") == "" && asOf.past {
		req.q.To = asOf.asOf + 1 // what the books held at asOf: fills up to it
	}
	if req.q.To != 0 && req.q.To <= req.q.From {
		return nil, domain.Errorf(domain.EINVALID, "to must be after from")
	}
	if v := qv.Get("holdingPeriodDays"); v != "" {
		n, err := queryInt64(qv, "holdingPeriodDays", 1, 100*366)
		if err != nil {
			return nil, err
		}
		req.q.HoldingPeriodDays = int(n)
	}
	if req.q.Keys, err = queryKeyList(qv); err != nil {
		return nil, err
	}
	if asOf.past {
		src, err := h.past.books(r, asOf)
		if err != nil {
			return nil, err
		}
		req.src = src
		markAsOf(w, asOf)
	}
	return req, nil
}

// queryScope reads the optional scope parameter, as queryMethod reads
// method (ok false when absent; EINVALID naming it when given more than
// once or not account or universal).
func queryScope(q url.Values) (sc domain.CostBasisScope, ok bool, err error) {
	return queryOptional(q, "scope", domain.ScopeAccount, domain.ParseCostBasisScope)
}

// isSymbol reports whether c is letters and digits only.
func isSymbol(c string) bool {
	for i := 0; i < len(c); i++ {
		b := c[i]
		if !('A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9') {
			return false
		}
	}
	return c != ""
}

// queryKeyList reads the optional keys parameter: pair keys, repeated
// (keys or keys[]) or comma separated.
func queryKeyList(q url.Values) ([]string, error) {
	var out []string
	for _, v := range append(q["keys"], q["keys[]"]...) {
		for _, k := range strings.Split(v, ",") {
			k, err := queryKey(url.Values{"keys": {strings.TrimSpace(k)}}, "keys")
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// handleRealized answers GET reports/realized: books.Realized (totals and
// a page of disposals), or with format=csv the whole report as CSV.
func (h *booksHandler) handleRealized(w http.ResponseWriter, r *http.Request) error {
	qv := r.URL.Query()
	switch f := qv.Get("format"); f {
	case "", "json":
	case "csv":
		return h.serveExport(w, r, books.FormatRealized)
	default:
		return domain.Errorf(domain.EINVALID, "format must be json or csv, not %q", f)
	}
	req, err := h.parseBooksRequest(w, r)
	if err != nil {
		return err
	}
	page, size := int64(0), int64(DefaultReportPageSize)
	if qv.Get("page") != "" {
		if page, err = queryInt64(qv, "page", 0, 1<<31); err != nil {
			return err
		}
	}
	if qv.Get("pageSize") != "" {
		if size, err = queryInt64(qv, "pageSize", 0, projections.MaxPageSize); err != nil {
			return err
		}
	}
	rep, err := books.RealizedReport(req.src, req.q, int(page), int(size))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// handleStatement answers GET reports/statement: books.Statement.
func (h *booksHandler) handleStatement(w http.ResponseWriter, r *http.Request) error {
	req, err := h.parseBooksRequest(w, r)
	if err != nil {
		return err
	}
	st, err := books.StatementReport(req.src, req.q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// exportName names the file of export f for req: tradeledger-<format>-
// <first day>-to-<last day>-<method>.csv, the period's days as dates in
// the request's zone ("start" and "now" for an open end, the as-of time
// for the end of books read as of a past time; a bound that is not a
// midnight there with its time, 2024-03-10T12-30), -universal for the
// universal cost basis scope, and -as-of-<time> when
// a period with an end is read as of a past time: a file a person can tell
// apart from the next one without opening it.
func exportName(f books.Format, req *booksRequest) string {
	loc := req.q.Loc
	if loc == nil {
		loc = time.UTC
	}
	day := func(ms int64) string {
		t := time.UnixMilli(ms).In(loc)
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
			return t.Format("2006-01-02")
		}
		return t.Format("2006-01-02T15-04")
	}
	from, to := "start", "now"
	if req.q.From != 0 {
		from = day(req.q.From)
	}
	asOf := req.asOf.past
	if asOf && req.q.To == req.asOf.asOf+1 { // no to: the books as of then
		to, asOf = day(req.asOf.asOf), false
	} else if req.q.To != 0 {
		// An exclusive end at a midnight names the day before it: the
		// last day in the file.
		end := time.UnixMilli(req.q.To).In(loc)
		if end.Hour() == 0 && end.Minute() == 0 && end.Second() == 0 && end.Nanosecond() == 0 {
			to = end.AddDate(0, 0, -1).Format("2006-01-02")
		} else {
			to = day(req.q.To)
		}
	}
	name := "tradeledger-" + string(f) + "-" + from + "-to-" + to + "-" + req.q.Method.String()
	if req.q.Scope != domain.ScopeAccount {
		name += "-" + req.q.Scope.String()
	}
	if asOf {
		name += "-as-of-" + day(req.asOf.asOf)
	}
	return name + ".csv"
}
