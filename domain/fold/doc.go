// Package fold is the one PNL fold: lot matching (domain.Lots), fee
// valuation and currency conversion, run the same way by every PNL reader —
// the in-memory Ledger (projections), the ClickHouse sink and reader
// (projections/clickhouse) and the books (domain/books) —, so that the
// same log gives the same figures on every page and reader. It imports the
// standard library and domain only.
//
// Input. The fold takes plain values (Fill): a pair, a side, a price, a
// quantity, a fee as charged, an order, a trade time and a log position,
// whatever event recorded them: a fill of one of the service's orders, or
// a trade placed on the exchange by hand (order 0, which counts as an
// order of its own). The account's movements of coins without a trade of
// the pair — deposits, withdrawals, conversions — are Movements the pair
// keeps itself and folds among its fills by the same lots (move.go);
// Pairs routes them to pairs and matches transfers between accounts
// (flows.go). One fold, whatever recorded the facts.
//
// Trade time. Each pair's fills are folded in trade-time order: the
// exchange's time of the trade, then the log position (Key). A fill in
// that order is folded at once (Pair.Next); one recorded late — an import
// of an older history into a live log, a fill the exchange reports after
// later ones — is put in its place by its owner (a Journal), which marks the
// pair dirty (Pair.Late) and folds it again from its nearest restart point
// before the late fill (Refold) before it answers; so is every pair whose
// figures depend on a rate recorded late (Pairs.RatePoint). The events are
// never rewritten: only what was derived from them. Rates (RateBook) are
// every rate of the log, at their own times, so any order of arrival
// gives the same figures.
//
// The books. The realized-gains report, statements and exports
// (domain/books) fold each pool of lots once, in trade-time order, under
// the method their request names, with the same rules (Traced, trace.go:
// Pair.trade and moveLots, each lot dated and referenced so that a
// disposal lists the lots it consumed): one lot walk in the module.
//
// Aggregates. Every fill adds to a 15-minute slot of its pair (Series,
// PnlAgg.Add), and, converted at the rates of its time, to its pair's
// figures in other currencies (ConvSeries); the readers answer from those
// slots the same way (Days, Total, Detail, Mixed).
package fold
