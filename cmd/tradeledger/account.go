package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/projections"
)

// The exchange accounts, reconciled (DESIGN §18): `tradeledger sync`
// backfills an account's activity from a date, `tradeledger reconcile`
// reconciles it on demand, and serve's reconciliation routes answer the
// same (reconciliation below).

// orderFinder finds the order of the log an exchange knows by a client
// order id this service sent, once the order finished (the engine keeps
// the unfinished ones): the id carries its request's time, the order index
// lists the exchange pair's orders requested then, and the one whose
// OrderRequested has that id is it.
func orderFinder(list *projections.OrderList, store domain.EventStore) func(ctx context.Context, exchange, pair, client string) (int64, bool, error) {
	return func(ctx context.Context, exchange, pair, client string) (int64, bool, error) {
		t, ok := domain.ClientOrderTime(client)
		if !ok {
			return 0, false, nil
		}
		// The request's time is the id's millisecond: the orders requested
		// then are read first, the others within two seconds after them,
		// nearest first — one stream read an order found, not one per
		// order listed around it, and every page of them, not the newest
		// 100 only.
		tried := map[int64]bool{}
		for _, w := range [][2]int64{{t, t + 1}, {t - 2000, t + 2000}} {
			var cands []projections.ListedOrder
			for page := 0; ; page++ {
				p := list.Page(projections.OrderFilter{Keys: []string{domain.PairKey(exchange, pair)}, From: w[0], To: w[1]}, page, orderFinderPage)
				for _, o := range p.Orders {
					if !tried[o.ID] {
						cands = append(cands, o)
					}
				}
				if (page+1)*orderFinderPage >= p.Total || len(p.Orders) == 0 {
					break
				}
			}
			slices.SortStableFunc(cands, func(a, b projections.ListedOrder) int { return cmp.Compare(absMs(a.Time-t), absMs(b.Time-t)) })
			for _, o := range cands {
				tried[o.ID] = true
				found, err := requestedAs(ctx, store, o.ID, client)
				if err != nil || found {
					return o.ID, found && err == nil, err
				}
			}
		}
		return 0, false, nil
	}
}

// orderFinderPage is the page size orderFinder lists the order index by.
const orderFinderPage = 100

func absMs(d int64) int64 { return max(d, -d) }

// requestedAs reports whether order id's OrderRequested carries the client
// order id client (its stream's first event, read alone).
func requestedAs(ctx context.Context, store domain.EventStore, id int64, client string) (bool, error) {
	it := store.ReadStream(ctx, domain.OrderStream(id), 0, 1)
	defer it.Close()
	found := false
	if it.Next() {
		e := it.Event()
		var p domain.OrderRequested
		if e.Type == domain.TypeOrderRequested && e.Decode(&p) == nil {
			found = p.ClientOrderID == client
		}
	}
	return found, it.Err()
}

// reconciliation is what the reconciliation routes call (http.Reconciler):
// the engine's sync for a reconciliation now, the log for one as of a past
// time, the accounts' read model for their state.
type reconciliation struct {
	store    domain.EventStore
	sync     *engine.AccountSync
	accounts *projections.Accounts
}

// Reconcile reconciles an exchange account over [from, to) now
// (engine.AccountSync.Reconcile).
func (r reconciliation) Reconcile(ctx context.Context, exchange string, from, to int64) (domain.Reconciliation, error) {
	return r.sync.Reconcile(ctx, exchange, from, to)
}

// ReconcileAsOf reconciles an exchange account as the log held it at asOf
// (ms): the accounts' read model rebuilt from the log up to then, in
// trade time, as replay --until rebuilds the others.
func (r reconciliation) ReconcileAsOf(ctx context.Context, exchange string, from, to, asOf int64) (domain.Reconciliation, error) {
	book := projections.NewAccounts()
	if _, err := projections.ReplayCut(ctx, r.store, projections.AsOf(asOf), []projections.Projection{book}, projections.ReplayOptions{}); err != nil {
		return domain.Reconciliation{}, err
	}
	if _, ok := book.View(exchange); !ok {
		return domain.Reconciliation{}, domain.Errorf(domain.ENOTFOUND, "exchange %q had no account activity in the log as of then", exchange)
	}
	return engine.LogReconciliation(ctx, r.store, book, exchange, from, to, asOf, 0)
}

// Activity lists an exchange account's facts of [from, to) from the log,
// newest first (engine.AccountActivity).
func (r reconciliation) Activity(ctx context.Context, exchange string, from, to int64, limit int) ([]domain.AccountFact, bool, error) {
	return engine.AccountActivity(ctx, r.store, r.accounts, exchange, from, to, limit)
}

// Accounts returns what the read model knows of every exchange account.
func (r reconciliation) Accounts() []domain.AccountView {
	var out []domain.AccountView
	for _, x := range r.accounts.Exchanges() {
		if v, ok := r.accounts.View(x); ok && (v.Opened || len(v.Open) > 0) {
			out = append(out, v)
		}
	}
	return out
}

// Discrepancies returns the discrepancies still open.
func (r reconciliation) Discrepancies() []domain.BalanceDiscrepancy {
	return r.accounts.Discrepancies()
}

// paperActivity is the simulator as POST /api/v1/paper/activity uses it.
type paperActivity struct{ m *Main }

// Simulated reports whether an exchange trades on the paper exchange now.
func (p paperActivity) Simulated(exchange string) (bool, string) {
	ch, err := p.m.Connectors.Choose(p.m.models.config.Current(), exchange)
	if err != nil {
		return false, domain.ErrorMessage(err)
	}
	return ch.Connector == p.m.Simulator.Connector().Name, ch.Reason
}

// DecideActivity decides the activity on its paper account.
func (p paperActivity) DecideActivity(clock domain.Clock, a domain.PaperActivity) ([]domain.Event, error) {
	return p.m.Simulator.DecideActivity(clock, a)
}

// openAccounts opens the data dir with serve's read models replayed (from
// the newest snapshot when there is one), its simulator configured, for a
// command that syncs or reconciles exchange's account beside a running
// serve; an exchange the configuration does not name is refused
// (checkExchange).
func openAccounts(ctx context.Context, data, storeURL, exchange string, stderr io.Writer) (*Main, error) {
	m := NewMain()
	m.Config.Data, m.Config.EventStore = data, storeURL
	m.Logger = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.AddSync(stderr), zap.WarnLevel))
	m.ManualCycles, m.ManualCheckpoints = true, true
	if err := m.openModels(ctx); err != nil {
		m.Close()
		return nil, err
	}
	m.loadSnapshot(ctx)
	if err := m.Runner.Start(ctx); err != nil {
		m.Close()
		return nil, err
	}
	m.wireSimulator(m.models.config)
	if err := m.Connectors.Check(m.models.config.Current()); err != nil {
		m.Close()
		return nil, err
	}
	if err := checkExchange(m, exchange); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// checkExchange refuses an exchange the configuration does not name.
func checkExchange(m *Main, exchange string) error {
	if exchange == "" {
		return errors.New("--exchange NAME is required (an exchange of config.exchanges)")
	}
	if _, ok := m.models.config.Current().Exchange(exchange); !ok {
		return fmt.Errorf("--exchange: %q is not in config.exchanges (%s)", exchange, strings.Join(m.models.config.Current().ExchangeNames(), ", "))
	}
	return nil
}

// runSync backfills an exchange account's activity from --since to now.
func runSync(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("sync", env.Stderr)
	data, storeURL := dataDirFlags(fs)
	exchange := fs.String("exchange", "", "the exchange (config.exchanges.<name>)")
	since := fs.String("since", "", "read the account's history from this time: a date (UTC), RFC 3339 or ms")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *since == "" {
		return errors.New("--since DATE is required: the time to read the account's history from")
	}
	from, err := parseSince(*since)
	if err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	m, err := openAccounts(ctx, *data, *storeURL, *exchange, env.Stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	terminal := isTerminal(env.Stderr)
	start := time.Now()
	st, err := m.Engine.Accounts.Backfill(ctx, *exchange, time.UnixMilli(from), func(p engine.SyncProgress) {
		if terminal {
			done := 100.0
			if p.To > p.From {
				done = 100 * float64(p.Reached-p.From) / float64(p.To-p.From)
			}
			scope := string(p.Kind)
			if p.Scope != "" {
				scope += " " + p.Scope
			}
			fmt.Fprintf(env.Stderr, "\rsyncing %-24.24s %5.1f%% to %s: %d read, %d new", scope, done,
				time.UnixMilli(p.Reached).UTC().Format(time.DateOnly), p.Stats.Listed, p.Stats.Recorded)
		}
	})
	if terminal {
		fmt.Fprintln(env.Stderr)
	}
	summary := syncSummary(*exchange, st, from, time.Since(start))
	if err != nil {
		fmt.Fprintln(env.Stdout, summary)
		return fmt.Errorf("sync stopped (run it again: it resumes where it stopped, and records nothing twice): %w", err)
	}
	fmt.Fprintln(env.Stdout, summary)
	return nil
}

// syncSummary is the line sync prints at its end: what it read, from
// when (and how many histories it continued from where an earlier sync had read to),
// and what was new.
func syncSummary(exchange string, st engine.SyncStats, from int64, took time.Duration) string {
	read := fmt.Sprintf("%s read since %s", counted(st.Listed, "fact"), time.UnixMilli(from).UTC().Format(time.RFC3339))
	if st.Resumed > 0 {
		read += fmt.Sprintf(" (%d of %d histories continued from where an earlier sync had read to)", st.Resumed, st.Histories)
	}
	return fmt.Sprintf("%s: %s, %d new (%s, %s, %s, %s; own fills: %d matched, %d backfilled, %d mismatched) in %s",
		exchange, read, st.Recorded, counted(st.External, "external trade"), counted(st.Deposits, "deposit"),
		counted(st.Withdrawals, "withdrawal"), counted(st.Conversions, "conversion"),
		st.Matched, st.Backfilled, st.Mismatched, took.Round(time.Millisecond))
}

// counted writes n and the noun, plural unless n is 1.
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// parseSince reads --since and --from: a date (its first instant, UTC),
// RFC 3339 or ms.
func parseSince(s string) (int64, error) {
	if d, err := time.Parse(time.DateOnly, strings.TrimSpace(s)); err == nil {
		return d.UnixMilli(), nil
	}
	return parseTimeIn(s, nil)
}

// runReconcile reconciles an exchange account over --from (default: a day
// ago) to --to (default: now) and prints the reconciliation.
func runReconcile(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("reconcile", env.Stderr)
	data, storeURL := dataDirFlags(fs)
	exchange := fs.String("exchange", "", "the exchange (config.exchanges.<name>)")
	fromFlag := fs.String("from", "", "start of the window, by exchange time (a date in UTC, RFC 3339 or ms; default: 24 hours ago)")
	toFlag := fs.String("to", "", "end of the window, exclusive (default: now)")
	asJSON := fs.Bool("json", false, "print the reconciliation as JSON (the API's shape)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	from, to := now-24*time.Hour.Milliseconds(), int64(0)
	var err error
	if *fromFlag != "" {
		if from, err = parseSince(*fromFlag); err != nil {
			return fmt.Errorf("--from: %w", err)
		}
	}
	if *toFlag != "" {
		if to, err = parseSince(*toFlag); err != nil {
			return fmt.Errorf("--to: %w", err)
		}
		if to <= from {
			return errors.New("--to must be after --from")
		}
	}
	m, err := openAccounts(ctx, *data, *storeURL, *exchange, env.Stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	r, err := m.Engine.Accounts.Reconcile(ctx, *exchange, from, to)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printReconciliation(env.Stdout, r, from)
	if r.Status != domain.ReconciledOK {
		return exitCode(2)
	}
	return nil
}

// printReconciliation writes a reconciliation for a person.
func printReconciliation(w io.Writer, r domain.Reconciliation, from int64) {
	fmt.Fprintf(w, "%s: %s (checked %s, window from %s)\n", r.Exchange, r.Status, r.CheckedAt, time.UnixMilli(from).UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "%-10s %22s %22s %22s\n", "asset", "ledger", "exchange", "difference")
	for _, a := range r.Assets {
		mark := ""
		if !decimal.Decimal(a.Difference).IsZero() {
			mark = "  ← differs"
		}
		fmt.Fprintf(w, "%-10s %22s %22s %22s%s\n", a.Asset, a.Ledger, a.Exchange, a.Difference, mark)
	}
	f, a := r.Fills, r.Activity
	fmt.Fprintf(w, "fills: %d matched, %d missing (recorded now or by an earlier sync), %d extra (in the log, not listed), %d mismatched\n",
		f.Matched, f.Missing, f.Extra, f.Mismatched)
	fmt.Fprintf(w, "activity: %s (%d external), %s, %s, %s\n",
		counted(a.Trades, "trade"), a.ExternalTrades, counted(a.Deposits, "deposit"), counted(a.Withdrawals, "withdrawal"), counted(a.Conversions, "conversion"))
}
