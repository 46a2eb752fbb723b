package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/esdb"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// migrateBatch bounds how many consecutive events of one stream go into one
// append.
const migrateBatch = 256

func runMigrate(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("migrate", env.Stderr)
	data := fs.String("data", "./data", "data directory holding the embedded log (events.db)")
	to := fs.String("to", "", "destination event store URL (esdb://… or kurrentdb://…)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("--to is required (e.g. esdb://127.0.0.1:2113?tls=false)")
	}
	path := filepath.Join(*data, "events.db")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no embedded log at %s", path)
	}
	src := sqlite.NewStore(path)
	if err := src.Open(); err != nil {
		return fmt.Errorf("open embedded log: %w", err)
	}
	defer src.Close()
	if err := refuseCutSource(ctx, *data, src); err != nil {
		return err
	}
	dst, err := openEventStore(ctx, *data, *to, zap.NewNop())
	if err != nil {
		return err
	}
	defer dst.Close()
	start := time.Now()
	sum, err := Migrate(ctx, src, dst, newProgress(env.Stderr, "migrate"))
	if err != nil {
		return fmt.Errorf("migrate (after %d events copied, %d already there): %w", sum.Copied, sum.Present, err)
	}
	fmt.Fprintf(env.Stdout, "migrated %d events in %d streams up to position %d in %s: %d copied, %d already present\n",
		sum.Copied+sum.Present, sum.Streams, sum.LastPosition, time.Since(start).Round(time.Millisecond), sum.Copied, sum.Present)
	return nil
}

// refuseCutSource refuses to migrate a log cut at its end (the events,
// their Merkle tree and the checkpoint kept beside it disagree,
// transparency.CheckAgreement): the destination would hold, as if whole,
// a history that contradicts the checkpoints the source gave out. The
// checkpoint counts only when signed by the data dir's key (any, when the
// dir has none).
func refuseCutSource(ctx context.Context, data string, src *sqlite.Store) error {
	vkey := ""
	if _, err := os.Stat(filepath.Join(data, "checkpoint.key")); err == nil || os.Getenv(checkpointKeyEnv) != "" {
		k, err := checkpointKey(data)
		if err != nil {
			return err
		}
		vkey = k.VerifierKey()
	}
	v, err := transparency.CheckAgreement(ctx, src, src, vkey)
	if err != nil {
		return fmt.Errorf("check the log against its Merkle tree: %w", err)
	}
	if v.Problem != "" {
		return &logCutError{data: data, v: v, verb: "migrate"}
	}
	return nil
}

// MigrateSummary counts what Migrate did.
type MigrateSummary struct {
	Copied       int64  // events appended to the destination
	Present      int64  // events the destination already held
	Streams      int    // streams seen
	LastPosition uint64 // source position of the last event
}

// Migrate copies every event of src into dst in src's commit order, with
// its id and its stream version. It is idempotent because a stream's events
// land at deterministic versions: an event whose version the destination
// stream already holds is checked (same id) and skipped, the rest are
// appended with the exact expected version. A destination stream that holds
// a different event at a version is an ECONFLICT and stops the copy. The
// destination recomputes each hash from the same fields, so the chains are
// equal; `tradeledger verify --eventstore URL` checks them.
func Migrate(ctx context.Context, src, dst domain.EventStore, prog *progress) (MigrateSummary, error) {
	var sum MigrateSummary
	head, _ := src.Head(ctx)
	// copying: streams whose destination ends before the current event,
	// so everything after it is appended without checks.
	copying := map[string]bool{}
	seen := map[string]bool{}
	var batch []domain.Event
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		first := batch[0]
		exp := domain.ExpectedVersion(first.Version - 1)
		if first.Version == 0 {
			exp = domain.NoStream
		}
		res, err := dst.Append(ctx, first.Stream, exp, batch...)
		if err != nil {
			return fmt.Errorf("append %s from version %d: %w", first.Stream, first.Version, err)
		}
		if res.FirstVersion != first.Version {
			return domain.Errorf(domain.ECONFLICT, "stream %s: events landed at version %d, not %d", first.Stream, res.FirstVersion, first.Version)
		}
		sum.Copied += int64(len(batch))
		batch = batch[:0]
		return nil
	}
	it := src.ReadAll(ctx, 0, 0)
	defer it.Close()
	for it.Next() {
		e := it.Event()
		sum.LastPosition = e.Position
		if !seen[e.Stream] {
			seen[e.Stream] = true
			sum.Streams++
		}
		if len(batch) > 0 && (batch[0].Stream != e.Stream || len(batch) >= migrateBatch) {
			if err := flush(); err != nil {
				return sum, err
			}
		}
		if !copying[e.Stream] {
			present, err := holds(ctx, dst, &e)
			if err != nil {
				return sum, err
			}
			if present {
				sum.Present++
				prog.update(sum.Copied+sum.Present, e.Position, head)
				continue
			}
			copying[e.Stream] = true
		}
		batch = append(batch, e)
		prog.update(sum.Copied+sum.Present+int64(len(batch)), e.Position, head)
	}
	if err := it.Err(); err != nil {
		return sum, fmt.Errorf("read embedded log: %w", err)
	}
	err := flush()
	prog.done()
	return sum, err
}

// holds reports whether dst already has e at its version (same id).
func holds(ctx context.Context, dst domain.EventStore, e *domain.Event) (bool, error) {
	it := dst.ReadStream(ctx, e.Stream, e.Version, 1)
	defer it.Close()
	if !it.Next() {
		return false, it.Err()
	}
	if got := it.Event(); got.ID != e.ID {
		return false, domain.Errorf(domain.ECONFLICT, "destination stream %s holds event %s at version %d, the embedded log has %s", e.Stream, got.ID, e.Version, e.ID)
	}
	return true, nil
}

// openESDB opens an EventStoreDB / KurrentDB store (see openEventStore).
func openESDB(url string, logger *zap.Logger) (domain.EventStore, error) {
	s := esdb.NewStore(url)
	s.Logger = logger
	if err := s.Open(); err != nil {
		return nil, fmt.Errorf("open event store: %w", err)
	}
	return s, nil
}
