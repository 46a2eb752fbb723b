package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/engine"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
)

// logCut says how much of the log a replay applies (projections.Cut:
// replay reads it in trade time, restore as a prefix).
type logCut = projections.Cut

// parseTimeIn reads a TIME argument: RFC 3339, milliseconds since the
// epoch, or, with a non-nil loc, a date (2026-03-04) as the end of that day
// (its last millisecond) in loc.
func parseTimeIn(s string, loc *time.Location) (int64, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	if loc != nil {
		if d, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
			return d.AddDate(0, 0, 1).UnixMilli() - 1, nil
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if loc != nil {
			return 0, fmt.Errorf("%q is neither a date (2024-05-01), RFC 3339 (2024-05-01T12:00:00Z) nor milliseconds since the epoch", s)
		}
		return 0, fmt.Errorf("%q is neither RFC 3339 (2024-05-01T12:00:00Z) nor milliseconds since the epoch", s)
	}
	return t.UnixMilli(), nil
}

// newLogCut builds a cut from --until and --position values ("" and 0 when
// not given); a date in --until is read in loc (nil: dates refused).
func newLogCut(until string, position uint64, loc *time.Location) (logCut, error) {
	var c logCut
	if until != "" && position != 0 {
		return c, errors.New("give --until or --position, not both")
	}
	if until != "" {
		ms, err := parseTimeIn(until, loc)
		if err != nil {
			return c, fmt.Errorf("--until: %w", err)
		}
		c.ByTime, c.Until = true, ms
	}
	c.Position = position
	return c, nil
}

// describeCut says in words which cut a replay used; times are shown in loc.
func describeCut(c logCut, loc *time.Location) string {
	switch {
	case c.Position != 0:
		return fmt.Sprintf("log position ≤ %d", c.Position)
	case c.ByTime && c.TradeTime:
		return fmt.Sprintf("trade time ≤ %s (each event by its own time: a fill by the exchange's time of the trade, any other event by when it was recorded)",
			time.UnixMilli(c.Until).In(loc).Format(time.RFC3339Nano))
	case c.ByTime:
		return fmt.Sprintf("log prefix recorded ≤ %s", time.UnixMilli(c.Until).In(loc).Format(time.RFC3339Nano))
	default:
		return "the whole log, as of now"
	}
}

// replayResult says where a replay stopped.
type replayResult = projections.ReplayResult

// replayLog feeds the log, in order, up to the cut, into every projection.
// A projection that fails on an event is reported through warn and the
// replay goes on, as the live runner does.
// With d (--from-snapshot) it starts from d's newest read-model snapshot
// within the cut; without, from the first event: the log alone.
func replayLog(ctx context.Context, store domain.EventStore, d *DataDir, cut logCut, projs []projections.Projection, prog *progress, warn io.Writer) (replayResult, error) {
	o := replayOptions(prog, warn)
	if d != nil {
		o = snapshotReplay(o, d, warn)
	}
	return projections.ReplayCut(ctx, store, cut, projs, o)
}

// replayOptions shows a replay's progress on prog and its failures on warn
// (either may be nil).
func replayOptions(prog *progress, warn io.Writer) projections.ReplayOptions {
	var o projections.ReplayOptions
	if prog != nil {
		o.Progress = func(events int64, position, head uint64) { prog.update(events, position, head) }
	}
	if warn != nil {
		o.Warn = func(p projections.Projection, e *domain.Event, err error) {
			fmt.Fprintf(warn, "replay: %s could not apply %s/%d (position %d): %s\n", p.Name(), e.Stream, e.Version, e.Position, domain.ErrorMessage(err))
		}
	}
	return o
}

// openOrder is an open order as replay shows it.
type openOrder struct {
	ID        int64             `json:"id"`
	Exchange  string            `json:"exchange"`
	Pair      string            `json:"pair"`
	Side      domain.Side       `json:"side"`
	Kind      domain.OrderKind  `json:"kind"`
	State     domain.OrderState `json:"state"`
	Amount    decimal.Number    `json:"amount"`
	Filled    decimal.Number    `json:"filled"`
	Price     decimal.Number    `json:"price"`
	StopPrice decimal.Number    `json:"stopPrice,omitzero"`
	Time      int64             `json:"time"` // of the order's last event
}

// openOrderList is the engine's unfinished orders as replay shows them.
func openOrderList(us []engine.Unfinished) []openOrder {
	out := make([]openOrder, 0, len(us))
	for _, u := range us {
		o := &u.Order
		out = append(out, openOrder{
			ID: o.OrderID, Exchange: o.Exchange, Pair: o.Pair, Side: o.Side, Kind: o.Kind, State: o.State,
			Amount: decimal.Number(o.Amount), Filled: decimal.Number(o.Filled), Price: decimal.Number(o.Price),
			StopPrice: decimal.Number(o.StopPrice), Time: u.Updated,
		})
	}
	return out
}

// balanceEntries is what POST /api/v1/balances answers for obs (the
// route's own rule, tlhttp.BalanceEntries); the replay-equals-live test
// holds replay to the live handler's answer.
func balanceEntries(obs []domain.BalancesObserved) []tlhttp.BalanceEntry {
	return tlhttp.BalanceEntries(obs)
}

// ReplayReport is what replay prints: the state as of the cut.
type ReplayReport struct {
	// Cut says which part of the log the state is of (logCut.describe).
	Cut string `json:"cut"`
	// Source says what the state was built from (replaySource): the log
	// alone, or a read-model snapshot and the log after it.
	Source     string                `json:"source"`
	AsOf       replayResult          `json:"asOf"`
	Balances   []tlhttp.BalanceEntry `json:"balances"`
	OpenOrders []openOrder           `json:"openOrders"`
	Pnl        *projections.Overview `json:"pnlOverview,omitempty"`
	PnlError   string                `json:"pnlError,omitempty"`
}

// replayState rebuilds the read models up to cut and reports balances,
// open orders and the PNL overview (keys, quote and timezone as in POST
// pnl/overview, "now" being the cut's time: the time given, the last
// event's for a position, now for the whole log).
//
// With d (--from-snapshot) it starts from d's newest read-model snapshot
// within the cut; without, from the first event.
func replayState(ctx context.Context, store domain.EventStore, d *DataDir, cut logCut, method domain.PnlMethod, scope projections.PnlScope, loc *time.Location, now time.Time, prog *progress, warn io.Writer) (*ReplayReport, error) {
	// The engine's order state (the open orders come from it), without
	// the rest of the engine: nothing is placed here.
	orders := engine.NewOrders(nil)
	o := replayOptions(prog, warn)
	if d != nil {
		o = snapshotReplay(o, d, warn)
	}
	st, err := projections.BuildState(ctx, store, cut, method, o, orders)
	if prog != nil {
		prog.done()
	}
	if err != nil {
		return nil, err
	}
	res := st.Result()
	switch {
	case cut.ByTime:
		now = time.UnixMilli(cut.Until)
	case cut.Position != 0:
		now = time.UnixMilli(res.Time)
	}
	rep := &ReplayReport{Cut: describeCut(cut, loc), Source: replaySource(res), AsOf: res, Balances: balanceEntries(st.Balances.Balances()), OpenOrders: openOrderList(orders.Unfinished())}
	ov, err := st.Ledger.Overview(projections.OverviewQuery{Scope: scope, Loc: loc, Now: now.In(loc)})
	if err != nil {
		rep.PnlError = domain.ErrorMessage(err)
	} else {
		rep.Pnl = ov
	}
	return rep, nil
}

func runReplay(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("replay", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	until := fs.String("until", "", "replay up to this time, in trade time: a date (its end in --timezone), RFC 3339 or milliseconds since the epoch (default: now)")
	position := fs.Uint64("position", 0, "replay up to this log position (inclusive)")
	asJSON := fs.Bool("json", false, "print the state as JSON")
	method := fs.String("pnl-method", "lofo", "lot matching for PNL: "+domain.PnlMethodNames+" (as the service uses)")
	tz := fs.String("timezone", "UTC", "IANA timezone of the PNL periods and days")
	keys := fs.String("keys", "All", "pair keys of the PNL overview, comma-separated (All: every pair)")
	quote := fs.String("quote", "", "quote currency of the PNL overview when the pairs span several")
	fromSnapshot := fs.Bool("from-snapshot", false, fromSnapshotUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := domain.ParsePnlMethod(*method)
	if err != nil {
		return fmt.Errorf("--pnl-method: %s", domain.ErrorMessage(err))
	}
	loc, err := projections.LoadZone(*tz)
	if err != nil {
		return fmt.Errorf("--timezone: %s", domain.ErrorMessage(err))
	}
	cut, err := newLogCut(*until, *position, loc)
	if err != nil {
		return err
	}
	cut.TradeTime = true
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	scope := projections.PnlScope{Keys: strings.Split(*keys, ","), Quote: *quote}
	rep, err := replayState(ctx, d.Store, snapshotsIf(*fromSnapshot, d), cut, m, scope, loc, time.Now(), newProgress(env.Stderr, "replay"), env.Stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReplay(env.Stdout, rep, loc)
	}
	fmt.Fprintf(env.Stderr, "replayed %d events (cut: %s; %d later events left out; %s) up to position %d in %s\n", rep.AsOf.Events,
		rep.Cut, rep.AsOf.Later, rep.Source, rep.AsOf.Position, time.Since(start).Round(time.Millisecond))
	return nil
}

func printReplay(w io.Writer, rep *ReplayReport, loc *time.Location) {
	fmt.Fprintf(w, "State as of %s\n%d events applied, the last at position %d (%s)", rep.Cut, rep.AsOf.Events, rep.AsOf.Position,
		time.UnixMilli(rep.AsOf.Time).In(loc).Format(time.RFC3339))
	if rep.AsOf.Later > 0 {
		fmt.Fprintf(w, "; %d later events left out", rep.AsOf.Later)
	}
	fmt.Fprintf(w, "\nBuilt %s\n\n", rep.Source)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BALANCES\nExchange\tAsset\tAvailable\tOn order")
	for _, b := range rep.Balances {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Exchange, b.Asset, b.Available, b.OnOrder)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "OPEN ORDERS\nId\tExchange\tPair\tSide\tKind\tState\tAmount\tFilled\tPrice")
	for _, o := range rep.OpenOrders {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.ID, o.Exchange, o.Pair, o.Side, o.Kind, o.State,
			decimal.Decimal(o.Amount), decimal.Decimal(o.Filled), decimal.Decimal(o.Price))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if rep.Pnl == nil {
		fmt.Fprintf(w, "PNL: %s\n", rep.PnlError)
		return
	}
	p := rep.Pnl
	fmt.Fprintf(w, "PNL (%s)\n", p.Unit)
	fmt.Fprintln(tw, "today\tyesterday\tweek\tmonth\tyear\ttotal\ttrades")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", num(p.Today.Pnl), num(p.Yesterday.Pnl), num(p.WeekAgo.Pnl), num(p.MonthAgo.Pnl), num(p.YearAgo.Pnl), num(p.Total.Pnl), p.Total.NumberOfTrades)
	tw.Flush()
	if len(p.UnconvertedFees) > 0 {
		assets := make([]string, 0, len(p.UnconvertedFees))
		for a := range p.UnconvertedFees {
			assets = append(assets, a)
		}
		sort.Strings(assets)
		fmt.Fprint(w, "Fees without a rate (in no figure above):")
		for _, a := range assets {
			fmt.Fprintf(w, " %s %s", num(p.UnconvertedFees[a]), a)
		}
		fmt.Fprintln(w)
	}
}

// num shows a JSON number value as its JSON text.
func num(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
