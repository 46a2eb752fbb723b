package engine

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// appender runs the writes of one engine command (a placement, a cancel, a
// reconcile pass, a tick) through the command path, eventstore.Run: each
// write loads the state it decides against from the Trader with its
// stream's version, a pure decision in domain returns the events, they are
// appended at that version (a conflict waits for the projections, the
// Trader among them, and decides again) and applied to the Trader at once.
// The projections are waited for once, when the command ends (finish), so
// that a placement's OrderRequested goes to the exchange without waiting
// for the read models.
type appender struct {
	t           *Trader
	actor, corr string
	last        uint64 // position of the last append
	// parent and tagged cache the context carrying actor and corr: a
	// command's writes share the caller's context.
	parent, tagged context.Context
}

func (t *Trader) newAppender(actor, corr string) *appender {
	if actor == "" {
		actor = domain.ActorCore
	}
	return &appender{t: t, actor: actor, corr: corr}
}

// ctx returns ctx carrying the command's actor and correlation.
func (a *appender) ctx(ctx context.Context) context.Context {
	if ctx != a.parent {
		a.parent, a.tagged = ctx, eventstore.WithCorrelation(eventstore.WithActor(ctx, a.actor), a.corr)
	}
	return a.tagged
}

// order decides on an order's state (read from the Trader, with its
// version; a reserved id's empty order has none, so its first events
// create the stream) and appends what decide returns. It returns the
// appended events (none when decide returned none). The caller holds
// entry.op.
func (a *appender) order(ctx context.Context, entry *orderEntry, id int64, decide func(o domain.Order) ([]domain.Event, error)) ([]domain.Event, error) {
	return write(ctx, a, domain.OrderStream(id), func() (domain.Order, domain.ExpectedVersion) {
		o := a.t.orderState(entry)
		return o, eventstore.ExpectedAt(o.Version)
	}, decide)
}

// oco decides on an OCO's state (a new OCO's when it has none yet) and
// appends what decide returns.
func (a *appender) oco(ctx context.Context, ocoID int64, decide func(c domain.Oco) ([]domain.Event, error)) ([]domain.Event, error) {
	return write(ctx, a, domain.OcoStream(ocoID), func() (domain.Oco, domain.ExpectedVersion) {
		a.t.mu.Lock()
		defer a.t.mu.Unlock()
		c := domain.NewOco()
		if p := a.t.ocos[ocoID]; p != nil {
			c = *p
		}
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
		a.t.mu.Lock()
		defer a.t.mu.Unlock()
		last, seen := a.t.balances[exchange]
		return observed{last, seen}, domain.Any
	}, func(o observed) ([]domain.Event, error) { return decide(o.last, o.seen) })
	return err
}

// write runs one decision through eventstore.Run on stream and applies the
// appended events to the Trader.
func write[S any](ctx context.Context, a *appender, stream string, load func() (S, domain.ExpectedVersion), decide func(S) ([]domain.Event, error)) ([]domain.Event, error) {
	res, err := eventstore.Run(a.ctx(ctx), a.t.commands(), eventstore.Command[S]{
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
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	for i := range res.Events {
		e := &res.Events[i]
		e.Stream, e.Version = stream, res.Append.FirstVersion+int64(i)
		if err := a.t.applyLocked(e); err != nil {
			return nil, err
		}
	}
	a.last = max(a.last, res.Append.LastPosition)
	return res.Events, nil
}

// finish waits until the command's appends are visible to the read models
// (read-your-writes), keeping err (the command's answer) unless waiting
// failed.
func (a *appender) finish(ctx context.Context, err error) error {
	if a.t.Wait == nil || a.last == 0 {
		return err
	}
	if werr := a.t.Wait(ctx, a.last); werr != nil && err == nil {
		return werr
	}
	return err
}

// orderState is a copy of an order's state to decide on (its FillIDs are
// shared: Apply only appends to them, under t.mu).
func (t *Trader) orderState(entry *orderEntry) domain.Order {
	t.mu.Lock()
	defer t.mu.Unlock()
	return entry.o
}

// commands is the command path on the Trader's store, made on first use
// (the Trader's fields are set by then): a conflict waits on Wait before
// deciding again; the wait after an append is the appender's (finish).
func (t *Trader) commands() *eventstore.Commands {
	t.cmdsOnce.Do(func() {
		t.cmds = eventstore.NewCommands(t.Store, nil)
		if t.Wait != nil {
			t.cmds.Waiter = waitFunc(t.Wait)
		}
		t.cmds.DeferWait = true
	})
	return t.cmds
}

// waitFunc is a Wait as an eventstore.Waiter.
type waitFunc func(ctx context.Context, pos uint64) error

func (f waitFunc) WaitFor(ctx context.Context, pos uint64) error { return f(ctx, pos) }
