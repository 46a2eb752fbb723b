package eventstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/projections"
)

// counter is the state of the test commands: the number of Counted events
// in the stream.
type counter struct{ n int }

type counted struct {
	N int `json:"n"`
}

var clock = domain.NewManualClock(time.UnixMilli(1_700_000_000_000))

func countApply(c counter, e *domain.Event) (counter, error) {
	if e.Type == "Counted" {
		c.n++
	}
	return c, nil
}

// loadCounter loads the counter from stream "c".
func loadCounter(store domain.EventStore) func(context.Context) (counter, domain.ExpectedVersion, error) {
	return eventstore.LoadStream(store, "c", func() counter { return counter{} }, countApply)
}

// increment is a pure decide: one Counted event numbered after the state.
func increment(c counter) ([]domain.Event, error) {
	return []domain.Event{domain.NewEvent(clock, "Counted", counted{N: c.n + 1})}, nil
}

// runIncrement runs the command that counts stream "c" of store one up.
func runIncrement(ctx context.Context, c *eventstore.Commands, store domain.EventStore) (eventstore.Result, error) {
	return eventstore.Run(ctx, c, eventstore.Command[counter]{Stream: "c", Load: loadCounter(store), Decide: increment})
}

// runIncrementRaced is runIncrement with race called once, after the
// first load and before its append: another writer slipping in.
func runIncrementRaced(c *eventstore.Commands, store domain.EventStore, race func()) (eventstore.Result, error) {
	load, loads := loadCounter(store), 0
	return eventstore.Run(context.Background(), c, eventstore.Command[counter]{
		Stream: "c",
		Load: func(ctx context.Context) (counter, domain.ExpectedVersion, error) {
			st, v, err := load(ctx)
			if loads++; loads == 1 {
				race()
			}
			return st, v, err
		},
		Decide: increment,
	})
}

func streamEvents(t testing.TB, store domain.EventStore, stream string) []domain.Event {
	t.Helper()
	var out []domain.Event
	it := store.ReadStream(context.Background(), stream, 0, 0)
	defer it.Close()
	for it.Next() {
		out = append(out, it.Event())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func appendOne(t *testing.T, store domain.EventStore, stream string, n int) {
	t.Helper()
	if _, err := store.Append(context.Background(), stream, domain.Any, domain.NewEvent(clock, "Counted", counted{N: n})); err != nil {
		t.Fatal(err)
	}
}

func TestRunAppendsWithActorAndCorrelation(t *testing.T) {
	store := sqlitetest.Open(t)
	appendOne(t, store, "c", 1)
	c := eventstore.NewCommands(store, nil)
	ctx := eventstore.WithCorrelation(eventstore.WithActor(context.Background(), "token:ci"), "req-1")
	res, err := runIncrement(ctx, c, store)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Attempts, 1; got != want {
		t.Fatalf("attempts=%d, want %d", got, want)
	}
	if !res.Appended() || res.Append.LastVersion != 1 {
		t.Fatalf("result=%+v, want one event at version 1", res)
	}
	evs := streamEvents(t, store, "c")
	if got, want := len(evs), 2; got != want {
		t.Fatalf("events=%d, want %d", got, want)
	}
	last := evs[1]
	if last.Actor != "token:ci" || last.Correlation != "req-1" {
		t.Fatalf("actor, correlation = %q, %q; want token:ci, req-1", last.Actor, last.Correlation)
	}
	var d counted
	if err := json.Unmarshal(last.Data, &d); err != nil || d.N != 2 {
		t.Fatalf("data=%s, want n 2 (decided against the loaded state)", last.Data)
	}
}

func TestRunWithoutActorIsAnonymous(t *testing.T) {
	store := sqlitetest.Open(t)
	c := eventstore.NewCommands(store, nil)
	if _, err := runIncrement(context.Background(), c, store); err != nil {
		t.Fatal(err)
	}
	if got, want := streamEvents(t, store, "c")[0].Actor, eventstore.AnonymousActor; got != want {
		t.Fatalf("actor=%q, want %q", got, want)
	}
}

// A writer that slips in between the first load and its append makes the
// first attempt conflict; the second loads the new state and succeeds.
func TestRunRetriesAConflictAgainstTheNewState(t *testing.T) {
	store := sqlitetest.Open(t)
	c := eventstore.NewCommands(store, nil)
	res, err := runIncrementRaced(c, store, func() {
		appendOne(t, store, "c", 1) // the concurrent writer
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Attempts, 2; got != want {
		t.Fatalf("attempts=%d, want %d", got, want)
	}
	evs := streamEvents(t, store, "c")
	if got, want := len(evs), 2; got != want {
		t.Fatalf("events=%d, want %d", got, want)
	}
	var d counted
	if err := json.Unmarshal(evs[1].Data, &d); err != nil || d.N != 2 {
		t.Fatalf("retried event data=%s, want n 2 (decided after the other writer's event)", evs[1].Data)
	}
}

// A state that never catches up gives up after MaxAttempts with ECONFLICT
// and the command's message, having appended nothing.
func TestRunGivesUpAfterMaxAttempts(t *testing.T) {
	store := sqlitetest.Open(t)
	appendOne(t, store, "c", 1)
	c := &eventstore.Commands{Store: store, MaxAttempts: 3}
	decides := 0
	res, err := eventstore.Run(context.Background(), c, eventstore.Command[counter]{
		Stream: "c",
		Load: func(context.Context) (counter, domain.ExpectedVersion, error) {
			return counter{}, domain.NoStream, nil // always stale
		},
		Decide:   func(s counter) ([]domain.Event, error) { decides++; return increment(s) },
		Conflict: "the counter changed; retry",
	})
	if got, want := domain.ErrorCode(err), domain.ECONFLICT; got != want {
		t.Fatalf("code=%q (%v), want %q", got, err, want)
	}
	if got, want := domain.ErrorMessage(err), "the counter changed; retry"; got != want {
		t.Fatalf("message=%q, want %q", got, want)
	}
	if res.Attempts != 3 || decides != 3 {
		t.Fatalf("attempts=%d decides=%d, want 3 and 3", res.Attempts, decides)
	}
	if res.Appended() {
		t.Fatalf("result says appended: %+v", res)
	}
	if got, want := len(streamEvents(t, store, "c")), 1; got != want {
		t.Fatalf("events=%d, want %d", got, want)
	}
}

// After each lost race but the last a command waits a random time whose
// range doubles: [0, Backoff), [0, 2·Backoff), …; with Backoff unset,
// DefaultBackoff.
func TestRunWaitsARandomTimeAfterEachLoss(t *testing.T) {
	store := sqlitetest.Open(t)
	appendOne(t, store, "c", 1)
	for _, base := range []time.Duration{0, 10 * time.Millisecond} {
		c := &eventstore.Commands{Store: store, MaxAttempts: 6, Backoff: base}
		var waits []time.Duration
		eventstore.OnBackoff(c, func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
		_, err := eventstore.Run(context.Background(), c, eventstore.Command[counter]{
			Stream: "c",
			Load:   func(context.Context) (counter, domain.ExpectedVersion, error) { return counter{}, domain.NoStream, nil },
			Decide: increment,
		})
		if domain.ErrorCode(err) != domain.ECONFLICT {
			t.Fatalf("err = %v, want ECONFLICT", err)
		}
		if base == 0 {
			base = eventstore.DefaultBackoff
		}
		if len(waits) != 5 {
			t.Fatalf("waits %v: want 5, one after each lost race but the last", waits)
		}
		for i, d := range waits {
			if limit := base << i; d < 0 || d >= limit {
				t.Errorf("wait %d = %v, want in [0, %v)", i+1, d, limit)
			}
		}
	}
}

func TestRunDefaultConflictNamesTheStream(t *testing.T) {
	store := sqlitetest.Open(t)
	appendOne(t, store, "c", 1)
	_, err := eventstore.Run(context.Background(), &eventstore.Commands{Store: store}, eventstore.Command[counter]{
		Stream: "c",
		Load:   func(context.Context) (counter, domain.ExpectedVersion, error) { return counter{}, domain.NoStream, nil },
		Decide: increment,
	})
	if got, want := domain.ErrorMessage(err), "c changed during the write 10 times in a row; read it again and retry"; got != want {
		t.Fatalf("message=%q, want %q", got, want)
	}
}

// A decide error is returned as it is and nothing is appended or waited for.
func TestRunDecideErrorAppendsNothing(t *testing.T) {
	store := sqlitetest.Open(t)
	appendOne(t, store, "c", 1)
	w := &recordingWaiter{}
	c := eventstore.NewCommands(store, w)
	_, err := eventstore.Run(context.Background(), c, eventstore.Command[counter]{
		Stream: "c",
		Load:   loadCounter(store),
		Decide: func(counter) ([]domain.Event, error) {
			return nil, domain.Errorf(domain.EINVALID, "n must be even")
		},
	})
	if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
		t.Fatalf("code=%q, want %q", got, want)
	}
	if got, want := domain.ErrorMessage(err), "n must be even"; got != want {
		t.Fatalf("message=%q, want %q", got, want)
	}
	if got, want := len(streamEvents(t, store, "c")), 1; got != want {
		t.Fatalf("events=%d, want %d", got, want)
	}
	if len(w.calls()) != 0 {
		t.Fatalf("waited for %v after a refused command", w.calls())
	}
}

func TestRunNoEventsAppendsNothing(t *testing.T) {
	store := sqlitetest.Open(t)
	res, err := eventstore.Run(context.Background(), eventstore.NewCommands(store, nil), eventstore.Command[counter]{
		Stream: "c",
		Load:   loadCounter(store),
		Decide: func(counter) ([]domain.Event, error) { return nil, nil },
	})
	if err != nil || res.Appended() {
		t.Fatalf("res=%+v err=%v, want nothing appended and no error", res, err)
	}
	if head, _ := store.Head(context.Background()); head != 0 {
		t.Fatalf("head=%d, want 0", head)
	}
}

type recordingWaiter struct {
	mu  sync.Mutex
	pos []uint64
}

func (w *recordingWaiter) WaitFor(_ context.Context, pos uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pos = append(w.pos, pos)
	return nil
}

func (w *recordingWaiter) calls() []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]uint64(nil), w.pos...)
}

// The command waits for the position of its last event; after a conflict
// it first waits for the head, so a state loaded from a projection sees
// the write that won.
func TestRunWaitsForItsPosition(t *testing.T) {
	store := sqlitetest.Open(t)
	w := &recordingWaiter{}
	c := eventstore.NewCommands(store, w)
	res, err := runIncrementRaced(c, store, func() {
		appendOne(t, store, "other", 1)
		appendOne(t, store, "c", 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := w.calls()
	if len(calls) != 2 || calls[0] != 2 || calls[1] != res.Append.LastPosition || res.Append.LastPosition <= 2 {
		t.Fatalf("waited for %v (append at %d), want [2 (head after the conflict) %d]", calls, res.Append.LastPosition, res.Append.LastPosition)
	}
}

// applied is a projection that records the events it applied.
type applied struct {
	mu  sync.Mutex
	ids []string
}

func (a *applied) Name() string { return "applied" }
func (a *applied) Apply(e *domain.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids = append(a.ids, e.ID)
	return nil
}

// With the projections runner as the Waiter, the projection has applied
// the command's event when Run returns (read-your-writes).
func TestRunReadYourWritesWithRunner(t *testing.T) {
	store := sqlitetest.Open(t)
	runner := projections.NewRunner(store)
	proj := &applied{}
	runner.Register(proj)
	if err := runner.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	c := eventstore.NewCommands(store, runner)
	for i := 0; i < 20; i++ {
		res, err := runIncrement(context.Background(), c, store)
		if err != nil {
			t.Fatal(err)
		}
		proj.mu.Lock()
		last := proj.ids[len(proj.ids)-1]
		proj.mu.Unlock()
		if last != res.Events[0].ID {
			t.Fatalf("run %d: projection's last event %s, want the command's %s", i, last, res.Events[0].ID)
		}
	}
}

func TestRunStoreMissingIsUnavailable(t *testing.T) {
	_, err := eventstore.Run(context.Background(), &eventstore.Commands{}, eventstore.Command[counter]{Stream: "c"})
	if got, want := domain.ErrorCode(err), domain.EUNAVAILABLE; got != want {
		t.Fatalf("code=%q, want %q", got, want)
	}
}

func TestAppendBatchStampsAndWaits(t *testing.T) {
	store := sqlitetest.Open(t)
	w := &recordingWaiter{}
	c := eventstore.NewCommands(store, w)
	ctx := eventstore.WithCorrelation(eventstore.WithActor(context.Background(), domain.ActorImport), "import-1")
	batch := []domain.StreamAppend{
		{Stream: "a", Expected: domain.NoStream, Events: []domain.Event{domain.NewEvent(clock, "Counted", counted{N: 1})}},
		{Stream: "b", Expected: domain.Any, Events: []domain.Event{domain.NewEvent(clock, "Counted", counted{N: 1}), domain.NewEvent(clock, "Counted", counted{N: 2})}},
	}
	res, err := c.AppendBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[1].LastVersion != 1 {
		t.Fatalf("results=%+v", res)
	}
	for _, stream := range []string{"a", "b"} {
		for _, e := range streamEvents(t, store, stream) {
			if e.Actor != domain.ActorImport || e.Correlation != "import-1" {
				t.Fatalf("%s/%d: actor, correlation = %q, %q", stream, e.Version, e.Actor, e.Correlation)
			}
		}
	}
	if got, want := w.calls(), []uint64{max(res[0].LastPosition, res[1].LastPosition)}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("waited for %v, want %v", got, want)
	}

	// A condition that does not hold is not retried: the BatchError names
	// the element and keeps ECONFLICT, and nothing is waited for.
	_, err = c.AppendBatch(ctx, []domain.StreamAppend{{Stream: "a", Expected: domain.NoStream, Events: []domain.Event{domain.NewEvent(clock, "Counted", counted{N: 2})}}})
	var be *domain.BatchError
	if !errors.As(err, &be) || be.Index != 0 || domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("err=%v, want a BatchError at 0 with ECONFLICT", err)
	}
	if got := len(w.calls()); got != 1 {
		t.Fatalf("waited %d times, want 1 (not after the failed batch)", got)
	}
	if got := len(streamEvents(t, store, "a")); got != 1 {
		t.Fatalf("stream a has %d events, want 1", got)
	}
}
