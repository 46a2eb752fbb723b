package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain"
)

// The events table keeps each envelope (all but its position) in one
// `record` blob, next to the few columns that are indexed. Reading two
// columns instead of twelve is what makes replay fast: with cgo, every
// column costs calls and copies, and the record decodes in Go with two
// allocations.
//
// Record layout, version 1:
//
//	byte    1 (layout version)
//	uvarint len + bytes  stream, id, type, actor, correlation
//	varint  version, schema, time
//	uvarint len + bytes  data
//	32 bytes prevHash, 32 bytes hash
const recordVersion = 1

var errBadRecord = errors.New("malformed event record")

// appendRecord encodes e (without its position) onto buf.
func appendRecord(buf []byte, e *domain.Event) []byte {
	buf = append(buf, recordVersion)
	for _, s := range [...]string{e.Stream, e.ID, e.Type, e.Actor, e.Correlation} {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	buf = binary.AppendVarint(buf, e.Version)
	buf = binary.AppendVarint(buf, int64(e.Schema))
	buf = binary.AppendVarint(buf, e.Time)
	buf = binary.AppendUvarint(buf, uint64(len(e.Data)))
	buf = append(buf, e.Data...)
	buf = append(buf, e.PrevHash[:]...)
	return append(buf, e.Hash[:]...)
}

// recordData returns the payload inside rec, a record whose event's
// payload is n bytes long: it ends where the two hashes begin.
func recordData(rec []byte, n int) []byte {
	end := len(rec) - 64
	return rec[end-n : end : end]
}

// recordSize is the length of e's record once its stream is stream (an
// upper bound: its version and time varints counted at their widest, since
// a seal may still change them).
func recordSize(e *domain.Event, stream string) int {
	n := 1 + len(stream) + len(e.ID) + len(e.Type) + len(e.Actor) + len(e.Correlation) + len(e.Data)
	for _, l := range [...]int{len(stream), len(e.ID), len(e.Type), len(e.Actor), len(e.Correlation), len(e.Data)} {
		n += uvarintLen(uint64(l))
	}
	return n + 2*binary.MaxVarintLen64 + uvarintLen(uint64(e.Schema)<<1) + 64
}

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// recordArena hands out the record buffers of an AppendBatch's seals from
// blocks of at least recordArenaBlock bytes instead of one allocation each.
// A block is kept alive by any of its records, which live as long as their
// events anyway (the recent window, a subscriber's batch).
type recordArena struct{ free []byte }

const recordArenaBlock = 1 << 20

// take returns an empty slice with room for n bytes.
func (a *recordArena) take(n int) []byte {
	if cap(a.free)-len(a.free) < n {
		a.free = make([]byte, 0, max(n, recordArenaBlock))
	}
	b := a.free[len(a.free) : len(a.free) : len(a.free)+n]
	a.free = a.free[:len(a.free)+n]
	return b
}

// decodeRecord decodes a record into e. The strings and Data of e share one
// copy of rec but its hashes (one allocation per event on the replay path),
// so rec may be reused after the call; that copy is never written again,
// which is what makes the strings over it sound.
func decodeRecord(rec []byte, e *domain.Event) error {
	if len(rec) < 1+64 || rec[0] != recordVersion {
		return errBadRecord
	}
	end := len(rec) - 64 // the hashes, copied into e's arrays
	copy(e.PrevHash[:], rec[end:end+32])
	copy(e.Hash[:], rec[end+32:])
	return decodeRecordBody(rec[:end], e)
}

// decodeRecordBody decodes a record without its two hashes (its last 64
// bytes, which a replay does not copy out of the file) into e, whose
// hashes it leaves as they are. Like decodeRecord, e shares one copy of
// rec.
func decodeRecordBody(rec []byte, e *domain.Event) error {
	if len(rec) < 1 || rec[0] != recordVersion {
		return errBadRecord
	}
	return decodeRecordIn(bytes.Clone(rec), e)
}

// decodeRecordIn is decodeRecordBody without the copy: e's strings and
// Data point into rec, which must never be written again.
func decodeRecordIn(rec []byte, e *domain.Event) error {
	if len(rec) < 1 || rec[0] != recordVersion {
		return errBadRecord
	}
	s := unsafe.String(unsafe.SliceData(rec), len(rec))
	i := 1
	// Lengths below 128 (every string but a long payload) and small
	// numbers are one byte: read without binary's loop.
	str := func() (string, bool) {
		var n uint64
		var w int
		if i < len(rec) && rec[i] < 0x80 {
			n, w = uint64(rec[i]), 1
		} else {
			n, w = binary.Uvarint(rec[i:])
		}
		if w <= 0 || n > uint64(len(rec)-i-w) {
			return "", false
		}
		i += w
		v := s[i : i+int(n)]
		i += int(n)
		return v, true
	}
	num := func() (int64, bool) {
		if i < len(rec) && rec[i] < 0x80 {
			u := uint64(rec[i])
			i++
			return int64(u>>1) ^ -int64(u&1), true // zigzag, as binary.Varint
		}
		v, w := binary.Varint(rec[i:])
		if w <= 0 {
			return 0, false
		}
		i += w
		return v, true
	}
	var ok [9]bool
	e.Stream, ok[0] = str()
	e.ID, ok[1] = str()
	e.Type, ok[2] = str()
	e.Actor, ok[3] = str()
	e.Correlation, ok[4] = str()
	e.Version, ok[5] = num()
	var schema int64
	schema, ok[6] = num()
	e.Schema = int(schema)
	e.Time, ok[7] = num()
	n, w := binary.Uvarint(rec[i:])
	ok[8] = w > 0 && n <= uint64(len(rec)-i-w)
	if ok[8] {
		i += w
		e.Data = rec[i : i+int(n) : i+int(n)]
		i += int(n)
	}
	for _, good := range ok {
		if !good {
			return errBadRecord
		}
	}
	if i != len(rec) {
		return errBadRecord
	}
	return nil
}
