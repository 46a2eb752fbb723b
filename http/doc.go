// Package http serves the control API and the dashboard with gorilla/mux.
//
// Server keeps the listeners (the main one and the files listener, which
// serves the login, configuration and file routes alone), the router and
// its middleware — requestBasics (a request id, the body read whole within
// MaxBodyBytes and BodyTimeout, panic recovery, one log line), requireToken
// (a bearer token or the dashboard's session cookie, and the scope the
// route needs), singleValuedQuery, CORS — and the one error mapping: Error
// answers a domain.Error with the status its code maps to (EINVALID 400,
// EUNAUTHORIZED 401, EFORBIDDEN 403, ENOTFOUND 404, ECONFLICT 409,
// ETOOLARGE 413, EMEDIATYPE 415, ETOOMANY 429, EUNAVAILABLE 503, anything
// else 500 with its details only in the log) and the body
// {"status":"error","message":…,"code":…}.
//
// Each resource group is a handler type in a file of its own (tradeHandler
// in trade.go, ordersHandler in orders.go, pnlHandler in pnl.go, …). It
// depends only on the narrow interfaces that file declares — the queries
// it reads (OrderHistory, PnlReader, MarketReader, FileStore, …) and the
// commands it sends (OrderPlacer; the configuration, file, system, paper
// and login writes are eventstore.Run commands on the server's command
// path) — and its register method names its routes. Every handler is a
// handlerFunc: it parses and validates, calls, encodes, and returns its
// error, which the one adapter writes with Error. Handlers never build
// events: the decide functions of domain do.
//
// cmd/tradeledger fills the Server's dependencies — interfaces declared
// here (LedgerReader, PastStates, Trader, CoreReader, ConfigReader,
// FileStore, PasswordReader, ProjectionRunner, Reconciler,
// TransparencyLog, …), which the read models of projections and the
// engine's rooms satisfy — then calls Open. Handler and FilesHandler
// build the handler types from them in one place (routes.go): set the
// dependencies first. A missing dependency leaves its routes answering 503
// with a message that names it. This package imports projections for
// value types only (order records and cursors, the order list's filter,
// a snapshot's description).
package http
