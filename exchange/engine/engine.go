// Package engine is the trading side of Tradeledger: the order manager and
// the pair scheduler, over the connectors that implement domain.Exchange
// (exchange/paper, exchange/binance, exchange/ccxt), chosen per exchange
// by Connectors from the descriptors cmd/tradeledger lists.
//
// The engine is a few rooms, each a type with a handful of methods:
//
//   - System (system.go): whether trading is on (the system stream) and
//     which exchanges have an enabled pair: the order precondition.
//   - Orders (orders.go) and Attention (attention.go): the order state and
//     the orders that need attention, projections of the log registered
//     with the runner like every other (Projections), beside the
//     BalanceBook (balances.go: the last observed balances) the engine is
//     given.
//   - Desk (desk.go, fills.go, cancel.go, append.go): what the rooms below
//     work through: the command path, the connectors and a lock per
//     exchange; it places and cancels orders on a connector and records
//     fills and the OCO rule they trigger.
//   - Trader (submit.go, idempotency.go, cancel.go): the trade commands:
//     Submit, SubmitOCO, ClosePosition, Cancel, ClearAttention.
//   - Reconciler (reconcile.go): unknown outcomes, open orders after a
//     start, fills and balances brought up to date with an exchange.
//   - Emulator (emulate.go): stop-limit, trailing-stop and OCO from price
//     ticks.
//   - AccountSync (accountsync.go, accountcheck.go, accountreport.go): the
//     account's whole activity brought into the log (trades the service
//     did not place, deposits, withdrawals, conversions, own fills the log
//     lacked), its balances checked against the ones the ledger implies,
//     and the reconciliation of a time window on demand.
//   - Scheduler (scheduler.go, memory.go): cycles the enabled pairs (market
//     data, core memory, rates, strategies) and drives the Emulator, the
//     Reconciler and the Trader.
//   - Connectors (connectors.go, guard.go): chooses each exchange's
//     connector and wraps it with the placement guard and the health
//     record /healthz reads.
//
// New wires them one way (nothing is wired back):
//
//	Scheduler ──▶ System
//	          ──▶ Trader ──▶ System (Activity), Reconciler, Desk
//	          ──▶ Reconciler ──▶ Desk
//	          ──▶ Emulator ──▶ Desk
//	          ──▶ AccountSync ──▶ Desk, the AccountBook
//	Desk ──▶ Orders, the BalanceBook, Attention, the connectors
//
// Safety: an OrderRequested is durable before the exchange hears of the
// order, and the client order id sent is derived from that event's id. A
// retry, a timeout or a crash therefore never places a second order: an
// order whose answer was lost stays "requested" (pending reconcile) until
// the Reconciler looks it up by its client order id. Each append is its
// own eventstore.Run command (append.go: the order loaded from Orders with
// its version, a decide function of domain, the events applied to Orders,
// the BalanceBook and Attention at once), and the exchange call sits
// between two commands, never inside a Decide: a conflict decides again
// only the append it lost, never the placement.
//
// The engine never imports other adapters: the connectors, the
// configuration and the average buy price come in through fields, and
// cmd/tradeledger wires them.
package engine

import (
	"context"

	"github.com/tradeledger/tradeledger/domain"
)

// Engine is the trading engine's rooms, wired one way by New.
type Engine struct {
	System *System
	// Desk holds the order side's settings (Wait, Timeout …).
	Desk       *Desk
	Orders     *Orders
	Balances   BalanceBook
	Attention  *Attention
	Trader     *Trader
	Reconciler *Reconciler
	Emulator   *Emulator
	Accounts   *AccountSync
	Scheduler  *Scheduler
}

// New returns an Engine trading on the connectors exchange returns (ENOTFOUND
// for a name it cannot serve), under config, appending to store, keeping
// the balances it observes in balances (projections.NewBalances()), dated
// by clock. Settings not given here are the rooms' fields, with their
// defaults: Desk.Wait (read-your-writes) and Desk.Timeout,
// Trader.Activity (the System), Scheduler.ABP, Scheduler.Rates,
// Scheduler.OnError and the schedule. Register Projections with the
// runner before the replay, then Scheduler.Start.
func New(store domain.EventStore, exchange func(name string) (domain.Exchange, error), config ConfigSource, balances BalanceBook, clock domain.Clock) *Engine {
	desk := &Desk{Store: store, Exchange: exchange, Clock: clock, Timeout: DefaultTimeout,
		orders: NewOrders(store), balances: balances, attention: &Attention{}}
	sys := &System{Config: config, Exchange: exchange}
	rec := &Reconciler{desk: desk}
	tr := &Trader{Activity: sys, desk: desk, reconciler: rec, keys: keyClaims{orders: desk.orders}}
	em := &Emulator{desk: desk}
	acc := &AccountSync{desk: desk}
	sc := NewScheduler()
	sc.System, sc.Clock = sys, clock
	sc.Orders = orderSide{tr, em, rec, desk.orders}
	sc.Sync = acc.Sync
	return &Engine{System: sys, Desk: desk, Orders: desk.orders, Balances: desk.balances, Attention: desk.attention,
		Trader: tr, Reconciler: rec, Emulator: em, Accounts: acc, Scheduler: sc}
}

// Projections are the engine's read models, to register with the
// projection runner before the replay: the System (started or stopped),
// Orders (the order state), the BalanceBook and Attention.
func (e *Engine) Projections() []Projection {
	return []Projection{e.System, e.Orders, e.Balances, e.Attention}
}

// Projection is a read model the projection runner feeds
// (projections.Projection).
type Projection interface {
	Name() string
	Apply(*domain.Event) error
}

// Close stops the scheduler's loop.
func (e *Engine) Close() error { return e.Scheduler.Close() }

// orderSide is the order side as the Scheduler drives it: strategy orders
// to the Trader, ticks to the Emulator, reconciliation to the Reconciler,
// a pair's open orders from Orders.
type orderSide struct {
	trader     *Trader
	emulator   *Emulator
	reconciler *Reconciler
	orders     *Orders
}

func (s orderSide) Submit(ctx context.Context, req domain.OrderRequest) (int64, error) {
	return s.trader.Submit(ctx, req)
}

func (s orderSide) OnTicker(ctx context.Context, exchange string, t domain.Ticker) error {
	return s.emulator.OnTicker(ctx, exchange, t)
}

func (s orderSide) Reconcile(ctx context.Context, exchange string) error {
	return s.reconciler.Reconcile(ctx, exchange)
}

func (s orderSide) OpenOrderList(exchange, pair string) []domain.OpenOrder {
	return s.orders.OpenOrderList(exchange, pair)
}
