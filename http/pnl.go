package http

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// pnlHandler serves the PNL routes (spec "PNL") from a PnlReader:
// Server.Pnl when set (the ClickHouse reader), else Server.Ledger's
// incremental aggregates (503 with neither); reads as of a past time or
// under another method from the past states (asof.go). It keeps the
// recent pnl/overview bodies of a reader with a version. The
// method (--pnl-method) and every metric are defined in domain/pnl.go and
// projections/pnl.go.
//
// Units: amounts are in the selected pairs' quote currency, named by unit.
// A selection spanning several quotes (e.g. ["All"] on a bot trading USDT
// and BTC pairs) is answered in the reporting currency at rates from the
// log, with perQuote and unconverted beside (projections/pnlconv.go); quote
// (body field of pnl/overview, query parameter of pnl/sum and pnl/daily)
// narrows it to one quote instead. The ClickHouse reader refuses such a
// selection with 400 asking for quote.
//
// Optional parameters beyond the spec: timezone on pnl/daily and
// pnl/daily/paginated (default UTC); quote as above; asOf and method on
// pnl/overview (in the query or the body) and pnl/sum (asof.go).
type pnlHandler struct {
	reader    PnlReader
	past      pastReads
	overviews bodyCache // recent pnl/overview bodies
}

func (h *pnlHandler) register(r *mux.Router) {
	r.Handle("/pnl/overview", handlerFunc(h.handlePnlOverview)).Methods("POST")
	r.Handle("/pnl/daily", requires(h.ready, h.handlePnlDaily)).Methods("GET")
	r.Handle("/pnl/daily/paginated", requires(h.ready, h.handlePnlDailyPaginated)).Methods("GET")
	r.Handle("/pnl/sum", handlerFunc(h.handlePnlSum)).Methods("GET")
	r.Handle("/pnl/total", requires(h.ready, h.handlePnlTotal)).Methods("GET")
}

type pnlOverviewRequest struct {
	pastBody           // asOf and method, as the query takes them (asof.go)
	Timezone  string   `json:"timezone"`
	Keys      []string `json:"keys"`
	Quote     string   `json:"quote"`
	DateRange *struct {
		StartDate *int64 `json:"startDate"`
		EndDate   *int64 `json:"endDate"`
	} `json:"dateRange"`
}

// handlePnlOverview answers POST pnl/overview[?asOf=&method=] {timezone,
// keys | ["All"], dateRange?, quote?, asOf?, method?}. dateRange bounds
// total, dailyHistory, pnlsPerPair and detailedPerPair; today…lastYear
// are relative to the server's clock, or to asOf.
func (h *pnlHandler) handlePnlOverview(w http.ResponseWriter, r *http.Request) error {
	var req pnlOverviewRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	past, err := h.past.read(r.URL.Query(), &req.pastBody)
	if err != nil {
		return err
	}
	l, now, err := h.readerAt(w, r, past)
	if err != nil {
		return err
	}
	if req.Timezone == "" {
		return domain.Errorf(domain.EINVALID, "timezone is required (an IANA zone such as Europe/Amsterdam)")
	}
	loc, err := projections.LoadZone(req.Timezone)
	if err != nil {
		return err
	}
	if len(req.Keys) == 0 {
		return domain.Errorf(domain.EINVALID, "keys is required: pair keys, or [\"All\"]")
	}
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: req.Keys, Quote: req.Quote}, Loc: loc, Now: now}
	if dr := req.DateRange; dr != nil {
		if dr.StartDate == nil || dr.EndDate == nil {
			return domain.Errorf(domain.EINVALID, "dateRange needs startDate and endDate (ms)")
		}
		if *dr.EndDate < *dr.StartDate {
			return domain.Errorf(domain.EINVALID, "dateRange.endDate must not be before startDate")
		}
		q.From, q.To = *dr.StartDate, *dr.EndDate
	}
	// The answer depends on the ledger, the request and today's date in
	// its zone: cache the encoded body until the ledger changes.
	// Only a reader with a version (the in-memory Ledger) is cached.
	versioned, cacheable := l.(interface{ Version() uint64 })
	var version uint64
	var ck []byte
	if cacheable {
		version = versioned.Version()
		// asOf and method name the reader: a key of their own keeps a past
		// state's body from taking the live one's place.
		ck, _ = json.Marshal([]any{req.Keys, req.Quote, req.Timezone, q.From, q.To, q.Now.In(loc).Format("2006-01-02"),
			past.past, past.asOf, past.named, past.method})
	}
	if body, ok := h.overviews.get(string(ck), l, version); cacheable && ok {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
		return nil
	}
	o, err := l.Overview(q)
	if err != nil {
		return err
	}
	body, err := json.Marshal(o)
	if err != nil {
		return err
	}
	body = append(body, '\n')
	if cacheable {
		h.overviews.put(string(ck), l, version, body)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
	return nil
}

// bodyCache keeps a Server's recent overview bodies per request, each valid
// while it comes from the same reader at the same version; bounded to
// maxCachedOverviews entries. The zero value is ready.
type bodyCache struct {
	mu sync.Mutex
	m  map[string]cachedBody
}

const maxCachedOverviews = 128

type cachedBody struct {
	reader  PnlReader
	version uint64
	body    []byte
}

func (c *bodyCache) get(key string, reader PnlReader, version uint64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e.body, ok && e.reader == reader && e.version == version
}

func (c *bodyCache) put(key string, reader PnlReader, version uint64, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedOverviews {
		c.m = map[string]cachedBody{}
	}
	c.m[key] = cachedBody{reader, version, body}
}

type pnlDailyResponse struct {
	DateRangeDailyHistory          []projections.DayPnl `json:"dateRangeDailyHistory"`
	UnmatchedBaseValuePerDateRange domain.Number        `json:"unmatchedBaseValuePerDateRange"`
	Unit                           string               `json:"unit"`
	// UnconvertedFees: the range's fees in a third asset without a rate,
	// per asset (counted in no day's figure); absent when there are none.
	UnconvertedFees map[string]domain.Number `json:"unconvertedFees,omitempty"`
}

// handlePnlDaily answers GET pnl/daily?key=&startTimestamp=&endTimestamp=.
func (h *pnlHandler) handlePnlDaily(w http.ResponseWriter, r *http.Request) error {
	l := h.reader
	q := r.URL.Query()
	key, err := queryKey(q, "key")
	if err != nil {
		return err
	}
	start, end, err := queryTimestamps(q)
	if err != nil {
		return err
	}
	loc, err := queryZone(q, false)
	if err != nil {
		return err
	}
	scope := projections.PnlScope{Keys: []string{key}}
	days, unm, unit, err := l.Daily(projections.DailyQuery{Scope: scope, Loc: loc, From: start, To: end})
	if err != nil {
		return err
	}
	// The range's sum names the fees without a rate, as pnl/sum does.
	sum, err := l.Sum(scope, start, end)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pnlDailyResponse{DateRangeDailyHistory: days, UnmatchedBaseValuePerDateRange: domain.Number(unm), Unit: unit,
		UnconvertedFees: sum.UnconvertedFees})
	return nil
}

type pnlDailyPageResponse struct {
	TotalSize int      `json:"totalSize"`
	Data      [][]any  `json:"data"`
	Unit      string   `json:"unit"`
	Fields    []string `json:"fields"`
}

// dailyPnlTuple is the order of the fields in each element of
// pnl/daily/paginated's data (the SDK maps every element as an array).
var dailyPnlTuple = []string{"date", "pnl", "cumulativePnl", "numberOfTrades", "totalVolume", "cumulativePnlPercent"}

// dayTuple is one day of pnl/daily/paginated in dailyPnlTuple's order:
// date (string, YYYY-MM-DD), then numbers.
func dayTuple(d projections.DayPnl) []any {
	return []any{d.Date, d.Pnl, d.CumulativePnl, d.NumberOfTrades, d.TotalVolume, d.CumulativePnlPercent}
}

// handlePnlDailyPaginated answers GET pnl/daily/paginated?key=&pageNum=
// (from 1)&pageSize=&endTime=: the days up to endTime, newest first, each
// an array [date, pnl, cumulativePnl, numberOfTrades, totalVolume,
// cumulativePnlPercent] (dailyPnlTuple); totalSize counts the days and
// fields names the tuple's order.
func (h *pnlHandler) handlePnlDailyPaginated(w http.ResponseWriter, r *http.Request) error {
	l := h.reader
	q := r.URL.Query()
	key, err := queryKey(q, "key")
	if err != nil {
		return err
	}
	pageNum, err := queryInt64(q, "pageNum", 1, 1<<31)
	if err != nil {
		return err
	}
	size, err := queryInt64(q, "pageSize", 1, projections.MaxPageSize)
	if err != nil {
		return err
	}
	end, err := queryInt64(q, "endTime", 1, maxInt)
	if err != nil {
		return err
	}
	loc, err := queryZone(q, false)
	if err != nil {
		return err
	}
	days, _, unit, err := l.Daily(projections.DailyQuery{Scope: projections.PnlScope{Keys: []string{key}}, Loc: loc, To: end})
	if err != nil {
		return err
	}
	out := pnlDailyPageResponse{TotalSize: len(days), Data: [][]any{}, Unit: unit, Fields: dailyPnlTuple}
	for i := len(days) - 1 - int(pageNum-1)*int(size); i >= 0 && len(out.Data) < int(size); i-- {
		out.Data = append(out.Data, dayTuple(days[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type tournamentData struct {
	SommaPnl string `json:"sommaPnl"`
	Invested string `json:"invested"`
}

type pnlSumResponse struct {
	TournamentData tournamentData                     `json:"tournamentData"`
	Data           []projections.PairSum              `json:"data"`
	Unit           string                             `json:"unit"`
	PerQuote       map[string]projections.QuoteSum    `json:"perQuote,omitempty"`
	Unconverted    map[string]projections.Unconverted `json:"unconverted,omitempty"`
	// UnconvertedFees: fees in a third asset without a rate, per asset.
	UnconvertedFees map[string]domain.Number `json:"unconvertedFees,omitempty"`
}

// handlePnlSum answers GET pnl/sum?exchange=&startTimestamp=&endTimestamp=
// [&asOf=&method=]. exchange is an exchange name (every pair of it) or a
// pair key (that pair, as the spec's sample sends). sommaPnl is the
// realized pnl and invested the cost of the lots the closing trades
// consumed, as decimal strings (domain.Decimal's String form).
func (h *pnlHandler) handlePnlSum(w http.ResponseWriter, r *http.Request) error {
	past, err := h.past.query(r.URL.Query())
	if err != nil {
		return err
	}
	l, _, err := h.readerAt(w, r, past)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ex := decodeKey(q.Get("exchange")) // a pair key may come encoded twice
	if ex == "" {
		return domain.Errorf(domain.EINVALID, "exchange is required (an exchange name or a pair key)")
	}
	start, end, err := queryTimestamps(q)
	if err != nil {
		return err
	}
	scope := projections.PnlScope{Exchange: ex, Quote: q.Get("quote")}
	if strings.Contains(ex, "/") {
		key, err := queryKey(q, "exchange")
		if err != nil {
			return err
		}
		scope = projections.PnlScope{Keys: []string{key}, Quote: q.Get("quote")}
	}
	res, err := l.Sum(scope, start, end)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pnlSumResponse{TournamentData: tournamentData{SommaPnl: res.Pnl.String(), Invested: res.Invested.String()},
		Data: res.Pairs, Unit: res.Unit, PerQuote: res.PerQuote, Unconverted: res.Unconverted, UnconvertedFees: res.UnconvertedFees})
	return nil
}

// handlePnlTotal answers GET pnl/total?key= with projections.PairTotal: the
// pair's all-time realized pnl, trade counts, fees, invested, unmatched
// value, unrealized pnl, position, inventory cost, ABP, method and unit.
func (h *pnlHandler) handlePnlTotal(w http.ResponseWriter, r *http.Request) error {
	l := h.reader
	key, err := queryKey(r.URL.Query(), "key")
	if err != nil {
		return err
	}
	t, err := l.Total(key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// queryTimestamps reads the required startTimestamp and endTimestamp
// parameters (ms): start ≥ 0, end ≥ start; EINVALID naming the one that
// is missing or out of range.
func queryTimestamps(q url.Values) (start, end int64, err error) {
	if start, err = queryInt64(q, "startTimestamp", 0, maxInt); err != nil {
		return 0, 0, err
	}
	if end, err = queryInt64(q, "endTimestamp", start, maxInt); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}
