package http

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// Order history (spec "Order history"), served from Server.Ledger. Records
// are newest first, stable under equal times (see projections.Ledger for
// every field's definition). Page sizes are 1…projections.MaxPageSize
// (1000); pages start at 0 and a page past the end is empty. orders/page/multi
// answers total = the number of records of the requested keys (what the
// pages index into) and totalCount = the number of pages of pageSize.
// orders/day answers, for the current day in the given zone (the server's
// clock): days = one projections.DaySummary per key; orders = that day's
// records of those keys, newest first (at most projections.MaxDayOrders);
// closeOrders = those of them that are closing trades (sells that matched a
// lot), in the same order.
func (s *Server) registerOrderRoutes(r *mux.Router) {
	r.HandleFunc("/orders", s.handleOrders).Methods("GET")
	r.HandleFunc("/orders/page", s.handleOrdersPage).Methods("GET")
	r.HandleFunc("/orders/page/multi", s.handleOrdersPageMulti).Methods("GET")
	r.HandleFunc("/orders/day", s.handleOrdersDay).Methods("GET")
}

func (s *Server) ledger() (*projections.Ledger, error) {
	if s.Ledger == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "order history is not configured")
	}
	return s.Ledger, nil
}

// queryKey reads a required pair key parameter.
func queryKey(q url.Values, name string) (string, error) {
	k := q.Get(name)
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
	for _, k := range keys {
		if _, err := queryKey(url.Values{"keys[]": {k}}, "keys[]"); err != nil {
			return nil, err
		}
	}
	return keys, nil
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
// MaxPageSize records fits); larger ones, from orders?key= on a long
// history, are left to the collector.
const maxPooledBuffer = 1 << 20

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
func (s *Server) handleOrders(w http.ResponseWriter, r *http.Request) {
	l, err := s.ledger()
	if err != nil {
		Error(w, r, err)
		return
	}
	key, err := queryKey(r.URL.Query(), "key")
	if err != nil {
		Error(w, r, err)
		return
	}
	// A long history goes out in pieces, never whole in memory: a
	// million records would be some 400 MB of JSON.
	recs, cur := l.OrdersOlder(key, projections.OrdersCursor{}, ordersPiece)
	if len(recs) < ordersPiece {
		writeRecords(w, "{", recs)
		return
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
			return // the client left
		}
		b = b[:0]
	}
	b = append(b, "]}\n"...)
	_, _ = w.Write(b)
}

// ordersPiece is how many records orders?key= encodes at a time.
const ordersPiece = 1000

// handleOrdersPage answers GET orders/page?key=&page=&pageSize=.
func (s *Server) handleOrdersPage(w http.ResponseWriter, r *http.Request) {
	l, err := s.ledger()
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
	page, size, err := queryPage(q)
	if err != nil {
		Error(w, r, err)
		return
	}
	recs, total, err := l.Page(key, page, size)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeRecords(w, `{"total":`+strconv.Itoa(total)+`,"page":`+strconv.Itoa(page)+`,`, recs)
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
func (s *Server) handleOrdersPageMulti(w http.ResponseWriter, r *http.Request) {
	l, err := s.ledger()
	if err != nil {
		Error(w, r, err)
		return
	}
	q := r.URL.Query()
	keys, err := queryKeys(q)
	if err != nil {
		Error(w, r, err)
		return
	}
	page, size, err := queryPage(q)
	if err != nil {
		Error(w, r, err)
		return
	}
	recs, total, err := l.PageMulti(keys, page, size)
	if err != nil {
		Error(w, r, err)
		return
	}
	pages := (total + size - 1) / size
	writeRecords(w, `{"total":`+strconv.Itoa(total)+`,"totalCount":`+strconv.Itoa(pages)+`,"page":`+strconv.Itoa(page)+`,`, recs)
}

type ordersDayResponse struct {
	Days        []projections.DaySummary  `json:"days"`
	Orders      []projections.OrderRecord `json:"orders"`
	CloseOrders []projections.OrderRecord `json:"closeOrders"`
}

// handleOrdersDay answers GET orders/day?timezone=&keys[]=.
func (s *Server) handleOrdersDay(w http.ResponseWriter, r *http.Request) {
	l, err := s.ledger()
	if err != nil {
		Error(w, r, err)
		return
	}
	q := r.URL.Query()
	loc, err := queryZone(q, true)
	if err != nil {
		Error(w, r, err)
		return
	}
	keys, err := queryKeys(q)
	if err != nil {
		Error(w, r, err)
		return
	}
	now := s.Clock.Now().In(loc)
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	days, orders, closes := l.Day(keys, start.Format("2006-01-02"), start.UnixMilli(), start.AddDate(0, 0, 1).UnixMilli())
	writeJSON(w, http.StatusOK, ordersDayResponse{Days: days, Orders: orders, CloseOrders: closes})
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
