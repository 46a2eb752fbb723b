package eventstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
)

// heldCommand starts a command on stream that holds it in Decide until
// release is closed; the returned channel gets Run's error.
func heldCommand(t *testing.T, c *eventstore.Commands, store domain.EventStore, stream string, release <-chan struct{}) <-chan error {
	t.Helper()
	deciding := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := eventstore.Run(context.Background(), c, eventstore.Command[counter]{
			Stream: stream,
			Load:   eventstore.LoadStream(store, stream, func() counter { return counter{} }, countApply),
			Decide: func(s counter) ([]domain.Event, error) {
				close(deciding)
				<-release
				return increment(s)
			},
		})
		done <- err
	}()
	<-deciding
	return done
}

// serialCommands returns Commands sharing new StreamLocks, with one
// attempt per command (a lost race is an error), and the channel its
// waits are reported on.
func serialCommands(store domain.EventStore) (*eventstore.Commands, *eventstore.StreamLocks, chan string) {
	locks := &eventstore.StreamLocks{}
	waits := make(chan string, 8)
	eventstore.OnLockWait(locks, func(stream string) { waits <- stream })
	c := eventstore.NewCommands(store, nil)
	c.Serial, c.MaxAttempts = locks, 1
	return c, locks, waits
}

func TestSerialCommandsOnAStreamDecideOneAfterAnother(t *testing.T) {
	store := sqlitetest.Open(t)
	c, locks, waits := serialCommands(store)
	release := make(chan struct{})
	first := heldCommand(t, c, store, "c", release)

	loaded := make(chan struct{})
	second := make(chan error, 1)
	go func() {
		_, err := eventstore.Run(context.Background(), c, eventstore.Command[counter]{
			Stream: "c",
			Load: func(ctx context.Context) (counter, domain.ExpectedVersion, error) {
				close(loaded)
				return loadCounter(store)(ctx)
			},
			Decide: increment,
		})
		second <- err
	}()
	select {
	case <-waits:
	case <-loaded:
		t.Fatal("the second command loaded the stream while the first was deciding on it")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// One attempt each: the second decided against the first's event.
	if err := <-second; err != nil {
		t.Fatalf("second command: %v", err)
	}
	evs := streamEvents(t, store, "c")
	if len(evs) != 2 || string(evs[1].Data) != `{"n":2}` {
		t.Fatalf("stream c holds %d events, want 2 numbered 1 and 2", len(evs))
	}
	if n := eventstore.LockedStreams(locks); n != 0 {
		t.Fatalf("%d stream locks left after both commands ended", n)
	}
}

func TestSerialCommandsOnOtherStreamsDoNotWait(t *testing.T) {
	store := sqlitetest.Open(t)
	c, _, waits := serialCommands(store)
	release := make(chan struct{})
	defer close(release)
	_ = heldCommand(t, c, store, "c", release)

	other := make(chan error, 1)
	go func() {
		_, err := eventstore.Run(context.Background(), c, eventstore.Command[counter]{
			Stream: "d", Load: eventstore.LoadStream(store, "d", func() counter { return counter{} }, countApply), Decide: increment,
		})
		other <- err
	}()
	select {
	case err := <-other:
		if err != nil {
			t.Fatal(err)
		}
	case s := <-waits:
		t.Fatalf("a command on stream d waited for %s", s)
	}
}

func TestSerialWaitEndsWithItsContext(t *testing.T) {
	store := sqlitetest.Open(t)
	c, locks, waits := serialCommands(store)
	release := make(chan struct{})
	first := heldCommand(t, c, store, "c", release)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-waits; cancel() }()
	_, err := eventstore.Run(ctx, c, eventstore.Command[counter]{
		Stream: "c",
		Load: func(context.Context) (counter, domain.ExpectedVersion, error) {
			t.Error("loaded after its context ended")
			return counter{}, domain.Any, nil
		},
		Decide: increment,
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if evs := streamEvents(t, store, "c"); len(evs) != 1 {
		t.Fatalf("stream c holds %d events, want the first command's only", len(evs))
	}
	if n := eventstore.LockedStreams(locks); n != 0 {
		t.Fatalf("%d stream locks left", n)
	}
}
