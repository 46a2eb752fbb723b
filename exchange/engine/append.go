package engine

import (
	"context"
	"fmt"

	"github.com/tradeledger/tradeledger/domain"
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
