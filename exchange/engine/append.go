package engine

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// appender runs the writes of one engine command (a placement, a cancel, a
// reconcile pass, a tick) through the command path, eventstore.Run: each
// write loads the state it decides against from the desk's projections
// with its stream's version, a pure decision in domain returns the events,
// they are appended at that version (a conflict waits for the projections
// and decides again) and applied to the desk's projections at once. The
// projections are waited for once, when the command ends (finish), so that
// a placement's OrderRequested goes to the exchange without waiting for
// the read models.
type appender struct {
	d           *Desk
	actor, corr string
	last        uint64 // position of the last append
	// parent and tagged cache the context carrying actor and corr: a
	// command's writes share the caller's context.
	parent, tagged context.Context
}

// newAppender starts a command's writes by actor ("" is the core) with
// correlation corr.
func (d *Desk) newAppender(actor, corr string) *appender {
	if actor == "" {
		actor = domain.ActorCore
	}
	return &appender{d: d, actor: actor, corr: corr}
}

// ctx returns ctx carrying the command's actor and correlation.
func (a *appender) ctx(ctx context.Context) context.Context {
	if ctx != a.parent {
		a.parent, a.tagged = ctx, eventstore.WithCorrelation(eventstore.WithActor(ctx, a.actor), a.corr)
	}
	return a.tagged
}

// order decides on an order's state (with its version; a reserved id's
// empty order has none, so its first events create the stream) and appends
// what decide returns. It returns the appended events (none when decide
// returned none). The caller holds entry.op.
func (a *appender) order(ctx context.Context, entry *orderEntry, id int64, decide func(o domain.Order) ([]domain.Event, error)) ([]domain.Event, error) {
	return write(ctx, a, domain.OrderStream(id), func() (domain.Order, domain.ExpectedVersion) {
		o := a.d.orders.decidable(entry)
		return o, eventstore.ExpectedAt(o.Version)
	}, decide)
}

// oco decides on an OCO's state (a new OCO's when it has none yet) and
// appends what decide returns.
func (a *appender) oco(ctx context.Context, ocoID int64, decide func(c domain.Oco) ([]domain.Event, error)) ([]domain.Event, error) {
	return write(ctx, a, domain.OcoStream(ocoID), func() (domain.Oco, domain.ExpectedVersion) {
		c := a.d.orders.oco(ocoID)
		return c, eventstore.ExpectedAt(c.Version)
	}, decide)
}

// balances decides on the last balances observed on an exchange and
// appends what decide returns; observations do not depend on the stream's
// version (domain.Any).
func (a *appender) balances(ctx context.Context, exchange string, decide func(last domain.BalancesObserved, seen bool) ([]domain.Event, error)) error {
	type observed struct {
		last domain.BalancesObserved
		seen bool
	}
	_, err := write(ctx, a, domain.BalanceStream(exchange), func() (observed, domain.ExpectedVersion) {
		last, seen := lastObserved(a.d.balances, exchange)
		return observed{last, seen}, domain.Any
	}, func(o observed) ([]domain.Event, error) { return decide(o.last, o.seen) })
	return err
}

// write runs one decision through eventstore.Run on stream and applies the
// appended events to the desk's projections.
func write[S any](ctx context.Context, a *appender, stream string, load func() (S, domain.ExpectedVersion), decide func(S) ([]domain.Event, error)) ([]domain.Event, error) {
	res, err := eventstore.Run(a.ctx(ctx), a.d.commands(), eventstore.Command[S]{
		Stream: stream,
		Load: func(context.Context) (S, domain.ExpectedVersion, error) {
			s, v := load()
			return s, v, nil
		},
		Decide: decide,
	})
	if err != nil || !res.Appended() {
		return nil, err
	}
	for i := range res.Events {
		e := &res.Events[i]
		e.Stream, e.Version = stream, res.Append.FirstVersion+int64(i)
	}
	if err := a.d.apply(res.Events, res.Append.LastPosition); err != nil {
		return nil, err
	}
	a.last = max(a.last, res.Append.LastPosition)
	return res.Events, nil
}

// finish waits until the command's appends are visible to the read models
// (read-your-writes), keeping err (the command's answer) unless waiting
// failed.
func (a *appender) finish(ctx context.Context, err error) error {
	if a.d.Wait == nil || a.last == 0 {
		return err
	}
	if werr := a.d.Wait(ctx, a.last); werr != nil && err == nil {
		return werr
	}
	return err
}
