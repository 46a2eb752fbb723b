package transparency

import (
	"context"
	"errors"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
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
	Tree audit.TreeStore
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

	// witnesses is what the checkpoints stream says of each witness, by
	// verifier key (Apply).
	witnesses map[string]domain.WitnessRecord
	tail      tailCheck // ownTail's last answer

	// OnCheckpoint, when set, is called (without blocking) after Apply
	// took a newer checkpoint as the latest: the witness client sends it
	// at once.
	OnCheckpoint func()
}

// signed is a checkpoint as the checkpoints stream has it.
type signed struct {
	event domain.CheckpointSigned
	state domain.CheckpointState
	pos   uint64    // its event's position
	time  time.Time // its event's time
	// cosigs are the witnesses' cosignature lines recorded for it since
	// (CheckpointCosigned), in the order recorded.
	cosigs []string
}

// note returns the checkpoint's note with its cosignatures.
func (s *signed) note() string {
	return s.event.Note + strings.Join(s.cosigs, "")
}

// cosign adds c's signature line when c cosigns this checkpoint and the
// line is not there yet; it reports whether it did.
func (s *signed) cosign(c domain.CheckpointCosigned) bool {
	if c.Origin != s.event.Origin || c.Size != s.event.Size || c.Root != s.event.Root || slices.Contains(s.cosigs, c.Signature) {
		return false
	}
	s.cosigs = append(slices.Clip(s.cosigs), c.Signature)
	return true
}

// NewLog returns a Log with default settings.
func NewLog(store domain.EventStore, tree audit.TreeStore, key *Key, clock domain.Clock) *Log {
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
// last checkpoint served; a CheckpointCosigned adds its witness's
// cosignature to it (when it is that checkpoint's) and, with a
// WitnessRefused, to what Witnesses says.
func (l *Log) Apply(e *domain.Event) error {
	if e.Stream != domain.StreamCheckpoints {
		return nil
	}
	switch e.Type {
	case domain.TypeCheckpointSigned:
		s, err := signedOf(e)
		if err != nil {
			return err
		}
		l.mu.Lock()
		newer := l.latest == nil || s.state.Version > l.latest.state.Version
		if newer {
			l.latest = s
		}
		l.mu.Unlock()
		if newer && l.OnCheckpoint != nil {
			l.OnCheckpoint()
		}
	case domain.TypeCheckpointCosigned, domain.TypeWitnessRefused:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.witnesses == nil {
			l.witnesses = map[string]domain.WitnessRecord{}
		}
		if err := domain.ApplyWitnessEvent(l.witnesses, e); err != nil {
			return err
		}
		if e.Type == domain.TypeCheckpointCosigned && l.latest != nil {
			var c domain.CheckpointCosigned
			if err := e.Decode(&c); err != nil {
				return err
			}
			l.latest.cosign(c)
		}
	}
	return nil
}

// Witnesses returns what the checkpoints stream says of each witness that
// answered so far, by verifier key: the last checkpoint it cosigned, and
// its refusal since, if any.
func (l *Log) Witnesses() map[string]domain.WitnessRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.witnesses)
}

// LatestSigned returns the last checkpoint recorded as the log signed it,
// without cosignatures: what is sent to the witnesses.
func (l *Log) LatestSigned() (c domain.CheckpointSigned, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.latest == nil {
		return c, false
	}
	return l.latest.event, true
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

// Latest returns the last checkpoint recorded, its note carrying every
// witness's cosignature recorded for it since; ok is false before the
// first.
func (l *Log) Latest() (c domain.CheckpointSigned, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.latest == nil {
		return c, false
	}
	c = l.latest.event
	c.Note = l.latest.note()
	return c, true
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

// load reads the checkpoints stream's last CheckpointSigned (nil when
// there is none) with the cosignatures recorded for it after it: the
// stream's last version is found by doubling then bisecting, a few reads
// of one event each whatever the stream's length, then the stream is read
// back from there in pages until a CheckpointSigned (the witnesses'
// answers follow each checkpoint, a few per witness at most).
func (l *Log) load(ctx context.Context) (*signed, error) {
	last, err := lastEvent(ctx, l.Store, domain.StreamCheckpoints)
	if err != nil || last == nil {
		return nil, err
	}
	const page = 64
	var after []domain.Event // the events after the checkpoint found, in order
	for end := last.Version + 1; end > 0; end -= page {
		from := max(end-page, 0)
		var events []domain.Event
		it := l.Store.ReadStream(ctx, domain.StreamCheckpoints, from, int(end-from))
		for it.Next() {
			events = append(events, it.Event())
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return nil, err
		}
		for i := len(events) - 1; i >= 0; i-- {
			if events[i].Type != domain.TypeCheckpointSigned {
				continue
			}
			s, err := signedOf(&events[i])
			if err != nil {
				return nil, err
			}
			after = append(events[i+1:], after...)
			for j := range after {
				if after[j].Type != domain.TypeCheckpointCosigned {
					continue
				}
				var c domain.CheckpointCosigned
				if err := after[j].Decode(&c); err != nil {
					return nil, err
				}
				s.cosign(c)
			}
			s.state.Version = last.Version
			return s, nil
		}
		after = append(events, after...)
	}
	return nil, nil
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
//
// A tree that does not extend the checkpoint kept beside it (the log was
// cut at its end) is never signed: that is an EINTERNAL error, until an
// operator accepts the cut (AcceptCut).
func (l *Log) Issue(ctx context.Context, force bool) (c domain.CheckpointSigned, issued bool, err error) {
	return l.issueCheckpoint(ctx, force, nil)
}

// cutIssue is what the first checkpoint after an accepted log cut is
// signed with: the extension line that says so (and the tree need not
// extend the kept checkpoint, which the cut abandoned).
type cutIssue struct {
	extension string
}

// issueCheckpoint is Issue, after an accepted log cut when cut is set.
func (l *Log) issueCheckpoint(ctx context.Context, force bool, cut *cutIssue) (c domain.CheckpointSigned, issued bool, err error) {
	l.issue.Lock() // one at a time in this process: each signs the tree as it is then
	defer l.issue.Unlock()
	return l.issueLocked(ctx, force, cut)
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
	cp, _, err := l.issueLocked(ctx, true, nil)
	return cp, err
}

// issueLocked is issueCheckpoint with l.issue held.
func (l *Log) issueLocked(ctx context.Context, force bool, cut *cutIssue) (c domain.CheckpointSigned, issued bool, err error) {
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
			if st, err = l.loadIssue(ctx, force, cut); err != nil {
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
// it grew since (see Issue for force), and if it extends the checkpoint
// kept beside it, unless cut abandons that one.
func (l *Log) loadIssue(ctx context.Context, force bool, cut *cutIssue) (issueState, error) {
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
		if !force && l.ownTail(ctx, last.event.Size, size) {
			// Grown by the checkpoints stream's own events only.
			return st, nil
		}
	}
	cp := Checkpoint{Origin: l.Key.Origin(), Size: size}
	if cut != nil {
		cp.Extension = cut.extension
	}
	if err := l.extendsKept(ctx, size, cut != nil); err != nil {
		return st, err
	}
	root, err := tlog.TreeHash(size, l.hashReader(ctx))
	if err != nil {
		return st, err
	}
	cp.Root = root
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
	}
	return !l.ownTail(ctx, last.event.Size, size)
}

// maxOwnTail is the most records after a checkpoint ownTail reads: the
// checkpoint's own event and its witnesses' answers are far fewer.
const maxOwnTail = 64

// ownTail reports whether records from to to−1 are all events of the
// checkpoints stream (the last checkpoint's own, its witnesses' answers):
// a log grown by those alone needs no new checkpoint, or each checkpoint
// would call for the next. Its answer for the last range asked is kept.
func (l *Log) ownTail(ctx context.Context, from, to int64) bool {
	if to <= from || to-from > maxOwnTail {
		return to <= from
	}
	l.mu.Lock()
	t := l.tail
	l.mu.Unlock()
	if t.from == from && t.to == to {
		return t.own
	}
	pos, err := l.Tree.RecordPosition(ctx, from)
	if err != nil {
		return false
	}
	own, n := true, int64(0)
	it := l.Store.ReadAll(ctx, pos, int(to-from))
	for it.Next() {
		own = own && it.Event().Stream == domain.StreamCheckpoints
		n++
	}
	err = it.Err()
	it.Close()
	if err != nil || n != to-from {
		return false
	}
	l.mu.Lock()
	l.tail = tailCheck{from: from, to: to, own: own}
	l.mu.Unlock()
	return own
}

// tailCheck is ownTail's last answer.
type tailCheck struct {
	from, to int64
	own      bool
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
	return l.upper.reader(TreeHashReader(ctx, l.Tree))
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

// TreeHashReader is tree as a tlog.HashReader: tlog.TreeHash, ProveRecord
// and ProveTree read a TreeStore's stored hashes through it; a read's
// error is the store's, unwrapped.
func TreeHashReader(ctx context.Context, tree audit.TreeStore) tlog.HashReader {
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
func (l *Log) SnapshotVersion() uint32 { return 2 }

// Freeze implements projections.Snapshotter: the last checkpoint recorded
// (a signed value, never changed once recorded).
func (l *Log) Freeze() func(*snap.Encoder) {
	l.mu.Lock()
	s := l.latest
	var cosigs []string
	if s != nil {
		cosigs = slices.Clone(s.cosigs)
	}
	witnesses := maps.Clone(l.witnesses)
	l.mu.Unlock()
	return func(e *snap.Encoder) {
		e.Bool(s != nil)
		if s != nil {
			e.Text(s.event.Origin)
			e.Varint(s.event.Size)
			e.Text(s.event.Root)
			e.Text(s.event.Note)
			e.Varint(s.state.Version)
			e.Varint(s.state.Size)
			e.Uvarint(s.pos)
			e.Varint(s.time.UnixMilli())
			e.Uvarint(uint64(len(cosigs)))
			for _, c := range cosigs {
				e.Text(c)
			}
		}
		// The witnesses' records, in key order.
		keys := slices.Sorted(maps.Keys(witnesses))
		e.Uvarint(uint64(len(keys)))
		for _, k := range keys {
			r := witnesses[k]
			e.Text(k)
			e.Bool(r.Cosigned != nil)
			if c := r.Cosigned; c != nil {
				e.Text(c.Origin)
				e.Varint(c.Size)
				e.Text(c.Root)
				e.Text(c.Witness)
				e.Text(c.Key)
				e.Text(c.URL)
				e.Varint(c.Time)
				e.Text(c.Signature)
			}
			e.Bool(r.Refused != nil)
			if f := r.Refused; f != nil {
				e.Text(f.Origin)
				e.Varint(f.Size)
				e.Text(f.Root)
				e.Text(f.Witness)
				e.Text(f.Key)
				e.Text(f.URL)
				e.Varint(f.WitnessSize)
				e.Varint(int64(f.Status))
				e.Text(f.Reason)
			}
		}
	}
}

// Load implements projections.Snapshotter.
func (l *Log) Load(d *snap.Decoder) (func(), error) {
	var s *signed
	if d.Bool() {
		s = &signed{event: domain.CheckpointSigned{Origin: d.Text(), Size: d.Varint(), Root: d.Text(), Note: d.Text()},
			state: domain.CheckpointState{Version: d.Varint(), Size: d.Varint()}, pos: d.Uvarint(), time: time.UnixMilli(d.Varint())}
		for n := d.Uvarint(); n > 0 && d.Err() == nil; n-- {
			s.cosigs = append(s.cosigs, d.Text())
		}
	}
	witnesses := map[string]domain.WitnessRecord{}
	for n := d.Uvarint(); n > 0 && d.Err() == nil; n-- {
		k := d.Text()
		var r domain.WitnessRecord
		if d.Bool() {
			r.Cosigned = &domain.CheckpointCosigned{Origin: d.Text(), Size: d.Varint(), Root: d.Text(), Witness: d.Text(),
				Key: d.Text(), URL: d.Text(), Time: d.Varint(), Signature: d.Text()}
		}
		if d.Bool() {
			r.Refused = &domain.WitnessRefused{Origin: d.Text(), Size: d.Varint(), Root: d.Text(), Witness: d.Text(),
				Key: d.Text(), URL: d.Text(), WitnessSize: d.Varint(), Status: int(d.Varint()), Reason: d.Text()}
		}
		witnesses[k] = r
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		l.mu.Lock()
		l.latest, l.witnesses = s, witnesses
		l.mu.Unlock()
	}, nil
}
