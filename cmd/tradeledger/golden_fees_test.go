package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlread"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// The golden history of testdata/fee-history (its README has the
// arithmetic), read through the HTTP API, replay and the ClickHouse reader.

type goldenEvent struct {
	stream string
	event  domain.Event
}

// feeHistory turns testdata/fee-history's Binance trades and rates into
// the events the service would have recorded, in time order.
func feeHistory(t *testing.T) []goldenEvent {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "fee-history")
	read := func(name string, v any) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var info struct {
		Symbols []struct{ Symbol, BaseAsset, QuoteAsset string }
	}
	var trades []struct {
		Symbol                 string
		ID, OrderID            int64
		Price, Qty, Commission string
		CommissionAsset        string
		Time                   int64
		IsBuyer                bool
	}
	var rates []struct {
		Symbol, Price string
		Time          int64
	}
	read("exchangeInfo.json", &info)
	read("myTrades.json", &trades)
	read("rates.json", &rates)
	pairOf := map[string][2]string{} // symbol → quote, base
	for _, s := range info.Symbols {
		pairOf[s.Symbol] = [2]string{s.QuoteAsset, s.BaseAsset}
	}
	dec := func(s string) decimal.Decimal {
		d, err := decimal.ParseDecimal(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return d
	}
	type timed struct {
		t   int64
		evs []goldenEvent
	}
	var all []timed
	ev := func(stream string, t int64, typ string, data any) goldenEvent {
		return goldenEvent{stream, domain.NewEvent(domain.NewManualClock(time.UnixMilli(t)), typ, data)}
	}
	for _, r := range rates {
		p := pairOf[r.Symbol]
		all = append(all, timed{r.Time, []goldenEvent{ev(domain.RateStream("binance"), r.Time, domain.TypeRateObserved,
			domain.RateObserved{Exchange: "binance", Base: p[1], Quote: p[0], Rate: dec(r.Price)})}})
	}
	for _, tr := range trades {
		p := pairOf[tr.Symbol]
		side := domain.Sell
		if tr.IsBuyer {
			side = domain.Buy
		}
		stream := domain.OrderStream(tr.OrderID)
		all = append(all, timed{tr.Time, []goldenEvent{
			ev(stream, tr.Time, domain.TypeOrderRequested, domain.OrderRequested{OrderID: tr.OrderID, Exchange: "binance",
				Pair: p[0] + "-" + p[1], Side: side, Kind: domain.KindLimit, Amount: dec(tr.Qty), Price: dec(tr.Price),
				ClientOrderID: fmt.Sprint("golden-", tr.OrderID)}),
			ev(stream, tr.Time, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprint(tr.OrderID)}),
			ev(stream, tr.Time, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint(tr.ID), Price: dec(tr.Price),
				Quantity: dec(tr.Qty), Fee: dec(tr.Commission), FeeAsset: tr.CommissionAsset, Seq: uint64(tr.ID), ExchangeTime: tr.Time}),
		}})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
	var out []goldenEvent
	for _, x := range all {
		out = append(out, x.evs...)
	}
	return out
}

func appendHistory(t *testing.T, store domain.EventStore, evs []goldenEvent) {
	t.Helper()
	for _, g := range evs {
		if _, err := store.Append(context.Background(), g.stream, domain.Any, g.event); err != nil {
			t.Fatalf("append %s %s: %v", g.stream, g.event.Type, err)
		}
	}
}

// goldenAnswers are a reader's JSON answers over the golden history: the
// overview and the sum over every pair, and each pair's total.
type goldenAnswers struct {
	overview, sum []byte
	totals        map[string][]byte
}

// pick returns the value at path in a JSON document (numbers exact) in
// its shortest decimal form, "" when absent.
func pick(t *testing.T, doc []byte, path ...any) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v in %s", err, doc)
	}
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return ""
			}
			v = l[k]
		}
	}
	switch x := v.(type) {
	case nil:
		return ""
	case json.Number:
		return string(decimal.MustDecimal(x.String()).AppendTrimmed(nil))
	case string:
		if d, err := decimal.ParseDecimal(x); err == nil {
			return string(d.AppendTrimmed(nil))
		}
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// goldenFigures are the README's figures of a history: over all pairs in
// USDT, per day, and per pair (pnl, fees, invested, balance).
type goldenFigures struct {
	trades, winning, pnl, hero, fuckup, usdt, invested string
	day1Trades, day2Trades                             string
	pairs                                              map[string][4]string
}

// fullHistory is testdata/fee-history's README.
var fullHistory = goldenFigures{
	trades: "10", winning: "5", pnl: "900.6182", hero: "297.125", fuckup: "47.55", usdt: "609.3182", invested: "14660.45",
	day1Trades: "5", day2Trades: "5",
	pairs: map[string][4]string{
		"binance/USDT-BTC":      {"118.59", "6.41", "3003", "0"},
		"binance/USDT-ETH":      {"193.6032", "6.1968", "3000", "0"},
		"binance/USDT-BABYDOGE": {"297.125", "2.575", "1200", "0"},
		"binance/BTC-ETH":       {"0.0039", "0.0001", "0.1001", "0"},
		"binance/EUR-BTC":       {"38.04", "1.96", "960.96", "0"},
	},
}

// goldenPnl checks the figures w in a reader's answers.
func goldenPnl(t *testing.T, who string, a goldenAnswers, w goldenFigures) {
	t.Helper()
	check := func(doc []byte, want string, path ...any) {
		t.Helper()
		if got := pick(t, doc, path...); got != want {
			t.Errorf("%s: %v = %q, want %q", who, path, got, want)
		}
	}
	o := a.overview
	check(o, "USDT", "unit")
	check(o, w.trades, "total", "numberOfTrades")
	check(o, w.winning, "total", "winning")
	check(o, "", "unconverted")
	check(o, w.pnl, "total", "pnl")
	check(o, w.hero, "total", "heroTrade", "pnl")
	check(o, w.fuckup, "total", "fuckupTrade", "pnl")
	check(o, w.usdt, "perQuote", "USDT", "pnl")
	check(o, "0.0039", "perQuote", "BTC", "pnl")
	check(o, "38.04", "perQuote", "EUR", "pnl")
	check(o, "0.0104", "unconvertedFees", "BNB")
	check(o, "2024-05-01", "dailyHistory", 0, "date")
	check(o, w.day1Trades, "dailyHistory", 0, "numberOfTrades")
	check(o, "0", "dailyHistory", 0, "pnl")
	check(o, "2024-05-02", "dailyHistory", 1, "date")
	check(o, w.day2Trades, "dailyHistory", 1, "numberOfTrades")
	check(o, w.pnl, "dailyHistory", 1, "pnl")
	check(o, "", "dailyHistory", 2)
	check(a.sum, w.pnl, "pnl")
	check(a.sum, w.invested, "invested")
	check(a.sum, "0.0104", "unconvertedFees", "BNB")
	for key, f := range w.pairs {
		tot := a.totals[key]
		check(tot, f[0], "pnl")
		check(tot, f[1], "fees")
		check(tot, f[2], "invested")
		check(tot, f[3], "balance")
		check(tot, "0", "inventory_cost")
	}
	check(a.totals["binance/BTC-ETH"], "0.0104", "unconvertedFees", "BNB")
	check(a.totals["binance/USDT-BTC"], "", "unconvertedFees")
}

// answersOf are r's answers as JSON; sum's pnl and invested under those
// names (as pnl/sum's sommaPnl and invested).
func answersOf(t *testing.T, r pnlread.PnlReader) goldenAnswers {
	t.Helper()
	o, err := r.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Sum(projections.PnlScope{Exchange: "binance"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := goldenAnswers{totals: map[string][]byte{}}
	a.overview, _ = json.Marshal(o)
	a.sum, _ = json.Marshal(map[string]any{"pnl": decimal.Number(s.Pnl), "invested": decimal.Number(s.Invested), "unconvertedFees": s.UnconvertedFees})
	for _, k := range goldenKeys {
		tot, err := r.Total(k)
		if err != nil {
			t.Fatal(err)
		}
		a.totals[k], _ = json.Marshal(tot)
	}
	return a
}

var goldenKeys = []string{"binance/USDT-BTC", "binance/USDT-ETH", "binance/USDT-BABYDOGE", "binance/BTC-ETH", "binance/EUR-BTC"}

// TestFeeHistoryGolden: the golden history through the HTTP API (and its
// order records), then `replay` of the same data dir.
func TestFeeHistoryGolden(t *testing.T) {
	e := startTradingE2E(t)
	appendHistory(t, e.m.DataDir.Store, feeHistory(t))
	if err := e.m.Runner.WaitFor(context.Background(), e.head()); err != nil {
		t.Fatal(err)
	}
	// HTTP
	a := goldenAnswers{totals: map[string][]byte{}}
	a.overview = e.raw("POST", "pnl/overview", `{"timezone":"UTC","keys":["All"]}`)
	sum := e.raw("GET", "pnl/sum?exchange=binance&startTimestamp=0&endTimestamp=1714694400000", "")
	a.sum, _ = json.Marshal(map[string]any{"pnl": json.RawMessage(pick(t, sum, "tournamentData", "sommaPnl")),
		"invested": json.RawMessage(pick(t, sum, "tournamentData", "invested")), "unconvertedFees": json.RawMessage(pickRaw(t, sum, "unconvertedFees"))})
	for _, k := range goldenKeys {
		a.totals[k] = e.raw("GET", "pnl/total?key="+url.QueryEscape(k), "")
	}
	goldenPnl(t, "http", a, fullHistory)

	// Order records: the fee as charged and valued, the quantity received.
	eth := e.records("binance/USDT-ETH")
	wantRecord := func(name string, r map[string]any, want map[string]string) {
		t.Helper()
		for k, v := range want {
			if got := decOrString(r[k]); got != v {
				t.Errorf("%s record: %s = %s, want %s", name, k, got, v)
			}
		}
	}
	wantRecord("USDT-ETH buy", eth[1], map[string]string{"feeAsset": "ETH", "feeAmount": "0.001", "feeQuote": "3", "feeRate": "3000", "balance": "0.999", "baseValue": "3000"})
	wantRecord("USDT-ETH sell", eth[0], map[string]string{"balance": "0", "inventory_cost": "0", "pnl": "193.6032"})
	baby := e.records("binance/USDT-BABYDOGE")
	wantRecord("BABYDOGE buy", baby[1], map[string]string{"amount": "1000000000000", "rate": "0.0000000012", "cost": "1200",
		"feeAsset": "BABYDOGE", "feeAmount": "1000000000", "feeQuote": "1.2", "balance": "999000000000"})
	wantRecord("BABYDOGE sell", baby[0], map[string]string{"feeAsset": "BNB", "feeAmount": "0.0025", "feeQuote": "1.375", "feeRate": "550",
		"feeRateTime": strconv.FormatInt(time.Date(2024, 5, 2, 11, 30, 0, 0, time.UTC).UnixMilli(), 10), "balance": "0", "pnl": "297.125"})
	// pnl/daily names the fee without a rate too (counted in no day).
	daily := e.raw("GET", "pnl/daily?key=binance%2FBTC-ETH&startTimestamp=0&endTimestamp=1714694400000", "")
	if got := pickRaw(t, daily, "unconvertedFees"); got != `{"BNB":0.0104}` {
		t.Errorf("pnl/daily of BTC-ETH: unconvertedFees %s, want {\"BNB\":0.0104}", got)
	}
	ethbtc := e.records("binance/BTC-ETH")
	wantRecord("BTC-ETH buy", ethbtc[1], map[string]string{"feeAsset": "BNB", "feeQuote": "0.0001", "feeRate": "0.01"})
	if u, _ := ethbtc[0]["unconvertedFees"].(map[string]any); decOrString(u["BNB"]) != "0.0104" || ethbtc[0]["feeQuote"] != nil {
		t.Errorf("BTC-ETH sell record %v: want unconvertedFees {BNB: 0.0104} and no feeQuote", ethbtc[0])
	}

	// replay of the same data dir, once the service is closed.
	dir := e.m.Config.Data
	e.m.Close()
	out, errOut, code := auditRun(t, "replay", "--data", dir, "--json")
	if code != 0 {
		t.Fatalf("replay: exit %d %s", code, errOut)
	}
	var rep struct {
		Pnl json.RawMessage `json:"pnlOverview"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Pnl == nil {
		t.Fatalf("replay output: %v\n%s", err, out)
	}
	a.overview = rep.Pnl // replay shows the overview; the sum and totals stay the service's
	goldenPnl(t, "replay", a, fullHistory)
	if text, _, _ := auditRun(t, "replay", "--data", dir); !containsAll(text, "PNL (USDT)", "900.6182", "Fees without a rate", "0.0104 BNB") {
		t.Errorf("replay's text:\n%s", text)
	}
}

// TestFeeHistoryGoldenClickHouse: the golden history exported to
// ClickHouse answers the README's figures from the reader, the BABYDOGE
// fills (10^12 units at a 10-decimal price) included, as the Ledger does
// over the same log (skipped without TRADELEDGER_TEST_CLICKHOUSE).
func TestFeeHistoryGoldenClickHouse(t *testing.T) {
	url := clickhouseURL(t, fmt.Sprintf("tl_feehistory_%d", time.Now().UnixNano()%1_000_000))
	store := sqlitetest.Open(t)
	appendHistory(t, store, feeHistory(t))
	sink := clickhouse.NewSink(url, store)
	if _, err := sink.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := clickhouse.NewReader(url, domain.LOFO)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := fullHistory
	ch := answersOf(t, r)
	goldenPnl(t, "clickhouse", ch, w)
	// The in-memory Ledger over the same log answers the same bytes.
	l := projections.NewLedger(domain.LOFO)
	it := store.ReadAll(context.Background(), 0, 0)
	for it.Next() {
		ev := it.Event()
		_ = l.Apply(&ev)
	}
	it.Close()
	mem := answersOf(t, l)
	if string(mem.overview) != string(ch.overview) || string(mem.sum) != string(ch.sum) {
		t.Errorf("clickhouse and memory differ:\n%s\n%s\n%s\n%s", ch.overview, mem.overview, ch.sum, mem.sum)
	}
	for k := range w.pairs {
		if string(mem.totals[k]) != string(ch.totals[k]) {
			t.Errorf("%s: clickhouse %s, memory %s", k, ch.totals[k], mem.totals[k])
		}
	}
}

// pickRaw returns the JSON text at key of doc ("null" when absent).
func pickRaw(t *testing.T, doc []byte, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m[key]; ok {
		return string(v)
	}
	return "null"
}

// raw sends a request with the token and returns the 200 answer's body.
func (e *tradingE2E) raw(method, path, body string) []byte {
	e.t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.m.Server.URL()+"/api/v1/"+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	return readOK(e.t, req)
}

// decOrString shows a JSON value as the tests write figures: a number in
// its shortest decimal form, a string as is.
func decOrString(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
