package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/projections"
)

// runBooksExport is `tradeledger export --format F [--from T] [--to T]
// [--out FILE]`: the books of the log (as of --until when given) as a CSV
// (domain/books: the generic fills, Koinly, CoinTracking, CoinTracker or
// the realized report), written as the fills are read. The file appears
// whole or not at all (written beside it, then renamed); without --out
// the CSV goes to stdout. A progress line shows on a terminal, then a
// summary line.
func runBooksExport(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("export", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	format := fs.String("format", "", "fills, koinly, cointracking, cointracker or realized")
	from := fs.String("from", "", "period start: a date (its first instant in --timezone), RFC 3339 or ms (default: the first fill)")
	to := fs.String("to", "", "period end: a date (the end of that day in --timezone), RFC 3339 or ms, exclusive (default: no end)")
	out := fs.String("out", "", "file to write (default: stdout)")
	tz := fs.String("timezone", "UTC", "IANA zone of dates, holding days and the generic and realized CSVs' times")
	method := fs.String("method", "", "lot matching: "+domain.PnlMethodNames+" (default: the configuration's bot.PNL_METHOD, else lofo)")
	scope := fs.String("scope", "", "cost basis scope: "+domain.CostBasisScopeNames+" (default: the configuration's bot.COST_BASIS_SCOPE, else account)")
	currency := fs.String("currency", "", "reporting currency (default: bot.REPORTING_CURRENCY, else the quote with the most fills; none: quote only)")
	keys := fs.String("keys", "", "pair keys, comma separated (default: every pair)")
	holding := fs.Int("holding-period-days", books.DefaultHoldingPeriodDays, "realized: a lot held more than this many days is long term")
	until := fs.String("until", "", "read the log as of this time, in trade time, as replay --until (default: the whole log)")
	fromSnapshot := fs.Bool("from-snapshot", false, fromSnapshotUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := books.ParseFormat(*format)
	if err != nil {
		return fmt.Errorf("--format: %s", domain.ErrorMessage(err))
	}
	loc, err := projections.LoadZone(*tz)
	if err != nil {
		return fmt.Errorf("--timezone: %s", domain.ErrorMessage(err))
	}
	q := books.Query{Loc: loc, HoldingPeriodDays: *holding}
	if q.From, q.To, err = exportPeriod(*from, *to, loc); err != nil {
		return err
	}
	if q.Keys, err = exportKeys(*keys); err != nil {
		return err
	}
	choices, err := parseBookChoices(*method, *scope, *currency)
	if err != nil {
		return err
	}
	cut, err := newLogCut(*until, 0, loc)
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
	prog := newProgress(env.Stderr, "export: replay")
	opts := replayOptions(prog, env.Stderr)
	if *fromSnapshot {
		opts = snapshotReplay(opts, d, env.Stderr)
	}
	st, err := projections.BuildState(ctx, d.Store, cut, domain.LOFO, opts)
	prog.done()
	if err != nil {
		return err
	}
	q.Method, q.Currency, q.Scope = choices.or(st.Ledger.BookDefaults())

	w, commit, err := exportTarget(*out, env.Stdout)
	if err != nil {
		return err
	}
	rowsProg := newProgress(env.Stderr, "export")
	rows, err := books.Export(w, st.Ledger, f, q, func(n int64) { rowsProg.rows(n) })
	rowsProg.done()
	if err = commit(err); err != nil {
		return fmt.Errorf("export %s: %w", f, err)
	}
	el := time.Since(start)
	where := *out
	if where == "" {
		where = "stdout"
	}
	fmt.Fprintf(env.Stderr, "exported %d rows (%s, %s, %s) of the log up to position %d (%s) to %s in %s\n",
		rows, f, q.Method, describePeriod(q, loc), st.Result().Position, replaySource(st.Result()), where, el.Round(time.Millisecond))
	return nil
}

// exportPeriod reads --from and --to (either may be empty: 0, no bound)
// as periodBound does, or returns an error naming the flag; --to must be
// after --from.
func exportPeriod(from, to string, loc *time.Location) (fromMs, toMs int64, err error) {
	if from != "" {
		if fromMs, err = periodBound(from, loc, false); err != nil {
			return 0, 0, fmt.Errorf("--from: %w", err)
		}
	}
	if to != "" {
		if toMs, err = periodBound(to, loc, true); err != nil {
			return 0, 0, fmt.Errorf("--to: %w", err)
		}
		if toMs <= fromMs {
			return 0, 0, errors.New("--to must be after --from")
		}
	}
	return fromMs, toMs, nil
}

// exportKeys reads --keys: pair keys (exchange/pair), comma separated,
// each trimmed; nil when empty (every pair), an error naming --keys when
// one is not a pair key.
func exportKeys(keys string) ([]string, error) {
	if keys == "" {
		return nil, nil
	}
	var out []string
	for _, k := range strings.Split(keys, ",") {
		k = strings.TrimSpace(k)
		if _, pair, err := domain.SplitPairKey(k); err != nil {
			return nil, fmt.Errorf("--keys: %s", domain.ErrorMessage(err))
		} else if _, _, err := domain.SplitPair(pair); err != nil {
			return nil, fmt.Errorf("--keys: %s", domain.ErrorMessage(err))
		}
		out = append(out, k)
	}
	return out, nil
}

// bookChoices are the export's --method, --scope and --currency, checked
// before the log is read; each given one overrides the deployment's
// default (or:), and --currency none asks for the quote only.
type bookChoices struct {
	method   domain.PnlMethod
	scope    domain.CostBasisScope
	currency string
	// hasMethod and hasScope say --method and --scope were given.
	hasMethod, hasScope bool
}

// parseBookChoices checks --method and --scope (empty: not given), or
// returns an error naming the flag.
func parseBookChoices(method, scope, currency string) (bookChoices, error) {
	c := bookChoices{currency: currency, hasMethod: method != "", hasScope: scope != ""}
	var err error
	if c.hasMethod {
		if c.method, err = domain.ParsePnlMethod(method); err != nil {
			return c, fmt.Errorf("--method: %s", domain.ErrorMessage(err))
		}
	}
	if c.hasScope {
		if c.scope, err = domain.ParseCostBasisScope(scope); err != nil {
			return c, fmt.Errorf("--scope: %s", domain.ErrorMessage(err))
		}
	}
	return c, nil
}

// or returns the lot matching, reporting currency and cost basis scope of
// the export: each choice given, else the default passed (the Ledger's
// BookDefaults); --currency none is no reporting currency ("").
func (c bookChoices) or(method domain.PnlMethod, currency string, scope domain.CostBasisScope) (domain.PnlMethod, string, domain.CostBasisScope) {
	if c.hasMethod {
		method = c.method
	}
	if c.hasScope {
		scope = c.scope
	}
	switch {
	case strings.EqualFold(c.currency, "none"):
		currency = ""
	case c.currency != "":
		currency = c.currency
	}
	return method, currency, scope
}

// exportTarget returns where an export writes: stdout, or a file written
// beside path and renamed onto it by commit when the export succeeded
// (removed otherwise), so that a failed export leaves no half file.
func exportTarget(path string, stdout io.Writer) (io.Writer, func(error) error, error) {
	if path == "" {
		return stdout, func(err error) error { return err }, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, nil, err
	}
	return tmp, func(err error) error {
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
		return err
	}, nil
}

// periodBound reads --from or --to: a date (the first instant of that day
// in loc, or of the day after for an end), RFC 3339 or ms.
func periodBound(s string, loc *time.Location, end bool) (int64, error) {
	if d, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		y, m, dd := d.Date()
		if end {
			dd++
		}
		return domain.LocalDayStart(y, m, dd, loc).UnixMilli(), nil
	}
	return parseTimeIn(s, nil)
}

// describePeriod says which trade times an export covered.
func describePeriod(q books.Query, loc *time.Location) string {
	show := func(ms int64, open string) string {
		if ms == 0 {
			return open
		}
		return time.UnixMilli(ms).In(loc).Format(time.RFC3339)
	}
	return "trade times from " + show(q.From, "the first fill") + " to before " + show(q.To, "now")
}

// rows shows n rows written.
func (p *progress) rows(n int64) {
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r%s: %d rows   ", p.what, n)
	p.shown = true
}
