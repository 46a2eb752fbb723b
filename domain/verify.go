package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// Verifier checks a log's hash chains and envelopes. Feed it every event in
// log (commit) order with Add; it checks, per event:
//
//   - the position is greater than the previous event's (any stream);
//   - the id is not empty and appears nowhere earlier in the log;
//   - the stream name and type are not empty, and the data is valid JSON;
//   - the version is the stream's next one (0 for a stream's first event),
//     so a removed or reordered event shows up as a gap or a step back;
//   - prevHash is the hash of the stream's previous event (32 zero bytes at
//     version 0);
//   - hash equals ComputeHash of the event, so any edited field shows up;
//   - the time is not earlier than the stream's previous event's.
//
// It reports every faulty event, not only the first: after a fault it goes
// on from what the log says, so that one bad event never hides tampering
// later in the log. An event that steps a stream back (a repeat, a swap)
// is reported and leaves the stream where it was; any other event moves
// the stream to itself, faulty or not. An event whose stored hash does not
// match its contents is reported, and the stream's next event may link to
// either hash: a writer that chained onto the contents (as the stores do,
// never trusting a stored hash) is not blamed for the damage before it.
//
// An attacker who rewrites a stream's whole tail and re-hashes it to the
// head leaves valid chains behind: that is caught by comparing the
// summary's HeadsDigest with one recorded earlier (see HeadsDigest). The
// same holds for events cut from the end of a stream.
//
// A Verifier is not safe for concurrent use.
type Verifier struct {
	// MaxFaults is how many faults Summary lists (the count covers them
	// all); 0 means DefaultMaxFaults, a negative value none.
	MaxFaults int
	// Records, when set, is given each event's hash as recomputed from
	// its contents (ComputeHash, whatever its stored hash says), in log
	// order, a batch at a time: the record data of the log's Merkle tree
	// (TreeStore), which a verification rebuilds without hashing twice.
	Records func(hashes []Hash)

	streams    map[string]verifiedStream
	alt        map[string]Hash // streams whose head's stored hash is not its contents': the contents' hash
	ids        map[[16]byte]struct{}
	events     int64
	lastPos    uint64
	faults     []Fault
	faultCount int64
	buf        []byte
}

// DefaultMaxFaults is how many faults a summary lists unless told.
const DefaultMaxFaults = 10

type verifiedStream struct {
	version int64
	hash    Hash
	time    int64
}

// NewVerifier returns a Verifier for a log read from its first event.
func NewVerifier() *Verifier {
	return &Verifier{
		streams: make(map[string]verifiedStream),
		alt:     make(map[string]Hash),
		ids:     make(map[[16]byte]struct{}),
		buf:     make([]byte, 0, 1024),
	}
}

// Fault is an event that fails verification, and why (its first problem).
type Fault struct {
	Stream   string `json:"stream"`
	Version  int64  `json:"version"`
	Position uint64 `json:"position"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	// Problem says what is wrong, in words an auditor can act on.
	Problem string `json:"problem"`
}

// Error implements error: "stream S version V (position P): problem".
func (f *Fault) Error() string {
	return fmt.Sprintf("stream %s version %d (position %d, id %s): %s", f.Stream, f.Version, f.Position, f.ID, f.Problem)
}

// StreamHead is a stream's last event as verified.
type StreamHead struct {
	Stream  string `json:"stream"`
	Version int64  `json:"version"`
	Hash    Hash   `json:"hash"`
}

// VerifySummary is the result of a verification. OK is true when no event
// is faulty.
type VerifySummary struct {
	OK bool `json:"ok"`
	// Events is the number of events read and checked (faulty ones
	// included), Streams the number of streams they belong to.
	Events  int64 `json:"events"`
	Streams int   `json:"streams"`
	// LastPosition is the greatest position read.
	LastPosition uint64 `json:"lastPosition"`
	// HeadsDigest is HeadsDigest(Heads).
	HeadsDigest Hash `json:"headsDigest"`
	// Heads lists every stream's head, sorted by stream name (omitted unless
	// the caller asked for them).
	Heads []StreamHead `json:"heads,omitempty"`
	// FaultCount is the number of faulty events in the whole log; Faults
	// lists the first of them (at most the Verifier's MaxFaults), in log
	// order, and Fault is the first one.
	FaultCount int64   `json:"faultCount"`
	Fault      *Fault  `json:"fault,omitempty"`
	Faults     []Fault `json:"faults,omitempty"`
}

// HeadsDigest is the fingerprint of a whole log's state:
//
//	SHA-256 over the heads sorted by stream name, each as the bytes
//	stream || 0x00 || lowercase hex of the head hash || 0x0a
//
// Since every head hash covers its stream's whole chain, two logs with the
// same digest hold the same events. Recording the digest (for example in a
// daily report) lets a later verify detect a stream rewritten to its head
// or cut at its end. heads need not be sorted; the slice is not modified.
func HeadsDigest(heads []StreamHead) Hash {
	sorted := heads
	if !sort.SliceIsSorted(heads, func(i, j int) bool { return heads[i].Stream < heads[j].Stream }) {
		sorted = append([]StreamHead(nil), heads...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Stream < sorted[j].Stream })
	}
	h := sha256.New()
	line := make([]byte, 0, 128)
	for _, s := range sorted {
		line = append(line[:0], s.Stream...)
		line = append(line, 0)
		line = hex.AppendEncode(line, s.Hash[:])
		line = append(line, '\n')
		h.Write(line)
	}
	var d Hash
	copy(d[:], h.Sum(nil))
	return d
}

// Add verifies the next event of the log. It returns the event's Fault, or
// nil when the event is sound.
func (v *Verifier) Add(e *Event) *Fault {
	var content string
	var sum Hash
	content, sum, v.buf = contentProblem(e, v.buf)
	if v.Records != nil {
		v.Records([]Hash{sum})
	}
	return v.add(e, content, sum)
}

// Seed sets stream's head as the events before the first one fed to v
// left it (version, hash and time of its last event): a verification
// that starts after the log's first event (from a checkpoint on, whose
// earlier events were proven otherwise) checks the next event's version,
// prevHash and time against it. Ids are checked for repeats among the
// events fed only.
func (v *Verifier) Seed(stream string, version int64, hash Hash, time int64) {
	v.streams[stream] = verifiedStream{version: version, hash: hash, time: time}
}

// AddBatch is Add for consecutive events of the log. The costly part of
// each event's check (its hash and JSON), which does not depend on other
// events, runs on every CPU; the checks that do, in order. It returns the
// batch's first Fault, or nil; the result is what Add gives for each event
// in turn.
func (v *Verifier) AddBatch(batch []Event) *Fault {
	if len(batch) == 0 {
		return nil
	}
	content := make([]string, len(batch))
	sums := make([]Hash, len(batch))
	workers := min(runtime.GOMAXPROCS(0), (len(batch)+63)/64)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := make([]byte, 0, 1024)
			for i := w * len(batch) / workers; i < (w+1)*len(batch)/workers; i++ {
				content[i], sums[i], buf = contentProblem(&batch[i], buf)
			}
		}(w)
	}
	wg.Wait()
	if v.Records != nil {
		v.Records(sums)
	}
	var first *Fault
	for i := range batch {
		if f := v.add(&batch[i], content[i], sums[i]); f != nil && first == nil {
			first = f
		}
	}
	return first
}

// add checks e, whose contentProblem is content and contents' hash sum.
func (v *Verifier) add(e *Event, content string, sum Hash) *Fault {
	problem := v.check(e, content, sum)
	v.events++
	if problem == "" {
		return nil
	}
	v.faultCount++
	f := Fault{Stream: e.Stream, Version: e.Version, Position: e.Position, ID: e.ID, Type: e.Type, Problem: problem}
	if max := v.maxFaults(); len(v.faults) < max {
		v.faults = append(v.faults, f)
	}
	return &f
}

func (v *Verifier) maxFaults() int {
	switch {
	case v.MaxFaults == 0:
		return DefaultMaxFaults
	case v.MaxFaults < 0:
		return 0
	}
	return v.MaxFaults
}

// contentProblem checks what an event says about itself alone: its hash
// matches its contents, and its data is JSON. It returns the problem ("" if
// none), the hash of the contents, and buf for reuse.
func contentProblem(e *Event, buf []byte) (string, Hash, []byte) {
	buf = append(buf[:0], e.PrevHash[:]...)
	buf = AppendCanonical(buf, e)
	sum := Hash(sha256.Sum256(buf))
	if sum != e.Hash {
		if e.Hash == (Hash{}) {
			return "stored hash is zero or missing: it does not match the event's contents", sum, buf
		}
		return "hash does not match the event's contents (the event or its stored hash was edited)", sum, buf
	}
	if !json.Valid(e.Data) {
		return "data is not valid JSON", sum, buf
	}
	return "", sum, buf
}

// check returns e's first problem ("" if none) and records e (see Verifier
// for how a faulty event moves its stream). content is contentProblem's
// answer for e and sum its contents' hash.
func (v *Verifier) check(e *Event, content string, sum Hash) string {
	var problem string
	note := func(p string) {
		if problem == "" {
			problem = p
		}
	}
	if v.events > 0 && e.Position <= v.lastPos {
		note(fmt.Sprintf("position %d does not follow the previous event's position %d", e.Position, v.lastPos))
	} else {
		v.lastPos = e.Position
	}
	if e.Stream == "" {
		note("empty stream name")
		return problem // no stream to follow
	}
	if e.ID == "" {
		note("empty event id")
	}
	if e.Type == "" {
		note("empty event type")
	}
	st, known := v.streams[e.Stream]
	var want int64
	var prev Hash
	if known {
		want, prev = st.version+1, st.hash
	}
	switch {
	case e.Version < want:
		note(fmt.Sprintf("version %d repeats or goes back: the stream is already at version %d (reordered or duplicated event)", e.Version, want-1))
	case e.Version > want:
		note(fmt.Sprintf("version %d skips ahead: expected version %d (events missing before it)", e.Version, want))
	}
	if alt, ok := v.alt[e.Stream]; e.PrevHash != prev && !(ok && e.PrevHash == alt) {
		if want == 0 {
			note("prevHash of a stream's first event is not zero")
		} else {
			note(fmt.Sprintf("prevHash %s is not the hash %s of version %d (chain broken: an earlier event was changed or replaced)", short(e.PrevHash), short(prev), want-1))
		}
	}
	if content != "" {
		note(content)
	}
	if known && e.Time < st.time {
		note(fmt.Sprintf("time %d is earlier than the previous event's time %d in the stream", e.Time, st.time))
	}
	if e.ID != "" {
		key := idKey(e.ID)
		if _, dup := v.ids[key]; dup {
			note("event id appears earlier in the log")
		} else {
			v.ids[key] = struct{}{}
		}
	}
	if known && e.Version <= st.version {
		return problem // a step back: the stream stays where it was
	}
	name := e.Stream
	if !known {
		// A store may hand out names that share memory with the whole
		// event; keep only the name.
		name = strings.Clone(name)
	}
	v.streams[name] = verifiedStream{version: e.Version, hash: e.Hash, time: e.Time}
	if sum != e.Hash {
		v.alt[name] = sum
	} else if len(v.alt) > 0 {
		delete(v.alt, name)
	}
	return problem
}

func short(h Hash) string { return h.String()[:12] + "…" }

// idKey packs an id into 16 bytes: a UUID's own bytes, or the first 16
// bytes of the SHA-256 of any other string.
func idKey(id string) [16]byte {
	var k [16]byte
	if len(id) == 36 && id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' {
		var hexs [32]byte
		copy(hexs[0:8], id[0:8])
		copy(hexs[8:12], id[9:13])
		copy(hexs[12:16], id[14:18])
		copy(hexs[16:20], id[19:23])
		copy(hexs[20:32], id[24:36])
		// Lowercase hex only, so that one UUID has one key; anything else
		// takes the hashed path, which cannot collide with it in practice.
		if _, err := hex.Decode(k[:], hexs[:]); err == nil && isLowerHex(hexs[:]) {
			return k
		}
	}
	sum := sha256.Sum256([]byte(id))
	copy(k[:], sum[:16])
	return k
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if c >= 'A' && c <= 'F' {
			return false
		}
	}
	return true
}

// Summary returns the result so far. With heads false, Heads is left empty
// (the digest is still computed over every head).
func (v *Verifier) Summary(heads bool) VerifySummary {
	hs := make([]StreamHead, 0, len(v.streams))
	for name, st := range v.streams {
		hs = append(hs, StreamHead{Stream: name, Version: st.version, Hash: st.hash})
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Stream < hs[j].Stream })
	s := VerifySummary{
		OK:           v.faultCount == 0,
		Events:       v.events,
		Streams:      len(v.streams),
		LastPosition: v.lastPos,
		HeadsDigest:  HeadsDigest(hs),
		FaultCount:   v.faultCount,
	}
	if len(v.faults) > 0 {
		s.Faults = append([]Fault(nil), v.faults...)
		s.Fault = &s.Faults[0]
	}
	if heads {
		s.Heads = hs
	}
	return s
}

// VerifyProgressEvery is how many events VerifyLog verifies between two
// progress calls.
const VerifyProgressEvery = 1 << 16

// VerifyOptions tune VerifyLog.
type VerifyOptions struct {
	// Heads asks for every stream's head in the summary (the digest is
	// always there).
	Heads bool
	// MaxFaults is how many faults the summary lists (Verifier.MaxFaults).
	MaxFaults int
	// Progress, when not nil, is called each time the count passes a
	// multiple of VerifyProgressEvery, with the count and position so far.
	Progress func(events int64, position uint64)
	// Records, when not nil, is the Verifier's Records: every event's
	// recomputed hash, in log order.
	Records func(hashes []Hash)
}

// VerifyLog reads store's whole log in commit order through a Verifier and
// returns its summary: every faulty event counted, the first MaxFaults
// listed, OK false when there is any. The error is only for a log that
// could not be read (EUNAVAILABLE, ctx's error …).
func VerifyLog(ctx context.Context, store EventStore, opts VerifyOptions) (VerifySummary, error) {
	v := NewVerifier()
	v.MaxFaults, v.Records = opts.MaxFaults, opts.Records
	err := ReadAheadBatches(ctx, store.ReadAll(ctx, 0, 0), func(batch []Event) bool {
		before := v.events
		v.AddBatch(batch)
		if opts.Progress != nil && v.events/VerifyProgressEvery != before/VerifyProgressEvery {
			opts.Progress(v.events, v.lastPos)
		}
		return true
	})
	if err != nil {
		return VerifySummary{}, fmt.Errorf("verify: read log: %w", err)
	}
	return v.Summary(opts.Heads), nil
}
