// Package domain holds Tradeledger's nouns and rules: the event envelope and
// payloads, the aggregates (orders, OCOs, accounts, configuration) and the
// decide functions that check a command against them and return events,
// errors, and the interfaces the adapters implement (EventStore, Exchange,
// Clock). It imports the standard library and its own sub-packages only;
// everything that touches a disk, a network or a dependency lives in an
// adapter package. What is not the trading domain has a sub-package of its
// own: the number (domain/decimal), JSON scanning (domain/jsonscan),
// credentials (domain/secrets), the log's proofs (domain/audit), lot
// matching (domain/pnlmath), the PNL read contract (domain/pnlread) and the
// trading algorithms (domain/strategy).
package domain
