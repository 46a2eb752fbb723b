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
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/projections"
)

// logCut says how much of the log a replay applies: the events up to and
// including Position (0: no position bound), and, with ByTime, the events
// of time ≤ Until (ms). Neither: the whole log.
//
// A time cut reads the log one of two ways:
//   - as a prefix (restore): it stops at the first event stamped after
//     Until, so the state shown is one the live service actually held;
//   - in trade time (TradeTime, replay): every event counts by its own time
//     (ownTime: a fill by the exchange's time of the trade, anything else by
//     when it was recorded) and the log is read to its end, so that a
//     history imported today replays to a date inside it. Within a stream,
//     the first event past Until ends that stream's part of the cut (an
//     order is never shown filled before it was accepted).
//
// On a log recorded live by one service the two readings agree: its events
// are stamped in commit order.
type logCut struct {
	Position  uint64
	ByTime    bool
	Until     int64
	TradeTime bool
}

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

// ownTime is the time an event speaks of: a fill's trade time
// (domain.FillTime: the exchange's time of the trade, or the recorded time
// of a fill without one, as imported fills are), and when it was recorded
// for any other event.
func ownTime(e *domain.Event) int64 {
	if e.Type == domain.TypeOrderFilled {
		var f domain.OrderFilled
		if e.Decode(&f) == nil {
			return domain.FillTime(e, &f)
		}
	}
	return e.Time
}

// describe says in words which cut a replay used; times are shown in loc.
func (c logCut) describe(loc *time.Location) string {
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
type replayResult struct {
	Events   int64  `json:"events"`   // events applied
	Position uint64 `json:"position"` // position of the last applied event
	Time     int64  `json:"time"`     // its time (ms)
	Failures int64  `json:"failures"` // events some projection could not apply
	// Later counts the events a trade-time cut left out (past the cut, or
	// after their stream's first event past it).
	Later int64 `json:"later,omitempty"`
}

// replayLog feeds the log, in order, up to the cut, into every projection.
// A projection that fails on an event is reported through warn and the
// replay goes on, as the live runner does.
func replayLog(ctx context.Context, store domain.EventStore, cut logCut, projs []projections.Projection, prog *progress, warn io.Writer) (replayResult, error) {
	var res replayResult
	head, _ := store.Head(ctx)
	ended := map[string]struct{}{} // streams a trade-time cut has ended
	apply := func(e *domain.Event) bool {
		if cut.Position != 0 && e.Position > cut.Position {
			return false
		}
		if cut.ByTime && !cut.TradeTime && e.Time > cut.Until {
			return false
		}
		if cut.ByTime && cut.TradeTime {
			if _, done := ended[e.Stream]; done {
				res.Later++
				return true
			}
			if ownTime(e) > cut.Until {
				ended[e.Stream] = struct{}{}
				res.Later++
				return true
			}
		}
		failed := false
		for _, p := range projs {
			if err := p.Apply(e); err != nil {
				failed = true
				if warn != nil {
					fmt.Fprintf(warn, "replay: %s could not apply %s/%d (position %d): %s\n", p.Name(), e.Stream, e.Version, e.Position, domain.ErrorMessage(err))
				}
			}
		}
		if failed {
			res.Failures++
		}
		res.Events++
		res.Position, res.Time = e.Position, e.Time
		if prog != nil && res.Events%domain.VerifyProgressEvery == 0 {
			prog.update(res.Events, e.Position, head)
		}
		return true
	}
	// Several read models decode the same order payloads: the reading
	// goroutine decodes them once (domain.Event.Predecode).
	err := domain.ReadAheadPredecoded(ctx, store.ReadAll(ctx, 0, 0), func(batch []domain.Event) bool {
		for i := range batch {
			if !apply(&batch[i]) {
				return false
			}
		}
		return true
	})
	if prog != nil {
		prog.done()
	}
	if err != nil {
		return res, fmt.Errorf("replay: read log: %w", err)
	}
	return res, nil
}

// openOrder is an open order as replay shows it.
type openOrder struct {
	ID        int64             `json:"id"`
	Exchange  string            `json:"exchange"`
	Pair      string            `json:"pair"`
	Side      domain.Side       `json:"side"`
	Kind      domain.OrderKind  `json:"kind"`
	State     domain.OrderState `json:"state"`
	Amount    domain.Number     `json:"amount"`
	Filled    domain.Number     `json:"filled"`
	Price     domain.Number     `json:"price"`
	StopPrice domain.Number     `json:"stopPrice,omitzero"`
	Time      int64             `json:"time"` // of the order's last event
}

// openOrderList is the engine's unfinished orders as replay shows them.
func openOrderList(us []engine.Unfinished) []openOrder {
	out := make([]openOrder, 0, len(us))
	for _, u := range us {
		o := &u.Order
		out = append(out, openOrder{
			ID: o.OrderID, Exchange: o.Exchange, Pair: o.Pair, Side: o.Side, Kind: o.Kind, State: o.State,
			Amount: domain.Number(o.Amount), Filled: domain.Number(o.Filled), Price: domain.Number(o.Price),
			StopPrice: domain.Number(o.StopPrice), Time: u.Updated,
		})
	}
	return out
}

// balanceEntry is an entry of POST /api/v1/balances (spec "Balance entry"),
// amounts as 8-decimal strings; the replay-equals-live test holds it to the
// live handler's answer.
type balanceEntry struct {
	Asset     string `json:"Asset"`
	Exchange  string `json:"Exchange"`
	Available string `json:"Available Qty"`
	OnOrder   string `json:"On Order"`
}

func balanceEntries(obs []domain.BalancesObserved) []balanceEntry {
	out := []balanceEntry{}
	for _, o := range obs {
		for _, b := range o.Balances {
			out = append(out, balanceEntry{Asset: b.Asset, Exchange: o.Exchange, Available: b.Available.String(), OnOrder: b.OnOrder.String()})
		}
	}
	// The order POST /api/v1/balances answers in.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Exchange != out[j].Exchange {
			return out[i].Exchange < out[j].Exchange
		}
		return out[i].Asset < out[j].Asset
	})
	return out
}

// ReplayReport is what replay prints: the state as of the cut.
type ReplayReport struct {
	// Cut says which part of the log the state is of (logCut.describe).
	Cut        string                `json:"cut"`
	AsOf       replayResult          `json:"asOf"`
	Balances   []balanceEntry        `json:"balances"`
	OpenOrders []openOrder           `json:"openOrders"`
	Pnl        *projections.Overview `json:"pnlOverview,omitempty"`
	PnlError   string                `json:"pnlError,omitempty"`
}

// replayState rebuilds the read models up to cut and reports balances,
// open orders and the PNL overview (keys, quote and timezone as in POST
// pnl/overview, "now" being the cut's time: the time given, the last
// event's for a position, now for the whole log).
func replayState(ctx context.Context, store domain.EventStore, cut logCut, method domain.PnlMethod, scope projections.PnlScope, loc *time.Location, now time.Time, prog *progress, warn io.Writer) (*ReplayReport, error) {
	ledger := projections.NewLedger(method)
	// The engine's order manager as a projection only (it never places
	// orders here): balances and the open orders come from it.
	trader := engine.NewTrader(nil, nil, domain.SystemClock{})
	res, err := replayLog(ctx, store, cut, []projections.Projection{ledger, trader}, prog, warn)
	if err != nil {
		return nil, err
	}
	switch {
	case cut.ByTime:
		now = time.UnixMilli(cut.Until)
	case cut.Position != 0:
		now = time.UnixMilli(res.Time)
	}
	rep := &ReplayReport{Cut: cut.describe(loc), AsOf: res, Balances: balanceEntries(trader.Balances()), OpenOrders: openOrderList(trader.Unfinished())}
	ov, err := ledger.Overview(projections.OverviewQuery{Scope: scope, Loc: loc, Now: now.In(loc)})
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
	rep, err := replayState(ctx, d.Store, cut, m, scope, loc, time.Now(), newProgress(env.Stderr, "replay"), env.Stderr)
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
	fmt.Fprintf(env.Stderr, "replayed %d events (cut: %s; %d later events left out) up to position %d in %s\n", rep.AsOf.Events,
		rep.Cut, rep.AsOf.Later, rep.AsOf.Position, time.Since(start).Round(time.Millisecond))
	return nil
}

func printReplay(w io.Writer, rep *ReplayReport, loc *time.Location) {
	fmt.Fprintf(w, "State as of %s\n%d events applied, the last at position %d (%s)", rep.Cut, rep.AsOf.Events, rep.AsOf.Position,
		time.UnixMilli(rep.AsOf.Time).In(loc).Format(time.RFC3339))
	if rep.AsOf.Later > 0 {
		fmt.Fprintf(w, "; %d later events left out", rep.AsOf.Later)
	}
	fmt.Fprint(w, "\n\n")
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
			domain.Decimal(o.Amount), domain.Decimal(o.Filled), domain.Decimal(o.Price))
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
}

// num shows a JSON number value as its JSON text.
func num(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
