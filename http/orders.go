package http

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/pnlread"
	"github.com/tradeledger/tradeledger/projections"
)

// ordersHandler serves the order history (spec "Order history") from an
// OrderHistory (the Ledger; 503 without one), and orders/open from the
// trading side's open orders. Records
// are newest first, stable under equal times (see projections.Ledger for
// every field's definition). Page sizes are 1…projections.MaxPageSize
// (1000); pages start at 0 and a page past the end is empty. orders/page/multi
// answers total = the number of records of the requested keys (what the
// pages index into) and totalCount = the number of pages of pageSize.
//
// orders/day?timezone=&keys[]=(&days=N) answers the SDK's shape for the
// last N days of the zone (default 1: today, by the server's clock; at most
// maxDayWindow), oldest first: days = their ISO dates ("2026-05-06"),
// orders[i] = how many orders of the keys had a fill on days[i],
// closeOrders[i] = how many of them closed a position that day (a sell
// that matched a lot): integers, one per day, ready for a bar chart. The
// full records of the same window stay available: orderRecords (newest
// first, at most projections.MaxDayOrders), closeOrderRecords (those of
// them that are closing trades) and summaries (one projections.DaySummary
// per key over the window, dated by its first day).
//
// orders/open?key= (or keys[]=, repeated) lists the open and armed orders
// of those pairs from the order manager (domain.OpenOrder, by id): what
// trade/cancel can still cancel.
//
// Pair keys in key and keys[] may arrive URL-encoded twice
// (binance%252FUSDT-BTC, as a client that encodes an already encoded key
// sends them): a key still holding an escape after the query's decoding is
// decoded once more (decodeKey).
type ordersHandler struct {
	history OrderHistory
	// open lists unfinished orders (nil: orders/open answers 503).
	open  OpenOrderLister
	clock domain.Clock
}

func (h *ordersHandler) register(r *mux.Router) {
	r.Handle("/orders", requires(h.ready, h.handleOrders)).Methods("GET")
	r.Handle("/orders/page", requires(h.ready, h.handleOrdersPage)).Methods("GET")
	r.Handle("/orders/page/multi", requires(h.ready, h.handleOrdersPageMulti)).Methods("GET")
	r.Handle("/orders/day", requires(h.ready, h.handleOrdersDay)).Methods("GET")
	r.Handle("/orders/open", handlerFunc(h.handleOrdersOpen)).Methods("GET")
}

// OrderHistory is the Ledger's order records per pair key
// (projections.Ledger): newest first, stable under equal times.
type OrderHistory interface {
	// OrdersOlder returns up to n records of key older than cur (the zero
	// cursor: the newest), and the cursor after the last.
	OrdersOlder(key string, cur projections.OrdersCursor, n int) ([]projections.OrderRecord, projections.OrdersCursor)
	// AppendPageJSON appends page (from 0) of pageSize records of key to
	// dst as JSON array elements, and returns the total count of key's
	// records (EINVALID for a bad page).
	AppendPageJSON(dst []byte, key string, page, pageSize int) ([]byte, int, error)
	// AppendPageMultiJSON is AppendPageJSON over the records of keys,
	// merged newest first.
	AppendPageMultiJSON(dst []byte, keys []string, page, pageSize int) ([]byte, int, error)
	// DayCounts counts, for each day between consecutive bounds (ms),
	// the orders of keys with a fill that day and those that closed a
	// position.
	DayCounts(keys []string, bounds []int64) (orders, closes []int)
	// Day returns the window [from, to) of keys: a summary per key dated
	// date, its records (newest first, at most projections.MaxDayOrders)
	// and the closing ones among them.
	Day(keys []string, date string, from, to int64) (days []projections.DaySummary, orders, closes []projections.OrderRecord)
}

// ready is errNoLedger without an OrderHistory.
func (h *ordersHandler) ready() error {
	if h.history == nil {
		return errNoLedger
	}
	return nil
}

// decodeKey undoes a second URL encoding of a pair key or exchange name:
// none of them holds a '%' (names are letters, digits, '-', '_', '/' and
// '#'), so one that still does after the query's own decoding was encoded
// twice (binance%2FUSDT-BTC from binance%252FUSDT-BTC). A value that does
// not decode is returned as is, for the validation to name it.
func decodeKey(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

// queryKey reads a required pair key parameter.
func queryKey(q url.Values, name string) (string, error) {
	k := decodeKey(q.Get(name))
	if k == "" {
		return "", domain.Errorf(domain.EINVALID, "%s is required (a pair key <exchange>/<pair>, URL-encoded)", name)
	}
	_, pair, err := domain.SplitPairKey(k)
	if err != nil {
		return "", domain.Errorf(domain.EINVALID, "%s: %s", name, domain.ErrorMessage(err))
	}
	if _, _, err := domain.SplitPair(pair); err != nil {
		return "", domain.Errorf(domain.EINVALID, "%s: %s", name, domain.ErrorMessage(err))
	}
	return k, nil
}

// queryKeys reads the repeated keys[] parameter (at least one).
func queryKeys(q url.Values) ([]string, error) {
	keys := q["keys[]"]
	if len(keys) == 0 {
		keys = q["keys"]
	}
	if len(keys) == 0 {
		return nil, domain.Errorf(domain.EINVALID, "keys[] is required (one pair key per keys[] parameter)")
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		var err error
		if out[i], err = queryKey(url.Values{"keys[]": {k}}, "keys[]"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// queryInt64 reads a required integer parameter within [lo, hi].
func queryInt64(q url.Values, name string, lo, hi int64) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return 0, domain.Errorf(domain.EINVALID, "%s is required", name)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, domain.Errorf(domain.EINVALID, "%s must be an integer, not %q", name, v)
	}
	if n < lo || n > hi {
		return 0, domain.Errorf(domain.EINVALID, "%s must be between %d and %d", name, lo, hi)
	}
	return n, nil
}

const maxInt = int64(^uint(0) >> 1)

// recordBuffers recycles the encoding buffers of order pages (about 420
// bytes a record), which would otherwise be a large allocation per request.
var recordBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuffer is the largest buffer kept for reuse (a full page of
// MaxPageSize records fits, and an orders/day answer of twice
// MaxDayOrders); larger ones, from orders?key= on a long history, are left
// to the collector. A fresh buffer of megabytes costs its page faults on
// every request, more so on a large heap.
const maxPooledBuffer = 4 << 20

// putRecordBuffer returns b, taken from pb, to the pool, unless it grew too
// large to keep.
func putRecordBuffer(pb *[]byte, b []byte) {
	if cap(b) <= maxPooledBuffer {
		*pb = b[:0]
		recordBuffers.Put(pb)
	}
}

// appendRecords appends recs as JSON array elements, after a comma unless
// first.
func appendRecords(b []byte, recs []projections.OrderRecord, first bool) []byte {
	for i := range recs {
		if i > 0 || !first {
			b = append(b, ',')
		}
		b = recs[i].AppendJSON(b)
	}
	return b
}

func writeRecords(w http.ResponseWriter, prefix string, recs []projections.OrderRecord) {
	pb := recordBuffers.Get().(*[]byte)
	b := slices.Grow((*pb)[:0], 64+len(recs)*420)
	b = append(b, prefix...)
	b = append(b, `"data":[`...)
	b = appendRecords(b, recs, true)
	b = append(b, "]}\n"...)
	writeBody(w, http.StatusOK, b)
	putRecordBuffer(pb, b)
}

// handleOrders answers GET orders?key= with {data: every record of key}.
func (h *ordersHandler) handleOrders(w http.ResponseWriter, r *http.Request) error {
	l := h.history
	key, err := queryKey(r.URL.Query(), "key")
	if err != nil {
		return err
	}
	// A long history goes out in pieces, never whole in memory: a
	// million records would be some 400 MB of JSON.
	recs, cur := l.OrdersOlder(key, projections.OrdersCursor{}, ordersPiece)
	if len(recs) < ordersPiece {
		writeRecords(w, "{", recs)
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	pb := recordBuffers.Get().(*[]byte)
	b := append((*pb)[:0], `{"data":[`...)
	defer func() { putRecordBuffer(pb, b) }()
	for first := true; len(recs) > 0; recs, cur = l.OrdersOlder(key, cur, ordersPiece) {
		b = appendRecords(b, recs, first)
		first = false
		if _, err := w.Write(b); err != nil {
			return nil // the client left
		}
		b = b[:0]
	}
	b = append(b, "]}\n"...)
	_, _ = w.Write(b)
	return nil
}

// ordersPiece is how many records orders?key= encodes at a time.
const ordersPiece = 1000

// handleOrdersPage answers GET orders/page?key=&page=&pageSize=.
func (h *ordersHandler) handleOrdersPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	key, err := queryKey(q, "key")
	if err != nil {
		return err
	}
	return answerPage(w, q, false, func(b []byte, page, size int) ([]byte, int, error) {
		return h.history.AppendPageJSON(b, key, page, size)
	})
}

// answerPage reads page and pageSize from q and answers with that page of
// the records appendPage appends to b (the JSON of each, comma separated;
// and the total number of records): {"total", "page", "data"}, and with
// countPages "totalCount" (the number of pages) after total.
func answerPage(w http.ResponseWriter, q url.Values, countPages bool, appendPage func(b []byte, page, size int) ([]byte, int, error)) error {
	page, size, err := queryPage(q)
	if err != nil {
		return err
	}
	rb := recordBuffers.Get().(*[]byte)
	recs, total, err := appendPage(slices.Grow((*rb)[:0], size*420), page, size)
	if err == nil {
		if countPages {
			pages := (total + size - 1) / size
			writePage(w, `{"total":`+strconv.Itoa(total)+`,"totalCount":`+strconv.Itoa(pages)+`,"page":`+strconv.Itoa(page)+`,`, recs)
		} else {
			writePage(w, `{"total":`+strconv.Itoa(total)+`,"page":`+strconv.Itoa(page)+`,`, recs)
		}
	}
	putRecordBuffer(rb, recs)
	return err
}

// writePage answers 200 with the JSON object prefix (up to and including
// a comma) and recs as its data array, in one write.
func writePage(w http.ResponseWriter, prefix string, recs []byte) {
	pb := recordBuffers.Get().(*[]byte)
	b := slices.Grow((*pb)[:0], len(prefix)+len(recs)+16)
	b = append(b, prefix...)
	b = append(b, `"data":[`...)
	b = append(b, recs...)
	b = append(b, "]}\n"...)
	writeBody(w, http.StatusOK, b)
	putRecordBuffer(pb, b)
}

func queryPage(q url.Values) (page, size int, err error) {
	p, err := queryInt64(q, "page", 0, 1<<31)
	if err != nil {
		return 0, 0, err
	}
	n, err := queryInt64(q, "pageSize", 1, projections.MaxPageSize)
	if err != nil {
		return 0, 0, err
	}
	return int(p), int(n), nil
}

// handleOrdersPageMulti answers GET orders/page/multi?keys[]=…&page=&pageSize=.
func (h *ordersHandler) handleOrdersPageMulti(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	keys, err := queryKeys(q)
	if err != nil {
		return err
	}
	return answerPage(w, q, true, func(b []byte, page, size int) ([]byte, int, error) {
		return h.history.AppendPageMultiJSON(b, keys, page, size)
	})
}

// maxDayWindow bounds orders/day's days parameter.
const maxDayWindow = 366

type ordersDayResponse struct {
	Days              []string                  `json:"days"`
	Orders            []int                     `json:"orders"`
	CloseOrders       []int                     `json:"closeOrders"`
	OrderRecords      []projections.OrderRecord `json:"orderRecords"`
	CloseOrderRecords []projections.OrderRecord `json:"closeOrderRecords"`
	Summaries         []projections.DaySummary  `json:"summaries"`
}

// handleOrdersDay answers GET orders/day?timezone=&keys[]=(&days=).
func (h *ordersHandler) handleOrdersDay(w http.ResponseWriter, r *http.Request) error {
	l := h.history
	q := r.URL.Query()
	loc, err := queryZone(q, true)
	if err != nil {
		return err
	}
	keys, err := queryKeys(q)
	if err != nil {
		return err
	}
	n := int64(1)
	if q.Get("days") != "" {
		if n, err = queryInt64(q, "days", 1, maxDayWindow); err != nil {
			return err
		}
	}
	now := h.clock.Now().In(loc)
	first := pnlread.LocalDayStart(now.Year(), now.Month(), now.Day()-int(n-1), loc)
	out := ordersDayResponse{Days: make([]string, n)}
	bounds := make([]int64, n+1)
	for i := range bounds {
		day := pnlread.AddLocalDays(first, i, loc)
		bounds[i] = day.UnixMilli()
		if i < int(n) {
			out.Days[i] = day.Format("2006-01-02")
		}
	}
	out.Orders, out.CloseOrders = l.DayCounts(keys, bounds)
	out.Summaries, out.OrderRecords, out.CloseOrderRecords = l.Day(keys, out.Days[0], bounds[0], bounds[n])
	pb := recordBuffers.Get().(*[]byte)
	b, err := out.appendJSON(slices.Grow((*pb)[:0], (len(out.OrderRecords)+len(out.CloseOrderRecords))*420+1024))
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, b)
	putRecordBuffer(pb, b)
	return nil
}

// appendJSON appends what writeJSON would write for out (a line of JSON),
// encoding the records with OrderRecord.AppendJSON directly: thousands of
// them through encoding/json cost several times more.
func (out *ordersDayResponse) appendJSON(b []byte) ([]byte, error) {
	head, err := json.Marshal(struct {
		Days        []string `json:"days"`
		Orders      []int    `json:"orders"`
		CloseOrders []int    `json:"closeOrders"`
	}{out.Days, out.Orders, out.CloseOrders})
	if err != nil {
		return b, err
	}
	summaries, err := json.Marshal(out.Summaries)
	if err != nil {
		return b, err
	}
	b = append(b, head[:len(head)-1]...)
	b = append(b, `,"orderRecords":[`...)
	b = appendRecords(b, out.OrderRecords, true)
	b = append(b, `],"closeOrderRecords":[`...)
	b = appendRecords(b, out.CloseOrderRecords, true)
	b = append(b, `],"summaries":`...)
	b = append(b, summaries...)
	return append(b, "}\n"...), nil
}

// OpenOrderLister lists the open and armed orders of a pair, by id: what
// trade/cancel can still cancel (exchange/engine.Trader, from the order
// manager). Server.Trader serves orders/open when it has this method.
type OpenOrderLister interface {
	OpenOrderList(exchange, pair string) []domain.OpenOrder
}

type ordersOpenResponse struct {
	Data []domain.OpenOrder `json:"data"`
}

// handleOrdersOpen answers GET orders/open?key= (or keys[]=…) with
// {data: the pairs' open and armed orders, by id}.
func (h *ordersHandler) handleOrdersOpen(w http.ResponseWriter, r *http.Request) error {
	if h.open == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "trading is not configured")
	}
	q := r.URL.Query()
	if q.Get("key") == "" && len(q["keys[]"]) == 0 && len(q["keys"]) == 0 {
		return domain.Errorf(domain.EINVALID, "key or keys[] is required (pair keys <exchange>/<pair>, URL-encoded)")
	}
	var keys []string
	if q.Get("key") != "" {
		k, err := queryKey(q, "key")
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	if len(q["keys[]"]) > 0 || len(q["keys"]) > 0 {
		more, err := queryKeys(q)
		if err != nil {
			return err
		}
		keys = append(keys, more...)
	}
	out := ordersOpenResponse{Data: []domain.OpenOrder{}}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		exchange, pair, _ := domain.SplitPairKey(k)
		out.Data = append(out.Data, h.open.OpenOrderList(exchange, pair)...)
	}
	slices.SortFunc(out.Data, func(a, b domain.OpenOrder) int { return cmp.Compare(a.ID, b.ID) })
	writeJSON(w, http.StatusOK, out)
	return nil
}

// queryZone reads timezone (required, or UTC when absent and not required).
func queryZone(q url.Values, required bool) (*time.Location, error) {
	name := q.Get("timezone")
	if name == "" && !required {
		return time.UTC, nil
	}
	if name == "" {
		return nil, domain.Errorf(domain.EINVALID, "timezone is required (an IANA zone such as Europe/Amsterdam)")
	}
	return projections.LoadZone(name)
}
