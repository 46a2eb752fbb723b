// Package engine is the trading side of Tradeledger: the order manager
// (Trader) and the pair scheduler (Scheduler), over the connectors that
// implement domain.Exchange (exchange/paper, exchange/binance, …, chosen
// per exchange by cmd/tradeledger).
//
// Dependencies point one way:
//
//	Scheduler ──▶ Trader ──▶ System
//	    └──────────────────────▲
//
// System is whether trading is on (the system stream) and which exchanges
// have an enabled pair; the Trader accepts an order only for an exchange
// that IsCycling; the Scheduler cycles the pairs while the System is
// started and drives the Trader (order emulation on each ticker,
// reconciliation, strategy orders). New wires the three; nothing is wired
// back.
//
// Files by concern: system.go (on/off, the precondition), scheduler.go (the
// cycle), memory.go (core memory and market data reads), orders.go (the
// Trader's state as a projection of the log and its reads), submit.go (the
// path of an order request, top to bottom), idempotency.go
// (Idempotency-Keys), cancel.go, emulate.go (stop-limit, trailing-stop and
// OCO from price ticks), reconcile.go (unknown outcomes, fills, balances),
// append.go (the command's appends and read-your-writes), connector.go
// (exchange calls).
//
// The Trader is the order manager: every order's life as events. It places
// and cancels orders on the connectors, emulates stop-limit, trailing-stop
// and OCO orders from price ticks (the rules are pure functions in domain),
// and reconciles the exchanges' fills and balances into the log.
//
// The Trader is also a projection: register it with the projection runner
// before the replay (Engine.Projections), and it recovers from the log the
// next order id, the state of every unfinished order, the Idempotency-Keys
// already answered (with a fingerprint of the request each answered), the
// fill cursors and the last observed balances. Events it appends itself
// are applied at once (and ignored when the runner delivers them again),
// so its decisions never wait for the runner. Memory and the cost of a
// tick or a reconcile follow the unfinished orders: a finished order is
// dropped and, when asked for, read back from the log.
//
// Safety: an OrderRequested is durable before the exchange hears of the
// order, and the client order id sent is derived from that event's id. A
// retry, a timeout or a crash therefore never places a second order: an
// order whose answer was lost stays "requested" (pending reconcile) until
// Reconcile looks it up by its client order id.
//
// The engine never imports other adapters: the connectors, the
// configuration and the average buy price come in through fields, and
// cmd/tradeledger wires them.
package engine

import "github.com/tradeledger/tradeledger/domain"

// Engine is the trading engine: the System it trades under, the Trader
// (order manager) and the Scheduler (pair scheduler), wired one way.
type Engine struct {
	System    *System
	Trader    *Trader
	Scheduler *Scheduler
}

// New returns an Engine trading on the connectors exchange returns (ENOTFOUND
// for a name it cannot serve), under config, appending to store, dated by
// clock. Settings not given here are the components' fields, with their
// defaults: Trader.Wait (read-your-writes) and Trader.Timeout,
// Scheduler.ABP, Scheduler.Rates, Scheduler.OnError and the schedule.
// Register Projections with the runner before the replay, then
// Scheduler.Start.
func New(store domain.EventStore, exchange func(name string) (domain.Exchange, error), config ConfigSource, clock domain.Clock) *Engine {
	sys := &System{Config: config, Exchange: exchange}
	tr := NewTrader(store, exchange, clock)
	tr.Activity = sys
	sc := NewScheduler()
	sc.System, sc.Orders, sc.Clock = sys, tr, clock
	return &Engine{System: sys, Trader: tr, Scheduler: sc}
}

// Projections are the engine's read models, to register with the
// projection runner before the replay: the System (started or stopped)
// and the Trader (orders, keys, fill cursors, balances).
func (e *Engine) Projections() []Projection { return []Projection{e.System, e.Trader} }

// Projection is a read model the projection runner feeds
// (projections.Projection).
type Projection interface {
	Name() string
	Apply(*domain.Event) error
}

// Close stops the scheduler's loop.
func (e *Engine) Close() error { return e.Scheduler.Close() }
