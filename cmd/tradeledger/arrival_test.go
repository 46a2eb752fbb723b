package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// One truth (issue 36): the same events give the same answers whatever
// order they were recorded in. arrivalLog draws a random trading history —
// pairs of three quote currencies, orders filled in parts, fees in the
// quote, the base and a third asset (BNB, at observed rates), cancels,
// balance snapshots, a reporting currency — as streams, each in its own
// order; arrivals interleaves the streams at random (the first in trade
// time), so that fills arrive before or long after fills of earlier trade
// times, as an import into a live log or a backfill makes them. The
// accounts' activity besides the service's orders is there too (issue 38):
// trades placed by hand (ExternalFill), deposits and withdrawals in their
// statuses — from and to the outside, transfers between the service's
// accounts matched by txid or by amount and time, one into a pair of
// another quote, one failed — and conversions, each account's facts in its
// account stream, recorded in no order of their trade times.

// arrivalStream is one stream's events, in the stream's order.
type arrivalStream struct {
	name   string
	events []domain.Event
}

// arrivalLog returns the streams of a random history (every fill at its own
// millisecond: fills of one millisecond go by log position, which is the
// arrival) and the trade time of its middle.
func arrivalLog(rng *rand.Rand) ([]arrivalStream, int64) {
	t0 := time.Date(2025, 2, 3, 0, 0, 0, 0, time.UTC).UnixMilli()
	span := int64(6 * 24 * 3600 * 1000)
	clock := domain.NewManualClock(time.UnixMilli(t0))
	ev := func(at int64, typ string, data any) domain.Event {
		clock.Set(time.UnixMilli(at))
		return domain.NewEvent(clock, typ, data)
	}
	used := map[int64]bool{}
	distinct := func(t int64) int64 {
		for used[t] {
			t++
		}
		used[t] = true
		return t
	}
	cfg := ev(t0-3600_000, domain.TypeConfigReplaced, map[string]any{"bot": map[string]any{"REPORTING_CURRENCY": "USDT", "FEE_RATE_MAX_AGE": 2 * 3600}})
	streams := []arrivalStream{{name: domain.StreamConfig, events: []domain.Event{cfg}}}
	pairs := []struct {
		exchange, pair string
		price          float64
	}{{"binance", "USDT-BTC", 60000}, {"binance", "USDT-ETH", 3000}, {"binance", "BTC-ETH", 0.05}, {"kraken", "USDT-BTC", 60100}, {"kraken", "EUR-BTC", 55000},
		{"bitstamp", "USDT-BTC", 60050}}
	var rates []domain.Event
	for i := 0; i < 24; i++ {
		at := t0 + int64(i)*span/24
		rates = append(rates, ev(at, domain.TypeRateObserved, domain.RateObserved{Exchange: "binance", Base: "BNB", Quote: "USDT",
			Rate: decimal.MustDecimal(fmt.Sprintf("%d.%02d", 500+rng.IntN(40), rng.IntN(100)))}))
	}
	streams = append(streams, arrivalStream{domain.RateStream("binance"), rates})
	var bals []domain.Event
	for i := 0; i < 5; i++ {
		at := t0 + int64(i+1)*span/6
		bals = append(bals, ev(at, domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "binance", Balances: []domain.AssetBalance{
			{Asset: "USDT", Available: decimal.MustDecimal(fmt.Sprint(1000 + rng.IntN(9000)))},
			{Asset: "BTC", Available: decimal.MustDecimal(fmt.Sprintf("0.%03d", rng.IntN(1000)))}}}))
	}
	streams = append(streams, arrivalStream{domain.BalanceStream("binance"), bals})
	for id := int64(1); id <= 70; id++ {
		p := pairs[rng.IntN(len(pairs))]
		quote, base, _ := domain.SplitPair(p.pair)
		side := domain.Buy
		if rng.IntN(5) < 2 {
			side = domain.Sell
		}
		start := t0 + rng.Int64N(span)
		amount := decimal.MustDecimal(fmt.Sprintf("0.%02d", 10+rng.IntN(80)))
		s := arrivalStream{name: domain.OrderStream(id)}
		s.events = append(s.events, ev(start, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: p.exchange,
			Pair: p.pair, Side: side, Kind: domain.KindLimit, Amount: amount, Price: decimal.MustDecimal(fmt.Sprint(p.price)),
			ClientOrderID: fmt.Sprintf("c%d", id)}))
		s.events = append(s.events, ev(start, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprintf("x%d", id)}))
		parts := 1 + rng.IntN(3)
		left := amount
		at := start
		for k := 0; k < parts && left.IsPos(); k++ {
			qty := left
			if k < parts-1 {
				qty = left.DivInt(2)
			}
			left = left.Sub(qty)
			at = distinct(at + 1 + rng.Int64N(40*60_000))
			price := decimal.MustDecimal(fmt.Sprintf("%.4f", p.price*(1+(rng.Float64()-0.5)/20)))
			f := domain.OrderFilled{FillID: fmt.Sprintf("f%d-%d", id, k), Price: price, Quantity: qty, ExchangeTime: at}
			switch rng.IntN(4) {
			case 0:
				f.Fee, f.FeeAsset = price.Mul(qty).Mul(decimal.MustDecimal("0.001")).Round(8), quote
			case 1:
				f.Fee, f.FeeAsset = qty.Mul(decimal.MustDecimal("0.001")).Round(8), base
			case 2:
				f.Fee, f.FeeAsset = decimal.MustDecimal(fmt.Sprintf("0.000%d", 1+rng.IntN(9))), "BNB"
			}
			// Recorded when the exchange reported it: at once, or much later.
			rec := at + rng.Int64N(3)*rng.Int64N(24*3600_000)
			s.events = append(s.events, ev(max(rec, s.events[len(s.events)-1].Time), domain.TypeOrderFilled, f))
		}
		if left.IsPos() && rng.IntN(2) == 0 {
			s.events = append(s.events, ev(s.events[len(s.events)-1].Time+1000, domain.TypeOrderCancelled, domain.OrderCancelled{Remaining: left}))
		}
		streams = append(streams, s)
	}
	streams = append(streams, arrivalAccounts(rng, t0, span, distinct, pairs[:]...)...)
	return streams, t0 + span/2
}

// arrivalAccounts returns the account streams of a random history: per
// exchange, trades placed by hand on its pairs, and the transfers and
// conversions listed below, recorded in a random order (a backfill).
func arrivalAccounts(rng *rand.Rand, t0, span int64, distinct func(int64) int64, pairs ...struct {
	exchange, pair string
	price          float64
}) []arrivalStream {
	type fact struct {
		typ  string
		at   int64
		data any
	}
	facts := map[string][]fact{}
	add := func(exchange, typ string, at int64, data any) {
		facts[exchange] = append(facts[exchange], fact{typ, at, data})
	}
	for i := 0; i < 24; i++ {
		p := pairs[rng.IntN(len(pairs))]
		quote, _, _ := domain.SplitPair(p.pair)
		side := domain.Buy
		if rng.IntN(5) < 2 {
			side = domain.Sell
		}
		at := distinct(t0 + rng.Int64N(span))
		price := decimal.MustDecimal(fmt.Sprintf("%.4f", p.price*(1+(rng.Float64()-0.5)/20)))
		qty := decimal.MustDecimal(fmt.Sprintf("0.%02d", 5+rng.IntN(40)))
		add(p.exchange, domain.TypeExternalFill, at, domain.ExternalFill{Exchange: p.exchange, Pair: p.pair, TradeID: fmt.Sprintf("h%d", i),
			OrderID: fmt.Sprintf("ho%d", i), Side: side, Price: price, Quantity: qty, Fee: price.Mul(qty).Mul(decimal.MustDecimal("0.001")).Round(8),
			FeeAsset: quote, Time: at})
	}
	transfer := func(deposit bool, t domain.Transfer, statuses ...domain.TransferStatus) {
		typ := domain.TypeWithdrawal
		if deposit {
			typ = domain.TypeDeposit
		}
		for _, st := range statuses {
			t.Status = st
			add(t.Exchange, typ, t.Time, t)
		}
	}
	btc := func(s string) decimal.Decimal { return decimal.MustDecimal(s) }
	at := func() int64 { return distinct(t0 + rng.Int64N(span*3/4)) }
	// From the outside onto binance (coins of unknown cost), and a
	// deposit never credited.
	transfer(true, domain.Transfer{Exchange: "binance", ID: "d1", Asset: "BTC", Amount: btc("0.3"), TxID: "tx-out-1", Time: at()},
		domain.TransferPending, domain.TransferCredited)
	transfer(true, domain.Transfer{Exchange: "binance", ID: "d2", Asset: "ETH", Amount: btc("1.5"), Time: at()}, domain.TransferPending)
	// binance → bitstamp by amount and time (no txid), the fee apart.
	w := at()
	transfer(false, domain.Transfer{Exchange: "binance", ID: "w1", Asset: "BTC", Amount: btc("0.2"), Fee: btc("0.0005"), Time: w},
		domain.TransferPending, domain.TransferCompleted)
	transfer(true, domain.Transfer{Exchange: "bitstamp", ID: "d3", Asset: "BTC", Amount: btc("0.2"), Time: distinct(w + 1 + rng.Int64N(3*3600_000))},
		domain.TransferCredited)
	// bitstamp → binance by txid.
	w = at()
	transfer(false, domain.Transfer{Exchange: "bitstamp", ID: "w2", Asset: "BTC", Amount: btc("0.1"), Fee: btc("0.0002"), TxID: "tx-2", Time: w},
		domain.TransferCompleted)
	transfer(true, domain.Transfer{Exchange: "binance", ID: "d4", Asset: "BTC", Amount: btc("0.0998"), TxID: "tx-2", Time: distinct(w + 1 + rng.Int64N(3600_000))},
		domain.TransferCompleted)
	// kraken (EUR-BTC its home) → binance (USDT-BTC): another quote.
	w = at()
	transfer(false, domain.Transfer{Exchange: "kraken", ID: "w3", Asset: "BTC", Amount: btc("0.15"), Fee: btc("0.0001"), TxID: "tx-3", Time: w},
		domain.TransferCompleted)
	transfer(true, domain.Transfer{Exchange: "binance", ID: "d5", Asset: "BTC", Amount: btc("0.15"), TxID: "tx-3", Time: distinct(w + 1 + rng.Int64N(3600_000))},
		domain.TransferCompleted)
	// To the outside, and one that failed.
	transfer(false, domain.Transfer{Exchange: "kraken", ID: "w4", Asset: "BTC", Amount: btc("0.05"), Fee: btc("0.0001"), Time: at()},
		domain.TransferCompleted)
	transfer(false, domain.Transfer{Exchange: "binance", ID: "w5", Asset: "ETH", Amount: btc("0.4"), Fee: btc("0.001"), Time: at()},
		domain.TransferPending, domain.TransferFailed)
	// Dust to BNB (no pair of BNB: its acquisition goes nowhere) and a
	// convert trade of BTC for ETH (its acquisition on BTC-ETH, at the
	// rate the exchange gave).
	add("binance", domain.TypeConversion, 0, domain.Conversion{Exchange: "binance", ID: "c1", Kind: domain.ConversionDust, FromAsset: "ETH",
		FromAmount: btc("0.004"), ToAsset: "BNB", ToAmount: btc("0.02"), Fee: btc("0.0004"), FeeAsset: "BNB", Time: at()})
	add("binance", domain.TypeConversion, 0, domain.Conversion{Exchange: "binance", ID: "c2", Kind: domain.ConversionConvert, FromAsset: "BTC",
		FromAmount: btc("0.05"), ToAsset: "ETH", ToAmount: btc("1.01"), Time: at()})
	var out []arrivalStream
	for _, x := range []string{"binance", "bitstamp", "kraken"} {
		fs := facts[x]
		rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		// A transfer's statuses stay in their order: the later one last.
		sort.SliceStable(fs, func(i, j int) bool {
			a, b := fs[i].data, fs[j].data
			ta, oka := a.(domain.Transfer)
			tb, okb := b.(domain.Transfer)
			return oka && okb && ta.ID == tb.ID && ta.Exchange == tb.Exchange && arrivalRank(ta.Status) < arrivalRank(tb.Status)
		})
		s := arrivalStream{name: domain.AccountStream(x)}
		rec := t0 + span/3 // recorded from a third of the span on, one a second
		clock := domain.NewManualClock(time.UnixMilli(rec))
		for i, f := range fs {
			clock.Set(time.UnixMilli(rec + int64(i)*1000))
			s.events = append(s.events, domain.NewEvent(clock, f.typ, f.data))
		}
		out = append(out, s)
	}
	return out
}

// arrivalRank orders a transfer's statuses as an exchange gives them.
func arrivalRank(s domain.TransferStatus) int {
	return map[domain.TransferStatus]int{domain.TransferPending: 0, domain.TransferCredited: 1, domain.TransferCompleted: 2}[s] + 3*b2i(s == domain.TransferFailed)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// arrivals returns the streams' events interleaved: by time of the
// events (fills by their trade time) for k = 0, at random (seeded by seed
// and k) for k > 0.
func arrivals(streams []arrivalStream, seed, k uint64) []arrivalEvent {
	var out []arrivalEvent
	next := make([]int, len(streams))
	rng := rand.New(rand.NewPCG(seed, k))
	ownTime := func(e *domain.Event) int64 {
		switch e.Type {
		case domain.TypeOrderFilled:
			f, _ := domain.Payload[domain.OrderFilled](e)
			return f.ExchangeTime
		case domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion:
			var x struct{ Time int64 }
			_ = json.Unmarshal(e.Data, &x)
			return x.Time
		}
		return e.Time
	}
	for {
		var open []int
		for i, s := range streams {
			if next[i] < len(s.events) {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return out
		}
		pick := open[rng.IntN(len(open))]
		if k == 0 {
			sort.Slice(open, func(a, b int) bool {
				return ownTime(&streams[open[a]].events[next[open[a]]]) < ownTime(&streams[open[b]].events[next[open[b]]])
			})
			pick = open[0]
		}
		out = append(out, arrivalEvent{streams[pick].name, streams[pick].events[next[pick]]})
		next[pick]++
	}
}

type arrivalEvent struct {
	stream string
	event  domain.Event
}

// lateFills counts the fills recorded after a fill of a later trade time.
func lateFills(evs []arrivalEvent) int {
	n, newest := 0, int64(0)
	for _, a := range evs {
		if a.event.Type != domain.TypeOrderFilled {
			continue
		}
		f, _ := domain.Payload[domain.OrderFilled](&a.event)
		if f.ExchangeTime < newest {
			n++
		}
		newest = max(newest, f.ExchangeTime)
	}
	return n
}

// writeArrivals appends the events, in that order, to a new store in dir.
func writeArrivals(t *testing.T, dir string, evs []arrivalEvent) *sqlite.Store {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := sqlitetest.OpenAt(t, filepath.Join(dir, "events.db"))
	for _, a := range evs {
		if _, err := s.Append(context.Background(), a.stream, domain.Any, a.event); err != nil {
			t.Fatalf("append %s %s: %v", a.stream, a.event.Type, err)
		}
	}
	return s
}

// Log positions name what was recorded where, so they differ by arrival:
// chart marks' ids, reports' positions, the exports' position column and
// transaction ids.
var (
	markIDs   = regexp.MustCompile(`"id":"[0-9]+-[0-9]+"`)
	positions = regexp.MustCompile(`"position":[0-9]+`)
	txIDs     = regexp.MustCompile(`(tradeledger:[^:,]+:[0-9]+):[0-9]+`)
)

// withoutPositions returns an answer with its log positions blanked.
func withoutPositions(b string) string {
	b = positions.ReplaceAllString(markIDs.ReplaceAllString(b, `"id":"…"`), `"position":…`)
	b = txIDs.ReplaceAllString(b, "$1:…")
	header, rest, ok := strings.Cut(b, "\n")
	if !ok || strings.HasPrefix(header, "{") || strings.HasPrefix(header, "[") {
		return b
	}
	cols := strings.Split(strings.TrimSuffix(header, "\r"), ",")
	col := slices.Index(cols, "position")
	if col < 0 {
		return b
	}
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		f := strings.Split(l, ",")
		if col < len(f) {
			f[col] = "…"
		}
		lines[i] = strings.Join(f, ",")
	}
	return header + "\n" + strings.Join(lines, "\n")
}

// routeAnswers returns the answer of every read route, by name, from a
// server over ledger (and pnl for the PNL routes when not nil), asOf
// variants at mid.
func routeAnswers(t *testing.T, store domain.EventStore, ledger *projections.Ledger, pnl tlhttp.PnlReader, mid int64, pnlOnly bool) map[string]string {
	t.Helper()
	clock := domain.NewManualClock(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	srv := tlhttp.NewServer()
	srv.Clock, srv.Store, srv.Ledger, srv.Pnl = clock, store, ledger, pnl
	srv.States = projections.NewStates(store)
	srv.Auth = &tlhttp.Authenticator{Secret: []byte("0123456789abcdef0123456789abcdef"), TokenTTL: time.Hour, Clock: clock}
	api := srv.Handler()
	token, _ := srv.Auth.IssueToken("tester")
	out := map[string]string{}
	do := func(method, path, body string) {
		t.Helper()
		req := httptest.NewRequest(method, "/api/v1/"+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Body)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s %s = %d %s", method, path, rec.Code, b)
		}
		out[method+" "+path+" "+body] = withoutPositions(string(b))
	}
	keys := []string{"binance/USDT-BTC", "binance/USDT-ETH", "binance/BTC-ETH", "kraken/USDT-BTC", "kraken/EUR-BTC", "bitstamp/USDT-BTC"}
	asOf := fmt.Sprint(mid)
	for _, tz := range []string{"UTC", "Asia/Kathmandu"} {
		do("POST", "pnl/overview", `{"timezone":"`+tz+`","keys":["All"]}`)
		do("POST", "pnl/overview", `{"timezone":"`+tz+`","keys":["All"],"quote":"USDT"}`)
	}
	do("POST", "pnl/overview", `{"timezone":"UTC","keys":["binance/USDT-BTC","kraken/USDT-BTC"]}`)
	for _, x := range []string{"binance", "kraken"} {
		do("GET", "pnl/sum?exchange="+x+"&startTimestamp=0&endTimestamp=99999999999999", "")
	}
	do("POST", "assets/total", `{"exchange":"binance","base":"USDT","start":0,"end":99999999999999}`)
	for _, k := range keys {
		do("GET", "pnl/total?key="+url.QueryEscape(k), "")
		for _, tz := range []string{"UTC", "Asia/Kathmandu"} {
			do("GET", "pnl/daily?key="+url.QueryEscape(k)+"&timezone="+tz+"&startTimestamp=0&endTimestamp=99999999999999", "")
		}
	}
	if !pnlOnly {
		do("POST", "pnl/overview?asOf="+asOf, `{"timezone":"UTC","keys":["All"]}`)
		for _, k := range keys {
			do("GET", "orders/page?key="+url.QueryEscape(k)+"&page=0&pageSize=1000", "")
			do("GET", "orders?key="+url.QueryEscape(k), "")
			do("GET", "chart/marks?exchange="+strings.Split(k, "/")[0]+"&pair="+strings.Split(k, "/")[1]+"&interval=15&startTime=0&endTime=99999999999", "")
		}
		do("GET", "orders/page/multi?"+url.Values{"keys[]": keys}.Encode()+"&page=0&pageSize=1000", "")
		do("GET", "orders/day?timezone=UTC&"+url.Values{"keys[]": keys}.Encode(), "")
		for _, m := range []string{"lofo", "fifo", "hifo", "average"} {
			do("GET", "reports/realized?method="+m+"&pageSize=1000", "")
			do("GET", "reports/statement?method="+m, "")
			for _, k := range keys { // the Overview and the Reports pages, for one method
				do("POST", "pnl/overview?method="+m, `{"timezone":"UTC","keys":["`+k+`"]}`)
				do("GET", "reports/realized?method="+m+"&currency=none&keys="+url.QueryEscape(k)+"&pageSize=0", "")
			}
		}
		do("GET", "reports/realized?pageSize=1000&asOf="+asOf, "")
		for _, f := range []string{"fills", "koinly", "realized", "cointracker"} {
			do("GET", "export/"+f+".csv", "")
		}
		for _, m := range []string{"fifo", "hifo"} { // the books across accounts
			do("GET", "reports/realized?scope=universal&pageSize=1000&method="+m, "")
			do("GET", "reports/statement?scope=universal&method="+m, "")
			do("GET", "export/fills.csv?scope=universal&method="+m, "")
		}
	}
	return out
}

// TestArrivalOrderGivesTheSameAnswers: random histories, each recorded in
// several arrival orders, give byte-identical answers on every read route
// (order records, pages, days, the PNL routes, asset values, chart marks,
// reports, exports, asOf), from the Ledger replayed from the log and from
// one fed live with reads in between, through `tradeledger replay`, and
// from the ClickHouse reader (with TRADELEDGER_TEST_CLICKHOUSE).
func TestArrivalOrderGivesTheSameAnswers(t *testing.T) {
	t.Setenv("TRADELEDGER_WALLET", "0x0123456789abcdef0123456789abcdef")
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("cd", 32))
	ch := chAvailable()
	for seed := uint64(1); seed <= 3; seed++ {
		streams, mid := arrivalLog(rand.New(rand.NewPCG(seed, 36)))
		var want map[string]string
		var wantReplay [2]string
		for k := uint64(0); k < 3; k++ {
			name := fmt.Sprintf("seed %d arrival %d", seed, k)
			evs := arrivals(streams, seed, k)
			if late := lateFills(evs); (k == 0) != (late == 0) {
				t.Fatalf("%s: %d fills recorded after a fill of a later trade time", name, late)
			}
			dir := filepath.Join(t.TempDir(), "data")
			store := writeArrivals(t, dir, evs)
			// Replayed from the log, as serve starts.
			runner := projections.NewRunner(store)
			ledger := projections.NewLedger(domain.LOFO)
			runner.Register(ledger)
			if err := runner.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := routeAnswers(t, store, ledger, nil, mid, false)
			runner.Close()
			// Fed live, read between events (each read settles what came).
			live := projections.NewLedger(domain.LOFO)
			rng := rand.New(rand.NewPCG(seed, k))
			for i, a := range evs {
				e := a.event
				e.Stream, e.Position = a.stream, uint64(i+1)
				_ = live.Apply(&e)
				if rng.IntN(10) == 0 {
					_, _ = live.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: time.UnixMilli(mid)})
				}
			}
			gotLive := routeAnswers(t, store, live, nil, mid, false)
			if want == nil {
				want = got
			}
			overviewMatchesReports(t, name, got)
			accountActivityShows(t, name, got)
			diffAnswers(t, name+" (replayed)", want, got)
			diffAnswers(t, name+" (live)", want, gotLive)
			store.Close()
			// tradeledger replay, at the end and as of the middle.
			for i, until := range []string{"2025-03-01", fmt.Sprint(mid)} {
				out, errOut, code := auditRun(t, "replay", "--data", dir, "--until", until, "--json")
				if code != 0 {
					t.Fatalf("replay --until %s: exit %d %s", until, code, errOut)
				}
				pnl := out[strings.Index(out, `"pnlOverview"`):]
				if k == 0 {
					wantReplay[i] = pnl
				} else if pnl != wantReplay[i] {
					t.Fatalf("%s: replay --until %s differs from arrival 0:\n%s\n---\n%s", name, until, pnl, wantReplay[i])
				}
			}
			if ch {
				r := exportToClickHouse(t, dir, fmt.Sprintf("tlarrival_%d_%d_%d", seed, k, time.Now().UnixNano()%1e6))
				mem := routeAnswers(t, nil, ledgerOf(t, dir), nil, mid, true)
				diffAnswers(t, name+" (clickhouse)", mem, routeAnswers(t, nil, ledgerOf(t, dir), r, mid, true))
			}
		}
	}
}

// overviewMatchesReports checks that, for each method and pair, the
// overview's realized pnl (the Overview page) is the realized report's
// gain (the Reports page).
func overviewMatchesReports(t *testing.T, name string, answers map[string]string) {
	t.Helper()
	n := 0
	for route, body := range answers {
		m, k, ok := strings.Cut(strings.TrimPrefix(route, "POST pnl/overview?method="), ` {"timezone":"UTC","keys":["`)
		if !strings.HasPrefix(route, "POST pnl/overview?method=") || !ok {
			continue
		}
		k = strings.TrimSuffix(k, `"]}`)
		var o struct{ Total struct{ Pnl json.Number } }
		var r struct {
			Totals []struct{ Gain json.Number }
		}
		rep := answers["GET reports/realized?method="+m+"&currency=none&keys="+url.QueryEscape(k)+"&pageSize=0 "]
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(rep), &r); err != nil {
			t.Fatalf("%s: %v", rep, err)
		}
		var gain decimal.Decimal
		for _, x := range r.Totals {
			gain = gain.Add(decimal.MustDecimal(string(x.Gain)))
		}
		if pnl := decimal.MustDecimal(string(o.Total.Pnl)); pnl != gain {
			t.Fatalf("%s: %s under %s: the overview's pnl %s, the realized report's gain %s", name, k, m, pnl, gain)
		}
		n++
	}
	if n != 4*6 {
		t.Fatalf("%s: %d overviews checked against the reports, want 24", name, n)
	}
}

// accountActivityShows checks that the answers show the accounts'
// activity, so that the comparisons above are not of answers without it:
// trades placed by hand among the orders, the flows in the tax tool's
// export, deposits, withdrawals, transfers and coins of unknown cost in
// the statements, conversions among the disposals.
func accountActivityShows(t *testing.T, name string, answers map[string]string) {
	t.Helper()
	for route, want := range map[string][]string{
		"GET orders?key=binance%2FUSDT-BTC ":                 {`"external":true`},
		"GET export/koinly.csv ":                             {",tx-2", ",tx-3", "binance deposit tx-out-1", "binance convert conversion", "external trade"},
		"GET export/cointracker.csv ":                        {",0.15000000,BTC,,,,,", ",,,0.05000000,BTC,0.00010000,BTC,"},
		"GET reports/statement?method=lofo ":                 {`"transfers":1`, `"unknownCostQuantity":0.`, `"networkFees":0.0005`},
		"GET reports/realized?method=lofo&pageSize=1000 ":    {`"kind":"external"`, `"kind":"conversion"`},
		"GET reports/statement?scope=universal&method=fifo ": {`"key":"*/USDT-BTC"`},
	} {
		body, ok := answers[route]
		if !ok {
			t.Fatalf("%s: no answer of %s", name, route)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Fatalf("%s: %s lacks %s:\n%.3000s", name, route, w, body)
			}
		}
	}
}

// diffAnswers fails t naming the first route whose answer differs.
func diffAnswers(t *testing.T, name string, want, got map[string]string) {
	t.Helper()
	routes := make([]string, 0, len(want))
	for r := range want {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		if got[r] != want[r] {
			a, b := want[r], got[r]
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			from := max(0, i-200)
			t.Fatalf("%s: %s differs at byte %d:\nwant …%s\n got …%s", name, r, i, a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
		}
	}
}

// chAvailable reports whether the ClickHouse half runs
// (TRADELEDGER_TEST_CLICKHOUSE is set; it is in CI).
func chAvailable() bool { return os.Getenv("TRADELEDGER_TEST_CLICKHOUSE") != "" }

// ledgerOf returns a Ledger replayed from dir's log.
func ledgerOf(t *testing.T, dir string) *projections.Ledger {
	t.Helper()
	s := sqlite.NewStore(filepath.Join(dir, "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := projections.NewLedger(domain.LOFO)
	r := projections.NewRunner(s)
	r.Register(l)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.Close()
	return l
}

// exportToClickHouse loads dir's log into a new ClickHouse database and
// returns a reader over it.
func exportToClickHouse(t *testing.T, dir, db string) *clickhouse.Reader {
	t.Helper()
	u := clickhouseURL(t, db)
	s := sqlite.NewStore(filepath.Join(dir, "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sink := clickhouse.NewSink(u, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sink.Export(ctx); err != nil {
		t.Fatalf("export: %v (%v)", err, sink.Err())
	}
	r := clickhouse.NewReader(u, domain.LOFO)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
