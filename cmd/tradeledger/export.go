package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
)

// runExport is `tradeledger export clickhouse [--data DIR] --to URL`: it
// loads the whole log (from ClickHouse's own checkpoint on, so running it
// again only adds what is new) into the analytics tables and prints a
// summary line. A ClickHouse outage is retried with backoff until
// interrupted.
func runExport(ctx context.Context, args []string, env *Env) error {
	if len(args) > 0 && isHelpFlag(args[0]) {
		args = append([]string{"clickhouse"}, args...) // export --help: the one target's help
	}
	if len(args) == 0 || args[0] != "clickhouse" {
		return errors.New("usage: tradeledger export clickhouse [--data DIR] [--eventstore URL] --to clickhouse://host:9000/db [--pnl-method lofo|fifo|average]")
	}
	fs := newFlagSet("export clickhouse", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	to := fs.String("to", "", "ClickHouse URL (clickhouse://host:9000/database)")
	method := fs.String("pnl-method", "lofo", "lot matching for PNL: lofo, fifo or average")
	batch := fs.Int("batch-rows", clickhouse.DefaultBatchRows, "rows per insert")
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
	m, err := domain.ParsePnlMethod(*method)
	if err != nil {
		return fmt.Errorf("--pnl-method: %w", err)
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()

	s := clickhouse.NewSink(*to, d.Store)
	s.Method, s.BatchRows = m, *batch
	prog := newProgress(env.Stderr, "export")
	s.Progress = func(events int64, stored, head uint64) { prog.update(events, stored, head) }
	start := time.Now()
	st, err := s.Export(ctx)
	prog.done()
	if err != nil {
		return fmt.Errorf("export to clickhouse: %w", err)
	}
	el := time.Since(start)
	rate := float64(st.Rows) / max(el.Seconds(), 1e-9)
	fmt.Fprintf(env.Stdout, "exported positions %d..%d (%d events read) to ClickHouse database %s: %d rows (%d fills) in %s, %.0f rows/s\n",
		st.From, st.To, st.Events, s.Database(), st.Rows, st.Fills, el.Round(time.Millisecond), rate)
	return nil
}
