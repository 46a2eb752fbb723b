// Package clickhouse is the analytics sink: it keeps ClickHouse tables of
// orders, fills, per-pair daily PNL, balances and asset values fed from the
// event log, and answers the PNL and asset reads from them (Reader).
//
// Exactly-once effect. Every row carries the log position of the event that
// produced it, and every table is a ReplacingMergeTree with that position as
// its version, read with FINAL. The sink's checkpoint (the last position
// whose rows are all stored) lives in ClickHouse too and is written after
// the rows, so the sink resumes from what ClickHouse actually holds: a crash
// or a failed insert at any point only makes the next attempt write some
// rows again, which replaces them instead of adding to them.
//
// Rows are computed in Go by the same code as the in-memory projections
// (domain.Order's fold; domain/fold for lot matching, fees and conversion,
// in trade time); at start the sink replays the log up to its checkpoint
// to rebuild that state, then writes rows for what follows. A fill
// recorded late folds its pair again before the next flush, and the rows
// derived from it are written again with a later version (state.settle).
//
// Compatibility: ClickHouse 18.16 (Debian's package) and current releases,
// over the native protocol: no DateTime64, no window functions, explicit
// column lists on every insert.
//
// Many services may share one database: every row is tagged with its
// service's Instance (first in each key), and a sink claims its instance
// name for its log, so that a name another log holds is refused (ECONFLICT,
// claim). Fleet answers the fleet routes across every instance of the
// database.
//
// Amounts are exact (wide.go): Int64 counts of 10^-12, and an amount beyond
// their range as its exact decimal text in the row's wide column. No sum is
// left to ClickHouse's own types, which wrap silently: SQL sums each
// column's 32-bit halves apart and Go joins them.
//
// Versions and failures: a sink finding rows of an older SchemaVersion
// writes every row again from the log, then drops the tables it replaced;
// rows of a newer one stop it, and the Reader then answers from its
// Fallback (else EUNAVAILABLE), as when ClickHouse fails. A refusal
// that a retry would meet again (RefusedError, ECONFLICT) stops the sink;
// only transient failures are retried, with backoff.
package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// Defaults for Sink settings.
const (
	DefaultBatchRows     = 10000
	DefaultFlushInterval = time.Second
	DefaultMinBackoff    = 100 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultDatabase      = "tradeledger"
)

// Sink feeds ClickHouse from the log. Fill its settings (NewSink sets the
// defaults), then Open to follow the log in the background, or Export to
// load the log up to its head and return.
type Sink struct {
	// URL is clickhouse://[user[:password]@]host:port/database[?options]
	// (native protocol). The database is created if missing.
	URL string
	// Store is the log to follow.
	Store domain.EventStore
	// Method is the lot matching the PNL figures use; each method has its
	// own checkpoint and rows.
	Method domain.PnlMethod
	// Instance names this service among those sharing the database: every
	// row the sink writes carries it, and its checkpoint is its own
	// (CheckInstance; NewSink sets DefaultInstance).
	Instance string
	// Log identifies the log the sink reads (serve gives its origin, the
	// name its checkpoints are signed under). The sink claims Instance for
	// it before writing; a claim of the name by another log found first
	// stops the sink with ECONFLICT (claim). Empty: the log's first
	// event's id.
	Log string
	// Logger is told of outages and retries (never of credentials).
	Logger *zap.Logger
	// Clock stamps the checkpoint rows.
	Clock domain.Clock
	// BatchRows is the number of pending rows that triggers a flush.
	BatchRows int
	// FlushInterval bounds how long rows wait while events flow.
	FlushInterval time.Duration
	// MinBackoff and MaxBackoff bound the wait between retries after
	// ClickHouse failed; the wait doubles from MinBackoff up to MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Sleep waits d or until ctx ends (then it returns ctx's error). Tests
	// inject their own to drive retries without real waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Progress, if set, is called after every flush with the number of
	// events read, the position stored and the head being exported to
	// (0 when following the log).
	Progress func(events int64, stored, head uint64)

	// afterRows, if set, runs after a flush's rows are stored and before
	// its checkpoint is: tests make it fail to crash the sink right there.
	afterRows func(pos uint64) error

	db   string
	opts *ch.Options

	mu      sync.Mutex
	conn    driver.Conn
	stored  uint64        // checkpoint known to be in ClickHouse
	current bool          // the rows up to stored are all of SchemaVersion (not being rewritten)
	changed chan struct{} // closed and replaced when stored moves
	lastErr error         // last ClickHouse error, nil once a flush succeeded

	cancel context.CancelFunc
	done   chan struct{}
}

// NewSink returns a Sink writing to url from store, with default settings.
func NewSink(url string, store domain.EventStore) *Sink {
	return &Sink{
		URL:           url,
		Store:         store,
		Method:        domain.LOFO,
		Instance:      DefaultInstance,
		Logger:        zap.NewNop(),
		Clock:         domain.SystemClock{},
		BatchRows:     DefaultBatchRows,
		FlushInterval: DefaultFlushInterval,
		MinBackoff:    DefaultMinBackoff,
		MaxBackoff:    DefaultMaxBackoff,
		Sleep:         sleep,
		changed:       make(chan struct{}),
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ParseURL checks a clickhouse:// URL and returns the client options (with
// the database left empty, so that connecting works before it exists) and
// the database name (DefaultDatabase when the path is empty).
func ParseURL(rawURL string) (*ch.Options, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "clickhouse" || u.Host == "" {
		return nil, "", domain.Errorf(domain.EINVALID, "clickhouse URL must look like clickhouse://host:9000/database")
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		db = DefaultDatabase
	}
	if err := checkIdent(db); err != nil {
		return nil, "", domain.Errorf(domain.EINVALID, "%v", err)
	}
	u.Path = ""
	opts, err := ch.ParseDSN(u.String())
	if err != nil {
		return nil, "", domain.Errorf(domain.EINVALID, "clickhouse URL: %v", err)
	}
	opts.Protocol = ch.Native
	opts.Auth.Database = ""
	if opts.DialTimeout == 0 || opts.DialTimeout > 5*time.Second {
		opts.DialTimeout = 5 * time.Second
	}
	return opts, db, nil
}

// Database returns the database the sink writes to (after Open or Export).
func (s *Sink) Database() string { return s.db }

func (s *Sink) sinkName() string { return sinkNameOf(s.Instance, s.Method) }

// sinkNameOf names the sink of instance and method in the checkpoint and
// schema_version tables: tradeledger/<instance>/<method> (an instance name
// holds no '/': CheckInstance).
func sinkNameOf(instance string, m domain.PnlMethod) string {
	return "tradeledger/" + instance + "/" + m.String()
}

// Open checks the settings and starts following the log in the background.
// It does not wait for ClickHouse: while ClickHouse is unreachable the sink
// retries with backoff (and Lag grows), then catches up. A refusal that a
// retry would meet again (a *RefusedError, or ECONFLICT) stops it: logged,
// and reported by Err until the service restarts.
func (s *Sink) Open() error {
	if err := s.init(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.follow(ctx)
	}()
	return nil
}

func (s *Sink) init() error {
	if s.Store == nil {
		return errors.New("clickhouse sink: no event store")
	}
	opts, db, err := ParseURL(s.URL)
	if err != nil {
		return err
	}
	s.opts, s.db = opts, db
	if s.Instance == "" {
		s.Instance = DefaultInstance
	}
	if err := CheckInstance(s.Instance); err != nil {
		return err
	}
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	if s.Sleep == nil {
		s.Sleep = sleep
	}
	if s.Logger == nil {
		s.Logger = zap.NewNop()
	}
	if s.Clock == nil {
		s.Clock = domain.SystemClock{}
	}
	if s.BatchRows <= 0 {
		s.BatchRows = DefaultBatchRows
	}
	if s.FlushInterval <= 0 {
		s.FlushInterval = DefaultFlushInterval
	}
	if s.MinBackoff <= 0 {
		s.MinBackoff = DefaultMinBackoff
	}
	if s.MaxBackoff < s.MinBackoff {
		s.MaxBackoff = s.MinBackoff
	}
	return nil
}

// Close stops the sink. Rows not yet flushed are dropped, not lost: they
// are rebuilt from the log at the next start, which resumes from the
// checkpoint stored in ClickHouse.
func (s *Sink) Close() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel = nil
	}
	s.mu.Lock()
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	if conn != nil {
		return conn.Close()
	}
	return nil
}

// Stored returns the position up to which ClickHouse holds every row (the
// checkpoint), as last read or written by this sink.
func (s *Sink) Stored() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored
}

// Checkpoint returns Stored and whether the rows up to it are all
// written under the current SchemaVersion and ClickHouse answered the
// last write: false before the sink has connected, while it writes its
// rows again for a schema upgrade and while its writes fail. A
// Reader of the same database and method in this process takes it as
// Reader.Checkpoint, so that its Version asks ClickHouse nothing.
func (s *Sink) Checkpoint() (pos uint64, current bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored, s.current && s.lastErr == nil
}

// Lag returns how many positions the sink is behind the log's head: 0 when
// ClickHouse holds every event's rows.
func (s *Sink) Lag(ctx context.Context) (uint64, error) {
	head, err := s.Store.Head(ctx)
	if err != nil {
		return 0, err
	}
	if st := s.Stored(); head > st {
		return head - st, nil
	}
	return 0, nil
}

// Err returns the last ClickHouse error, or nil once a flush succeeded
// after it (for health reports). A sink that stopped on a refusal
// (*RefusedError) or a conflict (ECONFLICT) keeps reporting it.
func (s *Sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Stopped reports whether the sink stopped for good: ClickHouse refused
// its rows (*RefusedError), or its database belongs to another log or a
// newer schema (ECONFLICT). Only a restart, after the cause is fixed,
// starts it again; a transient failure (ClickHouse down) is not a stop.
func (s *Sink) Stopped() bool {
	err := s.Err()
	return err != nil && stops(err)
}

// WaitFor returns once ClickHouse holds the rows of every event up to pos,
// or with ctx's error.
func (s *Sink) WaitFor(ctx context.Context, pos uint64) error {
	for {
		s.mu.Lock()
		stored, ch := s.stored, s.changed
		s.mu.Unlock()
		if stored >= pos {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Sink) setStored(pos uint64) {
	s.mu.Lock()
	if pos > s.stored {
		s.stored = pos
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.lastErr = nil
	s.mu.Unlock()
}

func (s *Sink) setCurrent(v bool) {
	s.mu.Lock()
	s.current = v
	s.mu.Unlock()
}

func (s *Sink) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

// backoff returns the wait before retry number attempt (from 0).
func (s *Sink) backoff(attempt int) time.Duration {
	d := s.MinBackoff
	for i := 0; i < attempt && d < s.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.MaxBackoff)
}

// retry runs op until it succeeds, waiting with backoff between attempts,
// or until ctx ends. what names the operation in log lines. Only a
// failure that may pass (transient: ClickHouse unreachable, busy, short of
// memory) is retried; a refusal (refused) is returned as a *RefusedError
// at once, and a table or database gone ends the run (the next connects
// and creates the schema again).
func (s *Sink) retry(ctx context.Context, what string, op func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errStop) {
			return err
		}
		switch classify(err) {
		case refused:
			err = &RefusedError{Op: what, Err: err}
			s.setErr(err)
			return err
		case schemaGone:
			s.setErr(err)
			return err
		}
		s.setErr(err)
		d := s.backoff(attempt)
		s.Logger.Warn("clickhouse unavailable, retrying (a transient failure)", zap.String("op", what), zap.Int("attempt", attempt+1),
			zap.Duration("wait", d), zap.Error(err))
		if err := s.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// RefusedError is ClickHouse refusing what the sink sent (a statement or
// its rows) in a way a retry would meet again: the sink stops with it
// (Export returns it; a sink started by Open stops following the log and
// Err keeps reporting it) instead of retrying for ever.
type RefusedError struct {
	Op  string // what the sink was doing: "connect", "flush", "schema version"
	Err error  // ClickHouse's answer
}

func (e *RefusedError) Error() string {
	return "clickhouse refused the sink's " + e.Op + " (a retry would be refused again; the sink stops): " + e.Err.Error()
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Failure classes (classify).
const (
	transient  = iota // may pass: retried with backoff
	refused           // a retry would meet it again: the sink stops
	schemaGone        // a table or the database dropped: the run ends
)

// transientCodes are the ClickHouse exception codes of a failure that may
// pass: the server busy, short of memory or of connections, timing out,
// read-only for a while. Every other exception refuses the statement or
// its rows as they are.
var transientCodes = map[int32]bool{
	159: true, // TIMEOUT_EXCEEDED
	164: true, // READONLY
	202: true, // TOO_MANY_SIMULTANEOUS_QUERIES
	203: true, // NO_FREE_CONNECTION
	209: true, // SOCKET_TIMEOUT
	210: true, // NETWORK_ERROR
	236: true, // ABORTED
	241: true, // MEMORY_LIMIT_EXCEEDED
	242: true, // TABLE_IS_READ_ONLY
	252: true, // TOO_MANY_PARTS
	394: true, // QUERY_WAS_CANCELLED
}

// classify says whether err (of a ClickHouse call) may pass. An error of
// no known kind (the network's, the client's connection pool's) counts as
// transient: the sink waits it out, as it always did.
func classify(err error) int {
	var ex *ch.Exception
	if errors.As(err, &ex) {
		switch {
		case transientCodes[ex.Code]:
			return transient
		case ex.Code == 60 || ex.Code == 81: // UNKNOWN_TABLE, UNKNOWN_DATABASE
			return schemaGone
		}
		return refused
	}
	var conv *column.ColumnConverterError
	var unsup *column.UnsupportedColumnTypeError
	var colErr *column.Error
	if errors.As(err, &conv) || errors.As(err, &unsup) || errors.As(err, &colErr) ||
		errors.Is(err, ch.ErrUnsupportedServerRevision) || errors.Is(err, ch.ErrBatchInvalid) {
		return refused
	}
	return transient
}

// stops reports whether err ends the sink rather than one run of it: a
// refusal, or a database the sink must not write to (ECONFLICT: another
// log's, or a newer schema's).
func stops(err error) bool {
	var re *RefusedError
	return errors.As(err, &re) || domain.ErrorCode(err) == domain.ECONFLICT
}

// errStop ends the sink without retry (test crash hook).
var errStop = errors.New("clickhouse sink stopped")

// connect opens the connection pool, creates the schema and reads the
// checkpoint and the schema version of this sink's rows.
func (s *Sink) connect(ctx context.Context) (uint64, uint32, error) {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		c, err := ch.Open(s.opts)
		if err != nil {
			return 0, 0, fmt.Errorf("open clickhouse: %w", err)
		}
		conn = c
		s.mu.Lock()
		s.conn = c
		s.mu.Unlock()
	}
	if err := conn.Ping(ctx); err != nil {
		return 0, 0, fmt.Errorf("ping clickhouse: %w", err)
	}
	for _, stmt := range Schema(s.db) {
		if err := conn.Exec(ctx, stmt); err != nil {
			return 0, 0, fmt.Errorf("create schema: %w", err)
		}
	}
	var cp uint64
	if err := conn.QueryRow(ctx, "SELECT max(position) FROM "+s.db+".checkpoint WHERE sink = ?", s.sinkName()).Scan(&cp); err != nil {
		return 0, 0, fmt.Errorf("read checkpoint: %w", err)
	}
	var ver uint32
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM "+s.db+".schema_version WHERE sink = ?", s.sinkName()).Scan(&ver); err != nil {
		return 0, 0, fmt.Errorf("read schema version: %w", err)
	}
	return cp, ver, nil
}

// writeVersion records that this sink's rows are all written under
// SchemaVersion.
func (s *Sink) writeVersion(ctx context.Context) error {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return errors.New("no clickhouse connection")
	}
	return s.insert(ctx, conn, "schema_version (sink, version, updated_ms)", 1, func(bt driver.Batch) error {
		return bt.Append(s.sinkName(), uint32(SchemaVersion), s.Clock.Now().UnixMilli())
	})
}

// dropReplaced drops the tables of older schemas (replacedTables) once
// this sink's rows are all of SchemaVersion: no reader of it reads them,
// and a reader of an older schema finding the database upgraded would
// only answer from rows no longer written. Best effort: a table left is
// only space.
func (s *Sink) dropReplaced(ctx context.Context) {
	for _, t := range replacedTables {
		s.execBestEffort(ctx, "DROP TABLE IF EXISTS "+s.db+"."+t, "clickhouse: could not drop a table of an older schema", zap.String("table", t))
	}
}

// execBestEffort runs sql on the current connection, if there is one, and
// logs a failure as warn (with fields): for upkeep whose failure costs
// only space or speed.
func (s *Sink) execBestEffort(ctx context.Context, sql, warn string, fields ...zap.Field) {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return
	}
	if err := conn.Exec(ctx, sql); err != nil {
		s.Logger.Warn(warn, append(fields, zap.Error(err))...)
	}
}

// follow is the background loop: connect, rebuild, follow the log, and
// start over (with backoff) if the log's subscription fails.
func (s *Sink) follow(ctx context.Context) {
	for attempt := 0; ; attempt++ {
		err := s.run(ctx, false)
		if ctx.Err() != nil || errors.Is(err, errStop) {
			return
		}
		if stops(err) {
			s.Logger.Error("clickhouse sink stopped: ClickHouse refuses its rows; fix the cause and restart the service",
				zap.Error(err))
			return
		}
		d := s.backoff(attempt)
		s.Logger.Error("clickhouse sink stopped, restarting", zap.Duration("wait", d), zap.Error(err))
		if s.Sleep(ctx, d) != nil {
			return
		}
	}
}

// ExportStats summarizes an Export.
type ExportStats struct {
	From, To uint64 // positions: checkpoint found, head reached
	Events   int64  // events read from the log (replayed and new)
	Rows     int64  // rows written
	Fills    int64  // fill rows written (a fill folded again is written again)
}

// Export loads the log into ClickHouse up to the head as of the call,
// resuming from ClickHouse's checkpoint, and returns once the checkpoint
// reached it. ClickHouse failures that may pass (unreachable, busy) are
// retried with backoff until ctx ends; a refusal returns at once (a
// *RefusedError, or ECONFLICT for a database of another log or a newer
// schema).
func (s *Sink) Export(ctx context.Context) (ExportStats, error) {
	if err := s.init(); err != nil {
		return ExportStats{}, err
	}
	defer s.Close()
	var st ExportStats
	err := s.runWith(ctx, true, &st)
	return st, err
}

func (s *Sink) run(ctx context.Context, export bool) error {
	return s.runWith(ctx, export, &ExportStats{})
}

// runWith connects, replays the log up to the checkpoint into the state,
// then turns every later event into rows, flushing every BatchRows rows and
// every FlushInterval. With export it stops at the head as of the start.
func (s *Sink) runWith(ctx context.Context, export bool, stats *ExportStats) error {
	cp, rebuildTo, err := s.start(ctx)
	if err != nil {
		return err
	}
	stats.From = cp

	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	it, head, err := s.openLog(ctx, readCtx, export)
	if err != nil {
		return err
	}
	stats.To = head
	free := make(chan []domain.Event, 8)
	events, readErr := readLog(readCtx, it, export, head, max(cp, head), free)
	defer func() {
		stopReading()
		for range events {
		}
	}()

	r := &sinkRun{s: s, stats: stats, checkpoint: cp, rebuildTo: rebuildTo, head: head, st: newState(s.Method), b: newBatch()}
	ticker := time.NewTicker(s.FlushInterval)
	defer ticker.Stop()
	for {
		select {
		case evs, ok := <-events:
			if !ok {
				return r.end(ctx, export, readErr)
			}
			for i := range evs {
				e := evs[i]
				if err := r.add(ctx, &e); err != nil {
					return err
				}
			}
			select {
			case free <- evs[:0]:
			default:
			}
		case <-ticker.C:
			if err := r.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// start connects (retrying) and returns ClickHouse's checkpoint, now the
// sink's stored position. A checkpoint beyond the log's head means the
// database was fed from another log: ECONFLICT rather than skip this log's
// first events.
//
// Rows written under an older SchemaVersion lack the tables added since:
// start then returns checkpoint 0 and the old checkpoint as rebuildTo, so
// that the run writes every row again from the log's start (rows replace
// themselves) and records the version once past rebuildTo. A crash
// before that only makes the next start rebuild again.
//
// Rows of a newer SchemaVersion (a newer release's sink) are ECONFLICT:
// this sink would move the checkpoint they share past events whose rows
// the newer schema's tables then lack, and that release would not write
// them again (its version is recorded).
func (s *Sink) start(ctx context.Context) (cp, rebuildTo uint64, err error) {
	var ver uint32
	if err := s.retry(ctx, "connect", func(ctx context.Context) (err error) {
		cp, ver, err = s.connect(ctx)
		return err
	}); err != nil {
		return 0, 0, err
	}
	if err := s.claim(ctx); err != nil {
		if domain.ErrorCode(err) == domain.ECONFLICT {
			s.setErr(err)
		}
		return 0, 0, err
	}
	if h, err := s.Store.Head(ctx); err != nil {
		return 0, 0, fmt.Errorf("read head: %w", err)
	} else if cp > h {
		err := domain.Errorf(domain.ECONFLICT, "clickhouse database %s holds rows of instance %s up to position %d but the log ends at %d: they were fed from another log; give this service another --instance, or use another database", s.db, s.Instance, cp, h)
		s.setErr(err)
		return 0, 0, err
	}
	if ver > SchemaVersion {
		err := domain.Errorf(domain.ECONFLICT, "clickhouse database %s holds rows of schema version %d, newer than this release's %d: a newer release wrote them; run that release, or use another database", s.db, ver, SchemaVersion)
		s.setErr(err)
		return 0, 0, err
	}
	if ver < SchemaVersion {
		if cp == 0 { // nothing of this sink's is stored: its rows will all be new
			if err := s.retry(ctx, "schema version", s.writeVersion); err != nil {
				return 0, 0, err
			}
			s.dropReplaced(ctx)
		} else {
			s.Logger.Info("clickhouse rows predate the schema: rewriting them from the log",
				zap.Uint32("version", ver), zap.Uint32("want", SchemaVersion), zap.Uint64("checkpoint", cp))
			cp, rebuildTo = 0, cp
		}
	}
	s.setStored(cp)
	s.setCurrent(rebuildTo == 0)
	return cp, rebuildTo, nil
}

// claim makes this sink's log the owner of its instance name in the
// database, or returns ECONFLICT when another log owns it: the first claim
// in (claimed_ms, log) order owns a name, so of two services that claim
// one name at once, the later is refused (after its own claim went in,
// both read both claims and agree). A log already recorded claims nothing
// again. The log's identity is Log, else its first event's id; a log with
// no event yet writes no rows, and claims at its next start.
func (s *Sink) claim(ctx context.Context) error {
	id := s.Log
	if id == "" {
		it := s.Store.ReadAll(ctx, 0, 1)
		if it.Next() {
			id = "first-event:" + it.Event().ID
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return fmt.Errorf("read the log's first event: %w", err)
		}
		if id == "" {
			return nil
		}
	}
	var owner claimRow
	err := s.retry(ctx, "claim", func(ctx context.Context) error {
		o, mine, err := s.claims(ctx, id)
		if err != nil {
			return err
		}
		if !mine {
			if err := s.insert(ctx, s.currentConn(), "instances (instance, log, claimed_ms)", 1, func(bt driver.Batch) error {
				return bt.Append(s.Instance, id, s.Clock.Now().UnixMilli())
			}); err != nil {
				return err
			}
			if o, _, err = s.claims(ctx, id); err != nil {
				return err
			}
		}
		owner = o
		return nil
	})
	if err != nil {
		return err
	}
	if owner.log != id {
		return domain.Errorf(domain.ECONFLICT, "clickhouse database %s: instance %q belongs to another log (%s, claimed %s); this service's log is %s: give it another --instance (instance names are unique per database)",
			s.db, s.Instance, owner.log, time.UnixMilli(owner.ms).UTC().Format(time.RFC3339), id)
	}
	return nil
}

// claimRow is a row of the instances table.
type claimRow struct {
	log string
	ms  int64
}

// claims returns the owner of the sink's instance name (the first claim;
// zero when none) and whether log has claimed it.
func (s *Sink) claims(ctx context.Context, log string) (owner claimRow, mine bool, err error) {
	conn := s.currentConn()
	if conn == nil {
		return owner, false, errors.New("no clickhouse connection")
	}
	rows, err := conn.Query(ctx, "SELECT log, claimed_ms FROM "+s.db+".instances WHERE instance = ? ORDER BY claimed_ms, log", s.Instance)
	if err != nil {
		return owner, false, fmt.Errorf("read the instance's claims: %w", err)
	}
	defer rows.Close()
	first := true
	for rows.Next() {
		var c claimRow
		if err := rows.Scan(&c.log, &c.ms); err != nil {
			return owner, false, err
		}
		if first {
			owner, first = c, false
		}
		mine = mine || c.log == log
	}
	return owner, mine, rows.Err()
}

// currentConn returns the connection pool (nil before connect).
func (s *Sink) currentConn() driver.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// openLog opens the log from its start on readCtx: with export a read up
// to now (head is the head as of now), else a subscription that follows
// it (head 0).
func (s *Sink) openLog(ctx, readCtx context.Context, export bool) (it domain.EventIterator, head uint64, err error) {
	if !export {
		return s.Store.Subscribe(readCtx, 0), 0, nil
	}
	if head, err = s.Store.Head(ctx); err != nil {
		return nil, 0, fmt.Errorf("read head: %w", err)
	}
	return s.Store.ReadAll(readCtx, 0, 0), head, nil
}

// readLog reads it in a goroutine, so that the flush timer can fire while
// a subscription waits for the next event, and sends the events (with
// export, those up to head) until ctx ends. The goroutine owns it; events
// is closed when it is done, and readErr then holds the read's error.
//
// Events before position known (the log's head as the run began: they
// exist, so the next comes at once) go in batches of readBatch, the
// others one by one, never held back while a subscription waits. A batch
// taken from events may be given back on free for reuse once read.
func readLog(ctx context.Context, it domain.EventIterator, export bool, head, known uint64, free chan []domain.Event) (events <-chan []domain.Event, readErr <-chan error) {
	out := make(chan []domain.Event, 4)
	errc := make(chan error, 1)
	go func() {
		defer close(out)
		defer it.Close()
		var batch []domain.Event
		send := func() bool {
			select {
			case out <- batch:
				batch = nil
				return true
			case <-ctx.Done():
				errc <- ctx.Err() // the reader of events waits for an error once it is closed
				return false
			}
		}
		for it.Next() {
			e := it.Event()
			if export && e.Position > head {
				break
			}
			if batch == nil {
				select {
				case batch = <-free:
				default:
					batch = make([]domain.Event, 0, readBatch)
				}
			}
			batch = append(batch, e)
			if len(batch) < readBatch && e.Position < known {
				continue
			}
			if !send() {
				return
			}
		}
		if len(batch) > 0 && !send() {
			return
		}
		errc <- it.Err()
	}()
	return out, errc
}

// readBatch is the most events readLog hands over at once: at start the
// sink reads the whole log again, and a channel send per event cost it
// about a tenth of its CPU.
const readBatch = 256

// sinkRun is the state of one runWith: the projection state the rows are
// computed from and the batch of rows not yet flushed.
type sinkRun struct {
	s          *Sink
	stats      *ExportStats
	checkpoint uint64 // events up to it only rebuild the state: their rows are stored
	rebuildTo  uint64 // rows up to it are being written again (schema upgrade); 0: none
	head       uint64 // export: the last position to export
	st         *state
	b          *batch
	seen       uint64 // position of the last event read
	flushes    int    // flushes that wrote rows
}

// add applies e to the state (and, past the checkpoint, its rows to the
// batch), flushing once the batch holds BatchRows rows. An event the state
// cannot apply is logged and skipped.
func (r *sinkRun) add(ctx context.Context, e *domain.Event) error {
	r.stats.Events++
	var out *batch
	if e.Position > r.checkpoint {
		out = r.b
	}
	if err := r.st.apply(e, out); err != nil {
		r.s.Logger.Warn("clickhouse sink skips an event it cannot apply", zap.String("stream", e.Stream),
			zap.Int64("version", e.Version), zap.Uint64("position", e.Position), zap.Error(err))
	}
	r.seen = e.Position
	if r.b.pending() >= r.s.BatchRows {
		return r.flush(ctx)
	}
	return nil
}

// flush writes the batch and the checkpoint (retrying), unless nothing was
// read since the stored position.
func (r *sinkRun) flush(ctx context.Context) error {
	s := r.s
	if r.seen <= s.Stored() {
		return nil
	}
	r.st.settle(r.seen, r.b) // late fills folded: the rows are those of the log up to seen, in trade time
	r.st.convTotals(r.b)
	r.b.prepare()
	n := r.b.rows()
	if err := s.retry(ctx, "flush", func(ctx context.Context) error { return s.flush(ctx, r.b, r.seen) }); err != nil {
		return err
	}
	r.flushes++
	r.stats.Rows += int64(n)
	r.stats.Fills += int64(len(r.b.fills))
	r.b.reset()
	if r.rebuildTo > 0 && r.seen >= r.rebuildTo {
		if err := s.retry(ctx, "schema version", s.writeVersion); err != nil {
			return err
		}
		s.dropReplaced(ctx)
		r.rebuildTo = 0
	}
	s.setStored(r.seen)
	if r.rebuildTo == 0 {
		s.setCurrent(true)
	}
	if s.Progress != nil {
		s.Progress(r.stats.Events, r.seen, r.head)
	}
	return nil
}

// end is the reading's end: a read error, a subscription that ended (it
// never should), or an export that read up to its head (then the last
// rows are flushed).
func (r *sinkRun) end(ctx context.Context, export bool, readErr <-chan error) error {
	if err := <-readErr; err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	if !export {
		return errors.New("log subscription ended")
	}
	if err := r.flush(ctx); err != nil {
		return err
	}
	if r.flushes > 1 {
		r.s.compact(ctx)
	}
	return nil
}

// compact merges pnl_overview9's parts into one after an export: each flush
// of a backfill inserts a part, and until ClickHouse's background merges
// catch up every overview reads each of them (FINAL merges them per query:
// after 2M orders, 120 parts). The table is small (rows per pair and
// month), so the merge is quick. Best effort: a failure only leaves the
// parts to the background merges.
func (s *Sink) compact(ctx context.Context) {
	s.execBestEffort(ctx, "OPTIMIZE TABLE "+s.db+".pnl_overview9 FINAL", "clickhouse: could not merge pnl_overview9's parts after the export")
}

// flush writes b's rows, then the checkpoint pos. Each table's rows go in
// one insert; a failure anywhere leaves the checkpoint where it was, and the
// retry writes the same rows again (replacing, not adding).
func (s *Sink) flush(ctx context.Context, b *batch, pos uint64) error {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return errors.New("no clickhouse connection")
	}
	if err := s.writeRows(ctx, conn, b); err != nil {
		return err
	}
	if s.afterRows != nil {
		if err := s.afterRows(pos); err != nil {
			return err
		}
	}
	return s.insert(ctx, conn, "checkpoint (sink, position, updated_ms)", 1, func(bt driver.Batch) error {
		return bt.Append(s.sinkName(), pos, s.Clock.Now().UnixMilli())
	})
}

// writeRows inserts b's rows, one INSERT per table that has any.
func (s *Sink) writeRows(ctx context.Context, conn driver.Conn, b *batch) error {
	for _, t := range b.tables(s.Method.String(), s.Instance) {
		if err := s.insert(ctx, conn, t.columns, t.n, t.fill); err != nil {
			return err
		}
	}
	return nil
}

// tableRows are one table's rows of a batch: its columns, how many rows,
// and the function that appends them to an INSERT.
type tableRows struct {
	columns string // table (columns…)
	n       int
	fill    func(driver.Batch) error
}

// tables lists b's rows table by table, in the order they are written;
// method is the PNL method the PNL tables are computed by, instance the
// service's name every row carries. Each amount goes through one wideText
// per table (w.col, then w.text last in the same row's Append).
func (b *batch) tables(method, instance string) []tableRows {
	var w wideText
	return []tableRows{
		{"orders9 (instance, order_id, exchange, pair, side, kind, status, amount_e12, price_e12, stop_price_e12, filled_e12, filled_value_e12, fees_e12, wide, fills, created_ms, updated_ms, actor, reason, position)",
			len(b.orders), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.orders), func(r orderRow) error {
					return bt.Append(instance, r.OrderID, r.Exchange, r.Pair, r.Side, r.Kind, r.Status, w.col("amount", r.Amount),
						w.col("price", r.Price), w.col("stop_price", r.StopPrice), w.col("filled", r.Filled),
						w.col("filled_value", r.Value), w.col("fees", r.Fees), w.text(),
						r.Fills, r.CreatedMs, r.UpdatedMs, r.Actor, r.Reason, r.Position)
				})
			}},
		{"fills9 (method, instance, exchange, pair, time_ms, order_id, fill_id, side, fee_asset, price_e12, quantity_e12, value_e12, fee_e12, pnl_e12, cost_e12, unmatched_e12, unmatched_value_e12, net_e12, wide, closing, first, position, version)",
			len(b.fills), func(bt driver.Batch) error {
				return appendRows(slices.Values(b.fills), func(r fillRow) error {
					return bt.Append(method, instance, r.Exchange, r.Pair, r.TimeMs, r.OrderID, r.FillID, r.Side, r.FeeAsset,
						w.col("price", r.Price), w.col("quantity", r.Quantity), w.col("value", r.Value), w.col("fee", r.Fee),
						w.col("pnl", r.Pnl), w.col("cost", r.Cost), w.col("unmatched", r.Unmatched),
						w.col("unmatched_value", r.UnmVal), w.col("net", r.Net), w.text(), r.Closing, r.First, r.Position, r.Version)
				})
			}},
		{"pnl_daily9 (method, instance, exchange, pair, day, trades, buys, sells, wins, losses, volume_e12, pnl_e12, fees_e12, unmatched_value_e12, wide, position)",
			len(b.daily), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.daily), func(r dailyRow) error {
					return bt.Append(method, instance, r.Exchange, r.Pair, dayDate(r.Day), r.Trades, r.Buys, r.Sells, r.Wins, r.Losses,
						w.col("volume", r.Volume), w.col("pnl", r.Pnl), w.col("fees", r.Fees),
						w.col("unmatched_value", r.UnmVal), w.text(), r.Position)
				})
			}},
		{"pnl_buckets9 (method, instance, exchange, pair, slot, " + bucketCols + ", position)",
			len(b.buckets), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.buckets), func(r bucketRow) error {
					v := append([]any{method, instance, r.Exchange, r.Pair, r.Slot}, r.cols(&w)...)
					return bt.Append(append(v, w.text(), r.Position)...)
				})
			}},
		{"pnl_overview9 (method, kind, instance, shift, n, exchange, pair, v, s, position)",
			len(b.ov), func(bt driver.Batch) error {
				return appendRows(slices.Values(b.ov), func(r overviewRow) error {
					return bt.Append(method, r.kind, instance, r.shift, r.n, r.exchange, r.pair, packFigures(r.v), r.s, r.position)
				})
			}},
		{"order_pnl9 (method, instance, exchange, pair, order_id, first_close_ms, pnl_e12, wide, position)",
			len(b.orderPnl), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.orderPnl), func(r orderPnlRow) error {
					return bt.Append(method, instance, r.Exchange, r.Pair, r.OrderID, r.FirstCloseMs, w.col("pnl", r.Pnl), w.text(), r.Position)
				})
			}},
		{"pairs9 (method, instance, exchange, pair, lots_qty_e12, lots_cost_e12, last_price_e12, balance_e12, wide, position)",
			len(b.pairs), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.pairs), func(r pairRow) error {
					return bt.Append(method, instance, r.Exchange, r.Pair, w.col("lots_qty", r.LotsQty), w.col("lots_cost", r.LotsCost),
						w.col("last_price", r.LastPrice), w.col("balance", r.Balance), w.text(), r.Position)
				})
			}},
		{"strategies9 (instance, exchange, pair, strategy, position)",
			len(b.strategies), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.strategies), func(r strategyRow) error {
					return bt.Append(instance, r.Exchange, r.Pair, r.Strategy, r.Position)
				})
			}},
		{"prices9 (instance, exchange, pair, slot, price_e12, wide, position)",
			len(b.prices), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.prices), func(r priceRow) error {
					return bt.Append(instance, r.Exchange, r.Pair, r.Slot, w.col("price", r.Price), w.text(), r.Position)
				})
			}},
		{"snapshots9 (instance, exchange, seq, time_ms, position)",
			len(b.snapshots), func(bt driver.Batch) error {
				return appendRows(slices.Values(b.snapshots), func(r snapshotRow) error {
					return bt.Append(instance, r.Exchange, r.Seq, r.TimeMs, r.Position)
				})
			}},
		{"pnl_conv_buckets9 (method, currency, instance, part, exchange, pair, slot, v, position)",
			len(b.conv), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.conv), func(r convRow) error {
					return bt.Append(method, r.to, instance, r.part, r.Exchange, r.Pair, r.Slot, packAgg(&r.agg), r.position)
				})
			}},
		{"pnl_conv_totals9 (method, currency, instance, exchange, pair, conv, unconv, ok, position)",
			len(b.convTotals), func(bt driver.Batch) error {
				return appendRows(slices.Values(b.convTotals), func(r convTotalRow) error {
					return bt.Append(method, r.to, instance, r.key.Exchange, r.key.Pair, packAgg(&r.conv), packAgg(&r.unconv), r.ok, r.position)
				})
			}},
		{"fill_fees9 (instance, exchange, pair, time_ms, order_id, position, fee_asset, fee_amount, fee_quote, fee_rate, fee_rate_ms, valued, version)",
			len(b.fees), func(bt driver.Batch) error {
				return appendRows(slices.Values(b.fees), func(r feeRow) error {
					return bt.Append(instance, r.Exchange, r.Pair, r.timeMs, r.orderID, r.position, r.asset, r.amount.String(),
						r.quote.String(), r.rate.String(), r.rateMs, r.valued, r.version)
				})
			}},
		{"rates9 (instance, quote, base, rate, time_ms, seq, position)",
			len(b.rates), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.rates), func(r rateRow) error {
					return bt.Append(instance, r.quote, r.base, r.point.Rate.String(), r.point.T, r.point.Pos, r.position)
				})
			}},
		{"settings9 (method, instance, name, value, position)",
			len(b.settings), func(bt driver.Batch) error {
				return appendRows(maps.Values(b.settings), func(r settingRow) error {
					return bt.Append(method, instance, r.name, r.value, r.position)
				})
			}},
		{"balances9 (instance, exchange, seq, asset, time_ms, available_e12, on_order_e12, wide, position)",
			len(b.balances), func(bt driver.Batch) error {
				return appendRows(slices.Values(b.balances), func(r balanceRow) error {
					return bt.Append(instance, r.Exchange, r.Seq, r.Asset, r.TimeMs, w.col("available", r.Available),
						w.col("on_order", r.OnOrder), w.text(), r.Position)
				})
			}},
	}
}

// appendRows calls add for each row, stopping at the first error.
func appendRows[R any](rows iter.Seq[R], add func(R) error) error {
	for r := range rows {
		if err := add(r); err != nil {
			return err
		}
	}
	return nil
}

// insert sends one INSERT of n rows into s.db.<table (columns)>; fill
// appends them. n = 0 sends nothing.
func (s *Sink) insert(ctx context.Context, conn driver.Conn, tableCols string, n int, fill func(driver.Batch) error) error {
	if n == 0 {
		return nil
	}
	table, _, _ := strings.Cut(tableCols, " ")
	bt, err := conn.PrepareBatch(ctx, "INSERT INTO "+s.db+"."+tableCols)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	defer bt.Close()
	if err := fill(bt); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	if err := bt.Send(); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	return nil
}
