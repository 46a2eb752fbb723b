package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
)

// replayCycling lets the Trader accept orders on every exchange (the core's
// role in the live service).
type replayCycling struct{}

func (replayCycling) IsCycling(string) bool { return true }

// liveCapture is what the live service answered at one moment.
type liveCapture struct {
	position   uint64
	time       int64
	balances   any // POST /api/v1/balances, as served
	openOrders map[int64]string
	pnl        any // the PNL overview the read model answered
}

// normalize turns a JSON-marshalable value into generic JSON values.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReplayEqualsLive(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The service's clock goes on from the data dir's initialization (one
	// clock stamps the whole log, as in a live service).
	var initTime int64
	for _, e := range auditReadLog(t, d.Store) {
		initTime = max(initTime, e.Time)
	}
	clock := domain.NewManualClock(time.UnixMilli(initTime).UTC().Truncate(time.Hour).Add(time.Hour + 8*time.Minute))
	sim := paper.NewSimulator(clock)
	runner := projections.NewRunner(d.Store)
	ledger := projections.NewLedger(domain.LOFO)
	eng := engine.New(d.Store, sim.Exchange, nil, projections.NewBalances(), clock)
	tr := eng.Trader
	tr.Activity, eng.Desk.Wait = replayCycling{}, runner.WaitFor
	for _, p := range eng.Projections() {
		runner.Register(p)
	}
	runner.Register(ledger)
	if err := runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	srv := tlhttp.NewServer()
	srv.Clock, srv.Store, srv.Runner, srv.Trader = clock, d.Store, runner, tr
	states := projections.NewStates(d.Store)
	srv.Ledger, srv.States = ledger, states
	// Read-model snapshots of the live models are written after each
	// capture: replay and asOf start from them (the second pass below).
	snaps := d.Snapshots(clock)
	snaps.Keep = 10 // one for each capture
	states.Snapshots = snaps
	srv.Auth = &tlhttp.Authenticator{Secret: d.JWTSecret, TokenTTL: time.Hour, Clock: clock}
	api := srv.Handler()
	// asOf answers what replay --until answers: the API's balances and PNL
	// overview as of a past time (served from a past state while the live
	// read models go on).
	asOf := func(path string, at int64, body string) any {
		t.Helper()
		token, _ := srv.Auth.IssueToken("tester")
		req := httptest.NewRequest("POST", fmt.Sprintf("%s?asOf=%d", path, at), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s as of %d: %d %s", path, at, rec.Code, rec.Body)
		}
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	var placed []int64
	capture := func() liveCapture {
		t.Helper()
		head, _ := d.Store.Head(ctx)
		if err := runner.WaitFor(ctx, head); err != nil {
			t.Fatal(err)
		}
		c := liveCapture{position: runner.Position(), time: clock.Now().UnixMilli(), openOrders: map[int64]string{}}
		token, _ := srv.Auth.IssueToken("tester") // the manual clock outruns token lifetimes
		req := httptest.NewRequest("POST", "/api/v1/balances", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("live balances: %d %s", rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &c.balances); err != nil {
			t.Fatal(err)
		}
		for _, id := range placed {
			if o, ok := eng.Orders.Order(id); ok && !o.State.Done() {
				c.openOrders[id] = fmt.Sprintf("%s %s filled %s of %s", o.State, o.Side, o.Filled, o.Amount)
			}
		}
		ov, err := ledger.Overview(projections.OverviewQuery{Scope: projections.PnlScope{Keys: []string{"All"}}, Loc: time.UTC, Now: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		c.pnl = normalize(t, ov)
		f, err := runner.Freeze(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snaps.Write(ctx, f); err != nil {
			t.Fatal(err)
		}
		return c
	}
	submit := func(side domain.Side, amount, price string) {
		t.Helper()
		id, err := tr.Submit(ctx, domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: side, Kind: domain.KindLimit,
			Amount: domain.MustDecimal(amount), Price: domain.MustDecimal(price), Actor: "tester"})
		if err != nil {
			t.Fatal(err)
		}
		placed = append(placed, id)
	}
	price := func(p string) {
		t.Helper()
		if err := sim.SetPrice("binance", "USDT-BTC", domain.MustDecimal(p)); err != nil {
			t.Fatal(err)
		}
		if err := eng.Reconciler.Reconcile(ctx, "binance"); err != nil {
			t.Fatal(err)
		}
	}

	// A trading session; the answers are captured after each step, and the
	// clock moves on before the next, as on a live service.
	var caps []liveCapture
	price("30000")
	submit(domain.Buy, "0.01", "29900")
	submit(domain.Buy, "0.02", "29500")
	caps = append(caps, capture())
	clock.Advance(time.Hour)
	price("29800") // the first buy fills
	caps = append(caps, capture())
	clock.Advance(26 * time.Hour)
	submit(domain.Sell, "0.006", "30400")
	price("29400") // the second buy fills
	caps = append(caps, capture())
	clock.Advance(3 * time.Hour)
	price("30500") // the sell fills: realized pnl
	submit(domain.Sell, "0.01", "31000")
	caps = append(caps, capture())
	clock.Advance(time.Hour)
	if err := tr.Cancel(ctx, "binance", "USDT-BTC", placed[len(placed)-1], "tester", ""); err != nil {
		t.Fatal(err)
	}
	caps = append(caps, capture())

	if last := caps[len(caps)-1]; len(last.balances.([]any)) == 0 {
		t.Fatal("the session observed no balances: nothing would be compared")
	}
	if pnl := caps[3].pnl.(map[string]any)["total"].(map[string]any)["pnl"]; pnl == 0.0 {
		t.Fatal("the session realized no pnl: nothing would be compared")
	}
	// Each capture is compared twice: replayed from the first event (the
	// snapshots set aside), then from the newest snapshot within the cut.
	snapDir := snapshotDir(dir)
	fromSnapshots := 0
	for _, withSnapshots := range []bool{false, true} {
		if !withSnapshots {
			if err := os.Rename(snapDir, snapDir+".aside"); err != nil {
				t.Fatal(err)
			}
			srv.States = projections.NewStates(d.Store)
		} else {
			if err := os.Rename(snapDir+".aside", snapDir); err != nil {
				t.Fatal(err)
			}
			states := projections.NewStates(d.Store)
			states.Snapshots = snaps
			srv.States = states
		}
		api = srv.Handler() // the handlers read the dependencies when built
		for i, c := range caps {
			for _, how := range [][]string{
				{"--position", fmt.Sprint(c.position)},
				{"--until", time.UnixMilli(c.time).UTC().Format(time.RFC3339Nano)},
			} {
				args := append([]string{"replay", "--data", dir, "--json"}, how...)
				if withSnapshots {
					args = append(args, "--from-snapshot")
				}
				out, errOut, code := auditRun(t, args...)
				if code != 0 {
					t.Fatalf("capture %d: replay %v: exit %d %s", i, how, code, errOut)
				}
				var rep struct {
					AsOf       replayResult `json:"asOf"`
					Balances   any          `json:"balances"`
					OpenOrders []struct {
						ID             int64
						State, Side    string
						Amount, Filled json.Number
					} `json:"openOrders"`
					Pnl json.RawMessage `json:"pnlOverview"`
				}
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("replay output: %v\n%s", err, out)
				}
				if withSnapshots != (rep.AsOf.Snapshot != 0) && how[0] == "--position" {
					t.Fatalf("capture %d %v: started from the snapshot at %d (snapshots on: %v)\n%s", i, how, rep.AsOf.Snapshot, withSnapshots, errOut)
				}
				if rep.AsOf.Snapshot != 0 {
					fromSnapshots++
				}
				if rep.AsOf.Position != c.position {
					t.Fatalf("capture %d %v: replayed to position %d, live was at %d", i, how, rep.AsOf.Position, c.position)
				}
				if !reflect.DeepEqual(rep.Balances, c.balances) {
					t.Fatalf("capture %d %v: balances\n%v\nlive\n%v", i, how, rep.Balances, c.balances)
				}
				open := map[int64]string{}
				for _, o := range rep.OpenOrders {
					open[o.ID] = fmt.Sprintf("%s %s filled %s of %s", o.State, o.Side, domain.MustDecimal(o.Filled.String()), domain.MustDecimal(o.Amount.String()))
				}
				if !reflect.DeepEqual(open, c.openOrders) {
					t.Fatalf("capture %d %v: open orders\n%v\nlive\n%v", i, how, open, c.openOrders)
				}
				var pnl any
				json.Unmarshal(rep.Pnl, &pnl)
				if !reflect.DeepEqual(pnl, c.pnl) {
					t.Fatalf("capture %d %v: pnl overview\n%s\nlive\n%v", i, how, rep.Pnl, c.pnl)
				}
				if how[0] == "--until" {
					if got := asOf("/api/v1/balances", c.time, ""); !reflect.DeepEqual(got, rep.Balances) {
						t.Fatalf("capture %d: balances?asOf\n%v\nreplay --until\n%v", i, got, rep.Balances)
					}
					if got := asOf("/api/v1/pnl/overview", c.time, `{"timezone":"UTC","keys":["All"]}`); !reflect.DeepEqual(got, pnl) {
						t.Fatalf("capture %d: pnl/overview?asOf\n%v\nreplay --until\n%s", i, got, rep.Pnl)
					}
				}
			}
		}
	}
	if fromSnapshots < len(caps) {
		t.Fatalf("%d replays started from a snapshot, want at least %d", fromSnapshots, len(caps))
	}
	// The captures differ from one another: the comparison sees changes.
	if reflect.DeepEqual(caps[0].openOrders, caps[4].openOrders) || reflect.DeepEqual(caps[1].pnl, caps[3].pnl) {
		t.Fatal("the session did not change the answers between captures")
	}

	// Without --until or --position, replay means now: the whole log.
	out, errOut, code := auditRun(t, "replay", "--data", dir, "--json")
	if code != 0 {
		t.Fatalf("replay without --until/--position: exit %d %s", code, errOut)
	}
	var now struct {
		Cut      string       `json:"cut"`
		AsOf     replayResult `json:"asOf"`
		Balances any          `json:"balances"`
		Pnl      struct {
			Total any `json:"total"`
		} `json:"pnlOverview"`
	}
	if err := json.Unmarshal([]byte(out), &now); err != nil {
		t.Fatal(err)
	}
	last := caps[len(caps)-1]
	if now.AsOf.Position != last.position || !reflect.DeepEqual(now.Balances, last.balances) ||
		!reflect.DeepEqual(now.Pnl.Total, last.pnl.(map[string]any)["total"]) || now.Cut != "the whole log, as of now" {
		t.Fatalf("replay of the whole log: cut %q position %d, balances %v, total %v; live: position %d, %v, %v", now.Cut, now.AsOf.Position,
			now.Balances, now.Pnl.Total, last.position, last.balances, last.pnl.(map[string]any)["total"])
	}
}
