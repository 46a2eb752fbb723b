package http

import (
	"context"
	"encoding/csv"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// FleetReader answers the fleet routes: every service (instance) writing to
// the analytics store, each instance's figures and their total in one
// reporting currency, converted at the rates each instance logged and
// never added across currencies (domain/fleet.go). The ClickHouse fleet
// reader (projections/clickhouse.Fleet) implements it; errors are
// domain.Errors (EINVALID for a bad query, EUNAVAILABLE when the store
// cannot answer).
type FleetReader interface {
	// Overview returns each instance's figures over all time in
	// q.Currency, and the fleet's total.
	Overview(ctx context.Context, q pnlread.FleetQuery) (*pnlread.FleetOverview, error)
	// Realized returns each instance's pairs' realized figures in their
	// quotes and the instance's in q.Currency over q's range, and the
	// fleet's total.
	Realized(ctx context.Context, q pnlread.FleetQuery) (*pnlread.FleetRealized, error)
	// Fills calls each with every fill of the current instances in q's
	// range, by instance, pair and trade time, until each fails.
	Fills(ctx context.Context, q pnlread.FleetQuery, each func(*pnlread.FleetFill) error) error
}

// The fleet routes (read scope): any instance answers them, reading the
// analytics store every instance writes to (serve --clickhouse, each with
// its own --instance).
//
//	GET fleet/overview          each instance's figures over all time
//	GET fleet/reports/realized  per instance its pairs' realized figures
//	                            over the period and its total, and the
//	                            fleet's
//	GET fleet/export/overview.csv, realized.csv, fills.csv
//
// Parameters, all optional: currency (default bot.REPORTING_CURRENCY,
// else this instance's quote with the most fills), method (the lot
// matching whose rows are read; default this service's), and for the
// realized report and the exports from, to and timezone as the reports
// take them (reports.go). Without an analytics store the routes answer 503
// saying so.
func (h *fleetHandler) register(r *mux.Router) {
	r.Handle("/fleet/overview", handlerFunc(h.handleOverview)).Methods("GET")
	r.Handle("/fleet/reports/realized", handlerFunc(h.handleRealized)).Methods("GET")
	r.Handle("/fleet/export/overview.csv", h.handleExport(fleetOverviewCSV)).Methods("GET")
	r.Handle("/fleet/export/realized.csv", h.handleExport(fleetRealizedCSV)).Methods("GET")
	r.Handle("/fleet/export/fills.csv", h.handleExport(fleetFillsCSV)).Methods("GET")
}

// fleetHandler serves the fleet routes over the analytics store's
// FleetReader; the books' defaults (the reporting currency) and the live
// lot matching give a request's defaults.
type fleetHandler struct {
	fleet    FleetReader
	defaults BooksReader // nil: no default currency
	past     pastReads   // the live lot matching
}

// errNoFleet is the answer of the fleet routes on a server without an
// analytics store.
var errNoFleet = domain.Errorf(domain.EUNAVAILABLE, "the fleet routes read the analytics store that every instance writes to: start serve with --clickhouse URL (and --instance NAME to name this service in the fleet)")

// fleetRequest is a fleet request, parsed.
type fleetRequest struct {
	q   pnlread.FleetQuery
	loc *time.Location
}

// parseFleetRequest reads the fleet routes' parameters; ranged: from, to
// and timezone too.
func (h *fleetHandler) parseRequest(r *http.Request, ranged bool) (*fleetRequest, error) {
	if h.fleet == nil {
		return nil, errNoFleet
	}
	qv := r.URL.Query()
	req := &fleetRequest{q: pnlread.FleetQuery{Method: h.past.liveMethod()}, loc: time.UTC}
	if c := qv.Get("currency"); c != "" {
		if len(c) > domain.MaxPairLen || !isSymbol(c) {
			return nil, domain.Errorf(domain.EINVALID, "currency must be a currency symbol of letters and digits (e.g. USDT)")
		}
		req.q.Currency = c
	} else if h.defaults != nil {
		_, req.q.Currency, _ = h.defaults.BookDefaults()
	}
	if req.q.Currency == "" {
		return nil, domain.Errorf(domain.EINVALID, "currency is required: this instance has no reporting currency (bot.REPORTING_CURRENCY) nor fills to take one from")
	}
	if method, ok, err := queryMethod(qv); err != nil {
		return nil, err
	} else if ok {
		req.q.Method = method
	}
	if !ranged {
		for _, p := range []string{"from", "to"} {
			if qv.Get(p) != "" {
				return nil, domain.Errorf(domain.EINVALID, "%s: the fleet overview is over all time (fleet/reports/realized takes a period)", p)
			}
		}
		return req, nil
	}
	loc, err := queryZone(qv, false)
	if err != nil {
		return nil, err
	}
	req.loc = loc
	if err := queryPeriodBounds(qv, loc, &req.q.From, &req.q.To); err != nil {
		return nil, err
	}
	if req.q.To != 0 && req.q.To <= req.q.From {
		return nil, domain.Errorf(domain.EINVALID, "to must be after from")
	}
	return req, nil
}

// handleFleetOverview answers GET fleet/overview.
func (h *fleetHandler) handleOverview(w http.ResponseWriter, r *http.Request) error {
	req, err := h.parseRequest(r, false)
	if err != nil {
		return err
	}
	o, err := h.fleet.Overview(r.Context(), req.q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

// handleFleetRealized answers GET fleet/reports/realized.
func (h *fleetHandler) handleRealized(w http.ResponseWriter, r *http.Request) error {
	req, err := h.parseRequest(r, true)
	if err != nil {
		return err
	}
	rep, err := h.fleet.Realized(r.Context(), req.q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// fleetCSV is one of the fleet's CSV exports: its name, whether it takes a
// period, and its writer. A writer that fails before its first row
// returns the error for a JSON answer (start not called yet); after, the
// response ends there.
type fleetCSV struct {
	name   string
	ranged bool
	write  func(fleet FleetReader, r *http.Request, req *fleetRequest, start func() *csv.Writer) error
}

// handleFleetExport answers GET fleet/export/<e.name>.csv.
func (h *fleetHandler) handleExport(e fleetCSV) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := h.parseRequest(r, e.ranged)
		if err != nil {
			return err
		}
		var cw *csv.Writer
		start := func() *csv.Writer {
			if cw == nil {
				w.Header().Set("Content-Type", "text/csv; charset=utf-8")
				w.Header().Set("Content-Disposition", `attachment; filename="`+fleetExportName(e, req)+`"`)
				w.Header().Set("X-Content-Type-Options", "nosniff")
				w.WriteHeader(http.StatusOK)
				cw = csv.NewWriter(w)
				cw.UseCRLF = true
			}
			return cw
		}
		err = e.write(h.fleet, r, req, start)
		if cw == nil {
			if err != nil {
				return err
			}
			start()
		}
		cw.Flush()
		if err == nil {
			err = cw.Error()
		}
		if err != nil {
			logger(r).Info("fleet export ended early", zap.String("export", e.name), zap.Error(err))
		}
		return nil
	}
}

// fleetExportName names an export's file: tradeledger-fleet-<name>-
// <currency>-<method>.csv, with -<first day>-to-<last day> (in the
// request's zone) for a period.
func fleetExportName(e fleetCSV, req *fleetRequest) string {
	name := "tradeledger-fleet-" + e.name + "-" + req.q.Currency + "-" + req.q.Method.String()
	if e.ranged && (req.q.From != 0 || req.q.To != 0) {
		from, to := "start", "now"
		if req.q.From != 0 {
			from = time.UnixMilli(req.q.From).In(req.loc).Format("2006-01-02")
		}
		if req.q.To != 0 {
			to = time.UnixMilli(req.q.To - 1).In(req.loc).Format("2006-01-02")
		}
		name += "-" + from + "-to-" + to
	}
	return name + ".csv"
}

// fleetFleetName names the fleet's own rows in the CSV exports (not an
// instance name: those start with a letter or digit).
const fleetFleetName = "(fleet)"

// The CSV exports. Every field is exact (amounts with their decimals, at
// least 8); fields are quoted only where needed, lines end in CRLF (RFC
// 4180). The summary exports give each entry's figures as rows by part:
// "converted" (in the reporting currency), "unconverted" (in the currency
// that had no rate into it: pnl, invested, number_of_trades and
// unrealized_pnl only), "unconverted_fees" (fees charged in a third asset
// without a rate, in that asset), and in the realized report "pair" (a
// pair's figures in its quote); the fleet's rows come last, named
// "(fleet)".
var (
	// FleetOverviewHeader is fleet/export/overview.csv's header.
	FleetOverviewHeader = []string{"instance", "status", "position", "updated_at", "part", "currency", "pairs", "pnl",
		"unrealized_pnl", "fees", "invested", "buy_base_value", "sell_base_value", "unmatched_base_value",
		"number_of_trades", "buy_count", "sell_count", "winning", "losing", "breakeven"}
	// FleetRealizedHeader is fleet/export/realized.csv's header.
	FleetRealizedHeader = []string{"instance", "status", "pair", "part", "currency", "pnl", "fees", "invested",
		"buy_base_value", "sell_base_value", "unmatched_base_value", "number_of_trades", "winning", "losing", "breakeven"}
	// FleetFillsHeader is fleet/export/fills.csv's header: every fill of
	// the current instances, amounts in its pair's quote, pnl the realized
	// pnl of the query's method (0 for a buy), time in RFC 3339 (UTC, ms).
	FleetFillsHeader = []string{"instance", "exchange", "pair", "quote", "time", "time_ms", "position", "order_id",
		"fill_id", "side", "price", "quantity", "value", "fee", "fee_asset", "pnl", "method"}
)

var (
	fleetOverviewCSV = fleetCSV{name: "overview", write: writeFleetOverviewCSV}
	fleetRealizedCSV = fleetCSV{name: "realized", ranged: true, write: writeFleetRealizedCSV}
	fleetFillsCSV    = fleetCSV{name: "fills", ranged: true, write: writeFleetFillsCSV}
)

func num(n decimal.Number) string { return decimal.Decimal(n).String() }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// sortedKeys returns m's keys in byte order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// figureRows returns an entry's rows of figures f (converted, unconverted
// per currency, unconverted fees per asset) as the columns after the
// part and currency, made by row (pnl, unrealized, fees, money…, counts).
func figureRows(currency string, f *pnlread.FleetFigures, unrealized *decimal.Number,
	row func(part, currency string, pnl, unr, fees, invested string, money [3]string, counts []string) []string) [][]string {
	unr := ""
	if unrealized != nil {
		unr = num(*unrealized)
	}
	out := [][]string{row("converted", currency, num(f.Pnl), unr, num(f.Fees), num(f.Invested),
		[3]string{num(f.BuyBaseValue), num(f.SellBaseValue), num(f.UnmatchedBaseValue)},
		[]string{itoa(f.NumberOfTrades), itoa(f.BuyCount), itoa(f.SellCount), itoa(f.Winning), itoa(f.Losing), itoa(f.Breakeven)})}
	for _, c := range sortedKeys(f.Unconverted) {
		u := f.Unconverted[c]
		ur := ""
		if unrealized != nil {
			ur = num(u.UnrealizedPnl)
		}
		out = append(out, row("unconverted", c, num(u.Pnl), ur, "", num(u.Invested), [3]string{}, []string{itoa(u.Trades)}))
	}
	for _, a := range sortedKeys(f.UnconvertedFees) {
		out = append(out, row("unconverted_fees", a, "", "", num(f.UnconvertedFees[a]), "", [3]string{}, nil))
	}
	return out
}

func writeFleetOverviewCSV(fleet FleetReader, r *http.Request, req *fleetRequest, start func() *csv.Writer) error {
	o, err := fleet.Overview(r.Context(), req.q)
	if err != nil {
		return err
	}
	cw := start()
	if err := cw.Write(FleetOverviewHeader); err != nil {
		return err
	}
	entry := func(info []string, pairs int, f *pnlread.FleetFigures, unr decimal.Number) error {
		rows := figureRows(o.Currency, f, &unr, func(part, currency, pnl, unr, fees, invested string, money [3]string, counts []string) []string {
			c := make([]string, 6)
			copy(c, counts)
			p := ""
			if part == "converted" {
				p = strconv.Itoa(pairs)
			}
			return append(append(append([]string{}, info...), part, currency, p, pnl, unr, fees, invested, money[0], money[1], money[2]), c...)
		})
		return cw.WriteAll(rows)
	}
	for _, in := range o.Instances {
		info := []string{in.Name, in.Status, strconv.FormatUint(in.Position, 10), itoa(in.UpdatedAt)}
		if err := entry(info, in.Pairs, &in.FleetFigures, in.UnrealizedPnl); err != nil {
			return err
		}
	}
	return entry([]string{fleetFleetName, "", "", ""}, o.Total.Pairs, &o.Total.FleetFigures, o.Total.UnrealizedPnl)
}

func writeFleetRealizedCSV(fleet FleetReader, r *http.Request, req *fleetRequest, start func() *csv.Writer) error {
	rep, err := fleet.Realized(r.Context(), req.q)
	if err != nil {
		return err
	}
	cw := start()
	if err := cw.Write(FleetRealizedHeader); err != nil {
		return err
	}
	entry := func(name, status string, f *pnlread.FleetFigures) error {
		rows := figureRows(rep.Currency, f, nil, func(part, currency, pnl, _, fees, invested string, money [3]string, counts []string) []string {
			c := make([]string, 4)
			if len(counts) == 6 { // trades, then winning, losing, breakeven
				c = []string{counts[0], counts[3], counts[4], counts[5]}
			} else {
				copy(c, counts)
			}
			return append([]string{name, status, "", part, currency, pnl, fees, invested, money[0], money[1], money[2]}, c...)
		})
		return cw.WriteAll(rows)
	}
	for _, in := range rep.Instances {
		for _, p := range in.Pairs {
			if err := cw.Write([]string{in.Name, in.Status, p.Key, "pair", p.Unit, num(p.Pnl), num(p.Fees), num(p.Invested),
				num(p.BuyBaseValue), num(p.SellBaseValue), num(p.UnmatchedBaseValue), itoa(p.NumberOfTrades), itoa(p.Winning),
				itoa(p.Losing), itoa(p.Breakeven)}); err != nil {
				return err
			}
		}
		if err := entry(in.Name, in.Status, &in.FleetFigures); err != nil {
			return err
		}
	}
	return entry(fleetFleetName, "", &rep.Total.FleetFigures)
}

func writeFleetFillsCSV(fleet FleetReader, r *http.Request, req *fleetRequest, start func() *csv.Writer) error {
	var cw *csv.Writer
	method := req.q.Method.String()
	header := func() error {
		if cw == nil {
			cw = start()
			return cw.Write(FleetFillsHeader)
		}
		return nil
	}
	rec := make([]string, len(FleetFillsHeader))
	err := fleet.Fills(r.Context(), req.q, func(f *pnlread.FleetFill) error {
		if err := header(); err != nil {
			return err
		}
		quote, _, _ := domain.SplitPair(f.Pair)
		rec = append(rec[:0], f.Instance, f.Exchange, f.Pair, quote, time.UnixMilli(f.Time).UTC().Format("2006-01-02T15:04:05.000Z07:00"),
			itoa(f.Time), strconv.FormatUint(f.Position, 10), itoa(f.OrderID), f.FillID, strings.ToLower(f.Side),
			f.Price.String(), f.Quantity.String(), f.Value.String(), f.Fee.String(), f.FeeAsset, f.Pnl.String(), method)
		return cw.Write(rec)
	})
	if err != nil {
		return err
	}
	return header()
}
