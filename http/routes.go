package http

import (
	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// resources are the server's handler types, one per resource group, each
// given only the parts of the Server's dependencies it reads (the
// interfaces its file declares) and, for writes, the server's command
// path. A nil dependency leaves its routes answering 503. They are built
// when Handler or FilesHandler is called: set the dependencies first.
type resources struct {
	time      *timeHandler
	trade     *tradeHandler
	balances  *balancesHandler
	pairs     *pairsHandler
	orders    *ordersHandler
	orderList *orderListHandler
	pnl       *pnlHandler
	assets    *assetsHandler
	books     *booksHandler
	marks     *marksHandler
	market    *marketHandler
	coreMem   *coreMemoryHandler
	system    *systemHandler
	config    *configHandler
	license   *licenseHandler
	files     *filesHandler
	audit     *auditHandler
	tlog      *tlogHandler
	witnesses *witnessesHandler
	reconcile *reconcileHandler
	paper     *paperHandler
	logins    *loginHandler
	health    *healthHandler
	dashboard *dashboardHandler
	ops       *opsHandler
	fleet     *fleetHandler
}

// resources builds the handler types from the Server's dependencies.
func (s *Server) resources() *resources {
	// The command path on the server's store, waiting on its projections
	// (read-your-writes), with the server's commands on one stream run
	// one at a time (eventstore.StreamLocks); nil (EUNAVAILABLE from
	// eventstore.Run) without either. The actor and correlation of the
	// events come from the request's context: requestBasics puts the
	// request id there, requireToken and the logins the subject.
	var cmds *eventstore.Commands
	if s.Store != nil && s.Runner != nil {
		cmds = eventstore.NewCommands(s.Store, s.Runner)
		cmds.Serial = &s.streams
	}
	// asOf and method over the past states, the clock and the live lot
	// matching.
	past := pastReads{clock: s.Clock, states: s.States, live: s.Ledger}
	// One login limiter for both listeners.
	if s.Logins == nil {
		s.Logins = NewLoginLimiter()
	}
	// RealConnector is asked at each configuration write, so that it may
	// be set after the handlers are built; false without it.
	realConnector := func(cfg domain.Config, exchange string) bool {
		return s.RealConnector != nil && s.RealConnector(cfg, exchange)
	}
	pnl := pnlReaders(s.Pnl, s.Ledger)
	open, _ := s.Trader.(OpenOrderLister)
	verifier := s.Verifier
	if verifier == nil {
		verifier = chainVerifier{store: s.Store}
	}
	configs := &configWriter{config: s.Config, secrets: s.Secrets, cmds: cmds, clock: s.Clock, realConnector: realConnector}
	return &resources{
		time:      &timeHandler{clock: s.Clock},
		trade:     &tradeHandler{trader: s.Trader},
		balances:  &balancesHandler{live: s.Trader, past: past},
		pairs:     &pairsHandler{markets: s.Trader},
		orders:    &ordersHandler{history: s.Ledger, open: open, clock: s.Clock},
		orderList: &orderListHandler{index: s.OrderList, log: s.Store, fills: s.Ledger},
		pnl:       &pnlHandler{reader: pnl, past: past},
		assets:    &assetsHandler{reader: pnl},
		books:     &booksHandler{books: s.Ledger, past: past},
		marks:     &marksHandler{marks: s.Ledger},
		market:    &marketHandler{market: s.Core, config: s.Config},
		coreMem:   &coreMemoryHandler{memory: s.Core},
		system:    &systemHandler{core: s.Core, config: s.Config, log: s.Store, cmds: cmds, clock: s.Clock},
		config:    &configHandler{w: configs},
		license:   &licenseHandler{w: configs, verifyKeys: s.VerifyKeys},
		files:     &filesHandler{files: s.Files, cmds: cmds, clock: s.Clock},
		audit:     &auditHandler{audit: s.Audit, log: s.Store, verify: verifier},
		tlog:      &tlogHandler{tlog: s.Tlog, witnesses: s.Witnesses},
		witnesses: &witnessesHandler{witnesses: s.Witnesses},
		reconcile: &reconcileHandler{reconciler: s.Reconciler, exchanges: s.Config, past: past},
		paper:     &paperHandler{paper: s.Paper, exchanges: s.Config, cmds: cmds, clock: s.Clock},
		logins: &loginHandler{auth: s.Auth, passwords: s.Passwords, wallet: s.Wallet, logins: s.Logins,
			clientHost: s.clientHost, cmds: cmds, clock: s.Clock},
		health: &healthHandler{store: s.Store, runner: s.Runner, tlog: s.Tlog, sink: s.Sink, connectors: s.Connectors,
			attention: s.Attention, reconciler: s.Reconciler, witnesses: s.Witnesses, snapshotCheck: s.SnapshotCheck},
		dashboard: &dashboardHandler{csp: dashboardCSP(s.CORSOrigins)},
		ops:       &opsHandler{metrics: s.Metrics},
		fleet:     &fleetHandler{fleet: s.Fleet, defaults: s.Ledger, past: past},
	}
}
