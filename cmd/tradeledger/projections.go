package main

import (
	"github.com/tradeledger/tradeledger/projections"
)

// serveModels are the read models serve makes itself; the others are
// Main's components (metrics, the simulator, the engine, the transparency
// log, the webhooks).
type serveModels struct {
	ledger    *projections.Ledger
	orderList *projections.OrderList
	passwords *projections.Password
	tokens    *projections.Tokens
	config    *projections.Config
	files     *projections.Files
	accounts  *projections.Accounts
	activity  *activityLog
}

// projectionList is every projection serve keeps, wherever it lives, in
// the order the runner applies them: the one place they are registered
// (registerProjections). docs/architecture.md lists them; TestProjectionList
// keeps that list true.
func (m *Main) projectionList(rm serveModels) []projections.Projection {
	list := []projections.Projection{
		m.Metrics,    // projections/metrics: orders and failed logins counted from the log
		rm.ledger,    // projections: order records, pages, days, PNL, assets, chart marks
		rm.orderList, // projections: every order of any state (orders/all)
		rm.passwords, // projections: the login password's hash and generation
		rm.tokens,    // projections: scoped API tokens
		m.Simulator,  // exchange/paper: paper balances and resting orders
	}
	// exchange/engine: the system (started or stopped), the order state,
	// the balances observed, the orders that need attention.
	for _, p := range m.Engine.Projections() {
		list = append(list, p)
	}
	return append(list,
		m.Tlog,      // eventstore/transparency: the last signed checkpoint
		rm.config,   // projections: the configuration and stored credentials
		rm.files,    // projections: stored files and backups
		rm.accounts, // projections: the exchange accounts' implied balances, discrepancies, sync cursors
		m.Webhooks,  // projections/webhook: chosen events sent out
		rm.activity, // cmd/tradeledger: one log line per thing that happens
	)
}

// registerProjections registers every projection with the runner, before
// the replay.
func (m *Main) registerProjections(rm serveModels) {
	m.projections = m.projectionList(rm)
	for _, p := range m.projections {
		m.Runner.Register(p)
	}
}
