package domain

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// Hash is a SHA-256 digest, shown as lowercase hex in JSON.
type Hash [32]byte

// String returns the digest as lowercase hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText implements encoding.TextMarshaler.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts 64 hex digits.
func (h *Hash) UnmarshalText(b []byte) error {
	if len(b) != 64 {
		return fmt.Errorf("hash: want 64 hex digits, got %d characters", len(b))
	}
	_, err := hex.Decode(h[:], b)
	return err
}

// Event is the envelope every fact in the log travels in.
//
// The writer sets ID, Stream, Type, Schema, Time, Actor, Correlation and Data.
// The store sets Version (position in the stream, from 0), Position (global,
// assigned at commit, increasing but not necessarily dense), PrevHash and
// Hash. Data is compact JSON; amounts and prices inside it are decimal
// strings.
type Event struct {
	ID          string          `json:"id"`
	Stream      string          `json:"stream"`
	Version     int64           `json:"version"`
	Position    uint64          `json:"position"`
	Type        string          `json:"type"`
	Schema      int             `json:"schema"`
	Time        int64           `json:"time"`
	Actor       string          `json:"actor"`
	Correlation string          `json:"correlation,omitempty"`
	Data        json.RawMessage `json:"data"`
	PrevHash    Hash            `json:"prevHash"`
	Hash        Hash            `json:"hash"`

	// decoded is Data already decoded by Predecode (nil if not): a
	// *OrderRequested, *OrderFilled or *OrderAccepted. Never written after
	// the event is shared.
	decoded any
}

// Actors that are not token subjects.
const (
	ActorCore   = "core"
	ActorImport = "import"
	ActorCLI    = "cli"
)

// NewEvent returns an event of the given type with a fresh UUIDv7 id, the
// clock's time and data marshalled to JSON. It panics only if data cannot be
// marshalled, which is a programming error for the payload types of this
// package.
func NewEvent(clock Clock, typ string, data any) Event {
	now := clock.Now()
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("marshal %s payload: %v", typ, err))
	}
	return Event{ID: NewEventID(now), Type: typ, Schema: 1, Time: now.UnixMilli(), Data: b}
}

// Decode unmarshals the event's payload into v, with an EINVALID error that
// names the event when the payload does not fit.
func (e *Event) Decode(v any) error { return e.DecodeInterned(v, nil) }

// DecodeInterned is Decode for read models: with an Interner, the hot
// payload types decode as DecodeOrderRequested and DecodeOrderFilled do with
// one (strings interned, the ids read models do not use left empty). After
// Predecode it copies Predecode's result instead, ids included, strings
// interned by Predecode's Interner. Nil in is Decode.
func (e *Event) DecodeInterned(v any, in jsonscan.Interner) error {
	if e.decoded != nil && copyDecoded(e.decoded, v) {
		return nil
	}
	fast, err := decodeFast(e.Data, v, in)
	if !fast {
		err = json.Unmarshal(e.Data, v)
	}
	if err != nil {
		return Errorf(EINVALID, "event %s/%d (%s): bad payload: %v", e.Stream, e.Version, e.Type, err)
	}
	return nil
}

// Payload returns e's payload as a *T: Predecode's result when it is one
// (shared: read it, do not change it), else newly decoded (EINVALID when
// it does not decode, as Decode). Read models use it so that a replayed,
// predecoded event costs no allocation.
func Payload[T any](e *Event) (*T, error) {
	if p, ok := e.decoded.(*T); ok {
		return p, nil
	}
	p := new(T)
	return p, e.Decode(p)
}

// PayloadInterned is Payload for read models that intern: a payload that
// was not predecoded decodes as DecodeInterned does with in.
func PayloadInterned[T any](e *Event, in jsonscan.Interner) (*T, error) {
	if p, ok := e.decoded.(*T); ok {
		return p, nil
	}
	p := new(T)
	return p, e.DecodeInterned(p, in)
}

// NewEventID returns a UUIDv7 (RFC 9562) for time t: 48 bits of Unix
// milliseconds, then random bits. Ids from one process sort by creation time
// to the millisecond. t is the caller's clock (NewEvent passes the injected
// one), which google/uuid's NewV7 cannot take: it reads time.Now. The
// eventstore tests check these ids against google/uuid's parser.
func NewEventID(t time.Time) string {
	var u [16]byte
	if _, err := rand.Read(u[6:]); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(u[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(u[2:6], uint32(ms))
	return FormatUUID(u, 7)
}

// FormatUUID returns u as a UUID of the given version (RFC 9562): its
// version nibble set to version, its variant bits to the RFC's (10), in the
// lowercase 8-4-4-4-12 hex form. Every UUID the module makes goes through
// it: NewEventID (version 7), DerivedEventID and the Gunbot import's ids
// (version 8, from a hash).
func FormatUUID(u [16]byte, version byte) string {
	u[6] = version<<4 | (u[6] & 0x0f)
	u[8] = 0x80 | (u[8] & 0x3f)
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	hex.Encode(s[9:13], u[4:6])
	hex.Encode(s[14:18], u[6:8])
	hex.Encode(s[19:23], u[8:10])
	hex.Encode(s[24:36], u[10:16])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}

// ComputeHash returns the event's chain hash:
//
//	SHA-256(prevHash || canonical JSON of the envelope without hash and position)
//
// The canonical JSON is, byte for byte,
//
//	{"id":…,"stream":…,"version":N,"type":…,"schema":N,"time":N,"actor":…,"correlation":…,"data":DATA,"prevHash":"hex"}
//
// with strings escaped as encoding/json escapes them and DATA the stored
// (compact) payload bytes. The position is left out because a remote store
// assigns it only at commit.
func ComputeHash(e *Event) Hash {
	// The envelope around the payload is about 350 bytes; small events
	// hash without a heap allocation.
	var stack [1024]byte
	buf := append(stack[:0], e.PrevHash[:]...)
	buf = AppendCanonical(buf, e)
	return sha256.Sum256(buf)
}

// AppendCanonical appends the canonical JSON of e (see ComputeHash) to buf.
func AppendCanonical(buf []byte, e *Event) []byte {
	buf = append(buf, `{"id":`...)
	buf = AppendJSONString(buf, e.ID)
	buf = append(buf, `,"stream":`...)
	buf = AppendJSONString(buf, e.Stream)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, e.Version, 10)
	buf = append(buf, `,"type":`...)
	buf = AppendJSONString(buf, e.Type)
	buf = append(buf, `,"schema":`...)
	buf = strconv.AppendInt(buf, int64(e.Schema), 10)
	buf = append(buf, `,"time":`...)
	buf = strconv.AppendInt(buf, e.Time, 10)
	buf = append(buf, `,"actor":`...)
	buf = AppendJSONString(buf, e.Actor)
	buf = append(buf, `,"correlation":`...)
	buf = AppendJSONString(buf, e.Correlation)
	buf = append(buf, `,"data":`...)
	if len(e.Data) == 0 {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, e.Data...)
	}
	buf = append(buf, `,"prevHash":"`...)
	buf = hex.AppendEncode(buf, e.PrevHash[:])
	buf = append(buf, `"}`...)
	return buf
}

// AppendJSONString appends s as a JSON string, escaped exactly as
// encoding/json escapes it (HTML characters included): event hashes depend
// on these bytes.
func AppendJSONString(buf []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			simple = false
			break
		}
	}
	if simple {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"')
	}
	b, _ := json.Marshal(s)
	return append(buf, b...)
}

// ExpectedVersion is the optimistic-concurrency condition of an append:
// Any, NoStream, StreamExists, or the exact version (≥ 0) of the stream's
// last event.
type ExpectedVersion int64

// Expected-version conditions other than an exact version.
const (
	Any          ExpectedVersion = -1
	NoStream     ExpectedVersion = -2
	StreamExists ExpectedVersion = -3
)

// String names the condition for error messages.
func (v ExpectedVersion) String() string {
	switch v {
	case Any:
		return "any"
	case NoStream:
		return "no stream"
	case StreamExists:
		return "stream exists"
	}
	return "version " + strconv.FormatInt(int64(v), 10)
}

// Check returns nil if the condition holds for a stream whose last event
// has version current (-1: the stream does not exist), else an ECONFLICT
// error naming both; every store checks appends with it.
func (v ExpectedVersion) Check(stream string, current int64) error {
	switch {
	case v == Any:
		return nil
	case v == NoStream && current == -1:
		return nil
	case v == StreamExists && current >= 0:
		return nil
	case v >= 0 && int64(v) == current:
		return nil
	}
	have := "no stream"
	if current >= 0 {
		have = "version " + strconv.FormatInt(current, 10)
	}
	return Errorf(ECONFLICT, "append to %s: expected %s, stream is at %s", stream, v, have)
}

// AppendResult says where an append's events landed.
type AppendResult struct {
	FirstVersion int64  // stream version of the first appended event
	LastVersion  int64  // stream version of the last appended event
	LastPosition uint64 // global position of the last appended event
}

// EventIterator walks events. Next advances and reports whether an event is
// available; Event returns it; Err reports the error that ended iteration, if
// any; Close releases resources and must be called.
type EventIterator interface {
	Next() bool
	Event() Event
	Err() error
	Close() error
}

// BatchIterator is an EventIterator that can also hand over many events at
// once, which saves a replay a copy per event. NextBatch appends up to max
// events to dst and returns it; at the end, or on an error (see Err), it
// returns dst unchanged.
type BatchIterator interface {
	EventIterator
	NextBatch(dst []Event, max int) []Event
}

// EventStore is the append-only log. Every implementation passes
// the conformance suite in eventstore/storetest.
type EventStore interface {
	// Append writes events to the end of stream if expected holds, and
	// returns once they are durable. A condition that does not hold is an
	// ECONFLICT error. Re-appending events whose ids are already in the
	// stream (a retry) writes nothing and returns the original result. An
	// unavailable backend is EUNAVAILABLE. Events must have ids and types;
	// the store sets Stream, Version, Position, PrevHash and Hash.
	Append(ctx context.Context, stream string, expected ExpectedVersion, events ...Event) (AppendResult, error)

	// ReadStream reads stream's events from version from (inclusive), at
	// most max of them (max ≤ 0: all). A stream that does not exist reads
	// as empty.
	ReadStream(ctx context.Context, stream string, from int64, max int) EventIterator

	// ReadAll reads every stream's events in commit order, from global
	// position from (inclusive), at most max of them (max ≤ 0: all).
	ReadAll(ctx context.Context, from uint64, max int) EventIterator

	// Subscribe delivers every event with position ≥ from in commit order:
	// first those already stored, then new ones as they commit, with no
	// gaps and no duplicates, however slowly the caller consumes. Next
	// blocks until an event arrives or ctx ends (then Err is ctx's error).
	Subscribe(ctx context.Context, from uint64) EventIterator

	// Head returns the position of the last committed event (0 when empty).
	Head(ctx context.Context) (uint64, error)

	// Close releases the store; pending appends fail with EUNAVAILABLE.
	Close() error
}

// PrepareAppend checks an append's arguments as the EventStore contract
// requires (a stream name, at least one event, a known expectation, events
// with ids and types, no id twice, JSON data) and returns copies of the
// events with compact data ("{}" when empty); the caller's slice is left
// untouched. Every store calls it first; a violation is EINVALID.
func PrepareAppend(stream string, expected ExpectedVersion, events []Event) ([]Event, error) {
	return PrepareAppendTo(nil, stream, expected, events)
}

// smallAppend is the most events an append checks for a repeated id by
// comparing every pair, without a map.
const smallAppend = 8

// PrepareAppendTo is PrepareAppend, the copies appended to dst (whose
// backing array a store may keep per request, so that the common one-event
// append allocates nothing here). A violation returns nil and the
// EINVALID error.
func PrepareAppendTo(dst []Event, stream string, expected ExpectedVersion, events []Event) ([]Event, error) {
	if stream == "" {
		return nil, Errorf(EINVALID, "append: empty stream name")
	}
	if len(events) == 0 {
		return nil, Errorf(EINVALID, "append to %s: no events", stream)
	}
	if expected < StreamExists {
		return nil, Errorf(EINVALID, "append to %s: bad expected version %d", stream, expected)
	}
	if cap(dst) < len(events) {
		dst = make([]Event, 0, len(events))
	}
	dst = dst[:0]
	var seen map[string]bool // only for appends of more than smallAppend events
	if len(events) > smallAppend {
		seen = make(map[string]bool, len(events))
	}
	var buf bytes.Buffer
	for i, e := range events {
		if e.ID == "" || e.Type == "" {
			return nil, Errorf(EINVALID, "append to %s: event %d has no id or type", stream, i)
		}
		twice := false
		if seen != nil {
			twice = seen[e.ID]
			seen[e.ID] = true
		} else {
			for j := range i {
				if events[j].ID == e.ID {
					twice = true
					break
				}
			}
		}
		if twice {
			return nil, Errorf(EINVALID, "append to %s: event id %s twice in one append", stream, e.ID)
		}
		switch {
		case len(e.Data) == 0:
			e.Data = json.RawMessage("{}")
		case jsonscan.FlatObject(e.Data, nil): // valid and compact already
		default:
			buf.Reset()
			if err := json.Compact(&buf, e.Data); err != nil {
				return nil, Errorf(EINVALID, "append to %s: event %s data is not valid JSON", stream, e.ID)
			}
			if buf.Len() != len(e.Data) {
				e.Data = bytes.Clone(buf.Bytes())
			}
		}
		dst = append(dst, e)
	}
	return dst, nil
}
