package http

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// postJSON sends a POST with body (nil: none) to path and returns the
// status, the X-As-Of header and the body.
func (ts *testServer) postJSON(path string, body any) (int, string, []byte) {
	ts.t.Helper()
	resp := ts.request("POST", path, body, map[string]string{"Authorization": bearer(ts.Token)})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(AsOfHeader), b
}

// totalPnl reads total.pnl of an overview body.
func totalPnl(t *testing.T, body []byte) any {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatalf("overview: %v %s", err, body)
	}
	return o["total"].(map[string]any)["pnl"]
}

// Issue 42: asOf and method in the body of the POST routes that take them
// in the query (pnl/overview, balances) answer as the query does; the same
// value in both is fine, two different ones are a 400 naming the field.
func TestAsOfAndMethodInThePostBody(t *testing.T) {
	ts := newBooksServer(t, true)
	asOf := bkAt(1, 23).UnixMilli() // after #4, before #5: no pnl yet
	overview := func(query string, extra map[string]any) (int, string, []byte) {
		body := map[string]any{"timezone": "UTC", "keys": []string{"All"}}
		for k, v := range extra {
			body[k] = v
		}
		return ts.postJSON("/api/v1/pnl/overview"+query, body)
	}
	// The request: asOf in the body answers the past, marked.
	st, mark, body := overview("", map[string]any{"asOf": asOf})
	if st != 200 || mark != fmt.Sprint(asOf) || totalPnl(t, body) != 0.0 {
		t.Fatalf("asOf in the body: %d %q pnl %v, want the past (0) marked %d", st, mark, totalPnl(t, body), asOf)
	}
	_, _, byQuery := overview(fmt.Sprintf("?asOf=%d", asOf), nil)
	if string(body) != string(byQuery) {
		t.Fatalf("asOf in the body answers\n%s\nin the query\n%s", body, byQuery)
	}
	// As a string too (RFC 3339 or ms), and the same instant in both.
	rfc := bkAt(1, 23).Format("2006-01-02T15:04:05Z")
	for _, c := range []struct {
		query string
		asOf  any
	}{{"", rfc}, {"", fmt.Sprint(asOf)}, {fmt.Sprintf("?asOf=%d", asOf), asOf}, {"?asOf=" + rfc, asOf}} {
		if st, mark, b := overview(c.query, map[string]any{"asOf": c.asOf}); st != 200 || mark != fmt.Sprint(asOf) || string(b) != string(byQuery) {
			t.Errorf("query %q body asOf %v: %d %q", c.query, c.asOf, st, mark)
		}
	}
	// method in the body, alone and with asOf.
	_, _, fifoQ := overview("?method=fifo", nil)
	if st, _, b := overview("", map[string]any{"method": "fifo"}); st != 200 || totalPnl(t, b) != 29.8 || string(b) != string(fifoQ) {
		t.Errorf("method in the body: %d pnl %v, want FIFO's 29.8", st, totalPnl(t, b))
	}
	if st, _, b := overview("?method=FIFO", map[string]any{"method": "fifo"}); st != 200 || totalPnl(t, b) != 29.8 {
		t.Errorf("the same method in both: %d %s", st, b)
	}
	// Different values: 400 naming the field; nothing answered.
	for _, c := range []struct {
		query string
		body  map[string]any
		field string
	}{
		{fmt.Sprintf("?asOf=%d", asOf), map[string]any{"asOf": asOf - 1}, "asOf"},
		{"?method=lifo", map[string]any{"method": "fifo"}, "method"},
		{"", map[string]any{"asOf": -5}, "asOf"},
		{"", map[string]any{"asOf": 1.5}, "asOf"},
		{"", map[string]any{"asOf": true}, "asOf"},
		{"", map[string]any{"asOf": "yesterday"}, "asOf"},
		{"", map[string]any{"method": "best"}, "method"},
		{"", map[string]any{"method": 3}, "method"},
	} {
		st, _, b := overview(c.query, c.body)
		if st != 400 || !strings.Contains(string(b), c.field) {
			t.Errorf("query %q body %v: %d %s, want 400 naming %s", c.query, c.body, st, b, c.field)
		}
	}

	// balances: no body (the spec's request), an empty object or a null
	// asOf are the live read (here a server without a trader: 503).
	liveSt, _, liveB := ts.postJSON("/api/v1/balances", nil)
	for _, body := range []any{map[string]any{}, map[string]any{"asOf": nil}, map[string]any{"asOf": bkAt(9, 0).UnixMilli()}} {
		if st, mark, b := ts.postJSON("/api/v1/balances", body); st != liveSt || mark != "" || string(b) != string(liveB) {
			t.Errorf("balances with body %v: %d %q %s, want the live answer %d %s", body, st, mark, b, liveSt, liveB)
		}
	}
	st, mark, b := ts.postJSON("/api/v1/balances", map[string]any{"asOf": asOf})
	_, _, bq := ts.postJSON(fmt.Sprintf("/api/v1/balances?asOf=%d", asOf), nil)
	if st != 200 || mark != fmt.Sprint(asOf) || !strings.Contains(string(b), `"Available Qty":"100.00000000"`) || string(b) != string(bq) {
		t.Errorf("balances asOf in the body: %d %q %s (query: %s)", st, mark, b, bq)
	}
	if st, _, b := ts.postJSON(fmt.Sprintf("/api/v1/balances?asOf=%d", asOf), map[string]any{"asOf": asOf + 1}); st != 400 || !strings.Contains(string(b), "asOf") {
		t.Errorf("balances with two asOf: %d %s, want 400 naming asOf", st, b)
	}
}

// Issue 36 (hardening): asOf=0 is the epoch, an empty cut — nothing had
// happened yet — not "now".
func TestAsOfZeroIsTheEpoch(t *testing.T) {
	ts := newBooksServer(t, true)
	st, mark, b := ts.postJSON("/api/v1/balances?asOf=0", nil)
	if st != 200 || mark != "0" || strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("balances asOf=0: %d %q %s, want no balance, marked 0", st, mark, b)
	}
	st, mark, b = ts.postJSON("/api/v1/pnl/overview", map[string]any{"timezone": "UTC", "keys": []string{"All"}, "asOf": 0})
	var o map[string]any
	json.Unmarshal(b, &o)
	if st != 200 || mark != "0" || o["total"].(map[string]any)["numberOfTrades"] != 0.0 || totalPnl(t, b) != 0.0 {
		t.Errorf("overview asOf 0: %d %q %s, want no trades", st, mark, b)
	}
	if st, r := ts.getDoc("/api/v1/reports/realized?asOf=0"); st != 200 {
		t.Errorf("realized asOf=0: %d", st)
	} else {
		r.num("disposals", "0")
	}
	if st, sum := ts.getDoc("/api/v1/pnl/sum?exchange=binance&startTimestamp=0&endTimestamp=" + fmt.Sprint(bkAt(9, 0).UnixMilli()) + "&asOf=0"); st != 200 || sum.at("tournamentData.sommaPnl") != "0.00000000" {
		t.Errorf("pnl/sum asOf=0: %d %v", st, sum.v)
	}
}

// Issue 36 (hardening): a single-valued query parameter given twice is a
// 400 naming it; the repeated ones (keys[] …) still take many values.
func TestRepeatedQueryParameter(t *testing.T) {
	ts := newBooksServer(t, true)
	for _, c := range []struct{ method, path, name string }{
		{"POST", "/api/v1/balances?asOf=1&asOf=2", "asOf"},
		{"POST", "/api/v1/pnl/overview?method=fifo&method=lifo", "method"},
		{"GET", "/api/v1/pnl/sum?exchange=binance&startTimestamp=0&endTimestamp=9&method=fifo&method=fifo", "method"},
		{"GET", "/api/v1/orders?key=binance%2FUSDT-SOL&key=binance%2FUSDT-BTC", "key"},
		{"GET", "/api/v1/orders/page?key=binance%2FUSDT-SOL&page=0&page=1&pageSize=10", "page"},
		{"GET", "/api/v1/reports/realized?timezone=UTC&timezone=Europe/Paris", "timezone"},
	} {
		var body any
		if strings.Contains(c.path, "overview") {
			body = map[string]any{"timezone": "UTC", "keys": []string{"All"}}
		}
		st, b := ts.do(c.method, c.path, body, ts.Token)
		if st != 400 || !strings.Contains(string(b), `parameter \"`+c.name+`\" is given 2 times`) {
			t.Errorf("%s %s: %d %s, want 400 naming %s", c.method, c.path, st, b, c.name)
		}
	}
	if st, b := ts.do("GET", "/api/v1/orders/page/multi?keys[]=binance%2FUSDT-SOL&keys[]=binance%2FUSDT-BTC&page=0&pageSize=10", nil, ts.Token); st != 200 {
		t.Errorf("keys[] repeated: %d %s", st, b)
	}
}

// pnl/daily and pnl/sum read the same time range: startTimestamp and
// endTimestamp required, neither negative, the end not before the start;
// a 400 names the one at fault.
func TestPnlTimestampsRefused(t *testing.T) {
	ts := newBooksServer(t, true)
	for _, path := range []string{"/api/v1/pnl/daily?key=binance%2FUSDT-BTC&", "/api/v1/pnl/sum?exchange=binance&"} {
		for _, c := range []struct{ query, name string }{
			{"endTimestamp=9", "startTimestamp"},
			{"startTimestamp=-1&endTimestamp=9", "startTimestamp"},
			{"startTimestamp=10", "endTimestamp"},
			{"startTimestamp=10&endTimestamp=9", "endTimestamp"},
		} {
			st, b := ts.do("GET", path+c.query, nil, ts.Token)
			if st != 400 || !strings.Contains(string(b), c.name) {
				t.Errorf("%s%s: %d %s, want 400 naming %s", path, c.query, st, b, c.name)
			}
		}
		if st, b := ts.do("GET", path+"startTimestamp=10&endTimestamp=10", nil, ts.Token); st != 200 {
			t.Errorf("%s an empty range: %d %s", path, st, b)
		}
	}
}
