package transparency

import (
	"context"
	"errors"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/eventstore"
)

// Defaults for Log settings.
const (
	// DefaultInterval is the least time between two checkpoints issued
	// because the log grew (Log.Tick).
	DefaultInterval = 60 * time.Second
	// TileHeight is the height of the hash tiles served (tlog tiles, as
	// the Go checksum database serves them).
	TileHeight = 8
)

// Log is a log made provable: it signs checkpoints of Tree with Key and
// records each in the checkpoints stream of Store, and it answers
// inclusion and consistency proofs, records and tiles from Tree. Fill its
// fields (NewLog), then Open. It is safe for concurrent use.
//
// Registered with a projections runner (Name, Apply), it learns of every
// checkpoint as the log records it, other processes' included; otherwise
// it reads the checkpoints stream's last event when it needs it.
type Log struct {
	// Store is the log; the checkpoints are appended to its checkpoints
	// stream.
	Store domain.EventStore
	// Tree is the Merkle tree over Store's log (the store itself, or a
	// FileTree).
	Tree domain.TreeStore
	// Key signs the checkpoints; its name is the log's origin.
	Key *Key
	// Clock times the checkpoints and their interval.
	Clock domain.Clock
	// Interval is the least time between two checkpoints issued because
	// the log grew (Tick).
	Interval time.Duration
	// Commands appends the checkpoints (eventstore.Run); nil: commands on
	// Store with no waiter.
	Commands *eventstore.Commands

	mu     sync.Mutex
	latest *signed // the last checkpoint recorded, nil before the first
	issue  sync.Mutex

	built    atomic.Bool  // a Build has caught the tree up (Ready)
	building atomic.Int64 // records in the tree as the Build under way last said

	upper hashCache // the tree's upper hashes, which every proof reads
}

// signed is a checkpoint as the checkpoints stream has it.
type signed struct {
	event domain.CheckpointSigned
	state domain.CheckpointState
	pos   uint64    // its event's position
	time  time.Time // its event's time
}

// NewLog returns a Log with default settings.
func NewLog(store domain.EventStore, tree domain.TreeStore, key *Key, clock domain.Clock) *Log {
	return &Log{Store: store, Tree: tree, Key: key, Clock: clock, Interval: DefaultInterval}
}

// Open reads the last checkpoint from the log. A checkpoint signed by
// another key than Key (the key was replaced) is still served as the last
// one until Key signs the next.
func (l *Log) Open(ctx context.Context) error {
	s, err := l.load(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.latest = s
	l.mu.Unlock()
	return nil
}

// Build catches the tree up with the log (Tree.BuildTree: a log written
// before the tree existed gets all of it), calling progress (when not
// nil) with the records done. Until the first Build has returned, Ready
// says the tree is being built.
func (l *Log) Build(ctx context.Context, progress func(records int64)) error {
	err := l.Tree.BuildTree(ctx, func(n int64) {
		l.building.Store(n)
		if progress != nil {
			progress(n)
		}
	})
	if err == nil {
		l.built.Store(true)
	}
	return err
}

// Ready returns nil once Build has caught the tree up with the log;
// before, an EUNAVAILABLE error saying how far it is.
func (l *Log) Ready() error {
	if l.built.Load() {
		return nil
	}
	return domain.Errorf(domain.EUNAVAILABLE, "building the Merkle tree over the log (%d records so far)", l.building.Load())
}

// VerifierKey returns the verifier key of the log's checkpoints (note
// format: origin+hash+base64).
func (l *Log) VerifierKey() string { return l.Key.VerifierKey() }

// Name implements projections.Projection.
func (l *Log) Name() string { return "checkpoints" }

// Apply implements projections.Projection: a CheckpointSigned becomes the
// last checkpoint served.
func (l *Log) Apply(e *domain.Event) error {
	if e.Type != domain.TypeCheckpointSigned || e.Stream != domain.StreamCheckpoints {
		return nil
	}
	s, err := signedOf(e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.latest == nil || s.state.Version > l.latest.state.Version {
		l.latest = s
	}
	return nil
}

func signedOf(e *domain.Event) (*signed, error) {
	st, err := domain.ApplyCheckpointEvent(domain.CheckpointState{}, e)
	if err != nil {
		return nil, err
	}
	var c domain.CheckpointSigned
	if err := e.Decode(&c); err != nil {
		return nil, err
	}
	return &signed{event: c, state: st, pos: e.Position, time: time.UnixMilli(e.Time)}, nil
}

// Latest returns the last checkpoint recorded; ok is false before the
// first.
func (l *Log) Latest() (c domain.CheckpointSigned, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.latest == nil {
		return c, false
	}
	return l.latest.event, true
}

// LatestTime returns when the last checkpoint was recorded (zero before
// the first).
func (l *Log) LatestTime() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.latest == nil {
		return time.Time{}
	}
	return l.latest.time
}

// load reads the checkpoints stream's last event (nil when there is
// none): the stream's version is found by doubling then bisecting, a few
// reads of one event each whatever the stream's length.
func (l *Log) load(ctx context.Context) (*signed, error) {
	last, err := lastEvent(ctx, l.Store, domain.StreamCheckpoints)
	if err != nil || last == nil {
		return nil, err
	}
	return signedOf(last)
}

// lastEvent returns stream's last event, nil when the stream is empty.
func lastEvent(ctx context.Context, store domain.EventStore, stream string) (*domain.Event, error) {
	at := func(v int64) (*domain.Event, error) {
		it := store.ReadStream(ctx, stream, v, 1)
		defer it.Close()
		if it.Next() {
			e := it.Event()
			return &e, nil
		}
		return nil, it.Err()
	}
	first, err := at(0)
	if err != nil || first == nil {
		return nil, err
	}
	lo, last := int64(0), first // version lo exists
	hi := int64(1)              // the first version not known to exist
	for {
		e, err := at(hi)
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		lo, last, hi = hi, e, hi*2
	}
	for hi-lo > 1 { // lo exists, hi does not
		mid := lo + (hi-lo)/2
		e, err := at(mid)
		if err != nil {
			return nil, err
		}
		if e != nil {
			lo, last = mid, e
		} else {
			hi = mid
		}
	}
	return last, nil
}

// Issue signs a checkpoint of the whole tree and records it, when the
// tree has grown since the last checkpoint; otherwise it returns the last
// checkpoint. With force false it also leaves the log alone when the only
// record added since is the last checkpoint's own event. issued reports
// whether a new checkpoint was recorded; an empty log has none to give
// (ENOTFOUND). The tree is first caught up with the log (Tree.BuildTree),
// which costs nothing when it is.
func (l *Log) Issue(ctx context.Context, force bool) (c domain.CheckpointSigned, issued bool, err error) {
	l.issue.Lock() // one at a time in this process: each signs the tree as it is then
	defer l.issue.Unlock()
	return l.issueLocked(ctx, force)
}

// IssueCovering returns a checkpoint whose tree holds record index: the
// last one when it does, else one issued now (Issue with force). Whether
// the last one covers it is asked again once the issue lock is held, so
// that callers waiting for the same record (concurrent proofs of one
// order, which any read-scope token may ask for) sign one checkpoint
// between them, not one each.
func (l *Log) IssueCovering(ctx context.Context, index int64) (domain.CheckpointSigned, error) {
	l.issue.Lock()
	defer l.issue.Unlock()
	if cp, ok := l.Latest(); ok && cp.Origin == l.Key.Origin() && cp.Size > index {
		return cp, nil
	}
	cp, _, err := l.issueLocked(ctx, true)
	return cp, err
}

// issueLocked is Issue with l.issue held.
func (l *Log) issueLocked(ctx context.Context, force bool) (c domain.CheckpointSigned, issued bool, err error) {
	if err := l.Tree.BuildTree(ctx, nil); err != nil {
		return c, false, err
	}
	cmds := l.Commands
	if cmds == nil {
		cmds = eventstore.NewCommands(l.Store, nil)
	}
	var st issueState
	res, err := eventstore.Run(ctx, cmds, eventstore.Command[issueState]{
		Stream: domain.StreamCheckpoints,
		Load: func(ctx context.Context) (issueState, domain.ExpectedVersion, error) {
			var err error
			if st, err = l.loadIssue(ctx, force); err != nil {
				return st, 0, err
			}
			if st.last == nil {
				return st, domain.NoStream, nil
			}
			return st, domain.ExpectedVersion(st.last.state.Version), nil
		},
		Decide: func(st issueState) ([]domain.Event, error) {
			if st.next.Note == "" {
				return nil, nil
			}
			last := domain.CheckpointState{Version: -1}
			if st.last != nil {
				last = st.last.state
			}
			return domain.DecideCheckpoint(last, st.next, l.Clock)
		},
	})
	if err != nil {
		return c, false, err
	}
	if !res.Appended() {
		if st.last == nil {
			return c, false, domain.Errorf(domain.ENOTFOUND, "no checkpoint yet: the log is empty")
		}
		return st.last.event, false, nil
	}
	e := res.Events[0]
	e.Stream, e.Version, e.Position = domain.StreamCheckpoints, res.Append.LastVersion, res.Append.LastPosition
	if err := l.Apply(&e); err != nil {
		return c, false, err
	}
	return st.next, true, nil
}

// issueState is what Issue decides on: the last checkpoint recorded (nil:
// none) and the one to sign now (zero: nothing new to sign).
type issueState struct {
	last *signed
	next domain.CheckpointSigned
}

// loadIssue reads the last checkpoint and signs the tree as it is now if
// it grew since (see Issue for force).
func (l *Log) loadIssue(ctx context.Context, force bool) (issueState, error) {
	last, err := l.load(ctx)
	if err != nil {
		return issueState{}, err
	}
	st := issueState{last: last}
	size, err := l.Tree.TreeSize(ctx)
	if err != nil || size == 0 {
		return st, err
	}
	if last != nil && last.event.Origin == l.Key.Origin() {
		if size <= last.event.Size {
			return st, nil
		}
		if !force && size == last.event.Size+1 {
			// Grown by the last checkpoint's own event only?
			if i, err := l.Tree.RecordIndex(ctx, last.pos); err == nil && i == last.event.Size {
				return st, nil
			}
		}
	}
	root, err := tlog.TreeHash(size, l.hashReader(ctx))
	if err != nil {
		return st, err
	}
	cp := Checkpoint{Origin: l.Key.Origin(), Size: size, Root: root}
	msg, err := l.Key.Sign(cp)
	if err != nil {
		return st, err
	}
	st.next = domain.CheckpointSigned{Origin: cp.Origin, Size: size, Root: root.String(), Note: string(msg)}
	return st, nil
}

// Tick issues a checkpoint if the log has grown and Interval has passed
// on Clock since the last one; the service calls it every second or so
// (Run), tests when they move their clock.
func (l *Log) Tick(ctx context.Context) (issued bool, err error) {
	if last := l.LatestTime(); !last.IsZero() && l.Clock.Now().Sub(last) < l.Interval {
		return false, nil
	}
	if err := l.Tree.BuildTree(ctx, nil); err != nil {
		return false, err
	}
	if !l.grown(ctx) {
		return false, nil
	}
	_, issued, err = l.Issue(ctx, false)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		err = nil // an empty log: nothing to sign yet
	}
	return issued, err
}

// grown reports whether the tree holds records the last checkpoint this
// Log knows of does not cover, besides that checkpoint's own event: the
// cheap test Tick makes before Issue reads the stream.
func (l *Log) grown(ctx context.Context) bool {
	l.mu.Lock()
	last := l.latest
	l.mu.Unlock()
	if last == nil || last.event.Origin != l.Key.Origin() {
		return true
	}
	size, err := l.Tree.TreeSize(ctx)
	switch {
	case err != nil:
		return true // Issue reports it
	case size <= last.event.Size:
		return false
	case size == last.event.Size+1:
		i, err := l.Tree.RecordIndex(ctx, last.pos)
		return err != nil || i != last.event.Size
	}
	return true
}

// Run calls Tick at once and then every tick until ctx ends, reporting
// failures to onError (may be nil).
func (l *Log) Run(ctx context.Context, tick time.Duration, onError func(error)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if _, err := l.Tick(ctx); err != nil && onError != nil && !errors.Is(err, context.Canceled) {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// hashReader is Tree as a tlog.HashReader, its upper levels cached.
func (l *Log) hashReader(ctx context.Context) tlog.HashReader {
	return l.upper.reader(treeReader(ctx, l.Tree))
}

// Sizes of a Log's hashCache.
const (
	// cacheLevel is the lowest level whose hashes are cached: every
	// subtree of 2^8 records or more. An inclusion proof reads one hash
	// per level, the levels from cacheLevel up shared with every other
	// proof of the same tree; the lower ones are each proof's own.
	cacheLevel = 8
	// minCacheSlots and maxCacheSlots bound the cache's size (each slot 40
	// bytes): about as many slots as the tree has upper hashes (one per
	// 2^(cacheLevel−1) records), so that its memory follows the log's
	// size, up to 5 MiB (the upper hashes of 2^24 records).
	minCacheSlots = 1 << 10
	maxCacheSlots = 1 << 17
)

// hashCache keeps stored hashes of the levels from cacheLevel up, which
// never change once written, in a direct-mapped table: the upper levels
// of a proof are read from the tree once, not for every proof.
type hashCache struct {
	mu    sync.Mutex
	slots []cachedHash // a power of two of them
	shift uint         // 64 − log2(len(slots))
}

type cachedHash struct {
	index int64 // the stored-hash index + 1 (0: empty)
	hash  tlog.Hash
}

// slot returns the slot of stored-hash index x. The indexes of one level
// are 2^(level+1) apart, so they are spread by a multiplicative hash, not
// folded onto a few slots by a modulo.
func (c *hashCache) slot(x int64) *cachedHash {
	return &c.slots[uint64(x)*0x9E3779B97F4A7C15>>c.shift]
}

// fit sizes the table for a tree whose stored hashes reach index x (about
// twice its records), keeping what it holds.
func (c *hashCache) fit(x int64) {
	want := minCacheSlots
	for want < maxCacheSlots && int64(want) < x>>cacheLevel {
		want *= 2
	}
	if want <= len(c.slots) {
		return
	}
	old := c.slots
	c.slots, c.shift = make([]cachedHash, want), uint(64-bits.TrailingZeros(uint(want)))
	for _, s := range old {
		if s.index != 0 {
			*c.slot(s.index - 1) = s
		}
	}
}

// reader returns r with the cache in front of it.
func (c *hashCache) reader(r tlog.HashReader) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		var missing []int64 // positions in indexes
		c.mu.Lock()
		if len(indexes) > 0 {
			c.fit(slices.Max(indexes))
		}
		for i, x := range indexes {
			if s := c.slot(x); s.index == x+1 {
				out[i] = s.hash
			} else {
				missing = append(missing, int64(i))
			}
		}
		c.mu.Unlock()
		if len(missing) == 0 {
			return out, nil
		}
		want := make([]int64, len(missing))
		for j, i := range missing {
			want[j] = indexes[i]
		}
		hs, err := r.ReadHashes(want)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		for j, i := range missing {
			out[i] = hs[j]
			if level, _ := tlog.SplitStoredHashIndex(want[j]); level >= cacheLevel {
				*c.slot(want[j]) = cachedHash{index: want[j] + 1, hash: hs[j]}
			}
		}
		c.mu.Unlock()
		return out, nil
	})
}

// treeReader is tree as a tlog.HashReader.
func treeReader(ctx context.Context, tree domain.TreeStore) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		hs, err := tree.ReadTreeHashes(ctx, indexes)
		if err != nil {
			return nil, err
		}
		out := make([]tlog.Hash, len(hs))
		for i := range hs {
			out[i] = tlog.Hash(hs[i])
		}
		return out, nil
	})
}

// SnapshotVersion implements projections.Snapshotter.
func (l *Log) SnapshotVersion() uint32 { return 1 }

// Freeze implements projections.Snapshotter: the last checkpoint recorded
// (a signed value, never changed once recorded).
func (l *Log) Freeze() func(*snap.Encoder) {
	l.mu.Lock()
	s := l.latest
	l.mu.Unlock()
	return func(e *snap.Encoder) {
		e.Bool(s != nil)
		if s == nil {
			return
		}
		e.Text(s.event.Origin)
		e.Varint(s.event.Size)
		e.Text(s.event.Root)
		e.Text(s.event.Note)
		e.Varint(s.state.Version)
		e.Varint(s.state.Size)
		e.Uvarint(s.pos)
		e.Varint(s.time.UnixMilli())
	}
}

// Load implements projections.Snapshotter.
func (l *Log) Load(d *snap.Decoder) (func(), error) {
	var s *signed
	if d.Bool() {
		s = &signed{event: domain.CheckpointSigned{Origin: d.Text(), Size: d.Varint(), Root: d.Text(), Note: d.Text()},
			state: domain.CheckpointState{Version: d.Varint(), Size: d.Varint()}, pos: d.Uvarint(), time: time.UnixMilli(d.Varint())}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		l.mu.Lock()
		l.latest = s
		l.mu.Unlock()
	}, nil
}
