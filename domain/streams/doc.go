// Package streams reads the ids in stream names and keys read models by
// them: StreamID and OrderStreamID parse the names domain.OrderStream and
// domain.OcoStream write, and StreamMap holds a value per stream, an order
// stream by its id, so that a read model of millions of orders neither
// hashes nor keeps their names. Standard library only.
package streams
