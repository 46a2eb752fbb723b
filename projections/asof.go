package projections

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/domain/readahead"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// Reads as of a past time. A State is the read models rebuilt from the
// part of the log a Cut selects — what `tradeledger replay --until` prints
// and what the API answers for asOf= — and BuildState is the one function
// that builds it, from the newest read-model snapshot within the cut when
// there is one (Cut.Within), else from the first event. States keeps the states recently asked
// for, each caught up with the log's new events when it is read again, so
// that repeated as-of reads cost one build.

// Cut selects the part of the log a replay applies: the events up to and
// including Position (0: no position bound), and, with ByTime, the events
// of time ≤ Until (ms). Neither: the whole log.
//
// A time cut reads the log one of two ways:
//   - as a prefix (restore): it stops at the first event stamped after
//     Until, so the state shown is one the live service actually held;
//   - in trade time (TradeTime: replay and the API's asOf): every event
//     counts by its own time (OwnTime: a fill by the exchange's time of the
//     trade, anything else by when it was recorded) and the log is read to
//     its end, so that a history imported today replays to a date inside
//     it. Within a stream, the first event past Until ends that stream's
//     part of the cut (an order is never shown filled before it was
//     accepted).
//
// On a log recorded live by one service the two readings agree: its events
// are stamped in commit order.
type Cut struct {
	Position  uint64
	ByTime    bool
	Until     int64
	TradeTime bool
}

// AsOf returns the trade-time cut at t (ms): the API's asOf and replay
// --until.
func AsOf(t int64) Cut { return Cut{ByTime: true, Until: t, TradeTime: true} }

// OwnTime is the time an event speaks of: a fill's trade time
// (domain.FillTime: the exchange's time of the trade, or the recorded time
// of a fill without one, as imported fills are), and when it was recorded
// for any other event.
func OwnTime(e *domain.Event) int64 {
	if e.Type == domain.TypeOrderFilled {
		if f, err := domain.Payload[domain.OrderFilled](e); err == nil {
			return domain.FillTime(e, f)
		}
	}
	return e.Time
}

// ReplayResult says where a replay stopped.
type ReplayResult struct {
	Events   int64  `json:"events"`   // events applied
	Position uint64 `json:"position"` // position of the last applied event
	Time     int64  `json:"time"`     // its time (ms)
	Failures int64  `json:"failures"` // events some projection could not apply
	// Later counts the events a trade-time cut left out (past the cut, or
	// after their stream's first event past it).
	Later int64 `json:"later,omitempty"`
	// Snapshot is the position of the read-model snapshot the replay
	// started from (0: none, it replayed from the first event); Events
	// counts the events up to it too, Failures only those after it.
	Snapshot uint64 `json:"snapshot,omitempty"`
}

// ReplayOptions are a replay's observers.
type ReplayOptions struct {
	// Progress, when set, is told every audit.VerifyProgressEvery events
	// how many were applied, the position reached and the log's head.
	Progress func(events int64, position, head uint64)
	// Warn, when set, is told of an event a projection could not apply
	// (the replay goes on, as the live runner does).
	Warn func(p Projection, e *domain.Event, err error)
	// Snapshots, when set, start the replay from the newest of its
	// read-model snapshots that lies within the cut (Cut.Within) and
	// holds the state of every projection replayed (each a Snapshotter,
	// else none is used), instead of from the first event; Skip, when
	// set, is told of each snapshot passed over and why.
	Snapshots *Snapshots
	Skip      func(path string, why error)
	// Pace, when set, is called after each batch of events applied: a
	// replay running beside the service (the check of a snapshot,
	// Rebuild) gives way there.
	Pace func()
}

// Within reports whether every event up to a snapshot with header h is
// within the cut, so that a replay under it may start from that snapshot:
// its position is within a position cut, every event in it was recorded
// within a prefix cut's time and speaks of a time within a trade-time
// cut's (then no stream has ended before the snapshot's position either).
func (cut Cut) Within(h *snap.Header) bool {
	if cut.Position != 0 && h.Position > cut.Position {
		return false
	}
	if cut.ByTime && !cut.TradeTime && h.MaxTime > cut.Until {
		return false
	}
	if cut.ByTime && cut.TradeTime && h.MaxOwnTime > cut.Until {
		return false
	}
	return true
}

// cutReader applies a cut to the log as it is read, and remembers where it
// is, so that a state can read the events appended later the same way.
type cutReader struct {
	cut   Cut
	ended map[string]struct{} // streams a trade-time cut has ended
	read  uint64              // every event up to this position has been considered
	done  bool                // a prefix or position cut has passed its end: nothing later applies
	res   ReplayResult
	times *eventTimes // when set, the latest times of the events applied
}

// admit reports whether e applies under the cut; stop when no later event
// can.
func (c *cutReader) admit(e *domain.Event) (apply, stop bool) {
	cut := &c.cut
	if cut.Position != 0 && e.Position > cut.Position {
		return false, true
	}
	if cut.ByTime && !cut.TradeTime && e.Time > cut.Until {
		return false, true
	}
	if cut.ByTime && cut.TradeTime {
		if _, done := c.ended[e.Stream]; done {
			c.res.Later++
			return false, false
		}
		if OwnTime(e) > cut.Until {
			if c.ended == nil {
				c.ended = map[string]struct{}{}
			}
			c.ended[strings.Clone(e.Stream)] = struct{}{}
			c.res.Later++
			return false, false
		}
	}
	return true, false
}

// fromSnapshot loads into projs (which applied nothing) the newest of
// opts.Snapshots within the cut, if any, and starts the reader after it.
func (c *cutReader) fromSnapshot(ctx context.Context, store domain.EventStore, projs []Projection, opts ReplayOptions) error {
	if opts.Snapshots == nil {
		return nil
	}
	list := make([]Snapshotter, 0, len(projs))
	for _, p := range projs {
		s, ok := p.(Snapshotter)
		if !ok {
			return nil
		}
		list = append(list, s)
	}
	head, err := store.Head(ctx)
	if err != nil {
		return fmt.Errorf("replay: read head: %w", err)
	}
	l, ok := opts.Snapshots.Load(ctx, head, list, c.cut.Within, opts.Skip)
	if !ok {
		return nil
	}
	pos := l.Header.Position
	c.read = pos
	c.res = ReplayResult{Events: l.Header.Records, Position: pos, Snapshot: pos}
	if pos == 0 {
		return nil
	}
	// The time of the last event applied: the snapshot's last one, until
	// the tail applies another.
	it := store.ReadAll(ctx, pos, 1)
	defer it.Close()
	if it.Next() {
		c.res.Time = it.Event().Time
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("replay: read log: %w", err)
	}
	return nil
}

// replay reads the log after c.read into projs, up to the cut.
func (c *cutReader) replay(ctx context.Context, store domain.EventStore, projs []Projection, opts ReplayOptions) error {
	if c.done {
		return nil
	}
	head, _ := store.Head(ctx)
	if head <= c.read {
		return nil
	}
	var it domain.EventIterator
	if s, ok := store.(noHashesReader); ok {
		it = s.ReadAllNoHashes(ctx, c.read+1)
	} else {
		it = store.ReadAll(ctx, c.read+1, 0)
	}
	// Several read models decode the same order payloads: the reading
	// goroutine decodes them once (domain.Event.Predecode).
	err := readahead.Predecoded(ctx, it, func(batch []domain.Event) bool {
		for i := range batch {
			e := &batch[i]
			apply, stop := c.admit(e)
			if stop {
				c.done = true
				return false
			}
			c.read = e.Position
			if !apply {
				continue
			}
			failed := false
			for _, p := range projs {
				if err := p.Apply(e); err != nil {
					failed = true
					if opts.Warn != nil {
						opts.Warn(p, e, err)
					}
				}
			}
			if failed {
				c.res.Failures++
			}
			if c.times != nil {
				c.times.add(e)
			}
			c.res.Events++
			c.res.Position, c.res.Time = e.Position, e.Time
			if opts.Progress != nil && c.res.Events%audit.VerifyProgressEvery == 0 {
				opts.Progress(c.res.Events, e.Position, head)
			}
		}
		if opts.Pace != nil {
			opts.Pace()
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("replay: read log: %w", err)
	}
	return nil
}

// ReplayCut feeds the events of the log within cut, in order, into projs,
// and says where it stopped: `tradeledger replay` and `restore`.
func ReplayCut(ctx context.Context, store domain.EventStore, cut Cut, projs []Projection, opts ReplayOptions) (ReplayResult, error) {
	c := &cutReader{cut: cut}
	if err := c.fromSnapshot(ctx, store, projs, opts); err != nil {
		return c.res, err
	}
	err := c.replay(ctx, store, projs, opts)
	return c.res, err
}

// State is the read models as of a cut of the log: the Ledger (order
// records, PNL, assets) under one lot matching method and the balances
// the exchanges last reported. Its read models are safe for concurrent
// readers; CatchUp may run beside them.
type State struct {
	Ledger   *Ledger
	Balances *Balances
	Cut      Cut
	Method   domain.PnlMethod

	mu    sync.Mutex // one catch-up at a time
	cr    cutReader
	projs []Projection
}

// BuildState replays the log up to cut into a new Ledger matching lots with
// method and a new Balances, and into extra (more projections a caller
// needs of the same cut: replay's engine Orders) — from the newest
// read-model snapshot within the cut when opts has Snapshots. It is the
// one way a past state is built.
func BuildState(ctx context.Context, store domain.EventStore, cut Cut, method domain.PnlMethod, opts ReplayOptions, extra ...Projection) (*State, error) {
	s := &State{Ledger: NewLedger(method), Balances: NewBalances(), Cut: cut, Method: method, cr: cutReader{cut: cut}}
	s.Ledger.PageCacheBytes = 0 // a past state serves few pages: no cache of their JSON
	s.projs = append([]Projection{s.Ledger, s.Balances}, extra...)
	if err := s.cr.fromSnapshot(ctx, store, s.projs, opts); err != nil {
		return nil, err
	}
	if err := s.cr.replay(ctx, store, s.projs, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// Result says where the state's replay stopped.
func (s *State) Result() ReplayResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cr.res
}

// CatchUp applies the events appended to the log since the state was
// built or last caught up, under the same cut: a trade-time cut takes an
// event whose own time is within it (a late fill, an import) in a stream
// it has not ended; a prefix or position cut that has passed its end takes
// nothing more.
func (s *State) CatchUp(ctx context.Context, store domain.EventStore) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cr.replay(ctx, store, s.projs, ReplayOptions{})
}

// Balances is the last BalancesObserved of each exchange (what POST
// balances answers): the live service's engine observes balances into one
// (engine.New takes it), and a past state builds its own.
type Balances struct {
	mu sync.RWMutex
	by map[string]domain.BalancesObserved
}

// NewBalances returns an empty Balances.
func NewBalances() *Balances { return &Balances{by: map[string]domain.BalancesObserved{}} }

// Name implements Projection.
func (b *Balances) Name() string { return "balances" }

// Apply implements Projection: a BalancesObserved on a balance stream
// replaces its exchange's balances; a payload that does not decode is
// EINVALID and changes nothing.
func (b *Balances) Apply(e *domain.Event) error {
	if e.Type != domain.TypeBalancesObserved || !strings.HasPrefix(e.Stream, "balance-") {
		return nil
	}
	var p domain.BalancesObserved
	if err := e.Decode(&p); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.by[p.Exchange] = p
	return nil
}

// Balances returns each exchange's last observed balances, sorted by
// exchange.
func (b *Balances) Balances() []domain.BalancesObserved {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]domain.BalancesObserved, 0, len(b.by))
	for _, o := range b.by {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Exchange < out[j].Exchange })
	return out
}

// Defaults for States.
const (
	// DefaultMaxStates is how many past states States keeps.
	DefaultMaxStates = 4
	// DefaultMaxStateRecords bounds the order records of the states kept,
	// all together (a state holds about 150 bytes of heap per record):
	// past it the least recently read states are dropped, the one just
	// built excepted.
	DefaultMaxStateRecords = 2_000_000
	// DefaultMaxBuilds is how many states States builds at once: each
	// replays the log on a core of its own and holds a whole Ledger
	// while it does.
	DefaultMaxBuilds = 2
	// DefaultMaxQueued is how many more builds wait for one of those;
	// past it a read that needs a new state is refused for now
	// (BusyError).
	DefaultMaxQueued = 32
)

// BusyError refuses a read that needs a past state while States builds as
// many as it may and as many more wait: EUNAVAILABLE (its Unwrap), and
// RetryAfter says when to try again (HTTP 503 with Retry-After).
type BusyError struct {
	err   error
	After time.Duration
}

func (e *BusyError) Error() string { return e.err.Error() }

// Unwrap returns the domain.Error (EUNAVAILABLE) it is.
func (e *BusyError) Unwrap() error { return e.err }

// RetryAfter says how long to wait before asking again.
func (e *BusyError) RetryAfter() time.Duration { return e.After }

// States builds past states on demand (BuildState) and keeps the most
// recently read ones, each caught up with the log when read again, within
// MaxStates and MaxStateRecords. Requests for a state being built wait for
// that build instead of starting another. At most MaxBuilds states are
// built at once and MaxQueued more wait for their turn; a request for yet
// another is refused (BusyError), so that a burst of past-time reads can
// neither take every core nor hold a Ledger per request in memory. A build
// whose every requester left (its context ended) is cancelled. Safe for
// concurrent use; fill the settings before the first Get.
type States struct {
	Store domain.EventStore
	// Snapshots, when set, are the read-model snapshots a state starts
	// from (the newest within its cut whose Ledger matches lots the same
	// way), instead of the first event.
	Snapshots       *Snapshots
	MaxStates       int
	MaxStateRecords int
	MaxBuilds       int
	MaxQueued       int

	mu       sync.Mutex
	kept     []*State // least recently read first
	building map[stateKey]*stateBuild
	slots    chan struct{} // one per build under way (MaxBuilds)
	builds   int           // states built, for tests and metrics
	lastTook time.Duration // how long the last build took
}

type stateKey struct {
	cut    Cut
	method domain.PnlMethod
}

type stateBuild struct {
	done    chan struct{}
	s       *State
	err     error
	waiters int                // requests waiting for it; 0: cancelled
	cancel  context.CancelFunc // ends the build
}

// NewStates returns States over store with default settings.
func NewStates(store domain.EventStore) *States {
	return &States{Store: store, MaxStates: DefaultMaxStates, MaxStateRecords: DefaultMaxStateRecords,
		MaxBuilds: DefaultMaxBuilds, MaxQueued: DefaultMaxQueued}
}

// Get returns the state of the log at cut under method: a kept one caught
// up with the log, or one built now (waiting for its turn). ctx bounds the
// wait; the build goes on while any request waits for it. A BusyError
// when as many builds as allowed are under way and waiting.
func (ss *States) Get(ctx context.Context, cut Cut, method domain.PnlMethod) (*State, error) {
	k := stateKey{cut, method}
	ss.mu.Lock()
	for i, s := range ss.kept {
		if s.Cut == cut && s.Method == method {
			ss.kept = append(append(ss.kept[:i:i], ss.kept[i+1:]...), s) // now the most recent
			ss.mu.Unlock()
			if err := s.CatchUp(ctx, ss.Store); err != nil {
				return nil, err
			}
			return s, nil
		}
	}
	if b, ok := ss.building[k]; ok {
		b.waiters++
		ss.mu.Unlock()
		return ss.wait(ctx, k, b)
	}
	maxBuilds, maxQueued := max(ss.MaxBuilds, 1), max(ss.MaxQueued, 0)
	if len(ss.building) >= maxBuilds+maxQueued {
		after := max(time.Second, ss.lastTook*time.Duration(1+len(ss.building)/maxBuilds)).Round(time.Second)
		ss.mu.Unlock()
		return nil, &BusyError{After: after, err: domain.Errorf(domain.EUNAVAILABLE,
			"%d past states are being built or waiting to be (asOf=, method=): try again in %s", maxBuilds+maxQueued, after)}
	}
	if ss.building == nil {
		ss.building = map[stateKey]*stateBuild{}
	}
	if ss.slots == nil {
		ss.slots = make(chan struct{}, maxBuilds)
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &stateBuild{done: make(chan struct{}), waiters: 1, cancel: cancel}
	ss.building[k] = b
	ss.mu.Unlock()
	go ss.build(bctx, k, b)
	return ss.wait(ctx, k, b)
}

// wait waits for build b of k, or for ctx: the last request to leave
// cancels the build.
func (ss *States) wait(ctx context.Context, k stateKey, b *stateBuild) (*State, error) {
	select {
	case <-b.done:
		return b.s, b.err
	case <-ctx.Done():
		ss.mu.Lock()
		if b.waiters--; b.waiters == 0 {
			b.cancel()
			if ss.building[k] == b {
				delete(ss.building, k) // a new request starts afresh
			}
		}
		ss.mu.Unlock()
		return nil, ctx.Err()
	}
}

// build builds the state of k once a slot is free, unless cancelled
// first.
func (ss *States) build(ctx context.Context, k stateKey, b *stateBuild) {
	defer close(b.done)
	defer b.cancel()
	select {
	case ss.slots <- struct{}{}:
	case <-ctx.Done():
		b.err = ctx.Err()
		return
	}
	start := time.Now()
	b.s, b.err = BuildState(ctx, ss.Store, k.cut, k.method, ReplayOptions{Snapshots: ss.Snapshots})
	<-ss.slots
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.building[k] == b {
		delete(ss.building, k)
	}
	if b.err != nil {
		b.s = nil
		return
	}
	ss.builds++
	ss.lastTook = time.Since(start)
	ss.kept = append(ss.kept, b.s)
	ss.trim()
}

// trim drops the least recently read states beyond the bounds, never the
// most recent one. The caller holds ss.mu.
func (ss *States) trim() {
	maxN, maxR := ss.MaxStates, ss.MaxStateRecords
	if maxN <= 0 {
		maxN = DefaultMaxStates
	}
	if maxR <= 0 {
		maxR = DefaultMaxStateRecords
	}
	records := 0
	for _, s := range ss.kept {
		records += s.Ledger.RecordCount()
	}
	for len(ss.kept) > 1 && (len(ss.kept) > maxN || records > maxR) {
		records -= ss.kept[0].Ledger.RecordCount()
		ss.kept[0] = nil
		ss.kept = ss.kept[1:]
	}
}

// Pending returns how many states are being built or waiting to be.
func (ss *States) Pending() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.building)
}

// Builds returns how many states were built so far (a kept state read
// again is not a build).
func (ss *States) Builds() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.builds
}
