package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/projections"
)

// Snapshots are a cache, never evidence (DESIGN §16). `tradeledger verify
// --snapshots` rebuilds the state at each kept snapshot's position from
// the log and compares them, projection by projection; serve checks the
// snapshot it started from the same way, in the background, and when it
// differs switches to the state rebuilt from the log, deletes the file,
// records a SnapshotDiscarded event (which the webhooks that want
// "snapshots" receive) and says so on /healthz and in the metrics.

// DefaultSnapshotCheckShare is the share of one core serve's background
// check of its start snapshot takes at most (--snapshot-check-share).
const DefaultSnapshotCheckShare = 0.5

// newModelSet makes serve's read models as serve makes them (openModels),
// over the opened data dir d and with cfg's settings, in a Main of their
// own that serves nothing, logs nothing and writes nothing: the state a
// snapshot is checked against, or empty models to decode one into. Close
// it with closeModelSet (d stays open).
func newModelSet(ctx context.Context, cfg ServeConfig, d *DataDir) (*Main, error) {
	m := NewMain()
	m.Config.Data, m.Config.EventStore, m.Config.PnlMethod, m.Config.SnapshotDir = cfg.Data, cfg.EventStore, cfg.PnlMethod, cfg.SnapshotDir
	m.Logger, m.ManualCycles, m.ManualCheckpoints, m.ManualSnapshots = zap.NewNop(), true, true, true
	m.DataDir = d
	if err := m.openModels(ctx); err != nil {
		m.closeModelSet()
		return nil, err
	}
	return m, nil
}

// closeModelSet closes a Main of newModelSet, leaving its data dir open.
func (m *Main) closeModelSet() {
	m.DataDir = nil
	m.Close()
}

// snapshotters returns the projections as Snapshotters (every projection
// serve registers is one).
func snapshotters(projs []projections.Projection) []projections.Snapshotter {
	out := make([]projections.Snapshotter, 0, len(projs))
	for _, p := range projs {
		if s, ok := p.(projections.Snapshotter); ok {
			out = append(out, s)
		}
	}
	return out
}

// snapshotRebuild is serve's read models rebuilt from the log in one pass
// (projections.Rebuild), stopping at each snapshot's position to check it.
type snapshotRebuild struct {
	ctx     context.Context
	cfg     ServeConfig
	dir     *DataDir
	set     *Main
	rb      *projections.Rebuild
	rebuilt []projections.Snapshotter
	fresh   []*Main // the empty model sets a check decoded into
}

// newSnapshotRebuild starts a rebuild of serve's models (cfg's settings:
// --pnl-method) from the first event of d's log; pace, when set, is called
// after each batch of events.
func newSnapshotRebuild(ctx context.Context, cfg ServeConfig, d *DataDir, pace func()) (*snapshotRebuild, error) {
	set, err := newModelSet(ctx, cfg, d)
	if err != nil {
		return nil, err
	}
	return &snapshotRebuild{ctx: ctx, cfg: cfg, dir: d, set: set, rebuilt: snapshotters(set.projections),
		rb: &projections.Rebuild{Store: d.Store, Projections: set.projections, Pace: pace}}, nil
}

// check rebuilds the models up to the position of the snapshot at path
// (which must not lie before the last one checked) and compares the
// snapshot with them.
func (s *snapshotRebuild) check(snaps *projections.Snapshots, path string, yield func()) (projections.SnapshotCheck, error) {
	h, err := snaps.Header(path)
	if err != nil {
		return projections.SnapshotCheck{Path: path}, err
	}
	if err := s.rb.To(s.ctx, h.Position); err != nil {
		return projections.SnapshotCheck{Path: path, Header: h}, err
	}
	return snaps.Check(s.ctx, path, s.rebuilt, s.rb.Times(), s.newFresh, yield)
}

// newFresh returns empty models to decode a snapshot's state into.
func (s *snapshotRebuild) newFresh() []projections.Snapshotter {
	m, err := newModelSet(s.ctx, s.cfg, s.dir)
	if err != nil {
		return nil
	}
	s.fresh = append(s.fresh, m)
	return snapshotters(m.projections)
}

func (s *snapshotRebuild) close() {
	for _, m := range s.fresh {
		m.closeModelSet()
	}
	s.set.closeModelSet()
}

// verifySnapshots is `tradeledger verify --snapshots`: every snapshot kept
// in dir ("": the data dir's), oldest first, checked against the state
// rebuilt from the log at its position in one pass (models as serve keeps
// them with --pnl-method method). One line per snapshot; exit 1 naming the
// first that is not signed by the log's key or not the log's state, with
// its projection and first differing value. A snapshot of an older format
// is not read by this release (serve writes a new one): not a failure.
func verifySnapshots(ctx context.Context, d *DataDir, dir, method string, env *Env) error {
	if _, err := domain.ParsePnlMethod(method); err != nil {
		return fmt.Errorf("--pnl-method: %s", domain.ErrorMessage(err))
	}
	snaps := d.Snapshots(domain.SystemClock{})
	if dir != "" {
		snaps.Dir = dir
	}
	list, err := snaps.List()
	if err != nil {
		return auditFailure{err, exitUnreadable}
	}
	if len(list) == 0 {
		fmt.Fprintf(env.Stdout, "OK: no snapshots in %s: nothing to check\n", snaps.Dir)
		return nil
	}
	start := time.Now()
	rs, err := newSnapshotRebuild(ctx, ServeConfig{Data: d.Path, PnlMethod: method, SnapshotDir: dir}, d, nil)
	if err != nil {
		return auditFailure{err, exitUnreadable}
	}
	defer rs.close()
	var failures []string
	checked := 0
	for i := len(list) - 1; i >= 0; i-- {
		name := filepath.Base(list[i].Path)
		c, err := rs.check(snaps, list[i].Path, nil)
		switch {
		case errors.Is(err, snap.ErrVersion):
			fmt.Fprintf(env.Stdout, "snapshot %s: not checked: %v (no part of this release reads it; serve writes a new one)\n", name, err)
			continue
		case err != nil:
			msg := fmt.Sprintf("snapshot %s: not a snapshot of this log that can be checked: %v", name, err)
			fmt.Fprintln(env.Stdout, "FAILED: "+msg)
			failures = append(failures, msg)
			continue
		}
		checked++
		if c.OK() {
			fmt.Fprintf(env.Stdout, "snapshot %s: OK: signed by this log's key; the state of its %d projections is the log's at position %d (%d events)\n",
				name, len(rs.rebuilt), c.Header.Position, c.Header.Records)
			continue
		}
		var why []string
		if c.Signed != nil {
			why = append(why, "signature: "+c.Signed.Error())
		}
		if c.Diff != nil {
			why = append(why, fmt.Sprintf("not the log's state at position %d: %s", c.Header.Position, c.Diff))
			if len(c.Differing) > 1 {
				why = append(why, "projections that differ: "+strings.Join(c.Differing, ", "))
			}
		}
		msg := fmt.Sprintf("snapshot %s: %s", name, strings.Join(why, "; "))
		fmt.Fprintln(env.Stdout, "FAILED: "+msg)
		failures = append(failures, msg)
	}
	if len(failures) > 0 {
		return auditFailure{fmt.Errorf("snapshot verification failed: %d of %d snapshots; the first: %s", len(failures), len(list), failures[0]), exitTampered}
	}
	fmt.Fprintf(env.Stdout, "OK: %d snapshots checked against the log in %s (a snapshot is a cache: nothing an auditor relies on comes from one)\n",
		checked, time.Since(start).Round(time.Millisecond))
	return nil
}

// snapshotCheck is where serve's background check of its start snapshot
// stands (/healthz, the metrics).
type snapshotCheck struct {
	mu      sync.Mutex
	state   string // "", "pending", "checking", "equal", "differed", "failed"
	problem string // why the service is degraded by it
	took    time.Duration
	work    background
}

func (c *snapshotCheck) set(state, problem string, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state, c.problem, c.took = state, problem, took
}

// status is /healthz's view (http.Server.SnapshotCheck).
func (c *snapshotCheck) status() (state, problem string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.problem
}

// metric is the metrics' view (metrics.WatchSnapshotCheck).
func (c *snapshotCheck) metric() (failed bool, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == "differed", c.took
}

// pacer keeps work done in steps to a share of one core: after each step
// it sleeps in proportion to the time the step took (and gives way to the
// goroutines waiting, runtime.Gosched), so that a background job never
// holds a core the service's requests need for long. The time of a step
// is wall time: a step that waited for a core counts as busy, so a loaded
// machine slows the job further.
type pacer struct {
	ctx   context.Context
	share float64
	last  time.Time
}

func newPacer(ctx context.Context, share float64) *pacer {
	return &pacer{ctx: ctx, share: share, last: time.Now()}
}

// maxPause bounds one pause of a pacer.
const maxPause = 500 * time.Millisecond

func (p *pacer) pace() {
	if p.share < 1 {
		if d := min(time.Duration(float64(time.Since(p.last))*(1/p.share-1)), maxPause); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-p.ctx.Done():
				t.Stop()
			}
		}
	}
	runtime.Gosched()
	p.last = time.Now()
}

// startSnapshotCheck checks the snapshot the start loaded in the
// background (unless --snapshot-check-share is 0 or none was loaded), once
// the store's integrity check (checkStoreIntegrity) has returned, then
// starts the snapshot writer, so that no snapshot is written from a state
// not yet checked; without a check it starts the writer at once.
func (m *Main) startSnapshotCheck() {
	if m.snapCheck == nil {
		m.snapCheck = &snapshotCheck{}
	}
	startWriter := func() {
		if m.SnapshotWriter != nil && !m.ManualSnapshots {
			m.SnapshotWriter.Start()
		}
	}
	info, loaded, _ := m.Runner.Snapshot()
	if !loaded || m.Config.SnapshotCheckShare <= 0 {
		startWriter()
		return
	}
	m.snapCheck.set("pending", "", 0)
	m.snapCheck.work.start(func(ctx context.Context) {
		// After the store's integrity check, which /readyz waits for: the
		// rebuild does not take the start's CPU (on two cores, a third of
		// a snapshot start's) while serve is not yet ready.
		if m.storeChecked != nil {
			select {
			case <-m.storeChecked:
			case <-ctx.Done():
				return
			}
		}
		m.checkStartSnapshot(ctx, info)
		if ctx.Err() == nil {
			startWriter()
		}
	})
}

// checkStartSnapshot rebuilds the state at the start snapshot's position
// from the log, paced to --snapshot-check-share of a core, and compares;
// on a difference it switches the differing projections to the rebuilt
// state (Runner.Replace), deletes the file and records SnapshotDiscarded.
func (m *Main) checkStartSnapshot(ctx context.Context, info projections.SnapshotInfo) {
	log := m.Logger.Named("snapshot")
	name := filepath.Base(info.Path)
	start := time.Now()
	m.snapCheck.set("checking", "", 0)
	fail := func(err error) {
		if ctx.Err() != nil {
			return
		}
		m.snapCheck.set("failed", "", time.Since(start))
		log.Warn("read-model snapshot could not be checked against the log", zap.String("file", info.Path), zap.Error(err))
	}
	// A store of its own: the rebuilt models' metrics observe it, not
	// the serving one.
	d, err := OpenDataDir(ctx, m.Config.Data, m.Config.EventStore, zap.NewNop())
	if err != nil {
		fail(err)
		return
	}
	defer d.Close()
	p := newPacer(ctx, m.Config.SnapshotCheckShare)
	rs, err := newSnapshotRebuild(ctx, m.Config, d, p.pace)
	if err != nil {
		fail(err)
		return
	}
	defer rs.close()
	c, err := rs.check(m.Snapshots, info.Path, p.pace)
	if err != nil {
		fail(err)
		return
	}
	if c.OK() {
		m.snapCheck.set("equal", "", time.Since(start))
		log.Info("read-model snapshot checked: the log's state", zap.String("file", info.Path), zap.Uint64("position", info.Position),
			zap.Duration("took", time.Since(start)))
		return
	}
	why := "its signature holds"
	if c.Signed != nil {
		why = "signature: " + c.Signed.Error()
	}
	rec := domain.SnapshotDiscarded{File: name, Position: info.Position, Projections: c.Differing, Signed: c.Signed == nil}
	if c.Diff != nil {
		rec.Value, rec.Snapshot, rec.Log = c.Diff.Value, c.Diff.Snapshot, c.Diff.Log
		if c.Diff.Projection == "" && len(rec.Projections) == 0 {
			rec.Projections = []string{"header"}
		}
	} else {
		rec.Projections = append(rec.Projections, "signature")
	}
	problem := fmt.Sprintf("the read-model snapshot %s the service started from was not the log's state (%s; %s)", name, c.Diff, why)
	if err := m.Runner.Replace(ctx, rs.rb, rs.rebuilt, c.Differing); err != nil {
		rec.Reason = err.Error()
		problem += "; it was deleted, but the state it gave could not be replaced while serving (" + err.Error() + "): restart serve to rebuild it from the log"
	} else {
		rec.Replaced = true
		problem += "; it was deleted and the state rebuilt from the log is served"
	}
	if err := m.Snapshots.Remove(info.Path); err != nil {
		log.Error("read-model snapshot not deleted", zap.String("file", info.Path), zap.Error(err))
	}
	m.snapCheck.set("differed", problem, time.Since(start))
	log.Error("read-model snapshot discarded: not the log's state", zap.String("file", info.Path), zap.Uint64("position", info.Position),
		zap.Strings("projections", c.Differing), zap.String("first", fmt.Sprint(c.Diff)), zap.NamedError("signature", c.Signed),
		zap.Bool("replaced", rec.Replaced), zap.Duration("took", time.Since(start)))
	if err := m.recordSnapshotDiscarded(ctx, rec); err != nil {
		log.Error("SnapshotDiscarded not recorded", zap.Error(err))
	}
	if m.SnapshotWriter != nil {
		m.SnapshotWriter.WriteSoon()
	}
}

// recordSnapshotDiscarded appends rec to the snapshots stream (actor
// core), once per file and position.
func (m *Main) recordSnapshotDiscarded(ctx context.Context, rec domain.SnapshotDiscarded) error {
	store := m.DataDir.Store
	_, err := eventstore.Run(eventstore.WithActor(ctx, domain.ActorCore), eventstore.NewCommands(store, m.Runner), eventstore.Command[map[string]bool]{
		Stream: domain.StreamSnapshots,
		Load:   eventstore.LoadStream(store, domain.StreamSnapshots, func() map[string]bool { return nil }, domain.ApplySnapshotEvent),
		Decide: func(recorded map[string]bool) ([]domain.Event, error) {
			return domain.DecideSnapshotDiscarded(recorded, rec, m.Clock)
		},
	})
	return err
}
