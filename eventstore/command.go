// Package eventstore holds the one command path every write goes through,
// next to the event store contract (domain.EventStore) its sub-packages
// implement: load the state a command decides against → a pure decide
// function (in domain) returns events or a domain.Error → append them with
// the version the state was loaded at → on ECONFLICT load and decide again,
// a bounded number of times, after a random wait that grows with each
// loss → wait until the projections have applied the events
// (read-your-writes).
//
// It imports domain only: the projections runner is behind Waiter.
//
// Who can conflict: the HTTP server's commands share one StreamLocks
// (Commands.Serial), so a command holds its stream from Load to the end of
// its wait and the server's own writes to one stream never race each other;
// an ECONFLICT there comes from another process on the same log (a CLI
// command on the data dir). The engine's commands defer the wait to the end
// of a trade (Commands.DeferWait). tradeledger import appends in batches
// (Commands.AppendBatch: no load, decide or retry; ids derived from the
// source, so that a re-run appends nothing).
package eventstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// DefaultMaxAttempts is how many times a command is decided and appended
// before a version conflict is given up on: a write that loses the race this
// often in a row, with the waits between (DefaultBackoff: about half a
// second in all), is contended by design and the caller is told so. Eight
// writers on one stream without StreamLocks (eight processes on one data
// dir) all land: BenchmarkContendedWriters.
const DefaultMaxAttempts = 10

// DefaultBackoff is the base of the wait after a lost version race: after
// its n-th loss (from 1) a command waits a random time in
// [0, DefaultBackoff·2^(n-1)) before it loads and decides again, so that
// writers that lost together spread out instead of meeting again at once.
const DefaultBackoff = 2 * time.Millisecond

// Waiter waits until the read side has applied every event up to a global
// position; projections.Runner implements it.
type Waiter interface {
	WaitFor(ctx context.Context, pos uint64) error
}

// Commands runs commands against an event store. Fill Store (and Waiter
// when there are projections to wait for), or use NewCommands.
type Commands struct {
	// Store is the log commands append to.
	Store domain.EventStore
	// Waiter, when set, is waited on after every append (read-your-writes),
	// and after a conflict before the state is loaded again, so that state
	// loaded from a projection includes the write that won the race. Nil:
	// no wait (command-line tools that load their state from the stream).
	Waiter Waiter
	// MaxAttempts bounds the decide-append rounds of one command (≤ 0:
	// DefaultMaxAttempts).
	MaxAttempts int
	// Backoff is the base of the random wait after a lost race (≤ 0:
	// DefaultBackoff; see there).
	Backoff time.Duration
	// wait sleeps d or until ctx ends (tests record the waits instead).
	wait func(ctx context.Context, d time.Duration) error
	// DeferWait skips the wait after each append (Waiter still serves the
	// catch-up after a conflict): the caller runs several commands that
	// answer one request (a trade: OrderRequested, the exchange's answer,
	// its fills) and waits once, for the last Result.Append.LastPosition.
	DeferWait bool
	// Serial, when set, runs the commands sharing it one at a time per
	// stream (StreamLocks), so that they do not conflict with each other:
	// every Commands of one process on one store should share one. Nil:
	// concurrent commands on a stream race, and the losers are decided
	// again.
	Serial *StreamLocks
}

// NewCommands returns Commands on store waiting on waiter (may be nil) with
// the default retry bound.
func NewCommands(store domain.EventStore, waiter Waiter) *Commands {
	return &Commands{Store: store, Waiter: waiter, MaxAttempts: DefaultMaxAttempts}
}

// Command is one write to one stream, deciding against a state of type S.
type Command[S any] struct {
	// Stream is the stream the events are appended to.
	Stream string
	// Load returns the current state and the expected version of Stream
	// it reflects (domain.NoStream for a stream that does not exist yet,
	// domain.Any when the events do not depend on the stream's state).
	// Called once per attempt.
	Load func(ctx context.Context) (S, domain.ExpectedVersion, error)
	// Decide returns the events the command makes of state: none (nothing
	// to do; nothing is appended) or a domain.Error refusing it. It must
	// not have effects: it may run once per attempt.
	Decide func(state S) ([]domain.Event, error)
	// Check, when set, vets decided events against something outside the
	// log before they are appended (an exchange accepting new keys): the
	// one step of a command that may have effects. An error refuses the
	// command as a Decide error does. Called once per attempt.
	Check func(ctx context.Context, state S, events []domain.Event) error
	// Conflict, when set, is the message of the ECONFLICT returned once
	// every attempt lost the race; the default names the stream.
	Conflict string
}

// Result says what a command did.
type Result struct {
	// Events are the appended events as sent (without store-set fields);
	// empty when Decide returned none.
	Events []domain.Event
	// Append is where they landed (zero when nothing was appended).
	Append domain.AppendResult
	// Attempts is how many times the command was decided (≥ 1 once Load
	// succeeded).
	Attempts int
}

// Appended reports whether the command appended events.
func (r Result) Appended() bool { return len(r.Events) > 0 }

// Run executes cmd: Load, Decide, Check, append with the loaded version as the
// expected version, and on a version conflict (ECONFLICT from the store)
// the same again, at most c.MaxAttempts times, then an ECONFLICT error
// (cmd.Conflict); before each new attempt it waits a random time that
// doubles its range with each loss (Backoff). With c.Serial it first waits for the other commands on
// cmd.Stream sharing it and holds the stream until it returns (a context
// ending during that wait is returned, wrapped, and nothing is done). Every event gets the actor and correlation carried by ctx
// (WithActor, WithCorrelation). Once appended, it waits for c.Waiter to
// apply the events (unless c.DeferWait). Errors of Load and Decide are returned as they are;
// store errors are wrapped with the stream's name and keep their code
// (EUNAVAILABLE when the store is down).
func Run[S any](ctx context.Context, c *Commands, cmd Command[S]) (Result, error) {
	if c == nil || c.Store == nil {
		return Result{}, domain.Errorf(domain.EUNAVAILABLE, "event store not configured")
	}
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	if c.Serial != nil {
		unlock, err := c.Serial.lock(ctx, cmd.Stream)
		if err != nil {
			return Result{}, fmt.Errorf("wait for the writes to %s before this one: %w", cmd.Stream, err)
		}
		defer unlock()
	}
	actor, correlation := Actor(ctx), Correlation(ctx)
	var res Result
	for res.Attempts < attempts {
		state, expected, err := cmd.Load(ctx)
		if err != nil {
			return res, err
		}
		res.Attempts++
		events, err := cmd.Decide(state)
		if err != nil || len(events) == 0 {
			return res, err
		}
		if cmd.Check != nil {
			if err := cmd.Check(ctx, state, events); err != nil {
				return res, err
			}
		}
		for i := range events {
			events[i].Actor, events[i].Correlation = actor, correlation
		}
		ar, err := c.Store.Append(ctx, cmd.Stream, expected, events...)
		if domain.ErrorCode(err) == domain.ECONFLICT {
			if res.Attempts == attempts {
				break
			}
			// The jitter comes after the catch-up: the losers leave that
			// wait together, the random wait spreads them out.
			if err := c.catchUp(ctx); err != nil {
				return res, err
			}
			if err := c.backOff(ctx, res.Attempts); err != nil {
				return res, err
			}
			continue
		}
		if err != nil {
			return res, fmt.Errorf("append %s: %w", cmd.Stream, err)
		}
		res.Events, res.Append = events, ar
		if c.Waiter != nil && !c.DeferWait {
			if err := c.Waiter.WaitFor(ctx, ar.LastPosition); err != nil {
				return res, fmt.Errorf("wait for projections: %w", err)
			}
		}
		return res, nil
	}
	if cmd.Conflict != "" {
		return res, domain.Errorf(domain.ECONFLICT, "%s", cmd.Conflict)
	}
	return res, domain.Errorf(domain.ECONFLICT, "%s changed during the write %d times in a row; read it again and retry", cmd.Stream, res.Attempts)
}

// AppendBatch appends events decided elsewhere to many streams in one call
// (domain.AppendBatch: one batch append when the store has it), for writes
// whose events come from outside the log, such as an import, whose ids are
// derived from their source so that a re-run appends nothing. There is no
// load, decide or retry: each element's Expected is used as given, and a
// failure is domain.AppendBatch's *domain.BatchError (a conflict keeps its
// ECONFLICT code). Like Run it stamps every event (in place) with the actor
// and correlation ctx carries, and once the batch is durable waits for
// c.Waiter to apply up to its highest position.
func (c *Commands) AppendBatch(ctx context.Context, batch []domain.StreamAppend) ([]domain.AppendResult, error) {
	if c == nil || c.Store == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "event store not configured")
	}
	actor, correlation := Actor(ctx), Correlation(ctx)
	for i := range batch {
		for j := range batch[i].Events {
			batch[i].Events[j].Actor, batch[i].Events[j].Correlation = actor, correlation
		}
	}
	results, err := domain.AppendBatch(ctx, c.Store, batch)
	if err != nil || c.Waiter == nil {
		return results, err
	}
	var last uint64
	for _, r := range results {
		last = max(last, r.LastPosition)
	}
	if err := c.Waiter.WaitFor(ctx, last); err != nil {
		return results, fmt.Errorf("wait for projections: %w", err)
	}
	return results, nil
}

// backOff waits a random time in [0, Backoff·2^(losses-1)) after a
// command's losses-th lost race, or until ctx ends (its error).
func (c *Commands) backOff(ctx context.Context, losses int) error {
	base := c.Backoff
	if base <= 0 {
		base = DefaultBackoff
	}
	d := time.Duration(rand.Int64N(int64(base) << min(losses-1, 20)))
	if c.wait != nil {
		return c.wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// catchUp waits until the projections have applied everything committed
// so far, so that the next Load from a projection sees the write that won.
func (c *Commands) catchUp(ctx context.Context) error {
	if c.Waiter == nil {
		return nil
	}
	head, err := c.Store.Head(ctx)
	if err != nil {
		return fmt.Errorf("read log head: %w", err)
	}
	if err := c.Waiter.WaitFor(ctx, head); err != nil {
		return fmt.Errorf("wait for projections: %w", err)
	}
	return nil
}

// LoadStream returns a Load that folds stream's events from the store with
// apply into a fresh state from zero, and the stream's version as the
// expected version (domain.NoStream when it has no events). For commands
// whose state lives in one stream and no projection is at hand (the
// command-line tools).
func LoadStream[S any](store domain.EventStore, stream string, zero func() S, apply func(S, *domain.Event) (S, error)) func(context.Context) (S, domain.ExpectedVersion, error) {
	return func(ctx context.Context) (S, domain.ExpectedVersion, error) {
		state := zero()
		version := int64(-1)
		it := store.ReadStream(ctx, stream, 0, 0)
		defer it.Close()
		for it.Next() {
			e := it.Event()
			var err error
			if state, err = apply(state, &e); err != nil {
				return state, 0, err
			}
			version = e.Version
		}
		if err := it.Err(); err != nil {
			return state, 0, fmt.Errorf("read %s stream: %w", stream, err)
		}
		return state, ExpectedAt(version), nil
	}
}

// NoState is the Load of commands whose events depend on no state: the
// expected version is domain.Any, so they never conflict (login and
// system events).
func NoState(context.Context) (struct{}, domain.ExpectedVersion, error) {
	return struct{}{}, domain.Any, nil
}

// ExpectedAt is the expected version of a stream whose last event has
// version v (-1: no stream yet).
func ExpectedAt(v int64) domain.ExpectedVersion {
	if v < 0 {
		return domain.NoStream
	}
	return domain.ExpectedVersion(v)
}

type ctxKey int

const (
	ctxActor ctxKey = iota
	ctxCorrelation
)

// AnonymousActor is the actor of events written by a context that names
// none (an unauthenticated request).
const AnonymousActor = "anonymous"

// WithActor returns ctx carrying actor, who commands run with it are
// recorded as (a token subject, domain.ActorCLI, domain.ActorCore…).
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, ctxActor, actor)
}

// Actor returns the actor ctx carries, or AnonymousActor.
func Actor(ctx context.Context) string {
	if a, _ := ctx.Value(ctxActor).(string); a != "" {
		return a
	}
	return AnonymousActor
}

// WithCorrelation returns ctx carrying id (a request id) as the
// correlation of the events commands run with it write.
func WithCorrelation(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxCorrelation, id)
}

// Correlation returns the correlation ctx carries, or "".
func Correlation(ctx context.Context) string {
	id, _ := ctx.Value(ctxCorrelation).(string)
	return id
}
