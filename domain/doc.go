// Package domain holds Tradeledger's nouns and rules: the event envelope and
// payloads, the order state machine, the configuration model, PNL math,
// errors, and the interfaces the adapters implement (EventStore, Exchange,
// Clock). It imports the standard library only; everything that touches a
// disk, a network or a dependency lives in an adapter package.
package domain
