package http

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/projections"
)

var rmDay = time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)

func rmAt(day, hh, mm int) time.Time {
	return rmDay.AddDate(0, 0, day).Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
}

// newLedgerServer serves a ledger fed with: USDT-BTC buy 1@100 fee 0.1,
// buy 1@90 fee 0.09, sell 1.5@110 fee 0.165 (LOFO pnl 24.695); BTC-ETH (quote
// BTC) sell 1@0.05 with no lot; a balance snapshot.
func newLedgerServer(t *testing.T) *testServer {
	return newTestServer(t, func(ts *testServer) {
		l := projections.NewLedger(domain.LOFO)
		ts.Runner.Register(l)
		ts.Server.Ledger = l
		add := func(at time.Time, stream, typ string, data any) {
			ts.Clock.Set(at)
			ts.appendEvent(stream, domain.NewEvent(ts.Clock, typ, data))
		}
		order := func(id int64, pair string, side domain.Side, amount string, price string, fee string, at time.Time) {
			add(at, domain.OrderStream(id), domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: pair,
				Side: side, Kind: domain.KindLimit, Amount: decimal.MustDecimal(amount), Price: decimal.MustDecimal(price), ClientOrderID: fmt.Sprint(id)})
			add(at, domain.OrderStream(id), domain.TypeOrderFilled, domain.OrderFilled{FillID: "f", Price: decimal.MustDecimal(price),
				Quantity: decimal.MustDecimal(amount), Fee: decimal.MustDecimal(fee)})
		}
		order(1, "USDT-BTC", domain.Buy, "1", "100", "0.1", rmAt(0, 10, 0))
		order(2, "USDT-BTC", domain.Buy, "1", "90", "0.09", rmAt(0, 18, 10))
		order(3, "USDT-BTC", domain.Sell, "1.5", "110", "0.165", rmAt(0, 18, 20))
		order(4, "BTC-ETH", domain.Sell, "1", "0.05", "0.00005", rmAt(0, 20, 0))
		add(rmAt(0, 21, 0), domain.BalanceStream("binance"), domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "binance",
			Balances: []domain.AssetBalance{{Asset: "BTC", Available: decimal.MustDecimal("0.5")}, {Asset: "USDT", Available: decimal.MustDecimal("10")}}})
		ts.Clock.Set(rmAt(1, 1, 0))
	})
}

func (ts *testServer) getJSON(path string, into any) (int, string) {
	ts.t.Helper()
	status, body := ts.do("GET", path, nil, ts.Token)
	if status == 200 && into != nil {
		if err := json.Unmarshal(body, into); err != nil {
			ts.t.Fatalf("GET %s: %v in %s", path, err, body)
		}
	}
	return status, string(body)
}

func TestReadModelEndpoints(t *testing.T) {
	ts := newLedgerServer(t)
	key := url.QueryEscape("binance/USDT-BTC")

	var all struct{ Data []map[string]any }
	if st, body := ts.getJSON("/api/v1/orders?key="+key, &all); st != 200 || len(all.Data) != 3 {
		t.Fatalf("orders: %d %s", st, body)
	}
	if r := all.Data[0]; r["type"] != "sell" || r["pnl"] != 24.695 || r["costProceed"] != 164.835 || r["id"] != 3.0 {
		t.Errorf("newest record = %v", r)
	}
	var page struct {
		Total, Page int
		Data        []map[string]any
	}
	if st, body := ts.getJSON("/api/v1/orders/page?key="+key+"&page=1&pageSize=2", &page); st != 200 || page.Total != 3 || page.Page != 1 || len(page.Data) != 1 || page.Data[0]["id"] != 1.0 {
		t.Errorf("orders/page: %d %s", st, body)
	}
	var multi struct {
		Total, TotalCount, Page int
		Data                    []map[string]any
	}
	mk := "keys[]=" + key + "&keys[]=" + url.QueryEscape("binance/BTC-ETH")
	if st, body := ts.getJSON("/api/v1/orders/page/multi?"+mk+"&page=0&pageSize=3", &multi); st != 200 || multi.Total != 4 || multi.TotalCount != 2 || len(multi.Data) != 3 || multi.Data[0]["pair"] != "BTC-ETH" {
		t.Errorf("orders/page/multi: %d %s", st, body)
	}
	var day struct {
		Days              []string
		Orders            []int
		CloseOrders       []int
		OrderRecords      []map[string]any
		CloseOrderRecords []map[string]any
		Summaries         []map[string]any
	}
	// Kathmandu: now (D+1 01:00Z) is D+1 06:45 local; D+1 local holds #3 (D 18:20Z = 00:05) and #4.
	if st, body := ts.getJSON("/api/v1/orders/day?timezone=Asia%2FKathmandu&"+mk, &day); st != 200 || len(day.OrderRecords) != 2 || len(day.CloseOrderRecords) != 1 ||
		len(day.Summaries) != 2 || day.Summaries[0]["pnl"] != 24.695 || len(day.Days) != 1 || day.Orders[0] != 2 || day.CloseOrders[0] != 1 {
		t.Errorf("orders/day: %d %s", st, body)
	}

	for _, path := range []string{
		"/api/v1/orders", "/api/v1/orders?key=nokey", "/api/v1/orders?key=binance%2FBTC",
		"/api/v1/orders/page?key=" + key + "&page=-1&pageSize=2", "/api/v1/orders/page?key=" + key + "&page=0&pageSize=1001",
		"/api/v1/orders/page?key=" + key + "&page=x&pageSize=2", "/api/v1/orders/page/multi?page=0&pageSize=2",
		"/api/v1/orders/day?timezone=Mars%2FBase&" + mk, "/api/v1/orders/day?" + mk, "/api/v1/orders/day?timezone=UTC",
		"/api/v1/pnl/daily?key=" + key + "&startTimestamp=5&endTimestamp=1", "/api/v1/pnl/sum?startTimestamp=0&endTimestamp=1",
		"/api/v1/pnl/daily/paginated?key=" + key + "&pageNum=0&pageSize=5&endTime=1", "/api/v1/pnl/total",
		"/api/v1/chart/marks?exchange=binance&pair=USDT-BTC&interval=0&startTime=0&endTime=1",
	} {
		if st, body := ts.getJSON(path, nil); st != 400 {
			t.Errorf("GET %s = %d %s, want 400", path, st, body)
		}
	}

	// PNL
	// Mixed quotes: answered in the reporting currency, with a per-quote
	// breakdown (projections/pnlconv_test.go has the figures).
	var mixed struct {
		Unit     string
		PerQuote map[string]json.RawMessage
	}
	st, body := ts.do("POST", "/api/v1/pnl/overview", map[string]any{"timezone": "UTC", "keys": []string{"All"}}, ts.Token)
	if err := json.Unmarshal(body, &mixed); st != 200 || err != nil || mixed.Unit != "USDT" || len(mixed.PerQuote) != 2 {
		t.Errorf("overview of mixed quotes = %d %s, want 200 in USDT with perQuote", st, body)
	}
	mixed.PerQuote = nil
	if st, body := ts.getJSON("/api/v1/pnl/sum?exchange=binance&startTimestamp=0&endTimestamp=9999999999999", &mixed); st != 200 || mixed.Unit != "USDT" || len(mixed.PerQuote) != 2 {
		t.Errorf("pnl/sum over mixed quotes = %d %s, want 200 in USDT with perQuote", st, body)
	}
	var ov struct {
		Total struct {
			Pnl     float64
			WinRate string
		}
		Yesterday struct{ Pnl float64 }
		Unit      string
	}
	st, body = ts.do("POST", "/api/v1/pnl/overview", map[string]any{"timezone": "UTC", "keys": []string{"All"}, "quote": "USDT"}, ts.Token)
	if err := json.Unmarshal(body, &ov); st != 200 || err != nil || ov.Total.Pnl != 24.695 || ov.Yesterday.Pnl != 24.695 || ov.Unit != "USDT" || ov.Total.WinRate != "100.00" {
		t.Errorf("overview = %d %s", st, body)
	}
	for _, b := range []map[string]any{{"keys": []string{"All"}}, {"timezone": "UTC"}, {"timezone": "Nowhere/X", "keys": []string{"All"}},
		{"timezone": "UTC", "keys": []string{"bad"}}, {"timezone": "UTC", "keys": []string{"All"}, "dateRange": map[string]any{"startDate": 5, "endDate": 1}}} {
		if st, body := ts.do("POST", "/api/v1/pnl/overview", b, ts.Token); st != 400 {
			t.Errorf("overview %v = %d %s, want 400", b, st, body)
		}
	}
	var daily struct {
		DateRangeDailyHistory          []map[string]any
		UnmatchedBaseValuePerDateRange float64
	}
	if st, body := ts.getJSON("/api/v1/pnl/daily?key="+url.QueryEscape("binance/BTC-ETH")+"&startTimestamp=0&endTimestamp=9999999999999", &daily); st != 200 || daily.UnmatchedBaseValuePerDateRange != 0.05 || len(daily.DateRangeDailyHistory) != 1 {
		t.Errorf("pnl/daily = %d %s", st, body)
	}
	var pg struct {
		TotalSize int
		Data      [][]any
	}
	if st, body := ts.getJSON("/api/v1/pnl/daily/paginated?key="+key+"&pageNum=1&pageSize=5&endTime=9999999999999", &pg); st != 200 || pg.TotalSize != 1 || pg.Data[0][1] != 24.695 {
		t.Errorf("pnl/daily/paginated = %d %s", st, body)
	}
	var sum struct {
		TournamentData struct{ SommaPnl, Invested string }
		Data           []map[string]any
	}
	// invested = 90.09 + 0.5×100.1 = 140.14
	if st, body := ts.getJSON("/api/v1/pnl/sum?exchange="+key+"&startTimestamp=0&endTimestamp=9999999999999", &sum); st != 200 || sum.TournamentData.SommaPnl != "24.69500000" || sum.TournamentData.Invested != "140.14000000" {
		t.Errorf("pnl/sum = %d %s", st, body)
	}
	if st, body := ts.getJSON("/api/v1/pnl/sum?exchange=binance&quote=USDT&startTimestamp=0&endTimestamp=9999999999999", &sum); st != 200 || sum.TournamentData.SommaPnl != "24.69500000" || len(sum.Data) != 1 {
		t.Errorf("pnl/sum by exchange = %d %s", st, body)
	}
	var tot map[string]any
	if st, body := ts.getJSON("/api/v1/pnl/total?key="+key, &tot); st != 200 || tot["pnl"] != 24.695 || tot["unit"] != "USDT" || tot["ABP"] != 100.1 {
		t.Errorf("pnl/total = %d %s", st, body)
	}

	// Assets: 0.5 BTC × 110 + 10 USDT = 65
	var pts []map[string]any
	st, body = ts.do("POST", "/api/v1/assets/total", map[string]any{"exchange": "binance", "base": "USDT", "start": 0, "end": rmAt(2, 0, 0).UnixMilli()}, ts.Token)
	if err := json.Unmarshal(body, &pts); st != 200 || err != nil || len(pts) != 1 || pts[0]["amount"] != 65.0 || pts[0]["base_key"] != "binance/USDT" {
		t.Errorf("assets/total = %d %s", st, body)
	}
	if st, body := ts.do("POST", "/api/v1/assets/total", map[string]any{"exchange": "binance", "base": "USDT", "start": 0}, ts.Token); st != 400 {
		t.Errorf("assets/total without end = %d %s", st, body)
	}

	// Marks
	var marks []struct {
		ID, Label, Color string
		Time             int64
		Tooltip          []string
	}
	q := fmt.Sprintf("/api/v1/chart/marks?exchange=binance&pair=USDT-BTC&interval=15&startTime=%d&endTime=%d", rmAt(0, 18, 0).Unix(), rmAt(0, 19, 0).Unix())
	if st, body := ts.getJSON(q, &marks); st != 200 || len(marks) != 2 || marks[1].Label != "▼" || marks[1].Time != rmAt(0, 18, 20).Unix() || len(marks[1].Tooltip) != 4 {
		t.Errorf("chart/marks = %d %s", st, body)
	}
	// A new fill changes the (cached) overview: sell 0.5 @ 120 fee 0 against A's
	// remaining {0.5, 50.05}: pnl 60 − 50.05 = 9.95; total 24.695 + 9.95 = 34.645.
	ts.Clock.Set(rmAt(1, 1, 5))
	ts.appendEvent(domain.OrderStream(5), domain.NewEvent(ts.Clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: 5,
		Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindLimit, Amount: decimal.MustDecimal("0.5"), Price: decimal.MustDecimal("120")}))
	ts.appendEvent(domain.OrderStream(5), domain.NewEvent(ts.Clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "g",
		Price: decimal.MustDecimal("120"), Quantity: decimal.MustDecimal("0.5")}))
	st, body = ts.do("POST", "/api/v1/pnl/overview", map[string]any{"timezone": "UTC", "keys": []string{"All"}, "quote": "USDT"}, ts.Token)
	if err := json.Unmarshal(body, &ov); st != 200 || err != nil || ov.Total.Pnl != 34.645 {
		t.Errorf("overview after a new fill = %d %s", st, body)
	}
}

// Order pages go out whole, with their Content-Length (no chunked encoding),
// and a recycled buffer never leaks one response into the next.
func TestWriteRecordsLengthAndReuse(t *testing.T) {
	recs := make([]projections.OrderRecord, 40) // ≈ 16 KB, over net/http's 4 KB buffer
	for i := range recs {
		recs[i] = projections.OrderRecord{Time: int64(i), Pair: "USDT-BTC", Type: domain.Buy, ID: int64(i + 1), Key: "binance/USDT-BTC",
			Rate: decimal.MustDecimal("100.5"), Amount: decimal.MustDecimal("0.25")}
	}
	for _, n := range []int{40, 1, 0} {
		rec := httptest.NewRecorder()
		writeRecords(rec, `{"total":7,`, recs[:n])
		body := rec.Body.Bytes()
		if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(body)) {
			t.Fatalf("%d records: Content-Length %q for a %d-byte body", n, got, len(body))
		}
		var page struct {
			Total int
			Data  []struct {
				ID   int64
				Rate float64
			}
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("%d records: %v in %s", n, err, body)
		}
		if page.Total != 7 || len(page.Data) != n || (n > 0 && (page.Data[n-1].ID != int64(n) || page.Data[0].Rate != 100.5)) {
			t.Fatalf("%d records: decoded %+v", n, page)
		}
	}
}

// orders?key= with more records than one piece streams them all, newest
// first, as one valid JSON document equal to the whole history.
func TestOrdersLongHistoryStreams(t *testing.T) {
	const n = 2*ordersPiece + 500
	l := projections.NewLedger(domain.LOFO)
	for i := int64(1); i <= n; i++ {
		when := rmAt(0, 0, 0).Add(time.Duration(i) * time.Second).UnixMilli()
		req := domain.Event{Stream: domain.OrderStream(i), Type: domain.TypeOrderRequested, Time: when, Position: uint64(2*i - 1),
			Data: []byte(fmt.Sprintf(`{"orderId":%d,"exchange":"binance","pair":"USDT-BTC","side":"buy","kind":"limit","amount":"1","price":"100","clientOrderId":"c"}`, i))}
		fill := domain.Event{Stream: domain.OrderStream(i), Type: domain.TypeOrderFilled, Time: when, Position: uint64(2 * i),
			Data: []byte(`{"fillId":"f","price":"100","quantity":"1","fee":"0","feeAsset":"USDT"}`)}
		if err := l.Apply(&req); err != nil {
			t.Fatal(err)
		}
		if err := l.Apply(&fill); err != nil {
			t.Fatal(err)
		}
	}
	ts := newTestServer(t, func(ts *testServer) { ts.Server.Ledger = l })
	var all struct{ Data []struct{ ID int64 } }
	if st, body := ts.getJSON("/api/v1/orders?key="+url.QueryEscape("binance/USDT-BTC"), &all); st != 200 || len(all.Data) != n {
		t.Fatalf("orders: status %d, %d records (want %d) %.200s", st, len(all.Data), n, body)
	}
	for i, r := range all.Data {
		if r.ID != int64(n-i) {
			t.Fatalf("record %d is order %d, want %d", i, r.ID, n-i)
		}
	}
}
