package eventstore_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/projections"
)

// streamCounter is a projection of stream "c": its Counted events and its
// version, which a server's commands load their state from.
type streamCounter struct {
	mu      sync.Mutex
	n       int
	version int64
}

func newStreamCounter() *streamCounter { return &streamCounter{version: -1} }

func (p *streamCounter) Name() string { return "counter" }

func (p *streamCounter) Apply(e *domain.Event) error {
	if e.Stream != "c" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.version = e.Version
	return nil
}

func (p *streamCounter) load(context.Context) (counter, domain.ExpectedVersion, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return counter{n: p.n}, eventstore.ExpectedAt(p.version), nil
}

// contention is how a run of contend went.
type contention struct {
	refused, attempts int64
	events            []domain.Event
}

// contend runs writers × perWriter increments of stream "c" at once, the
// writers sharing no StreamLocks: with processes, each writer has a store
// of its own on one SQLite file and loads its state from the stream (as
// separate commands on one data dir do); without, they share one store and
// load from a projection the runner feeds (as a server's handlers would
// without Commands.Serial).
func contend(tb testing.TB, writers, perWriter int, processes bool) contention {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "events.db")
	open := func() *sqlite.Store { return sqlitetest.OpenAt(tb, path) }
	cmds := make([]*eventstore.Commands, writers)
	loads := make([]func(context.Context) (counter, domain.ExpectedVersion, error), writers)
	shared := open()
	if !processes {
		runner := projections.NewRunner(shared)
		proj := newStreamCounter()
		runner.Register(proj)
		if err := runner.Start(context.Background()); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { runner.Close() })
		for i := range cmds {
			cmds[i], loads[i] = eventstore.NewCommands(shared, runner), proj.load
		}
	} else {
		for i := range cmds {
			s := shared
			if i > 0 {
				s = open()
			}
			cmds[i], loads[i] = eventstore.NewCommands(s, nil), loadCounter(s)
		}
	}
	var c contention
	var wg sync.WaitGroup
	var failed atomic.Value
	start := make(chan struct{})
	for i := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range perWriter {
				res, err := eventstore.Run(context.Background(), cmds[i], eventstore.Command[counter]{Stream: "c", Load: loads[i], Decide: increment})
				atomic.AddInt64(&c.attempts, int64(res.Attempts))
				switch {
				case domain.ErrorCode(err) == domain.ECONFLICT:
					atomic.AddInt64(&c.refused, 1)
				case err != nil:
					failed.Store(err)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatal(err)
	}
	c.events = streamEvents(tb, shared, "c")
	return c
}

// BenchmarkContendedWriters: 8 writers on one stream without StreamLocks,
// in one process (one store, state from a projection) and as 8 processes
// (a store each, state from the stream): how many commands are refused
// after every attempt (target: none), and what the retries cost.
func BenchmarkContendedWriters(b *testing.B) {
	const writers, perWriter = 8, 25
	for _, mode := range []struct {
		name      string
		processes bool
	}{{"one-process", false}, {"processes", true}} {
		b.Run(mode.name, func(b *testing.B) {
			var refused, attempts, commands int64
			start := time.Now()
			for range b.N {
				c := contend(b, writers, perWriter, mode.processes)
				refused, attempts, commands = refused+c.refused, attempts+c.attempts, commands+writers*perWriter
			}
			el := time.Since(start)
			b.ReportMetric(float64(refused)/float64(commands), "refused/command")
			b.ReportMetric(float64(attempts)/float64(commands), "attempts/command")
			b.ReportMetric(float64(commands-refused)/el.Seconds(), "writes/s")
		})
	}
}

// TestContendedWritersDecideAgainstTheWinners: 8 writers on one stream
// without StreamLocks, in one process and as separate stores: every
// command either lands, decided against every event before it (the
// counter's events are numbered 1, 2, … with no gap or repeat), or is
// refused with ECONFLICT; BenchmarkContendedWriters counts the refusals.
func TestContendedWritersDecideAgainstTheWinners(t *testing.T) {
	const writers, perWriter = 8, 10
	for _, processes := range []bool{false, true} {
		c := contend(t, writers, perWriter, processes)
		if got, want := int64(len(c.events))+c.refused, int64(writers*perWriter); got != want {
			t.Fatalf("processes %v: %d events and %d refused, want %d commands in all", processes, len(c.events), c.refused, want)
		}
		for i, e := range c.events {
			var d counted
			if err := json.Unmarshal(e.Data, &d); err != nil || d.N != i+1 {
				t.Fatalf("processes %v: event %d holds %s, want n %d", processes, i, e.Data, i+1)
			}
		}
		t.Logf("processes %v: %d of %d refused, %.2f attempts per command", processes, c.refused, writers*perWriter, float64(c.attempts)/float64(writers*perWriter))
	}
}
