package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	"github.com/tradeledger/tradeledger/projections"
)

// Read-model snapshots (DESIGN §16, projections/snapshot.go): serve loads
// the newest valid one of the data dir's snapshots/ before its replay and
// writes one every --snapshot-every events or --snapshot-interval in the
// background; `tradeledger snapshot` writes one now.

// snapshotDir is where a data dir keeps its read-model snapshots.
func snapshotDir(data string) string { return filepath.Join(data, "snapshots") }

// identityOf names a log at a position by its Merkle tree (records there,
// root), what a snapshot is checked against.
func identityOf(tree audit.TreeStore) func(ctx context.Context, position uint64) (int64, domain.Hash, error) {
	return func(ctx context.Context, position uint64) (int64, domain.Hash, error) {
		return transparency.Identity(ctx, tree, position)
	}
}

// newSnapshots makes the data dir's snapshots (or --snapshot-dir's).
func (m *Main) newSnapshots() {
	m.Snapshots = m.DataDir.Snapshots(m.Clock)
	if m.Config.SnapshotDir != "" {
		m.Snapshots.Dir = m.Config.SnapshotDir
	}
}

// Snapshots returns the data dir's read-model snapshots, signed by its
// log's checkpoint key and checked against its log's Merkle tree.
func (d *DataDir) Snapshots(clock domain.Clock) *projections.Snapshots {
	return projections.NewSnapshots(snapshotDir(d.Path), identityOf(d.Tree), d.CheckpointKey, clock)
}

// fromSnapshotUsage is the --from-snapshot flag of replay, restore and
// export: the audit commands read the log alone unless told otherwise.
const fromSnapshotUsage = "start from the newest valid read-model snapshot within the cut instead of the first event (faster; a snapshot is a cache, not evidence: without this flag the log alone is read)"

// snapshotsIf returns d when from (--from-snapshot), else nil: the data
// dir whose snapshots a replay may start from.
func snapshotsIf(from bool, d *DataDir) *DataDir {
	if from {
		return d
	}
	return nil
}

// replaySource says in words what a replay that ended with res was built
// from: the log alone, or a read-model snapshot and the log after it.
func replaySource(res projections.ReplayResult) string {
	if res.Snapshot != 0 {
		return fmt.Sprintf("from the read-model snapshot at position %d and the log after it (--from-snapshot)", res.Snapshot)
	}
	return "from the log alone, every event from the first"
}

// snapshotReplay lets a replay of the data dir d (replay, restore, export
// with --from-snapshot) start from its newest read-model snapshot within
// the cut, telling warn of each one passed over and why.
func snapshotReplay(o projections.ReplayOptions, d *DataDir, warn io.Writer) projections.ReplayOptions {
	o.Snapshots = d.Snapshots(domain.SystemClock{})
	if warn != nil {
		o.Skip = func(path string, why error) { fmt.Fprintf(warn, "snapshot %s not used: %v\n", path, why) }
	}
	return o
}

// loadSnapshot loads the newest valid snapshot into the registered
// projections, logging each one passed over and why; without one the
// replay starts from the first event.
func (m *Main) loadSnapshot(ctx context.Context) {
	info, ok, err := m.Runner.LoadSnapshot(ctx, m.Snapshots, func(path string, why error) {
		m.snapshotsSkipped++
		m.Logger.Warn("read-model snapshot skipped", zap.String("file", path), zap.String("why", why.Error()))
	})
	switch {
	case err != nil:
		m.Logger.Warn("read-model snapshots not used", zap.Error(err))
	case ok:
		m.Logger.Info("read-model snapshot loaded", zap.String("file", info.Path), zap.Uint64("position", info.Position),
			zap.Time("created", info.Created), zap.Duration("took", info.Load))
	}
}

// logReady says the read models are ready: at which position, after how
// long, from which snapshot and how many events after it.
func (m *Main) logReady(took time.Duration) {
	info, loaded, replayed := m.Runner.Snapshot()
	fields := []zap.Field{zap.Uint64("position", m.Runner.Position()), zap.Duration("replay", took), zap.Int64("replayed", replayed)}
	if loaded {
		fields = append(fields, zap.String("snapshot", info.Path), zap.Uint64("snapshot_position", info.Position))
	} else {
		fields = append(fields, zap.String("snapshot", "none"))
	}
	m.Logger.Info("projections ready", fields...)
}

// startSnapshots makes the background snapshot writer (unless
// --snapshot-every is 0); startSnapshotCheck starts it. When the start
// passed over snapshots and loaded none (of an older format, refused), a
// new one is written soon.
func (m *Main) startSnapshots() {
	if m.Config.SnapshotEvery == 0 {
		return
	}
	w := projections.NewSnapshotWriter(m.Runner, m.Snapshots, m.Clock)
	w.Every, w.Interval = m.Config.SnapshotEvery, m.Config.SnapshotInterval
	log := m.Logger.Named("snapshot")
	w.OnWrite = func(f *projections.Frozen, file projections.SnapshotFile, err error) {
		if err != nil {
			log.Warn("read-model snapshot not written", zap.Error(err))
			return
		}
		log.Info("read-model snapshot written", zap.String("file", file.Path), zap.Uint64("position", file.Position),
			zap.Int64("bytes", file.Bytes), zap.Duration("pause", f.Pause), zap.Duration("held", f.Held), zap.Duration("took", file.Encode))
	}
	m.SnapshotWriter = w
	if _, loaded, _ := m.Runner.Snapshot(); !loaded && m.snapshotsSkipped > 0 {
		w.WriteSoon()
	}
}

// runSnapshot is `tradeledger snapshot`: it builds the read models from the
// data dir's newest valid snapshot and the events after it — the same
// projections serve keeps, in a process of its own, so that it runs beside
// a serve of the same data dir (which it does not stop or lock) — and
// writes their snapshot at the log's head (or at --position).
func runSnapshot(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("snapshot", env.Stderr)
	data := fs.String("data", "./data", "data directory")
	dir := fs.String("snapshot-dir", "", "directory of the read-model snapshots (default: the data directory's snapshots/)")
	position := fs.Uint64("position", 0, "take the snapshot at this log position (default: the head)")
	method := fs.String("pnl-method", "lofo", "lot matching of the order records' PNL: "+domain.PnlMethodNames+" (serve's --pnl-method)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m := NewMain()
	m.Config.Data, m.Config.SnapshotDir, m.Config.PnlMethod = *data, *dir, *method
	m.Logger, m.ManualCycles, m.ManualCheckpoints = zap.NewNop(), true, true
	defer m.Close()
	start := time.Now()
	if err := m.openModels(ctx); err != nil {
		return err
	}
	m.Runner.Until = *position
	info, loaded, err := m.Runner.LoadSnapshot(ctx, m.Snapshots, func(path string, why error) {
		fmt.Fprintf(env.Stderr, "snapshot %s skipped: %v\n", path, why)
	})
	if err != nil {
		return err
	}
	if err := m.Runner.Start(ctx); err != nil {
		return err
	}
	f, err := m.Runner.Freeze(ctx)
	if err != nil {
		return err
	}
	file, err := m.Snapshots.Write(ctx, f)
	if err != nil {
		return err
	}
	_, _, replayed := m.Runner.Snapshot()
	from := "the first event"
	if loaded {
		from = fmt.Sprintf("snapshot %s", filepath.Base(info.Path))
	}
	fmt.Fprintf(env.Stdout, "snapshot written: %s (log position %d, %d bytes; %d events replayed after %s; %s)\n",
		file.Path, file.Position, file.Bytes, replayed, from, time.Since(start).Round(time.Millisecond))
	return nil
}
