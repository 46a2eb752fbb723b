// Package esdb is the EventStoreDB / KurrentDB event store: domain.EventStore
// over the gRPC client github.com/EventStore/EventStore-Client-Go/v4.
//
// Mapping. Every domain stream is an EventStoreDB stream of the same name and
// every event is one EventStoreDB event: our UUIDv7 id is the EventStoreDB
// event id (an id that is not a canonical UUID is carried in metadata, with a
// name-based UUID derived from it as the EventStoreDB id), our type is its
// type, the JSON payload is its data (content type application/json), and
// the other envelope fields (actor, correlation, schema, time, prevHash,
// hash) are its custom metadata. Version is the stream revision; Position is
// the $all commit position, which increases but is not dense. Events of
// system streams and system types ($-prefixed) are never returned.
//
// Hash chain. Append reads the stream's last event first (its revision and
// hash), computes versions and hashes exactly as domain.ComputeHash, then
// appends with the revision it read as the expected revision, so two writers
// can never chain onto the same head: the loser gets a wrong-expected-version
// reply. When the caller asked for an exact version or NoStream that is an
// ECONFLICT; for Any and StreamExists the append re-reads the head and tries
// again (up to MaxAppendRetries) because the caller's own condition still
// holds.
//
// Idempotency. EventStoreDB's duplicate detection is a best-effort cache of
// recent ids, so the store does not rely on it. It keeps its own cache of
// where the last IDCacheSize ids it wrote or read were stored (stream,
// version, position); with one tradeledger process writing, as deployed,
// the runner's replay at start passes every id of the log through it. An
// append whose ids are all there, in the same stream, returns the original
// result and writes nothing; ids in another stream, or only some of the ids,
// are an ECONFLICT. Ids the cache does not know are looked for in the
// stream's tail, read backwards by the same request that finds the head:
// at most IdempotencyDepth events (64). A retry comes soon after the
// original, so it is found there even by another process; a retry of ids
// written further back by another process, and the cross-stream check for ids
// this process never saw, are beyond what EventStoreDB can answer without
// an index of ids (it has none). `migrate` does not depend on this: it
// relies on deterministic stream versions instead.
//
// Positions. Our ReadAll and Subscribe take an inclusive position; the
// server accepts only exact event positions (a position inside a record is
// an error) and its subscriptions start after the given one. The store
// therefore starts from an event position it knows to precede the
// requested one: the event at from-1 when it has seen it (the runner's
// resume point), otherwise the first event found by reading $all backwards
// from the end, and skips anything before from.
//
// Availability. Every failure to reach the server is EUNAVAILABLE. The client
// reconnects by itself after transient errors; when it gives up (after its
// discovery attempts) the store replaces it on the next call, so the service
// recovers without a restart. Subscriptions survive drops, leader changes
// and restarts: they resubscribe from the last delivered event, with no gap
// and no duplicate.
package esdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// Defaults for Store settings.
const (
	DefaultReadBatchSize     = 512
	DefaultIdempotencyDepth  = 64
	DefaultMaxAppendRetries  = 5
	DefaultIDCacheSize       = 100_000
	DefaultReconnectDelay    = 100 * time.Millisecond
	DefaultMaxReconnectDelay = 5 * time.Second
)

// Store is a domain.EventStore in an EventStoreDB / KurrentDB cluster.
type Store struct {
	// URL is the connection string: esdb://, esdb+discover://,
	// kurrentdb:// or kurrentdb+discover://, with credentials
	// (user:pass@) and TLS settings (tls, tlsVerifyCert, tlsCAFile) as the
	// client documents them.
	URL string
	// Logger receives the client's log lines (debug dropped) and the
	// store's own warnings.
	Logger *zap.Logger
	// ReadBatchSize is how many events one read request asks for.
	ReadBatchSize int
	// IdempotencyDepth bounds the backwards scan for retried ids that this
	// Store has not seen: events further back than depth events from the
	// end of the stream are not looked at.
	IdempotencyDepth int
	// MaxAppendRetries bounds the re-reads of the head for Any and
	// StreamExists appends that lost a race.
	MaxAppendRetries int
	// IDCacheSize bounds the ids remembered for the cross-stream check.
	IDCacheSize int
	// Namespace, if set, prefixes every stream name in the database, and
	// reads, heads and subscriptions see only streams with the prefix:
	// several logs can share one cluster (the real-server tests use it).
	Namespace string
	// ReconnectDelay and MaxReconnectDelay bound the backoff of a
	// subscription that lost its connection.
	ReconnectDelay, MaxReconnectDelay time.Duration

	config *esdb.Configuration

	mu      sync.Mutex
	client  *esdb.Client
	closed  bool
	closing chan struct{}

	locks streamLocks
	ids   idCache
	known positionCache

	obs observer // append metrics (observe.go)
}

var _ domain.EventStore = (*Store)(nil)

// NewStore returns a Store for the connection string url with default
// settings. Call Open before use.
func NewStore(url string) *Store {
	return &Store{
		URL:               url,
		Logger:            zap.NewNop(),
		ReadBatchSize:     DefaultReadBatchSize,
		IdempotencyDepth:  DefaultIdempotencyDepth,
		MaxAppendRetries:  DefaultMaxAppendRetries,
		IDCacheSize:       DefaultIDCacheSize,
		ReconnectDelay:    DefaultReconnectDelay,
		MaxReconnectDelay: DefaultMaxReconnectDelay,
	}
}

// IsURL reports whether url names an EventStoreDB / KurrentDB store.
func IsURL(url string) bool {
	for _, p := range []string{"esdb://", "esdb+discover://", "kurrentdb://", "kurrentdb+discover://"} {
		if strings.HasPrefix(url, p) {
			return true
		}
	}
	return false
}

// ParseURL turns a connection string into the client's configuration;
// kurrentdb:// is accepted as a synonym of esdb://. The error never repeats
// the URL, which may hold a password.
func ParseURL(url string) (*esdb.Configuration, error) {
	switch {
	case strings.HasPrefix(url, "kurrentdb://"):
		url = "esdb://" + strings.TrimPrefix(url, "kurrentdb://")
	case strings.HasPrefix(url, "kurrentdb+discover://"):
		url = "esdb+discover://" + strings.TrimPrefix(url, "kurrentdb+discover://")
	}
	if !IsURL(url) {
		return nil, domain.Errorf(domain.EINVALID, "event store URL must start with esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover://")
	}
	cfg, err := esdb.ParseConnectionString(url)
	if err != nil {
		return nil, domain.Errorf(domain.EINVALID, "bad event store connection string: %s", redact(err.Error(), url))
	}
	return cfg, nil
}

// redact removes the password of url from msg.
func redact(msg, url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		rest := url[i+3:]
		if at := strings.Index(rest, "@"); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				if pw := rest[c+1 : at]; pw != "" {
					msg = strings.ReplaceAll(msg, pw, "********")
				}
			}
		}
	}
	return msg
}

// Open parses the connection string and creates the client. It does not
// wait for the server: the first call that needs it connects, and fails
// with EUNAVAILABLE if it cannot.
func (s *Store) Open() error {
	if s.Logger == nil {
		s.Logger = zap.NewNop()
	}
	if s.ReadBatchSize <= 1 {
		s.ReadBatchSize = DefaultReadBatchSize
	}
	if s.IdempotencyDepth <= 0 {
		s.IdempotencyDepth = DefaultIdempotencyDepth
	}
	if s.MaxAppendRetries < 0 {
		s.MaxAppendRetries = 0
	}
	if s.IDCacheSize <= 0 {
		s.IDCacheSize = DefaultIDCacheSize
	}
	if s.ReconnectDelay <= 0 {
		s.ReconnectDelay = DefaultReconnectDelay
	}
	if s.MaxReconnectDelay < s.ReconnectDelay {
		s.MaxReconnectDelay = max(DefaultMaxReconnectDelay, s.ReconnectDelay)
	}
	cfg, err := ParseURL(s.URL)
	if err != nil {
		return err
	}
	cfg.Logger = zapLogging(s.Logger)
	s.config = cfg
	s.ids.init(s.IDCacheSize)
	s.known.init(4096)
	s.closing = make(chan struct{})
	c, err := esdb.NewClient(cfg)
	if err != nil {
		return domain.Errorf(domain.EUNAVAILABLE, "event store client: %v", err)
	}
	s.client = c
	return nil
}

// Close closes the client; calls in flight fail with EUNAVAILABLE and
// subscriptions end with EUNAVAILABLE.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.closing != nil {
		close(s.closing)
	}
	if s.client != nil {
		return s.client.Close()
	}
	return nil
}

// conn returns the current client.
func (s *Store) conn() (*esdb.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.client == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	}
	return s.client, nil
}

// fail turns a client error into a domain error. A client that closed
// itself (it does after its discovery attempts fail) is replaced, so the
// next call tries the server again.
func (s *Store) fail(ctx context.Context, c *esdb.Client, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if _, ok := domain.AsError(err); ok {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return domain.Errorf(domain.EUNAVAILABLE, "event store is closed")
	}
	var ee *esdb.Error
	if errors.As(err, &ee) {
		switch ee.Code() {
		case esdb.ErrorCodeWrongExpectedVersion:
			return domain.Errorf(domain.ECONFLICT, "%s: wrong expected version", op)
		case esdb.ErrorCodeStreamDeleted:
			return domain.Errorf(domain.ECONFLICT, "%s: stream is deleted", op)
		case esdb.ErrorCodeConnectionClosed:
			s.replaceClient(c)
		case esdb.ErrorCodeUnauthenticated, esdb.ErrorCodeAccessDenied:
			return domain.Errorf(domain.EUNAVAILABLE, "%s: event store refused the credentials", op)
		}
	}
	return domain.Errorf(domain.EUNAVAILABLE, "%s: event store unavailable: %s", op, redact(err.Error(), s.URL))
}

func (s *Store) replaceClient(old *esdb.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.client != old {
		return
	}
	old.Close()
	c, err := esdb.NewClient(s.config)
	if err != nil {
		return
	}
	s.client = c
	s.Logger.Warn("event store client closed itself; reconnecting")
}

// zapLogging forwards the client's log lines to l, dropping debug. Drops
// caused by our own cancellation are not errors.
func zapLogging(l *zap.Logger) esdb.LoggingFunc {
	l = l.With(zap.String("component", "esdb"))
	return func(level esdb.LogLevel, format string, args ...any) {
		if level == esdb.LogDebug {
			return
		}
		msg := fmt.Sprintf(format, args...)
		switch level {
		case esdb.LogInfo:
			l.Info(msg)
		case esdb.LogWarn:
			l.Warn(msg)
		default:
			if strings.Contains(msg, "context canceled") || strings.Contains(msg, "Canceled") {
				l.Debug(msg)
				return
			}
			l.Error(msg)
		}
	}
}

// streamLocks serializes this process's appends per stream, so that its own
// writers queue instead of racing for the head.
type streamLocks struct {
	mu sync.Mutex
	m  map[string]*streamLock
}

type streamLock struct {
	mu   sync.Mutex
	refs int
}

func (l *streamLocks) lock(stream string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*streamLock)
	}
	e := l.m[stream]
	if e == nil {
		e = &streamLock{}
		l.m[stream] = e
	}
	e.refs++
	l.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, stream)
		}
		l.mu.Unlock()
	}
}

// idCache remembers where recent ids were stored, oldest forgotten first.
type idCache struct {
	mu   sync.Mutex
	m    map[string]idEntry
	ring []string
	next int
}

type idEntry struct {
	stream   string
	version  int64
	position uint64
}

func (c *idCache) init(n int) {
	c.m = make(map[string]idEntry, min(n, 4096))
	c.ring = make([]string, n)
}

func (c *idCache) add(e *domain.Event) {
	id := e.ID
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; ok {
		return
	}
	if old := c.ring[c.next]; old != "" {
		delete(c.m, old)
	}
	c.ring[c.next] = id
	c.next = (c.next + 1) % len(c.ring)
	c.m[id] = idEntry{e.Stream, e.Version, e.Position}
}

func (c *idCache) get(id string) (idEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	return e, ok
}

// positionCache remembers recent event positions (commit → full $all
// position), which are valid starting points for reads and subscriptions.
type positionCache struct {
	mu   sync.Mutex
	m    map[uint64]esdb.Position
	ring []uint64
	next int
}

func (c *positionCache) init(n int) {
	c.m = make(map[uint64]esdb.Position, n)
	c.ring = make([]uint64, n)
}

func (c *positionCache) add(p esdb.Position) {
	if p.Commit == 0 || p.Commit == ^uint64(0) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[p.Commit]; ok {
		return
	}
	if old := c.ring[c.next]; old != 0 {
		delete(c.m, old)
	}
	c.ring[c.next] = p.Commit
	c.next = (c.next + 1) % len(c.ring)
	c.m[p.Commit] = p
}

func (c *positionCache) get(commit uint64) (esdb.Position, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[commit]
	return p, ok
}
