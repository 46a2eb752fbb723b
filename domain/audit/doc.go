// Package audit is what proves a log untampered: the per-stream hash chains
// a store extends on append (StreamTip, Chain), the RFC 6962 Merkle tree over
// the whole log (TreeFrontier, TreeStore, FindRecord), and the Verifier and
// VerifyLog that recompute both from the events and report every faulty
// event, not only the first. It reads the log through domain.EventStore and
// writes nothing; like domain it is standard library only and does no I/O of
// its own.
package audit
