package http

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/projections"
)

type listedOrderJSON struct {
	ID              int64
	Key, Pair       string
	Side, Type      string
	State           string
	Time, Closed    int64
	Amount, Price   float64
	Filled          float64
	AveragePrice    *float64
	Pnl             *float64
	Reason          string
	CancelRequested bool
	Fees            map[string]float64
	Fills           []struct {
		ID                 string
		Time               int64
		Price, Amount, Fee float64
		FeeAsset           string
		Pnl                *float64
	}
}

type orderListJSON struct {
	Total, Page, PageSize int
	Counts                map[string]int
	Pairs                 []string
	Data                  []listedOrderJSON
}

// newOrderListServer serves the order list and the ledger over:
//
//	#1 binance/USDT-BTC buy 1 @ 100, filled in two fills (0.4 + 0.6, fee 0.1 USDT)  D 10:00
//	#2 binance/USDT-BTC sell 1 @ 120, 0.25 filled (fee 0.03 USDT), then cancelled   D 11:00
//	#3 binance/USDT-ETH buy 5 @ 10, rejected (insufficient funds)                    D 12:00
//	#4 kraken/EUR-XRP sell 100 @ 0.5, resting (a pair no configuration names)        D+1 09:00
func newOrderListServer(t *testing.T) *testServer {
	return newTestServer(t, func(ts *testServer) {
		l := projections.NewLedger(domain.LOFO)
		list := projections.NewOrderList()
		ts.Runner.Register(l)
		ts.Runner.Register(list)
		ts.Server.Ledger, ts.Server.OrderList = l, list
		add := func(at time.Time, id int64, typ string, data any) {
			ts.Clock.Set(at)
			ts.appendEvent(domain.OrderStream(id), domain.NewEvent(ts.Clock, typ, data))
		}
		request := func(id int64, exchange, pair string, side domain.Side, amount, price string, at time.Time) {
			add(at, id, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: exchange, Pair: pair, Side: side,
				Kind: domain.KindLimit, Amount: decimal.MustDecimal(amount), Price: decimal.MustDecimal(price), ClientOrderID: fmt.Sprint(id)})
		}
		fill := func(id int64, fid, price, qty, fee string, at time.Time) {
			add(at, id, domain.TypeOrderFilled, domain.OrderFilled{FillID: fid, Price: decimal.MustDecimal(price),
				Quantity: decimal.MustDecimal(qty), Fee: decimal.MustDecimal(fee), FeeAsset: "USDT"})
		}
		request(1, "binance", "USDT-BTC", domain.Buy, "1", "100", rmAt(0, 10, 0))
		add(rmAt(0, 10, 0), 1, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: "x1"})
		fill(1, "f1", "100", "0.4", "0.04", rmAt(0, 10, 1))
		fill(1, "f2", "100", "0.6", "0.06", rmAt(0, 10, 2))
		request(2, "binance", "USDT-BTC", domain.Sell, "1", "120", rmAt(0, 11, 0))
		add(rmAt(0, 11, 0), 2, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: "x2"})
		fill(2, "f3", "120", "0.25", "0.03", rmAt(0, 11, 30))
		add(rmAt(0, 11, 45), 2, domain.TypeOrderCancelled, domain.OrderCancelled{Remaining: decimal.MustDecimal("0.75"), Reason: "cancelled by the user"})
		request(3, "binance", "USDT-ETH", domain.Buy, "5", "10", rmAt(0, 12, 0))
		add(rmAt(0, 12, 0), 3, domain.TypeOrderRejected, domain.OrderRejected{Reason: "insufficient funds"})
		request(4, "kraken", "EUR-XRP", domain.Sell, "100", "0.5", rmAt(1, 9, 0))
		add(rmAt(1, 9, 0), 4, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: "x4"})
	})
}

func TestOrdersAllListsEveryOrderWithItsFills(t *testing.T) {
	ts := newOrderListServer(t)
	var all orderListJSON
	if st, body := ts.getJSON("/api/v1/orders/all", &all); st != 200 {
		t.Fatalf("orders/all: %d %s", st, body)
	}
	if all.Total != 4 || all.Page != 0 || all.PageSize != DefaultOrderListPage || len(all.Data) != 4 {
		t.Fatalf("total %d page %d size %d, %d orders", all.Total, all.Page, all.PageSize, len(all.Data))
	}
	if got := fmt.Sprint(all.Pairs); got != "[binance/USDT-BTC binance/USDT-ETH kraken/EUR-XRP]" {
		t.Errorf("pairs %s", got)
	}
	if got := fmt.Sprint(all.Counts); got != "map[accepted:1 cancelled:1 filled:1 rejected:1]" {
		t.Errorf("counts %s", got)
	}
	var states []string
	for _, o := range all.Data {
		states = append(states, fmt.Sprintf("%d %s %s %s", o.ID, o.Key, o.Side, o.State))
	}
	if got, want := strings.Join(states, "; "), "4 kraken/EUR-XRP sell accepted; 3 binance/USDT-ETH buy rejected; 2 binance/USDT-BTC sell cancelled; 1 binance/USDT-BTC buy filled"; got != want {
		t.Errorf("orders\n got %s\nwant %s", got, want)
	}
	o1, o2, o3 := all.Data[3], all.Data[2], all.Data[1]
	if len(o1.Fills) != 2 || o1.Fills[0].ID != "f1" || o1.Fills[0].Amount != 0.4 || o1.Fills[1].Amount != 0.6 || o1.Fills[1].Time != rmAt(0, 10, 2).UnixMilli() {
		t.Errorf("fills of #1: %+v", o1.Fills)
	}
	if o1.Filled != 1 || o1.AveragePrice == nil || *o1.AveragePrice != 100 || o1.Fees["USDT"] != 0.1 || o1.Pnl != nil || o1.Fills[0].Pnl != nil {
		t.Errorf("#1: filled %v avg %v fees %v pnl %v", o1.Filled, o1.AveragePrice, o1.Fees, o1.Pnl)
	}
	if o1.Closed != rmAt(0, 10, 2).UnixMilli() {
		t.Errorf("#1 closed at %d, want its last fill's time", o1.Closed)
	}
	// #2 sold 0.25 at 120 against the lot of 1 at 100 + 0.1 fee:
	// 30 − 0.03 − 0.25 × 100.1 = 4.945.
	if o2.Reason != "cancelled by the user" || o2.Closed != rmAt(0, 11, 45).UnixMilli() || len(o2.Fills) != 1 ||
		o2.Fills[0].Pnl == nil || *o2.Fills[0].Pnl != 4.945 || o2.Pnl == nil || *o2.Pnl != 4.945 || o2.Filled != 0.25 || o2.Amount != 1 {
		t.Errorf("#2: %+v", o2)
	}
	if o3.Reason != "insufficient funds" || len(o3.Fills) != 0 || o3.Filled != 0 || o3.AveragePrice != nil || o3.Price != 10 || o3.Amount != 5 {
		t.Errorf("#3: %+v", o3)
	}

	cases := []struct{ query, ids string }{
		{"state=cancelled,rejected", "3 2"},
		{"state=open", "4"},
		{"state=filled&state=open", "4 1"},
		{"side=sell", "4 2"},
		{"keys[]=" + url.QueryEscape("binance/USDT-BTC"), "2 1"},
		{"keys[]=" + url.QueryEscape("binance/USDT-ETH") + "&keys[]=" + url.QueryEscape("kraken/EUR-XRP"), "4 3"},
		{fmt.Sprintf("from=%d&to=%d", rmAt(0, 11, 0).UnixMilli(), rmAt(1, 0, 0).UnixMilli()), "3 2"},
		{"page=1&pageSize=3", "1"},
		{"pageSize=2", "4 3"},
	}
	for _, c := range cases {
		var got orderListJSON
		if st, body := ts.getJSON("/api/v1/orders/all?"+c.query, &got); st != 200 {
			t.Errorf("%s: %d %s", c.query, st, body)
			continue
		}
		var ids []string
		for _, o := range got.Data {
			ids = append(ids, fmt.Sprint(o.ID))
		}
		if strings.Join(ids, " ") != c.ids {
			t.Errorf("%s: ids %v, want %s", c.query, ids, c.ids)
		}
	}
}

func TestOrdersAllRefusesBadFilters(t *testing.T) {
	ts := newOrderListServer(t)
	cases := []struct{ query, message string }{
		{"state=resting", `state: "resting" is not a state`},
		{"side=both", `side must be buy or sell, not "both"`},
		{"keys[]=USDT-BTC", "keys[]:"},
		{"from=yesterday", "from must be an integer"},
		{"from=10&to=5", "to must be after from"},
		{"pageSize=201", "pageSize must be between 1 and 200"},
		{"page=-1", "page must be between 0"},
	}
	for _, c := range cases {
		st, body := ts.getJSON("/api/v1/orders/all?"+c.query, nil)
		if msg := decodeBody[errorResponse](t, []byte(body)).Message; st != 400 || !strings.Contains(msg, c.message) {
			t.Errorf("%s: %d %s, want 400 with %q", c.query, st, body, c.message)
		}
	}
	if st, _ := ts.do("GET", "/api/v1/orders/all", nil, ""); st != 401 {
		t.Errorf("without a token: %d, want 401", st)
	}
}
