package engine

import (
	"context"
	"fmt"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// appender appends events on behalf of one command and remembers the last
// position, for the final Wait.
type appender struct {
	t           *Trader
	actor, corr string
	last        uint64
}

func (t *Trader) newAppender(actor, corr string) *appender {
	if actor == "" {
		actor = domain.ActorCore
	}
	return &appender{t: t, actor: actor, corr: corr}
}

// append writes events to stream and applies them to the Trader's state.
func (a *appender) append(ctx context.Context, stream string, expected domain.ExpectedVersion, evs ...domain.Event) error {
	if len(evs) == 0 {
		return nil
	}
	for i := range evs {
		evs[i].Actor, evs[i].Correlation = a.actor, a.corr
	}
	res, err := a.t.Store.Append(ctx, stream, expected, evs...)
	if err != nil {
		return fmt.Errorf("append %s: %w", stream, err)
	}
	return a.appended(stream, res, evs)
}

// appended applies events just appended to stream (res) to the Trader's
// state at once, and remembers their position for the final wait.
func (a *appender) appended(stream string, res domain.AppendResult, evs []domain.Event) error {
	a.t.mu.Lock()
	for i := range evs {
		evs[i].Stream, evs[i].Version = stream, res.FirstVersion+int64(i)
		if err := a.t.applyLocked(&evs[i]); err != nil {
			a.t.mu.Unlock()
			return err
		}
	}
	a.t.mu.Unlock()
	if res.LastPosition > a.last {
		a.last = res.LastPosition
	}
	return nil
}

// wait returns once the appended events are visible to the read models.
func (a *appender) wait(ctx context.Context) error {
	if a.t.Wait == nil || a.last == 0 {
		return nil
	}
	return a.t.Wait(ctx, a.last)
}

// finish waits for the projections, keeping err (the command's answer)
// unless waiting failed.
func (a *appender) finish(ctx context.Context, err error) error {
	if werr := a.wait(ctx); werr != nil && err == nil {
		return werr
	}
	return err
}

// appendOrder appends to an order's stream at its current version.
func (a *appender) appendOrder(ctx context.Context, en *entry, id int64, evs ...domain.Event) error {
	a.t.mu.Lock()
	v := en.o.Version
	a.t.mu.Unlock()
	expected := domain.ExpectedVersion(v)
	if v < 0 {
		expected = domain.NoStream
	}
	return a.append(ctx, domain.OrderStream(id), expected, evs...)
}

// run runs a decision on an order's state through the command path
// (eventstore.Run): Load reads the order from the Trader's state with its
// version, Decide (pure, in domain) returns the events, the append expects
// that version, and a version conflict (another writer appended to the
// stream) waits for the projections, which the Trader is one of, and
// decides again. The events are applied to the Trader at once, as every
// append of a command is. The caller holds en.op.
func (a *appender) run(ctx context.Context, en *entry, id int64, decide func(o domain.Order) ([]domain.Event, error)) error {
	ctx = eventstore.WithCorrelation(eventstore.WithActor(ctx, a.actor), a.corr)
	stream := domain.OrderStream(id)
	res, err := eventstore.Run(ctx, a.t.commands(), eventstore.Command[domain.Order]{
		Stream: stream,
		Load: func(context.Context) (domain.Order, domain.ExpectedVersion, error) {
			o := a.t.snapshot(en)
			return o, eventstore.ExpectedAt(o.Version), nil
		},
		Decide: decide,
	})
	if err != nil || !res.Appended() {
		return err
	}
	return a.appended(stream, res.Append, res.Events)
}

// commands is the command path on the Trader's store, waiting on its Wait.
func (t *Trader) commands() *eventstore.Commands {
	var w eventstore.Waiter
	if t.Wait != nil {
		w = waitFunc(t.Wait)
	}
	return eventstore.NewCommands(t.Store, w)
}

// waitFunc is a Wait as an eventstore.Waiter.
type waitFunc func(ctx context.Context, pos uint64) error

func (f waitFunc) WaitFor(ctx context.Context, pos uint64) error { return f(ctx, pos) }
