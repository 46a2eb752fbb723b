package http

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/projections"
)

// bkAt is minute min of 2024-01-10 (UTC).
func bkAt(day, hh int) time.Time { return time.Date(2024, 1, 10+day, hh, 0, 0, 0, time.UTC) }

// newBooksServer serves a LOFO Ledger and past states over, with
// bot.PNL_METHOD fifo and bot.REPORTING_CURRENCY EUR (rate 1 USDT = 0.5 EUR
// from the first day):
//
//	binance/USDT-SOL  #1 D 10:00 buy 1 @ 10   #2 D 11:00 buy 2 @ 30
//	                  #3 D+1 10:00 buy 1 @ 20 #4 D+1 11:00 buy 1 @ 40
//	                  #5 D+2 10:00 sell 2 @ 35 fee 0.2 USDT
//	balances          D 12:00 USDT 100        D+3 00:00 USDT 170
//
// #5: FIFO takes #1 + 1 of #2 (40): gain 29.8; LOFO #1 + #3 (30): 39.8;
// LIFO #4 + #3 (60): 9.8.
func newBooksServer(t *testing.T, withStates bool, more ...func(ts *testServer)) *testServer {
	return newTestServer(t, append([]func(ts *testServer){func(ts *testServer) {
		l := projections.NewLedger(domain.LOFO)
		ts.Runner.Register(l)
		ts.Server.Ledger = l
		if withStates {
			ts.Server.States = projections.NewStates(ts.Store)
		}
		add := func(at time.Time, stream, typ string, data any) {
			ts.Clock.Set(at)
			ts.appendEvent(stream, domain.NewEvent(ts.Clock, typ, data))
		}
		add(bkAt(0, 0), domain.StreamConfig, domain.TypeConfigReplaced, map[string]any{"config": map[string]any{
			"bot": map[string]any{"REPORTING_CURRENCY": "EUR", "PNL_METHOD": "fifo"}, "pairs": map[string]any{}}})
		add(bkAt(0, 0), domain.RateStream("binance"), domain.TypeRateObserved, domain.RateObserved{Exchange: "binance", Base: "USDT", Quote: "EUR", Rate: domain.MustDecimal("0.5")})
		order := func(id int64, side domain.Side, qty, price, fee string, at time.Time) {
			add(at, domain.OrderStream(id), domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "USDT-SOL",
				Side: side, Kind: domain.KindLimit, Amount: domain.MustDecimal(qty), Price: domain.MustDecimal(price), ClientOrderID: fmt.Sprint(id)})
			add(at, domain.OrderStream(id), domain.TypeOrderFilled, domain.OrderFilled{FillID: "f", Price: domain.MustDecimal(price),
				Quantity: domain.MustDecimal(qty), Fee: domain.MustDecimal(fee), FeeAsset: "USDT"})
		}
		balance := func(usdt string, at time.Time) {
			add(at, domain.BalanceStream("binance"), domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "binance",
				Balances: []domain.AssetBalance{{Asset: "USDT", Available: domain.MustDecimal(usdt)}}})
		}
		order(1, domain.Buy, "1", "10", "0", bkAt(0, 10))
		order(2, domain.Buy, "2", "30", "0", bkAt(0, 11))
		balance("100", bkAt(0, 12))
		order(3, domain.Buy, "1", "20", "0", bkAt(1, 10))
		order(4, domain.Buy, "1", "40", "0", bkAt(1, 11))
		order(5, domain.Sell, "2", "35", "0.2", bkAt(2, 10))
		balance("170", bkAt(3, 0))
		ts.Clock.Set(bkAt(5, 0))
	}}, more...)...)
}

// jdoc is a JSON answer read with exact numbers; at reads a value by a
// dotted path (object keys and array indexes).
type jdoc struct {
	t *testing.T
	v any
}

func (ts *testServer) getDoc(path string) (int, jdoc) {
	ts.t.Helper()
	status, body := ts.do("GET", path, nil, ts.Token)
	d := jdoc{t: ts.t}
	if status == 200 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.UseNumber()
		if err := dec.Decode(&d.v); err != nil {
			ts.t.Fatalf("GET %s: %v", path, err)
		}
	} else {
		d.v = string(body)
	}
	return status, d
}

func (d jdoc) at(path string) any {
	v := d.v
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			fmt.Sscan(k, &i)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// num checks that the number at path is want (exactly, as a decimal).
func (d jdoc) num(path, want string) {
	d.t.Helper()
	n, ok := d.at(path).(json.Number)
	if !ok {
		d.t.Errorf("%s = %v, want the number %s", path, d.at(path), want)
		return
	}
	if domain.MustDecimal(n.String()) != domain.MustDecimal(want) {
		d.t.Errorf("%s = %s, want %s", path, n, want)
	}
}

func (d jdoc) len(path string) int {
	x, _ := d.at(path).([]any)
	return len(x)
}

func TestRealizedReportRoute(t *testing.T) {
	ts := newBooksServer(t, true)
	// The default method is bot.PNL_METHOD (fifo), the currency EUR.
	st, r := ts.getDoc("/api/v1/reports/realized?from=2024-01-12&to=2024-01-12&timezone=Europe/Amsterdam")
	if st != 200 || r.at("method") != "fifo" || r.len("rows") != 1 || r.len("rows.0.lots") != 2 || r.at("inCurrency.currency") != "EUR" {
		t.Fatalf("%d %v", st, r.v)
	}
	r.num("disposals", "1")
	r.num("rows.0.gain", "29.8")
	// 35 − 0.1 − 10 = 24.9 and 35 − 0.1 − 30 = 4.9, all at 0.5: 12.45 and 2.45
	r.num("inCurrency.total.gain", "14.9")
	r.num("rows.0.lots.0.inCurrency.gain", "12.45")
	for method, want := range map[string]string{"lifo": "9.8", "lofo": "39.8", "hifo": "-0.2", "average": "17.8"} {
		st, r := ts.getDoc("/api/v1/reports/realized?method=" + method)
		if st != 200 {
			t.Fatalf("%s: %d %v", method, st, r.v)
		}
		r.num("rows.0.gain", want)
	}
	// A period without the sell, and pages past the end.
	st, r = ts.getDoc("/api/v1/reports/realized?to=2024-01-11")
	if st != 200 || r.len("rows") != 0 {
		t.Errorf("before the sell: %d %v", st, r.v)
	}
	r.num("disposals", "0")
	st, r = ts.getDoc("/api/v1/reports/realized?page=3&pageSize=1&currency=none")
	if st != 200 || r.len("rows") != 0 || r.at("inCurrency") != nil {
		t.Errorf("page 3: %d %v", st, r.v)
	}
	r.num("disposals", "1")
	// format=csv is the realized export.
	resp := ts.request("GET", "/api/v1/reports/realized?format=csv&method=lifo", nil, map[string]string{"Authorization": bearer(ts.Token)})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(b)), "\r\n")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || lines[0] != books.RealizedHeader || len(lines) != 3 {
		t.Errorf("csv: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

func TestStatementRoute(t *testing.T) {
	ts := newBooksServer(t, true)
	// The second day on: opening #1 and #2 (3 for 70), acquired #3 #4 (2
	// for 60), disposed under LOFO #1 + #3 (30): closing 3 for 100.
	st, s := ts.getDoc("/api/v1/reports/statement?from=2024-01-11&method=lofo&currency=EUR")
	if st != 200 || s.len("lines") != 1 {
		t.Fatalf("%d %v", st, s.v)
	}
	s.num("lines.0.opening.costBasis", "70")
	s.num("lines.0.acquired.cost", "60")
	s.num("lines.0.disposed.costBasis", "30")
	s.num("lines.0.closing.costBasis", "100")
	s.num("lines.0.closing.quantity", "3")
	s.num("lines.0.realizedGain", "39.8")
	s.num("inCurrency.total.realizedGain", "19.9")
}

// Every export answers its CSV with its header, names the file, and gives
// the same bytes twice.
func TestExportRoutes(t *testing.T) {
	ts := newBooksServer(t, true)
	for _, f := range books.Formats {
		get := func() (string, string, string) {
			resp := ts.request("GET", "/api/v1/export/"+string(f)+".csv?from=2024-01-01&to=2024-12-31&timezone=UTC&method=fifo", nil,
				map[string]string{"Authorization": bearer(ts.Token)})
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d %s", f, resp.StatusCode, b)
			}
			return string(b), resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition")
		}
		a, ctype, disp := get()
		b, _, _ := get()
		if a != b {
			t.Errorf("%s: two exports differ", f)
		}
		if !strings.HasPrefix(a, books.Header(f)+"\r\n") || !strings.HasPrefix(ctype, "text/csv") ||
			disp != `attachment; filename="tradeledger-`+string(f)+`-2024-01-01-to-2024-12-31-fifo.csv"` {
			t.Errorf("%s: %s %s\n%.200s", f, ctype, disp, a)
		}
		rows := strings.Count(a, "\r\n") - 1
		if want := map[books.Format]int{books.FormatRealized: 2}[f]; want == 0 && rows != 5 || want != 0 && rows != want {
			t.Errorf("%s: %d rows", f, rows)
		}
	}
}

// An export's file name says its period as dates in the request's zone
// (the last day the file holds, not the exclusive end), its method, and
// the as-of day; open ends say so.
func TestExportFileNames(t *testing.T) {
	ts := newBooksServer(t, true)
	for _, c := range []struct{ query, want string }{
		{"from=2024-01-01&to=2024-03-31&timezone=Asia/Tokyo&method=lifo", "tradeledger-fills-2024-01-01-to-2024-03-31-lifo.csv"},
		{"method=hifo", "tradeledger-fills-start-to-now-hifo.csv"},
		{"from=2024-01-10T12:30:00Z&method=lofo", "tradeledger-fills-2024-01-10T12-30-to-now-lofo.csv"},
		{"from=2024-01-01&method=fifo&timezone=Europe/Amsterdam&asOf=2024-01-11T12:00:00Z", "tradeledger-fills-2024-01-01-to-2024-01-11T13-00-fifo.csv"},
		{"from=2024-01-01&to=2024-01-10&method=fifo&timezone=Europe/Amsterdam&asOf=2024-01-11T12:00:00Z", "tradeledger-fills-2024-01-01-to-2024-01-10-fifo-as-of-2024-01-11T13-00.csv"},
	} {
		resp := ts.request("GET", "/api/v1/export/fills.csv?"+c.query, nil, map[string]string{"Authorization": bearer(ts.Token)})
		resp.Body.Close()
		if got, want := resp.Header.Get("Content-Disposition"), `attachment; filename="`+c.want+`"`; resp.StatusCode != 200 || got != want {
			t.Errorf("%s: %d %s, want %s", c.query, resp.StatusCode, got, want)
		}
	}
}

// Bad parameters are a 400 naming the parameter, before any byte of CSV.
func TestBooksBadInput(t *testing.T) {
	ts := newBooksServer(t, true)
	for _, c := range []struct{ path, names string }{
		{"/api/v1/reports/realized?method=fofo", "method"},
		{"/api/v1/reports/statement?from=yesterday", "from"},
		{"/api/v1/reports/statement?from=2024-02-01&to=2024-01-01", "to must be after from"},
		{"/api/v1/reports/realized?timezone=Mars/Olympus", "timezone"},
		{"/api/v1/reports/realized?currency=EU-R", "currency"},
		{"/api/v1/reports/realized?pageSize=5000", "pageSize"},
		{"/api/v1/reports/realized?holdingPeriodDays=0", "holdingPeriodDays"},
		{"/api/v1/reports/realized?keys=binance", "keys"},
		{"/api/v1/reports/realized?format=xml", "format"},
		{"/api/v1/export/koinly.csv?asOf=soon", "asOf"},
		{"/api/v1/pnl/sum?exchange=binance&startTimestamp=0&endTimestamp=1&method=x", "method"},
		{"/api/v1/reports/realized?scope=wallet", "scope: cost basis scope"},
		{"/api/v1/reports/statement?scope=account&scope=universal", "scope\\\" is given 2 times"},
		{"/api/v1/export/koinly.csv?scope=pooled", "scope"},
	} {
		status, body := ts.do("GET", c.path, nil, ts.Token)
		if status != 400 || !strings.Contains(string(body), c.names) {
			t.Errorf("%s = %d %s, want 400 naming %s", c.path, status, body, c.names)
		}
	}
}

// asOf= answers as the service would have: the overview, the sum, the
// balances and the reports as of a time before the sell, marked with
// X-As-Of; method= answers pnl/overview under another method.
func TestAsOfReads(t *testing.T) {
	ts := newBooksServer(t, true)
	asOf := bkAt(1, 23).UnixMilli() // after #4, before #5
	q := "?asOf=" + fmt.Sprint(asOf)
	overview := func(query string) (map[string]any, string) {
		resp := ts.request("POST", "/api/v1/pnl/overview"+query, map[string]any{"timezone": "UTC", "keys": []string{"All"}},
			map[string]string{"Authorization": bearer(ts.Token)})
		defer resp.Body.Close()
		var o map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != 200 {
			t.Fatalf("overview%s: %d %v", query, resp.StatusCode, err)
		}
		return o, resp.Header.Get(AsOfHeader)
	}
	live, mark := overview("")
	if tot := live["total"].(map[string]any); tot["pnl"] != 39.8 || mark != "" {
		t.Fatalf("live LOFO overview total %v, header %q", tot, mark)
	}
	past, mark := overview(q)
	if tot := past["total"].(map[string]any); tot["pnl"] != 0.0 || tot["numberOfTrades"] != 4.0 || mark != fmt.Sprint(asOf) {
		t.Errorf("as-of overview total %v, header %q", tot, mark)
	}
	// "today" is relative to asOf: D+1, with no pnl.
	if today := past["today"].(map[string]any); today["pnl"] != 0.0 {
		t.Errorf("as-of today %v", today)
	}
	fifo, mark := overview("?method=fifo")
	if tot := fifo["total"].(map[string]any); tot["pnl"] != 29.8 || mark != "" {
		t.Errorf("fifo overview total %v, header %q", tot, mark)
	}
	if again, _ := overview("?method=lofo"); again["total"].(map[string]any)["pnl"] != 39.8 {
		t.Errorf("method=lofo (the live method) %v", again["total"])
	}
	// asOf at or after the server's clock is now.
	if _, mark := overview("?asOf=" + fmt.Sprint(bkAt(9, 0).UnixMilli())); mark != "" {
		t.Errorf("a future asOf marked %q", mark)
	}
	if st, sum := ts.getDoc("/api/v1/pnl/sum?exchange=binance&startTimestamp=0&endTimestamp=" + fmt.Sprint(bkAt(9, 0).UnixMilli()) + "&method=lifo"); st != 200 || sum.at("tournamentData.sommaPnl") != "9.80000000" {
		t.Errorf("sum lifo: %d %v", st, sum.v)
	}
	status, body := ts.do("POST", "/api/v1/balances"+q, nil, ts.Token)
	var bal []map[string]any
	json.Unmarshal(body, &bal)
	if status != 200 || len(bal) != 1 || bal[0]["Available Qty"] != "100.00000000" {
		t.Errorf("balances as of: %d %s", status, body)
	}
	st, r := ts.getDoc("/api/v1/reports/realized" + q)
	if st != 200 {
		t.Fatalf("realized as of: %d %v", st, r.v)
	}
	r.num("disposals", "0")
	if to, _ := r.at("to").(json.Number); to.String() != fmt.Sprint(asOf+1) {
		t.Errorf("to = %v, want asOf + 1 ms", r.at("to"))
	}
	// The same as-of reads again build nothing more.
	before := ts.Server.States.Builds()
	overview(q)
	ts.getDoc("/api/v1/reports/statement" + q)
	if ts.Server.States.Builds() != before {
		t.Errorf("repeated as-of reads built %d more states", ts.Server.States.Builds()-before)
	}
}

// Without past states, asOf and another method are 503; the live reads
// are unchanged.
func TestAsOfWithoutStates(t *testing.T) {
	ts := newBooksServer(t, false)
	status, body := ts.do("POST", "/api/v1/pnl/overview?asOf=1", map[string]any{"timezone": "UTC", "keys": []string{"All"}}, ts.Token)
	if status != 503 || !strings.Contains(string(body), "past time") {
		t.Errorf("overview asOf without states: %d %s", status, body)
	}
	if st, _ := ts.getDoc("/api/v1/reports/realized"); st != 200 {
		t.Errorf("live report: %d", st)
	}
	if st, _ := ts.getDoc("/api/v1/reports/realized?asOf=" + url.QueryEscape("2024-01-11T00:00:00Z")); st != 503 {
		t.Errorf("report asOf without states: %d", st)
	}
}

// scope= chooses the cost basis scope of the reports and exports (the
// answer says which): account by default, bot.COST_BASIS_SCOPE when set,
// the parameter over both.
func TestBooksScope(t *testing.T) {
	ts := newBooksServer(t, false)
	for q, want := range map[string]string{"": "account", "?scope=universal": "universal", "?scope=ACCOUNT": "account"} {
		for _, r := range []string{"realized", "statement"} {
			st, doc := ts.getDoc("/api/v1/reports/" + r + q)
			if st != 200 || doc.at("scope") != want {
				t.Errorf("%s%s: %d scope %v, want %s", r, q, st, doc.at("scope"), want)
			}
		}
	}
	_, doc := ts.getDoc("/api/v1/reports/statement?scope=universal")
	if k := doc.at("lines.0.key"); k != "*/USDT-SOL" {
		t.Errorf("a universal statement's line %v, want */USDT-SOL (the pair across accounts)", k)
	}
	resp := ts.request("GET", "/api/v1/export/realized.csv?scope=universal", nil, map[string]string{"Authorization": bearer(ts.Token)})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), ",universal\r\n") {
		t.Errorf("realized.csv?scope=universal: %d %.300s", resp.StatusCode, body)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "-fifo-universal.csv") {
		t.Errorf("file name %s: the scope when not the default", cd)
	}
}
