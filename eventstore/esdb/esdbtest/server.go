// Package esdbtest is an in-process EventStoreDB protocol TEST DOUBLE: a
// gRPC server implementing the Streams service of the client's own
// generated protos (Append; Read of streams and of $all, forwards and
// backwards; $all subscriptions with filters), backed by memory. It is not
// EventStoreDB: no persistence, no cluster, no projections, no
// persistent subscriptions, no deletes, no server-side idempotency cache.
//
// It is faithful to what the Go client checks and to the server behaviour
// the esdb store relies on: recorded events carry the "type",
// "content-type" and "created" metadata; a read of a missing stream is a
// single stream_not_found message; subscriptions answer with a
// confirmation first, then events, caught_up once the history is sent,
// fell_behind when a caught-up subscriber has a full batch waiting, and
// checkpoints while a filter skips records; appends check the expected
// revision and answer wrong_expected_version; $all positions are byte-like
// offsets (increasing, not dense, starting after a few system records) and
// a read or subscription from a position that is not an event's position
// is refused, as the real server refuses positions inside a record.
// $all reads include their start position, backward reads and
// subscriptions exclude it.
//
// Tests can drop subscriptions (DropAfter, DropSubscriptions), write system
// events (AppendSystem), and stop and restart the listener on the same
// address (Stop, Restart) to exercise reconnection.
package esdbtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server is the test double. The zero value is not usable; call NewServer.
type Server struct {
	// DropAfter, when > 0, ends every subscription with an Unavailable
	// error after it has sent that many events (set before subscribing).
	DropAfter int

	mu       sync.Mutex
	records  []*record
	byPos    map[uint64]int   // commit position → index in records
	streams  map[string][]int // stream → indexes in records
	nextPos  uint64
	notify   chan struct{} // closed and replaced on every write
	dropping chan struct{} // closed and replaced by DropSubscriptions

	addr string
	gs   *grpc.Server
	lis  net.Listener
	subs int
}

type record struct {
	id       *shared.UUID
	stream   string
	revision uint64
	pos      uint64
	meta     map[string]string
	custom   []byte
	data     []byte
}

// NewServer returns a started server on 127.0.0.1 with a few system
// records already in $all, as a fresh EventStoreDB has.
func NewServer() (*Server, error) {
	s := &Server{
		byPos:    make(map[uint64]int),
		streams:  make(map[string][]int),
		nextPos:  128,
		notify:   make(chan struct{}),
		dropping: make(chan struct{}),
	}
	s.AppendSystem("$epochs", "$epoch")
	s.AppendSystem("$scavenges", "$scavengeIndexInitialized")
	if err := s.listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) listen(addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	gs := grpc.NewServer()
	api.RegisterStreamsServer(gs, &streamsServer{s: s})
	s.mu.Lock()
	s.lis, s.gs, s.addr = lis, gs, lis.Addr().String()
	s.mu.Unlock()
	go gs.Serve(lis)
	return nil
}

// URL is the connection string of the server (no TLS).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "esdb://" + s.addr + "?tls=false"
}

// Stop closes the listener and every open call: the server is unreachable
// until Restart. Stored events are kept.
func (s *Server) Stop() {
	s.mu.Lock()
	gs := s.gs
	s.gs = nil
	s.mu.Unlock()
	if gs != nil {
		gs.Stop()
	}
}

// Restart listens again on the same address.
func (s *Server) Restart() error {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	var err error
	for i := 0; i < 50; i++ { // the port may linger for a moment after Stop
		if err = s.listen(addr); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Close stops the server.
func (s *Server) Close() { s.Stop() }

// DropSubscriptions ends every open subscription with an Unavailable error,
// as a leader change or a restart would.
func (s *Server) DropSubscriptions() {
	s.mu.Lock()
	close(s.dropping)
	s.dropping = make(chan struct{})
	s.mu.Unlock()
}

// Subscriptions returns how many subscriptions were opened so far.
func (s *Server) Subscriptions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs
}

// AppendSystem writes one system record (stream or type starting with $).
func (s *Server) AppendSystem(stream, typ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := uuid.New()
	s.write(stream, &shared.UUID{Value: &shared.UUID_String_{String_: id.String()}},
		map[string]string{"type": typ, "content-type": "application/json"}, nil, []byte(`{}`))
}

// Len returns how many records $all holds, system records included.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

// CutAfter keeps the first n records of $all and drops the rest, as
// restoring the server's files from an older backup does: the positions
// of later writes go on from the end of the last record kept, those the
// dropped records had.
func (s *Server) CutAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.records) {
		return
	}
	s.records = s.records[:n]
	s.byPos = make(map[uint64]int, n)
	s.streams = make(map[string][]int)
	s.nextPos = 128
	for i, r := range s.records {
		s.byPos[r.pos] = i
		s.streams[r.stream] = append(s.streams[r.stream], i)
		s.nextPos = r.pos + uint64(64+len(r.stream)+len(r.custom)+len(r.data))
	}
}

// write appends one record; s.mu is held.
func (s *Server) write(stream string, id *shared.UUID, meta map[string]string, custom, data []byte) *record {
	m := make(map[string]string, 3)
	m["type"] = meta["type"]
	m["content-type"] = meta["content-type"]
	m["created"] = strconv.FormatInt(time.Now().UnixNano()/100, 10)
	r := &record{id: id, stream: stream, revision: uint64(len(s.streams[stream])), pos: s.nextPos, meta: m, custom: custom, data: data}
	s.nextPos += uint64(64 + len(stream) + len(custom) + len(data)) // record size: positions are not dense
	s.byPos[r.pos] = len(s.records)
	s.streams[stream] = append(s.streams[stream], len(s.records))
	s.records = append(s.records, r)
	close(s.notify)
	s.notify = make(chan struct{})
	return r
}

type streamsServer struct {
	api.UnimplementedStreamsServer
	s *Server
}

func (x *streamsServer) Append(stream api.Streams_AppendServer) error {
	s := x.s
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	opts := req.GetOptions()
	if opts == nil || opts.GetStreamIdentifier() == nil {
		return status.Error(codes.InvalidArgument, "first append message must carry options")
	}
	name := string(opts.GetStreamIdentifier().GetStreamName())
	var msgs []*api.AppendReq_ProposedMessage
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		pm := req.GetProposedMessage()
		if pm == nil {
			return status.Error(codes.InvalidArgument, "append message without a proposed message")
		}
		if pm.GetMetadata()["type"] == "" || pm.GetMetadata()["content-type"] == "" {
			return status.Error(codes.InvalidArgument, "proposed message without type or content-type")
		}
		if pm.GetId() == nil {
			return status.Error(codes.InvalidArgument, "proposed message without id")
		}
		msgs = append(msgs, pm)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	current := int64(len(s.streams[name])) - 1
	ok := false
	switch e := opts.GetExpectedStreamRevision().(type) {
	case *api.AppendReq_Options_Any:
		ok = true
	case *api.AppendReq_Options_NoStream:
		ok = current == -1
	case *api.AppendReq_Options_StreamExists:
		ok = current >= 0
	case *api.AppendReq_Options_Revision:
		ok = int64(e.Revision) == current
	default:
		return status.Error(codes.InvalidArgument, "no expected revision")
	}
	if !ok {
		w := &api.AppendResp_WrongExpectedVersion{}
		if current < 0 {
			w.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentNoStream{CurrentNoStream: &shared.Empty{}}
		} else {
			w.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentRevision{CurrentRevision: uint64(current)}
		}
		switch e := opts.GetExpectedStreamRevision().(type) {
		case *api.AppendReq_Options_NoStream:
			w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedNoStream{ExpectedNoStream: &shared.Empty{}}
		case *api.AppendReq_Options_StreamExists:
			w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedStreamExists{ExpectedStreamExists: &shared.Empty{}}
		case *api.AppendReq_Options_Revision:
			w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedRevision{ExpectedRevision: e.Revision}
		}
		return stream.SendAndClose(&api.AppendResp{Result: &api.AppendResp_WrongExpectedVersion_{WrongExpectedVersion: w}})
	}
	var last *record
	for _, pm := range msgs {
		last = s.write(name, pm.GetId(), pm.GetMetadata(), pm.GetCustomMetadata(), pm.GetData())
	}
	succ := &api.AppendResp_Success{}
	if last == nil {
		if current < 0 {
			succ.CurrentRevisionOption = &api.AppendResp_Success_NoStream{NoStream: &shared.Empty{}}
		} else {
			succ.CurrentRevisionOption = &api.AppendResp_Success_CurrentRevision{CurrentRevision: uint64(current)}
		}
		succ.PositionOption = &api.AppendResp_Success_NoPosition{NoPosition: &shared.Empty{}}
	} else {
		succ.CurrentRevisionOption = &api.AppendResp_Success_CurrentRevision{CurrentRevision: last.revision}
		succ.PositionOption = &api.AppendResp_Success_Position{Position: &api.AppendResp_Position{CommitPosition: last.pos, PreparePosition: last.pos}}
	}
	return stream.SendAndClose(&api.AppendResp{Result: &api.AppendResp_Success_{Success: succ}})
}

func (x *streamsServer) Read(req *api.ReadReq, srv api.Streams_ReadServer) error {
	opts := req.GetOptions()
	if opts == nil {
		return status.Error(codes.InvalidArgument, "read without options")
	}
	f, err := newFilter(opts.GetFilter())
	if err != nil {
		return err
	}
	if so := opts.GetStream(); so != nil {
		if opts.GetSubscription() != nil {
			return status.Error(codes.Unimplemented, "stream subscriptions are not implemented by the test double")
		}
		return x.readStream(opts, so, srv)
	}
	ao := opts.GetAll()
	if ao == nil {
		return status.Error(codes.InvalidArgument, "read of neither a stream nor $all")
	}
	if opts.GetSubscription() != nil {
		return x.subscribeAll(ao, f, srv)
	}
	return x.readAll(opts, ao, f, srv)
}

func (x *streamsServer) readStream(opts *api.ReadReq_Options, so *api.ReadReq_Options_StreamOptions, srv api.Streams_ReadServer) error {
	s := x.s
	s.mu.Lock()
	idx := s.streams[string(so.GetStreamIdentifier().GetStreamName())] // append-only: the prefix read below never changes
	records := s.records
	s.mu.Unlock()
	recs := recordList{idx, records}
	if recs.len() == 0 {
		return srv.Send(&api.ReadResp{Content: &api.ReadResp_StreamNotFound_{StreamNotFound: &api.ReadResp_StreamNotFound{StreamIdentifier: so.GetStreamIdentifier()}}})
	}
	count := opts.GetCount()
	backwards := opts.GetReadDirection() == api.ReadReq_Options_Backwards
	var out []*record
	if backwards {
		i := recs.len() - 1
		if r, ok := so.GetRevisionOption().(*api.ReadReq_Options_StreamOptions_Revision); ok {
			i = min(i, int(r.Revision))
		} else if so.GetStart() != nil {
			i = 0
		}
		for ; i >= 0 && uint64(len(out)) < count; i-- {
			out = append(out, recs.at(i))
		}
	} else {
		i := 0
		if r, ok := so.GetRevisionOption().(*api.ReadReq_Options_StreamOptions_Revision); ok {
			i = int(min(r.Revision, uint64(recs.len())))
		} else if so.GetEnd() != nil {
			i = recs.len()
		}
		for ; i < recs.len() && uint64(len(out)) < count; i++ {
			out = append(out, recs.at(i))
		}
	}
	for _, r := range out {
		if err := srv.Send(eventResp(r)); err != nil {
			return err
		}
	}
	return nil
}

// recordList is a stream's records: indexes into $all.
type recordList struct {
	idx     []int
	records []*record
}

func (l recordList) len() int         { return len(l.idx) }
func (l recordList) at(i int) *record { return l.records[l.idx[i]] }

// position resolves an $all position option to an index: the record at
// that position (valid: true), or an error for a position that is not a
// record's.
func (s *Server) position(ao *api.ReadReq_Options_AllOptions) (idx int, err error) {
	switch {
	case ao.GetStart() != nil:
		return -1, nil
	case ao.GetEnd() != nil:
		return len(s.records), nil
	}
	p := ao.GetPosition()
	if p == nil {
		return 0, status.Error(codes.InvalidArgument, "no $all position")
	}
	if p.CommitPosition == 0 && p.PreparePosition == 0 {
		return -1, nil
	}
	i, ok := s.byPos[p.CommitPosition]
	if !ok || p.PreparePosition != p.CommitPosition {
		return 0, status.Errorf(codes.OutOfRange, "invalid position C:%d/P:%d: not the position of a record", p.CommitPosition, p.PreparePosition)
	}
	return i, nil
}

func (x *streamsServer) readAll(opts *api.ReadReq_Options, ao *api.ReadReq_Options_AllOptions, f *filter, srv api.Streams_ReadServer) error {
	s := x.s
	count := opts.GetCount()
	backwards := opts.GetReadDirection() == api.ReadReq_Options_Backwards
	s.mu.Lock()
	i, err := s.position(ao)
	var out []*record
	if err == nil {
		if backwards { // exclusive of the start position
			for i--; i >= 0 && uint64(len(out)) < count; i-- {
				if f.match(s.records[i]) {
					out = append(out, s.records[i])
				}
			}
		} else { // inclusive of the start position
			for i = max(i, 0); i < len(s.records) && uint64(len(out)) < count; i++ {
				if f.match(s.records[i]) {
					out = append(out, s.records[i])
				}
			}
		}
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	for _, r := range out {
		if err := srv.Send(eventResp(r)); err != nil {
			return err
		}
	}
	return nil
}

const subscriptionBatch = 64

func (x *streamsServer) subscribeAll(ao *api.ReadReq_Options_AllOptions, f *filter, srv api.Streams_ReadServer) error {
	s := x.s
	ctx := srv.Context()
	s.mu.Lock()
	i, err := s.position(ao)
	s.subs++
	dropping, dropAfter := s.dropping, s.DropAfter
	s.mu.Unlock()
	if err != nil {
		return err
	}
	// The next record to consider: subscriptions start after their
	// position (Start: the first record; End: what comes next).
	next := i + 1
	if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_Confirmation{Confirmation: &api.ReadResp_SubscriptionConfirmation{SubscriptionId: uuid.NewString()}}}); err != nil {
		return err
	}
	sent, skipped, caughtUp := 0, 0, false
	dropped := status.Error(codes.Unavailable, "subscription dropped by the test double")
	for {
		s.mu.Lock()
		batch := append([]*record(nil), s.records[min(next, len(s.records)):min(next+subscriptionBatch, len(s.records))]...)
		notify := s.notify
		s.mu.Unlock()
		if len(batch) == 0 {
			if !caughtUp {
				caughtUp = true
				if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_CaughtUp_{CaughtUp: &api.ReadResp_CaughtUp{}}}); err != nil {
					return err
				}
			}
			select {
			case <-notify:
			case <-dropping:
				return dropped
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if caughtUp && len(batch) == subscriptionBatch {
			caughtUp = false
			if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_FellBehind_{FellBehind: &api.ReadResp_FellBehind{}}}); err != nil {
				return err
			}
		}
		for _, r := range batch {
			next++
			if !f.match(r) {
				if skipped++; skipped%f.window == 0 {
					if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_Checkpoint_{Checkpoint: &api.ReadResp_Checkpoint{CommitPosition: r.pos, PreparePosition: r.pos}}}); err != nil {
						return err
					}
				}
				continue
			}
			if err := srv.Send(eventResp(r)); err != nil {
				return err
			}
			if sent++; dropAfter > 0 && sent >= dropAfter {
				return dropped
			}
		}
		select {
		case <-dropping:
			return dropped
		default:
		}
	}
}

func eventResp(r *record) *api.ReadResp {
	return &api.ReadResp{Content: &api.ReadResp_Event{Event: &api.ReadResp_ReadEvent{
		Event: &api.ReadResp_ReadEvent_RecordedEvent{
			Id:               structured(r.id),
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(r.stream)},
			StreamRevision:   r.revision,
			PreparePosition:  r.pos,
			CommitPosition:   r.pos,
			Metadata:         r.meta,
			CustomMetadata:   r.custom,
			Data:             r.data,
		},
		Position: &api.ReadResp_ReadEvent_CommitPosition{CommitPosition: r.pos},
	}}}
}

// structured returns id in the structured form the client asks for.
func structured(id *shared.UUID) *shared.UUID {
	if id.GetStructured() != nil {
		return id
	}
	u, err := uuid.Parse(id.GetString_())
	if err != nil {
		return id
	}
	var most, least uint64
	for i := 0; i < 8; i++ {
		most = most<<8 | uint64(u[i])
		least = least<<8 | uint64(u[8+i])
	}
	return &shared.UUID{Value: &shared.UUID_Structured_{Structured: &shared.UUID_Structured{MostSignificantBits: int64(most), LeastSignificantBits: int64(least)}}}
}

// filter is a subscription or read filter on stream names or event types.
type filter struct {
	onType   bool
	prefixes []string
	re       *regexp.Regexp
	window   int
}

func newFilter(fo *api.ReadReq_Options_FilterOptions) (*filter, error) {
	if fo == nil {
		return nil, nil
	}
	f := &filter{window: 32}
	if m := fo.GetMax(); m > 0 {
		f.window = int(m)
	}
	expr := fo.GetStreamIdentifier()
	if t := fo.GetEventType(); t != nil {
		f.onType, expr = true, t
	}
	if expr == nil {
		return nil, status.Error(codes.InvalidArgument, "filter without an expression")
	}
	f.prefixes = expr.GetPrefix()
	if rx := expr.GetRegex(); rx != "" {
		re, err := regexp.Compile(rx)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("bad filter regex: %v", err))
		}
		f.re = re
	}
	return f, nil
}

func (f *filter) match(r *record) bool {
	if f == nil {
		return true
	}
	v := r.stream
	if f.onType {
		v = r.meta["type"]
	}
	if f.re != nil {
		return f.re.MatchString(v)
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}
