package esdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/tradeledger/tradeledger/domain"
)

// metadata is the custom metadata of every event we write: the envelope
// fields that are neither the payload nor assigned by the server.
type metadata struct {
	ID          string      `json:"id,omitempty"` // only when the id is not a canonical UUID
	Actor       string      `json:"actor"`
	Correlation string      `json:"correlation,omitempty"`
	Schema      int         `json:"schema"`
	Time        int64       `json:"time"`
	PrevHash    domain.Hash `json:"prevHash"`
	Hash        domain.Hash `json:"hash"`
}

// idNamespace derives EventStoreDB ids for event ids that are not UUIDs.
var idNamespace = uuid.MustParse("8f5a3c0e-6f1b-4b7e-9a57-2f1d3c4b5a69")

// esdbID returns the EventStoreDB id for our id, and whether our id must
// travel in metadata because it is not a canonical UUID.
func esdbID(id string) (uuid.UUID, bool) {
	if u, err := uuid.Parse(id); err == nil && u.String() == id && u != uuid.Nil {
		return u, false
	}
	return uuid.NewSHA1(idNamespace, []byte(id)), true
}

// isSystem reports whether a recorded event belongs to the server.
func isSystem(stream, typ string) bool {
	return strings.HasPrefix(stream, "$") || strings.HasPrefix(typ, "$")
}

// skip reports whether a recorded event is not ours to return: a system
// event, or one outside the namespace.
func (s *Store) skip(r *esdb.RecordedEvent) bool {
	return isSystem(r.StreamID, r.EventType) || (s.Namespace != "" && !strings.HasPrefix(r.StreamID, s.Namespace))
}

// toEvent converts a recorded event. Events written by something other
// than this store (no metadata) keep what they have: time from the
// server's creation date, zero hashes.
func (s *Store) toEvent(r *esdb.RecordedEvent) domain.Event {
	e := domain.Event{
		ID:       r.EventID.String(),
		Stream:   strings.TrimPrefix(r.StreamID, s.Namespace),
		Version:  int64(r.EventNumber),
		Position: r.Position.Commit,
		Type:     r.EventType,
		Data:     json.RawMessage(r.Data),
	}
	var m metadata
	if len(r.UserMetadata) > 0 && json.Unmarshal(r.UserMetadata, &m) == nil {
		if m.ID != "" {
			e.ID = m.ID
		}
		e.Actor, e.Correlation, e.Schema, e.Time = m.Actor, m.Correlation, m.Schema, m.Time
		e.PrevHash, e.Hash = m.PrevHash, m.Hash
	} else {
		e.Time = r.CreatedDate.UnixMilli()
	}
	return e
}

// checkReserved refuses what EventStoreDB reserves for itself: stream
// names and event types starting with $.
func checkReserved(stream string, events []domain.Event) error {
	if strings.HasPrefix(stream, "$") {
		return domain.Errorf(domain.EINVALID, "append to %s: stream names starting with $ are reserved", stream)
	}
	for _, e := range events {
		if strings.HasPrefix(e.Type, "$") {
			return domain.Errorf(domain.EINVALID, "append to %s: event types starting with $ are reserved", stream)
		}
	}
	return nil
}

// Append implements domain.EventStore (see the package doc for how the
// chain, conflicts and retries map onto EventStoreDB).
func (s *Store) Append(ctx context.Context, stream string, expected domain.ExpectedVersion, events ...domain.Event) (domain.AppendResult, error) {
	defer s.observeSince(time.Now())                              // observe.go
	events, err := domain.PrepareAppend(stream, expected, events) // copies: the caller's slice stays untouched
	if err != nil {
		return domain.AppendResult{}, err
	}
	if err := checkReserved(stream, events); err != nil {
		return domain.AppendResult{}, err
	}
	unlock := s.locks.lock(stream)
	defer unlock()
	if res, dup, err := s.cachedRetry(stream, events); dup || err != nil {
		return res, err
	}
	for attempt := 0; ; attempt++ {
		res, err := s.appendOnce(ctx, stream, expected, events)
		if domain.ErrorCode(err) == errRaced {
			if (expected == domain.Any || expected == domain.StreamExists) && attempt < s.MaxAppendRetries {
				continue
			}
			return domain.AppendResult{}, domain.Errorf(domain.ECONFLICT, "append to %s: a concurrent writer moved the stream (expected %s)", stream, expected)
		}
		return res, err
	}
}

// cachedRetry answers an append whose ids the cache knows.
func (s *Store) cachedRetry(stream string, events []domain.Event) (domain.AppendResult, bool, error) {
	var res domain.AppendResult
	found := 0
	for i, e := range events {
		c, ok := s.ids.get(e.ID)
		if !ok {
			continue
		}
		if c.stream != stream {
			return res, false, domain.Errorf(domain.ECONFLICT, "event id %s is already in stream %s", e.ID, c.stream)
		}
		if i == 0 {
			res.FirstVersion = c.version
		}
		res.LastVersion, res.LastPosition = c.version, c.position
		found++
	}
	switch {
	case found == 0:
		return res, false, nil
	case found < len(events):
		return res, false, domain.Errorf(domain.ECONFLICT, "append to %s: %d of %d event ids already stored", stream, found, len(events))
	case res.LastPosition == 0:
		return res, false, nil // position not remembered: the tail scan finds it
	}
	return res, true, nil
}

// errRaced marks a wrong-expected-version reply to the revision we read.
const errRaced = "raced"

// head is what Append learns from the stream's tail: version -1 for no
// stream, and the hash recomputed from the last event (domain.TipOf), never
// the hash its metadata claims.
type head = domain.StreamTip

func (s *Store) appendOnce(ctx context.Context, stream string, expected domain.ExpectedVersion, events []domain.Event) (domain.AppendResult, error) {
	c, err := s.conn()
	if err != nil {
		return domain.AppendResult{}, err
	}
	h, res, dup, err := s.scanTail(ctx, c, stream, events)
	if err != nil {
		return domain.AppendResult{}, err
	}
	if dup {
		return res, nil
	}
	if err := expected.Check(stream, h.Version); err != nil {
		return domain.AppendResult{}, err
	}
	data := make([]esdb.EventData, len(events))
	domain.Chain(stream, h, events)
	for i := range events {
		e := &events[i]
		e.Position = 0
		id, carry := esdbID(e.ID)
		m := metadata{Actor: e.Actor, Correlation: e.Correlation, Schema: e.Schema, Time: e.Time, PrevHash: e.PrevHash, Hash: e.Hash}
		if carry {
			m.ID = e.ID
		}
		mb, _ := json.Marshal(m)
		data[i] = esdb.EventData{EventID: id, EventType: e.Type, ContentType: esdb.ContentTypeJson, Data: e.Data, Metadata: mb}
	}
	var exp esdb.ExpectedRevision = esdb.NoStream{}
	if h.Version >= 0 {
		exp = esdb.Revision(uint64(h.Version))
	}
	wr, err := c.AppendToStream(ctx, s.Namespace+stream, esdb.AppendToStreamOptions{ExpectedRevision: exp}, data...)
	if err != nil {
		var ee *esdb.Error
		if errors.As(err, &ee) && ee.Code() == esdb.ErrorCodeWrongExpectedVersion {
			return domain.AppendResult{}, domain.Errorf(errRaced, "append to %s raced", stream)
		}
		return domain.AppendResult{}, s.fail(ctx, c, "append to "+stream, err)
	}
	// A single-stream append is one implicit transaction: the commit
	// position the server reports is its last event's $all position (the
	// real-server suite checks this: IdempotentRetry compares it with the
	// position read back). Only a reply without a position is read back.
	last := events[len(events)-1].Version
	pos := esdb.Position{Commit: wr.CommitPosition, Prepare: wr.PreparePosition}
	if pos.Commit == 0 || pos.Commit == ^uint64(0) {
		if pos, err = s.positionOf(ctx, c, stream, last); err != nil {
			return domain.AppendResult{}, s.fail(ctx, c, "read back "+stream, err)
		}
	}
	s.known.add(pos)
	events[len(events)-1].Position = pos.Commit
	for i := range events {
		s.ids.add(&events[i])
	}
	return domain.AppendResult{FirstVersion: h.Version + 1, LastVersion: last, LastPosition: pos.Commit}, nil
}

// positionOf reads back the $all position of stream's event at version:
// the append reply's position is the write's, which for several events is
// not necessarily the last event's.
func (s *Store) positionOf(ctx context.Context, c *esdb.Client, stream string, version int64) (esdb.Position, error) {
	rs, err := c.ReadStream(ctx, s.Namespace+stream, esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Revision(uint64(version))}, 1)
	if err != nil {
		return esdb.Position{}, err
	}
	defer rs.Close()
	ev, err := rs.Recv()
	if err != nil {
		return esdb.Position{}, err
	}
	r := ev.OriginalEvent()
	if r == nil || int64(r.EventNumber) != version || r.Position.Commit == ^uint64(0) {
		return esdb.Position{}, fmt.Errorf("read back %s/%d: no position", stream, version)
	}
	return r.Position, nil
}

// scanTail reads stream backwards from its end: the first event is the
// head; the scan goes on while some appended id is unaccounted for (see the
// package doc for where it stops). It returns the original result when
// every id is already in the stream.
func (s *Store) scanTail(ctx context.Context, c *esdb.Client, stream string, events []domain.Event) (head, domain.AppendResult, bool, error) {
	h := domain.NoStreamTip
	want := make(map[uuid.UUID]int, len(events))
	for i, e := range events {
		id, _ := esdbID(e.ID)
		want[id] = i
	}
	found := make([]*domain.Event, len(events))
	nfound := 0
	var from esdb.StreamPosition = esdb.End{}
	first := true
	depth := 0
	page := min(s.ReadBatchSize, s.IdempotencyDepth)
scan:
	for {
		rs, err := c.ReadStream(ctx, s.Namespace+stream, esdb.ReadStreamOptions{Direction: esdb.Backwards, From: from}, uint64(page))
		if err != nil {
			return h, domain.AppendResult{}, false, s.fail(ctx, c, "read "+stream, err)
		}
		n := 0
		var lowest uint64
		for r, err := range recorded(rs) {
			if notFound(err) {
				rs.Close()
				break scan
			}
			if err != nil {
				rs.Close()
				return h, domain.AppendResult{}, false, s.fail(ctx, c, "read "+stream, err)
			}
			n++
			depth++
			lowest = r.EventNumber
			if first {
				e := s.toEvent(r)
				h = domain.TipOf(&e)
				first = false
			}
			// Our ids map to EventStoreDB ids deterministically: no
			// metadata to decode for events that are not retries.
			if i, ok := want[r.EventID]; ok && found[i] == nil {
				e := s.toEvent(r)
				found[i] = &e
				nfound++
			}
			if nfound == len(events) || depth >= s.IdempotencyDepth {
				rs.Close()
				break scan
			}
		}
		rs.Close()
		if n < page || lowest == 0 {
			break
		}
		from = esdb.Revision(lowest - 1)
	}
	switch {
	case nfound == 0:
		return h, domain.AppendResult{}, false, nil
	case nfound < len(events):
		return h, domain.AppendResult{}, false, domain.Errorf(domain.ECONFLICT, "append to %s: %d of %d event ids already stored", stream, nfound, len(events))
	}
	lastE := found[len(found)-1]
	res := domain.AppendResult{FirstVersion: found[0].Version, LastVersion: lastE.Version, LastPosition: lastE.Position}
	if res.LastPosition == 0 || res.LastPosition == ^uint64(0) {
		p, err := s.positionOf(ctx, c, stream, lastE.Version)
		if err != nil {
			return h, domain.AppendResult{}, false, s.fail(ctx, c, "read "+stream, err)
		}
		res.LastPosition = p.Commit
	}
	return h, res, true, nil
}
