package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// exportUsage names export's two forms.
const exportUsage = "usage: tradeledger export --format fills|koinly|cointracking|cointracker|realized [--from T] [--to T] [--out FILE] [--data DIR] …\n" +
	"       tradeledger export clickhouse [--data DIR] [--eventstore URL] --to clickhouse://host:9000/db [--instance NAME] [--pnl-method lofo|fifo|lifo|hifo|average]"

// runExport is `tradeledger export --format F …` (books.go: a CSV of the
// books) or `tradeledger export clickhouse [--data DIR] --to URL`: it
// loads the whole log (from ClickHouse's own checkpoint on, so running it
// again only adds what is new) into the analytics tables and prints a
// summary line. It says where it connects; a ClickHouse outage is retried
// with backoff until interrupted, each retry a line on stderr saying what
// failed and how long it waits.
func runExport(ctx context.Context, args []string, env *Env) error {
	if len(args) > 0 && args[0] != "clickhouse" && !isHelpFlag(args[0]) {
		return runBooksExport(ctx, args, env)
	}
	if len(args) > 0 && isHelpFlag(args[0]) {
		args = append([]string{"clickhouse"}, args...) // export clickhouse --help; the books export's is in help.go
	}
	if len(args) == 0 || args[0] != "clickhouse" {
		return errors.New(exportUsage)
	}
	fs := newFlagSet("export clickhouse", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	to := fs.String("to", "", "ClickHouse URL (clickhouse://host:9000/database)")
	method := fs.String("pnl-method", "lofo", "lot matching for PNL: "+domain.PnlMethodNames)
	batch := fs.Int("batch-rows", clickhouse.DefaultBatchRows, "rows per insert")
	instance := fs.String("instance", "", "the instance the rows are tagged with, as serve --instance (default: TRADELEDGER_INSTANCE, else the log's origin id)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *to == "" {
		if u, ok := os.LookupEnv("TRADELEDGER_CLICKHOUSE"); ok && u != "" {
			*to = u
		} else {
			return errors.New("--to is required (clickhouse://host:9000/database)")
		}
	}
	if *instance == "" {
		*instance = os.Getenv("TRADELEDGER_INSTANCE")
	}
	m, err := domain.ParsePnlMethod(*method)
	if err != nil {
		return fmt.Errorf("--pnl-method: %w", err)
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()

	opts, db, err := clickhouse.ParseURL(*to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	name, log, err := fleetInstance(*instance, d.CheckpointKey)
	if err != nil {
		return err
	}
	s := clickhouse.NewSink(*to, d.Store)
	s.Method, s.BatchRows = m, *batch
	s.Instance, s.Log = name, log
	s.Logger = cliLogger(env.Stderr, zap.InfoLevel).Named("export")
	prog := newProgress(env.Stderr, "export")
	s.Progress = func(events int64, stored, head uint64) { prog.update(events, stored, head) }
	fmt.Fprintf(env.Stderr, "export: connecting to ClickHouse at %s, database %s (an outage is retried until it answers; Ctrl-C stops)\n",
		strings.Join(opts.Addr, ","), db)
	start := time.Now()
	st, err := s.Export(ctx)
	prog.done()
	switch {
	case err != nil && ctx.Err() != nil && s.Err() != nil:
		return fmt.Errorf("export interrupted while waiting for ClickHouse at %s: %v", strings.Join(opts.Addr, ","), s.Err())
	case err != nil && ctx.Err() != nil:
		return errors.New("export interrupted; run it again to go on from ClickHouse's checkpoint")
	case err != nil:
		return fmt.Errorf("export to clickhouse: %w", err)
	}
	el := time.Since(start)
	rate := float64(st.Rows) / max(el.Seconds(), 1e-9)
	fmt.Fprintf(env.Stdout, "exported positions %d..%d (%d events read) to ClickHouse database %s as instance %s: %d rows (%d fills) in %s, %.0f rows/s\n",
		st.From, st.To, st.Events, s.Database(), s.Instance, st.Rows, st.Fills, el.Round(time.Millisecond), rate)
	return nil
}
