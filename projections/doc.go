// Package projections holds the read models fed from the log, and the Runner
// that keeps them caught up. Projections are in memory, exact (decimal
// arithmetic) and rebuilt at start by replaying the log.
//
// Contracts every read model here keeps:
//
//   - Fed by one Runner from one subscription, each event to every
//     projection in the order cmd/tradeledger registers them
//     (projectionList), in commit order. A projection's state is its own:
//     none reads another's. Time comes from the events, never from
//     time.Now(), so the same log gives the same state byte for byte.
//   - Read-your-writes: a command waits for Runner.WaitFor the position of
//     its last append before it answers (eventstore.Run; the engine once, at
//     the end of a trade).
//   - The Ledger (orders.go, ledgerfold.go) folds each pair's
//     fills — the service's, trades placed by hand (domain.ExternalFill) and the
//     accounts' deposits, withdrawals and conversions — through domain/fold
//     in trade time. A fill recorded late makes its pair dirty until the next
//     read or snapshot settles it: the events are never rewritten, and any
//     order of arrival gives the same figures. The Ledger is domain/books'
//     Source.
//   - Past states are rebuilt one way only, BuildState over a cut of the log
//     (replay, restore, export and the API's asOf=); States keeps recent ones
//     and bounds the builds the API may start (BusyError: 503 with
//     Retry-After).
//   - Every projection is a Snapshotter; a read-model snapshot is a cache,
//     never evidence (DESIGN §16): Snapshots loads only one whose signature,
//     sums, versions and Merkle root at its position check, and Check
//     compares one with a rebuild from the log (snapshot.go, snapdir.go,
//     snapcheck.go).
package projections
