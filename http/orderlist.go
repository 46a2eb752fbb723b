package http

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// orderListHandler serves the order list (beyond the spec): every order
// the log holds, whatever became of it, with its fills under it. Its
// OrderIndex picks the orders, its StreamReader reads each one's stream
// and its FillPnl gives the pnl of each sell fill (503 without the index
// or the log).
//
//	GET orders/all?state=&side=&keys[]=&from=&to=&page=&pageSize=
//
// Filters, all optional: state (comma-separated or repeated: requested,
// accepted, triggered, filled, cancelled, rejected, expired, or open for
// the first three), side (buy or sell), keys[] (pair keys; none: every
// pair with an order, configured or not), from and to (ms; the order's
// request time, from ≤ time < to). page from 0 (default 0), pageSize
// 1…MaxOrderListPage (default DefaultOrderListPage). Orders are newest
// first by request time.
//
// The answer: total (orders matching), page, pageSize, counts (orders
// matching every filter but state, by state), pairs (every pair key with
// an order), and data: each order as its stream tells it (orderView). The
// index (Server.OrderList) picks the orders; each order's stream is read
// from the log to show it, as the order manager reads a finished order, so
// a page costs a stream read per order.
type orderListHandler struct {
	index OrderIndex
	log   StreamReader
	// fills, when set, gives the sell fills their pnl.
	fills FillPnl
}

func (h *orderListHandler) register(r *mux.Router) {
	r.Handle("/orders/all", handlerFunc(h.handleOrdersAll)).Methods("GET")
}

// OrderIndex picks the orders of orders/all (projections.OrderList):
// every order of any state, newest first by request time.
type OrderIndex interface {
	// Page returns page (from 0) of size orders matching f, with the
	// total matching and the counts by state (every filter but the
	// states').
	Page(f projections.OrderFilter, page, size int) projections.OrderPage
	// Keys returns every pair key with an order, sorted.
	Keys() []string
}

// StreamReader reads one stream of the event log (domain.EventStore's
// ReadStream): from version from, at most max events (≤ 0: all).
type StreamReader interface {
	ReadStream(ctx context.Context, stream string, from int64, max int) domain.EventIterator
}

// FillPnl finds the Ledger's record of a fill (projections.Ledger): the
// record of key at time t (ms) and log position pos, whose Pnl is the
// realized pnl the ledger matched a sell fill with.
type FillPnl interface {
	FillRecord(key string, t int64, pos uint64) (projections.OrderRecord, bool)
}

// Page sizes of orders/all.
const (
	DefaultOrderListPage = 50
	MaxOrderListPage     = 200
)

// orderStates are the states orders/all filters on, with the alias open.
var orderStates = map[string][]domain.OrderState{
	"requested": {domain.OrderStateRequested}, "accepted": {domain.OrderStateAccepted},
	"triggered": {domain.OrderStateTriggered}, "filled": {domain.OrderStateFilled},
	"cancelled": {domain.OrderStateCancelled}, "rejected": {domain.OrderStateRejected},
	"expired": {domain.OrderStateExpired},
	"open":    {domain.OrderStateRequested, domain.OrderStateAccepted, domain.OrderStateTriggered},
}

type orderListResponse struct {
	Total    int                       `json:"total"`
	Page     int                       `json:"page"`
	PageSize int                       `json:"pageSize"`
	Counts   map[domain.OrderState]int `json:"counts"`
	Pairs    []string                  `json:"pairs"`
	Data     []orderView               `json:"data"`
}

// orderView is an order as orders/all shows it: its request (type is the
// order kind; price the limit or reference price; stopPrice and limitPrice
// for stops), its state and, when it ended, why (reason) and when (closed,
// ms); filled and averagePrice over its fills, fees summed per asset, pnl
// the realized pnl of its fills in the pair's quote (sells; the ledger's
// lot matching), and the fills themselves, oldest first. updated is the
// time of its last event.
type orderView struct {
	ID              int64                    `json:"id"`
	Key             string                   `json:"key"`
	Exchange        string                   `json:"exchange"`
	Pair            string                   `json:"pair"`
	Side            domain.Side              `json:"side"`
	Type            domain.OrderKind         `json:"type"`
	State           domain.OrderState        `json:"state"`
	Time            int64                    `json:"time"`
	Updated         int64                    `json:"updated"`
	Closed          int64                    `json:"closed,omitempty"`
	Amount          domain.Number            `json:"amount"`
	Price           domain.Number            `json:"price"`
	StopPrice       *domain.Number           `json:"stopPrice,omitempty"`
	LimitPrice      *domain.Number           `json:"limitPrice,omitempty"`
	OcoID           int64                    `json:"ocoId,omitempty"`
	CancelRequested bool                     `json:"cancelRequested,omitempty"`
	Reason          string                   `json:"reason,omitempty"`
	Filled          domain.Number            `json:"filled"`
	AveragePrice    *domain.Number           `json:"averagePrice,omitempty"`
	Fees            map[string]domain.Number `json:"fees"`
	Pnl             *domain.Number           `json:"pnl,omitempty"`
	Fills           []fillView               `json:"fills"`
}

// fillView is one fill of an order: the exchange's fill id, its trade time
// (ms), price, amount, fee in feeAsset, and for a sell the realized pnl the
// ledger matched it with (absent when the ledger holds no record of it).
type fillView struct {
	ID       string         `json:"id"`
	Time     int64          `json:"time"`
	Price    domain.Number  `json:"price"`
	Amount   domain.Number  `json:"amount"`
	Fee      domain.Number  `json:"fee"`
	FeeAsset string         `json:"feeAsset"`
	Pnl      *domain.Number `json:"pnl,omitempty"`
}

func (h *orderListHandler) handleOrdersAll(w http.ResponseWriter, r *http.Request) error {
	if h.index == nil || h.log == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "the order list is not configured")
	}
	q := r.URL.Query()
	f, err := orderListFilter(q)
	if err != nil {
		return err
	}
	page, size := 0, DefaultOrderListPage
	if q.Get("page") != "" {
		p, err := queryInt64(q, "page", 0, 1<<31)
		if err != nil {
			return err
		}
		page = int(p)
	}
	if q.Get("pageSize") != "" {
		n, err := queryInt64(q, "pageSize", 1, MaxOrderListPage)
		if err != nil {
			return err
		}
		size = int(n)
	}
	p := h.index.Page(f, page, size)
	out := orderListResponse{Total: p.Total, Page: page, PageSize: size, Counts: p.Counts, Pairs: h.index.Keys(),
		Data: make([]orderView, 0, len(p.Orders))}
	for _, o := range p.Orders {
		v, err := h.orderView(r.Context(), o)
		if err != nil {
			return err
		}
		out.Data = append(out.Data, v)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// orderListFilter reads orders/all's filters; a bad one is EINVALID naming
// its parameter.
func orderListFilter(q url.Values) (projections.OrderFilter, error) {
	var f projections.OrderFilter
	for _, v := range q["state"] {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			states, ok := orderStates[name]
			if !ok {
				return f, domain.Errorf(domain.EINVALID, "state: %q is not a state (requested, accepted, triggered, filled, cancelled, rejected, expired, open)", name)
			}
			for _, st := range states {
				if !slices.Contains(f.States, st) {
					f.States = append(f.States, st)
				}
			}
		}
	}
	switch side := q.Get("side"); side {
	case "", "buy", "sell":
		f.Side = domain.Side(side)
	default:
		return f, domain.Errorf(domain.EINVALID, "side must be buy or sell, not %q", side)
	}
	if len(q["keys[]"]) > 0 || len(q["keys"]) > 0 {
		keys, err := queryKeys(q)
		if err != nil {
			return f, err
		}
		f.Keys = keys
	}
	if q.Get("from") != "" {
		from, err := queryInt64(q, "from", 0, maxInt)
		if err != nil {
			return f, err
		}
		f.From = from
	}
	if q.Get("to") != "" {
		to, err := queryInt64(q, "to", 1, maxInt)
		if err != nil {
			return f, err
		}
		if to <= f.From {
			return f, domain.Errorf(domain.EINVALID, "to must be after from")
		}
		f.To = to
	}
	return f, nil
}

// orderView reads o's stream and shows it (see orderView), with the pnl of
// its sell fills from the ledger.
func (h *orderListHandler) orderView(ctx context.Context, lo projections.ListedOrder) (orderView, error) {
	stream := domain.OrderStream(lo.ID)
	it := h.log.ReadStream(ctx, stream, 0, 0)
	defer it.Close()
	o := domain.NewOrder()
	v := orderView{ID: lo.ID, Key: lo.Key, Fees: map[string]domain.Number{}, Fills: []fillView{}}
	var pnl domain.Decimal
	pnlKnown := false
	fees := map[string]domain.Decimal{}
	for it.Next() {
		e := it.Event()
		if err := o.Apply(&e); err != nil {
			return v, fmt.Errorf("read %s: %w", stream, err)
		}
		v.Updated = e.Time
		switch e.Type {
		case domain.TypeOrderFilled:
			f, err := domain.Payload[domain.OrderFilled](&e)
			if err != nil {
				return v, fmt.Errorf("read %s: %w", stream, err)
			}
			fv := fillView{ID: f.FillID, Time: domain.FillTime(&e, f), Price: domain.Number(f.Price), Amount: domain.Number(f.Quantity),
				Fee: domain.Number(f.Fee), FeeAsset: f.FeeAsset}
			if h.fills != nil && o.Side == domain.Sell {
				if rec, ok := h.fills.FillRecord(lo.Key, fv.Time, e.Position); ok {
					p := domain.Number(rec.Pnl)
					fv.Pnl = &p
					pnl, pnlKnown = pnl.Add(rec.Pnl), true
				}
			}
			fees[f.FeeAsset] = fees[f.FeeAsset].Add(f.Fee)
			v.Fills = append(v.Fills, fv)
		case domain.TypeOrderCancelled, domain.TypeOrderRejected, domain.TypeOrderExpired:
			v.Closed = e.Time
		}
	}
	if err := it.Err(); err != nil {
		return v, fmt.Errorf("read %s: %w", stream, err)
	}
	if o.State == domain.OrderStateFilled && v.Closed == 0 {
		v.Closed = v.Updated
		if n := len(v.Fills); n > 0 {
			v.Closed = v.Fills[n-1].Time
		}
	}
	v.Exchange, v.Pair, v.Side, v.Type, v.State = o.Exchange, o.Pair, o.Side, o.Kind, o.State
	v.Time, v.Amount, v.Price, v.OcoID = lo.Time, domain.Number(o.Amount), domain.Number(o.Price), o.OcoID
	v.CancelRequested, v.Reason, v.Filled = o.CancelRequested, o.Reason, domain.Number(o.Filled)
	if !o.StopPrice.IsZero() {
		sp := domain.Number(o.StopPrice)
		v.StopPrice = &sp
	}
	if !o.LimitPrice.IsZero() {
		lp := domain.Number(o.LimitPrice)
		v.LimitPrice = &lp
	}
	if !o.Filled.IsZero() {
		avg := domain.Number(o.Cost.Div(o.Filled))
		v.AveragePrice = &avg
	}
	for asset, fee := range fees {
		v.Fees[asset] = domain.Number(fee)
	}
	if pnlKnown {
		p := domain.Number(pnl)
		v.Pnl = &p
	}
	if o.State == domain.OrderStateNone { // the index knows it, the log does not (yet): say what the index says
		v.Exchange, v.Pair, _ = domain.SplitPairKey(lo.Key)
		v.Side, v.Type, v.State = lo.Side, lo.Kind, lo.State
	}
	return v, nil
}
