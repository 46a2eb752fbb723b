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
	"github.com/tradeledger/tradeledger/exchange/trading"
	"github.com/tradeledger/tradeledger/projections"
)

// logCut says how much of the log a replay applies: the events up to and
// including Position (0: no position bound), and, with ByTime, the longest
// prefix of the log whose events all have time ≤ Until (ms).
//
// A time cut stops at the first event stamped after Until rather than
// skipping it and going on, so that a replay always shows a state the live
// service actually held: a prefix of the log. On one service with one clock
// the two readings agree; only events committed out of their clock order (a
// writer that stamped early and committed late) could make them differ.
type logCut struct {
	Position uint64
	ByTime   bool
	Until    int64
}

// parseTime reads a TIME argument: RFC 3339 or milliseconds since the epoch.
func parseTime(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither RFC 3339 (2024-05-01T12:00:00Z) nor milliseconds since the epoch", s)
	}
	return t.UnixMilli(), nil
}

// newLogCut builds a cut from --until and --position values ("" and 0 when
// not given); required says one of them must be given.
func newLogCut(until string, position uint64, required bool) (logCut, error) {
	var c logCut
	if until != "" && position != 0 {
		return c, errors.New("give --until or --position, not both")
	}
	if until != "" {
		ms, err := parseTime(until)
		if err != nil {
			return c, fmt.Errorf("--until: %w", err)
		}
		c.ByTime, c.Until = true, ms
	}
	c.Position = position
	if required && !c.ByTime && c.Position == 0 {
		return c, errors.New("--until TIME or --position N is required")
	}
	return c, nil
}

// includes reports whether e is within the cut (events come in log order).
func (c logCut) includes(e *domain.Event) bool {
	if c.Position != 0 && e.Position > c.Position {
		return false
	}
	return !c.ByTime || e.Time <= c.Until
}

// replayResult says where a replay stopped.
type replayResult struct {
	Events   int64  `json:"events"`   // events applied
	Position uint64 `json:"position"` // position of the last applied event
	Time     int64  `json:"time"`     // its time (ms)
	Failures int64  `json:"failures"` // events some projection could not apply
}

// replayLog feeds the log, in order, up to the cut, into every projection.
// A projection that fails on an event is reported through warn and the
// replay goes on, as the live runner does.
func replayLog(ctx context.Context, store domain.EventStore, cut logCut, projs []projections.Projection, prog *progress, warn io.Writer) (replayResult, error) {
	var res replayResult
	head, _ := store.Head(ctx)
	apply := func(e *domain.Event) bool {
		if !cut.includes(e) {
			return false
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

// openOrders folds every order stream into domain.Order aggregates (the
// domain's own Apply) and lists those not yet done.
type openOrders struct {
	orders map[string]*domain.Order
}

func newOpenOrders() *openOrders { return &openOrders{orders: map[string]*domain.Order{}} }

func (p *openOrders) Name() string { return "open orders" }

func (p *openOrders) Apply(e *domain.Event) error {
	if !strings.HasPrefix(e.Stream, "order-") {
		return nil
	}
	o := p.orders[e.Stream]
	if o == nil {
		n := domain.NewOrder()
		o = &n
		p.orders[e.Stream] = o
	}
	return o.Apply(e)
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
	StopPrice domain.Number     `json:"stopPrice,omitempty"`
	Time      int64             `json:"time"` // of the order's last event
}

func (p *openOrders) list(times map[string]int64) []openOrder {
	out := []openOrder{}
	for stream, o := range p.orders {
		if o.State == domain.OrderStateNone || o.State.Done() {
			continue
		}
		out = append(out, openOrder{
			ID: o.OrderID, Exchange: o.Exchange, Pair: o.Pair, Side: o.Side, Kind: o.Kind, State: o.State,
			Amount: domain.Number(o.Amount), Filled: domain.Number(o.Filled), Price: domain.Number(o.Price),
			StopPrice: domain.Number(o.StopPrice), Time: times[stream],
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// streamTimes remembers the time of each order stream's last event.
type streamTimes map[string]int64

func (streamTimes) Name() string { return "order times" }
func (s streamTimes) Apply(e *domain.Event) error {
	if strings.HasPrefix(e.Stream, "order-") {
		s[e.Stream] = e.Time
	}
	return nil
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
	AsOf       replayResult          `json:"asOf"`
	Balances   []balanceEntry        `json:"balances"`
	OpenOrders []openOrder           `json:"openOrders"`
	Pnl        *projections.Overview `json:"pnlOverview,omitempty"`
	PnlError   string                `json:"pnlError,omitempty"`
}

// replayState rebuilds the read models up to cut and reports balances,
// open orders and the PNL overview (keys, quote and timezone as in POST
// pnl/overview, "now" being the cut's time: the time given, or the last
// event's).
func replayState(ctx context.Context, store domain.EventStore, cut logCut, method domain.PnlMethod, scope projections.PnlScope, loc *time.Location, prog *progress, warn io.Writer) (*ReplayReport, error) {
	ledger := projections.NewLedger(method)
	trader := trading.NewTrader(nil, nil, domain.SystemClock{}) // a projection only: never places orders here
	orders, times := newOpenOrders(), streamTimes{}
	res, err := replayLog(ctx, store, cut, []projections.Projection{ledger, trader, orders, times}, prog, warn)
	if err != nil {
		return nil, err
	}
	now := res.Time
	if cut.ByTime {
		now = cut.Until
	}
	rep := &ReplayReport{AsOf: res, Balances: balanceEntries(trader.Balances()), OpenOrders: orders.list(times)}
	ov, err := ledger.Overview(projections.OverviewQuery{Scope: scope, Loc: loc, Now: time.UnixMilli(now).In(loc)})
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
	until := fs.String("until", "", "replay up to this time: RFC 3339 or milliseconds since the epoch")
	position := fs.Uint64("position", 0, "replay up to this log position (inclusive)")
	asJSON := fs.Bool("json", false, "print the state as JSON")
	method := fs.String("pnl-method", "lofo", "lot matching for PNL: lofo, fifo or average (as the service uses)")
	tz := fs.String("timezone", "UTC", "IANA timezone of the PNL periods and days")
	keys := fs.String("keys", "All", "pair keys of the PNL overview, comma-separated (All: every pair)")
	quote := fs.String("quote", "", "quote currency of the PNL overview when the pairs span several")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cut, err := newLogCut(*until, *position, true)
	if err != nil {
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
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	scope := projections.PnlScope{Keys: strings.Split(*keys, ","), Quote: *quote}
	rep, err := replayState(ctx, d.Store, cut, m, scope, loc, newProgress(env.Stderr, "replay"), env.Stderr)
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
	fmt.Fprintf(env.Stderr, "replayed %d events up to position %d (%s) in %s\n", rep.AsOf.Events, rep.AsOf.Position,
		time.UnixMilli(rep.AsOf.Time).In(loc).Format(time.RFC3339), time.Since(start).Round(time.Millisecond))
	return nil
}

func printReplay(w io.Writer, rep *ReplayReport, loc *time.Location) {
	fmt.Fprintf(w, "State as of position %d, %s (%d events)\n\n", rep.AsOf.Position, time.UnixMilli(rep.AsOf.Time).In(loc).Format(time.RFC3339), rep.AsOf.Events)
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
