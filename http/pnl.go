package http

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// PNL (spec "PNL"), served from Server.Ledger's incremental aggregates; the
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
func (s *Server) registerPnlRoutes(r *mux.Router) {
	r.HandleFunc("/pnl/overview", s.handlePnlOverview).Methods("POST")
	r.HandleFunc("/pnl/daily", s.handlePnlDaily).Methods("GET")
	r.HandleFunc("/pnl/daily/paginated", s.handlePnlDailyPaginated).Methods("GET")
	r.HandleFunc("/pnl/sum", s.handlePnlSum).Methods("GET")
	r.HandleFunc("/pnl/total", s.handlePnlTotal).Methods("GET")
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
func (s *Server) handlePnlOverview(w http.ResponseWriter, r *http.Request) {
	var req pnlOverviewRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	past, err := s.readPast(r.URL.Query(), &req.pastBody)
	if err != nil {
		Error(w, r, err)
		return
	}
	l, now, err := s.pnlReaderAt(w, r, past)
	if err != nil {
		Error(w, r, err)
		return
	}
	if req.Timezone == "" {
		Error(w, r, domain.Errorf(domain.EINVALID, "timezone is required (an IANA zone such as Europe/Amsterdam)"))
		return
	}
	loc, err := projections.LoadZone(req.Timezone)
	if err != nil {
		Error(w, r, err)
		return
	}
	if len(req.Keys) == 0 {
		Error(w, r, domain.Errorf(domain.EINVALID, "keys is required: pair keys, or [\"All\"]"))
		return
	}
	q := projections.OverviewQuery{Scope: projections.PnlScope{Keys: req.Keys, Quote: req.Quote}, Loc: loc, Now: now}
	if dr := req.DateRange; dr != nil {
		if dr.StartDate == nil || dr.EndDate == nil {
			Error(w, r, domain.Errorf(domain.EINVALID, "dateRange needs startDate and endDate (ms)"))
			return
		}
		if *dr.EndDate < *dr.StartDate {
			Error(w, r, domain.Errorf(domain.EINVALID, "dateRange.endDate must not be before startDate"))
			return
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
	if body, ok := s.overviews.get(string(ck), l, version); cacheable && ok {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
		return
	}
	o, err := l.Overview(q)
	if err != nil {
		Error(w, r, err)
		return
	}
	body, err := json.Marshal(o)
	if err != nil {
		Error(w, r, err)
		return
	}
	body = append(body, '\n')
	if cacheable {
		s.overviews.put(string(ck), l, version, body)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
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
func (s *Server) handlePnlDaily(w http.ResponseWriter, r *http.Request) {
	l, err := s.pnlReader()
	if err != nil {
		Error(w, r, err)
		return
	}
	q := r.URL.Query()
	key, err := queryKey(q, "key")
	if err != nil {
		Error(w, r, err)
		return
	}
	start, err := queryInt64(q, "startTimestamp", 0, maxInt)
	if err != nil {
		Error(w, r, err)
		return
	}
	end, err := queryInt64(q, "endTimestamp", start, maxInt)
	if err != nil {
		Error(w, r, err)
		return
	}
	loc, err := queryZone(q, false)
	if err != nil {
		Error(w, r, err)
		return
	}
	scope := projections.PnlScope{Keys: []string{key}}
	days, unm, unit, err := l.Daily(projections.DailyQuery{Scope: scope, Loc: loc, From: start, To: end})
	if err != nil {
		Error(w, r, err)
		return
	}
	// The range's sum names the fees without a rate, as pnl/sum does.
	sum, err := l.Sum(scope, start, end)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pnlDailyResponse{DateRangeDailyHistory: days, UnmatchedBaseValuePerDateRange: domain.Number(unm), Unit: unit,
		UnconvertedFees: sum.UnconvertedFees})
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
func (s *Server) handlePnlDailyPaginated(w http.ResponseWriter, r *http.Request) {
	l, err := s.pnlReader()
	if err != nil {
		Error(w, r, err)
		return
	}
	q := r.URL.Query()
	key, err := queryKey(q, "key")
	if err != nil {
		Error(w, r, err)
		return
	}
	pageNum, err := queryInt64(q, "pageNum", 1, 1<<31)
	if err != nil {
		Error(w, r, err)
		return
	}
	size, err := queryInt64(q, "pageSize", 1, projections.MaxPageSize)
	if err != nil {
		Error(w, r, err)
		return
	}
	end, err := queryInt64(q, "endTime", 1, maxInt)
	if err != nil {
		Error(w, r, err)
		return
	}
	loc, err := queryZone(q, false)
	if err != nil {
		Error(w, r, err)
		return
	}
	days, _, unit, err := l.Daily(projections.DailyQuery{Scope: projections.PnlScope{Keys: []string{key}}, Loc: loc, To: end})
	if err != nil {
		Error(w, r, err)
		return
	}
	out := pnlDailyPageResponse{TotalSize: len(days), Data: [][]any{}, Unit: unit, Fields: dailyPnlTuple}
	for i := len(days) - 1 - int(pageNum-1)*int(size); i >= 0 && len(out.Data) < int(size); i-- {
		out.Data = append(out.Data, dayTuple(days[i]))
	}
	writeJSON(w, http.StatusOK, out)
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
func (s *Server) handlePnlSum(w http.ResponseWriter, r *http.Request) {
	past, err := s.queryAsOf(r.URL.Query())
	if err != nil {
		Error(w, r, err)
		return
	}
	l, _, err := s.pnlReaderAt(w, r, past)
	if err != nil {
		Error(w, r, err)
		return
	}
	q := r.URL.Query()
	ex := decodeKey(q.Get("exchange")) // a pair key may come encoded twice
	if ex == "" {
		Error(w, r, domain.Errorf(domain.EINVALID, "exchange is required (an exchange name or a pair key)"))
		return
	}
	start, err := queryInt64(q, "startTimestamp", 0, maxInt)
	if err != nil {
		Error(w, r, err)
		return
	}
	end, err := queryInt64(q, "endTimestamp", start, maxInt)
	if err != nil {
		Error(w, r, err)
		return
	}
	scope := projections.PnlScope{Exchange: ex, Quote: q.Get("quote")}
	if strings.Contains(ex, "/") {
		key, err := queryKey(q, "exchange")
		if err != nil {
			Error(w, r, err)
			return
		}
		scope = projections.PnlScope{Keys: []string{key}, Quote: q.Get("quote")}
	}
	res, err := l.Sum(scope, start, end)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pnlSumResponse{TournamentData: tournamentData{SommaPnl: res.Pnl.String(), Invested: res.Invested.String()},
		Data: res.Pairs, Unit: res.Unit, PerQuote: res.PerQuote, Unconverted: res.Unconverted, UnconvertedFees: res.UnconvertedFees})
}

// handlePnlTotal answers GET pnl/total?key= with projections.PairTotal: the
// pair's all-time realized pnl, trade counts, fees, invested, unmatched
// value, unrealized pnl, position, inventory cost, ABP, method and unit.
func (s *Server) handlePnlTotal(w http.ResponseWriter, r *http.Request) {
	l, err := s.pnlReader()
	if err != nil {
		Error(w, r, err)
		return
	}
	key, err := queryKey(r.URL.Query(), "key")
	if err != nil {
		Error(w, r, err)
		return
	}
	t, err := l.Total(key)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}
