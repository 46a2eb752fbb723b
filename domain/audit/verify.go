package audit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
	"github.com/tradeledger/tradeledger/domain/readahead"
	"github.com/tradeledger/tradeledger/domain/streams"
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
//
// Its state is split into shards, a stream's in the shard of its name and
// an id's in the shard of its key, so that AddBatch checks the shards on
// every CPU at once: a stream's events, and the repeats of one id, all
// fall in one shard, which takes them in log order.
type Verifier struct {
	// MaxFaults is how many faults Summary lists (the count covers them
	// all); 0 means DefaultMaxFaults, a negative value none.
	MaxFaults int
	// Records, when set, is given each event's hash as recomputed from
	// its contents (ComputeHash, whatever its stored hash says), in log
	// order, a batch at a time: the record data of the log's Merkle tree
	// (TreeStore), which a verification rebuilds without hashing twice.
	// AddBatch calls it while it checks the batch, from another
	// goroutine, and returns after it returned; hashes is the Verifier's
	// and must not be kept after the call.
	Records func(hashes []domain.Hash)

	shards     []verifierShard
	events     int64
	lastPos    uint64
	faults     []Fault
	faultCount int64
	buf        []byte
	batch      verifierBatch // AddBatch's per-event scratch, reused
	pipe       *recordsPipe  // VerifyLog's: Records run beside the next batches
}

// recordsPipe runs a Verifier's Records in a goroutine of its own, one
// batch's hashes after the other, in log order, while the Verifier goes on
// with the next batches: VerifyLog's, where nothing reads what Records
// builds before VerifyLog returns. The hashes are copied (two buffers in
// turn): send waits while both are in use.
type recordsPipe struct {
	records func([]domain.Hash)
	work    chan []domain.Hash
	free    chan []domain.Hash
	done    chan struct{}
}

func newRecordsPipe(records func([]domain.Hash)) *recordsPipe {
	p := &recordsPipe{records: records, work: make(chan []domain.Hash, 1), free: make(chan []domain.Hash, 2), done: make(chan struct{})}
	p.free <- nil
	p.free <- nil
	go func() {
		defer close(p.done)
		for hs := range p.work {
			p.records(hs)
			p.free <- hs[:0]
		}
	}()
	return p
}

// send hands a copy of hashes to Records.
func (p *recordsPipe) send(hashes []domain.Hash) {
	buf := append(<-p.free, hashes...)
	p.work <- buf
}

// wait returns once Records has taken every batch sent; p takes no more.
func (p *recordsPipe) wait() {
	close(p.work)
	<-p.done
}

// verifierShard is the state of the streams and ids of one shard.
type verifierShard struct {
	orders headRun                   // the order streams' heads (verify_heads.go)
	other  map[string]verifiedStream // any other stream's head
	alt    map[string]domain.Hash    // streams whose head's stored hash is not its contents': the contents' hash
	ids    idSet                     // the ids seen (verify_ids.go)
}

// verifierBatch holds what AddBatch finds per event of a batch.
type verifierBatch struct {
	content []string      // contentProblem's problem
	sums    []domain.Hash // the contents' hashes
	keys    [][16]byte    // idKey of the id
	ref     []streamRef   // the stream
	stream  []uint8       // the shard of the stream (noShard: no stream)
	id      []uint8       // the shard of the id (noShard: no id, or no stream)
	problem []string      // the stream shard's first problem
	dup     []bool        // the id appeared earlier in the log
}

func (b *verifierBatch) size(n int) {
	if cap(b.sums) < n {
		*b = verifierBatch{content: make([]string, n), sums: make([]domain.Hash, n), keys: make([][16]byte, n), ref: make([]streamRef, n),
			stream: make([]uint8, n), id: make([]uint8, n), problem: make([]string, n), dup: make([]bool, n)}
	}
	b.content, b.sums, b.keys, b.ref, b.stream, b.id, b.problem, b.dup =
		b.content[:n], b.sums[:n], b.keys[:n], b.ref[:n], b.stream[:n], b.id[:n], b.problem[:n], b.dup[:n]
}

// DefaultMaxFaults is how many faults a summary lists unless told.
const DefaultMaxFaults = 10

type verifiedStream struct {
	version int64
	hash    domain.Hash
	time    int64
}

// NewVerifier returns a Verifier for a log read from its first event.
func NewVerifier() *Verifier {
	v := &Verifier{shards: make([]verifierShard, verifierShards*min(runtime.GOMAXPROCS(0), 16)), buf: make([]byte, 0, 1024)}
	for i := range v.shards {
		v.shards[i] = verifierShard{other: map[string]verifiedStream{}, alt: map[string]domain.Hash{}}
	}
	return v
}

// Expect sizes v for about n more events (a log's head position): the
// ids of that many events fit without the sets growing, which would copy
// them again as they double.
func (v *Verifier) Expect(n uint64) {
	per := min(n, 1<<28) / uint64(len(v.shards))
	for i := range v.shards {
		if per > 1024 {
			v.shards[i].ids.grow(int(per + per/16))
		}
	}
}

// noShard marks an event without a stream (or an id) in verifierBatch:
// no shard checks it.
const noShard = 255

// verifierShards is how many shards a Verifier has per CPU: more than one,
// so that a CPU whose worker the system holds back leaves its other
// shards to the others.
const verifierShards = 4

// streamRef is a stream's name and, for an order stream, its id
// (OrderStreamID), read once per event.
type streamRef struct {
	name  string
	id    int64
	order bool
}

func streamRefOf(name string) streamRef {
	id, ok := streams.OrderStreamID(name)
	return streamRef{name: name, id: id, order: ok}
}

// put sets the head of stream r in sh.
func (sh *verifierShard) put(r streamRef, v verifiedStream) {
	if r.order {
		sh.orders.put(r.id, v)
		return
	}
	sh.other[strings.Clone(r.name)] = v // a map assignment stores its key again: a copy each time
}

// streamShard returns the shard of a stream: an order stream's by its id,
// any other's by an FNV-1a hash of its name.
func (v *Verifier) streamShard(r streamRef) uint8 {
	n := uint64(len(v.shards))
	if n == 1 {
		return 0
	}
	if r.order {
		return uint8(uint64(r.id) % n)
	}
	h := uint64(14695981039346656037)
	for i := 0; i < len(r.name); i++ {
		h ^= uint64(r.name[i])
		h *= 1099511628211
	}
	return uint8(h % n)
}

// idShard returns the shard of an id's key (idKey): by its last bytes,
// random in a UUID of version 4, 7 or 8 and in a hash.
func (v *Verifier) idShard(k *[16]byte) uint8 {
	return uint8((uint64(k[15]) | uint64(k[14])<<8) % uint64(len(v.shards)))
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
	Stream  string      `json:"stream"`
	Version int64       `json:"version"`
	Hash    domain.Hash `json:"hash"`
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
	HeadsDigest domain.Hash `json:"headsDigest"`
	// Heads lists every stream's head, sorted by stream name (omitted unless
	// the caller asked for them).
	Heads []StreamHead `json:"heads,omitempty"`
	// FaultCount is the number of faulty events in the whole log; Faults
	// lists the first of them (at most the Verifier's MaxFaults), in log
	// order, and Fault is the first one.
	FaultCount int64   `json:"faultCount"`
	Fault      *Fault  `json:"fault,omitempty"`
	Faults     []Fault `json:"faults,omitempty"`
	// Tree is the verdict on the log's Merkle tree and the last
	// checkpoint kept beside it, when the store keeps a tree: OK is false
	// when Tree.Problem is set, whatever the chains say.
	Tree *TreeVerdict `json:"tree,omitempty"`
	// Problem names the failure in plain words, first the one an
	// operator must act on ("" when OK).
	Problem string `json:"problem,omitempty"`
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
func HeadsDigest(heads []StreamHead) domain.Hash {
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
	var d domain.Hash
	copy(d[:], h.Sum(nil))
	return d
}

// Add verifies the next event of the log. It returns the event's Fault, or
// nil when the event is sound.
func (v *Verifier) Add(e *domain.Event) *Fault {
	var content string
	var sum domain.Hash
	content, sum, v.buf = contentProblem(e, v.buf)
	if v.Records != nil {
		v.Records([]domain.Hash{sum})
	}
	var problem string
	var dup bool
	if e.Stream != "" {
		r := streamRefOf(e.Stream)
		problem = v.shards[v.streamShard(r)].check(e, r, content, sum)
		if e.ID != "" {
			k := idKey(e.ID)
			dup = v.shards[v.idShard(&k)].seen(k)
		}
	}
	return v.add(e, problem, dup)
}

// Seed sets stream's head as the events before the first one fed to v
// left it (version, hash and time of its last event): a verification
// that starts after the log's first event (from a checkpoint on, whose
// earlier events were proven otherwise) checks the next event's version,
// prevHash and time against it. Ids are checked for repeats among the
// events fed only.
func (v *Verifier) Seed(stream string, version int64, hash domain.Hash, time int64) {
	r := streamRefOf(stream)
	v.shards[v.streamShard(r)].put(r, verifiedStream{version: version, hash: hash, time: time})
}

// AddBatch is Add for consecutive events of the log, on every CPU: first
// what each event says about itself alone (its hash and JSON, the shards
// of its stream and id), in slices of the batch that each CPU takes as it
// is free; then the shards' streams and ids, each shard on one CPU taking
// its events in log order, while Records is given the batch's hashes;
// then, in order, what depends on the whole log (positions) and the
// faults. Tasks are taken as CPUs free up, so that on a busy machine a
// worker the system leaves waiting holds back only its own task. It
// returns the batch's first Fault, or nil; the result is what Add gives
// for each event in turn.
func (v *Verifier) AddBatch(batch []domain.Event) *Fault {
	n := len(batch)
	if n == 0 {
		return nil
	}
	b := &v.batch
	b.size(n)
	const slice = 256
	cpus := runtime.GOMAXPROCS(0)
	parallel(cpus, (n+slice-1)/slice, func(t int) {
		var stack [1024]byte
		buf := stack[:0]
		for i := t * slice; i < min((t+1)*slice, n); i++ {
			e := &batch[i]
			b.content[i], b.sums[i], buf = contentProblem(e, buf)
			b.problem[i], b.dup[i] = "", false
			b.stream[i], b.id[i] = noShard, noShard
			if e.Stream != "" {
				b.ref[i] = streamRefOf(e.Stream)
				b.stream[i] = v.streamShard(b.ref[i])
				if e.ID != "" {
					b.keys[i] = idKey(e.ID)
					b.id[i] = v.idShard(&b.keys[i])
				}
			}
		}
	})
	var records sync.WaitGroup
	switch {
	case v.pipe != nil:
		v.pipe.send(b.sums)
	case v.Records != nil:
		records.Add(1)
		go func() {
			defer records.Done()
			v.Records(b.sums)
		}()
	}
	parallel(cpus, len(v.shards), func(s int) {
		sh, shard := &v.shards[s], uint8(s)
		// The shards' bytes, not the events, are what each shard scans
		// for its own.
		for i, in := range b.stream {
			if in == shard {
				b.problem[i] = sh.check(&batch[i], b.ref[i], b.content[i], b.sums[i])
			}
		}
		for i, in := range b.id {
			if in == shard {
				b.dup[i] = sh.seen(b.keys[i])
			}
		}
	})
	var first *Fault
	for i := range batch {
		if f := v.add(&batch[i], b.problem[i], b.dup[i]); f != nil && first == nil {
			first = f
		}
	}
	records.Wait()
	return first
}

// parallel calls f(t) for every task t from 0 to tasks-1 on up to workers
// goroutines (the caller's among them), each taking the next task when
// done with one, and returns when all are done.
func parallel(workers, tasks int, f func(t int)) {
	var next atomic.Int64
	work := func() {
		for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
			f(t)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(workers, tasks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

// add checks what depends on the whole log (e's position follows the
// previous event's) and records e's fault, if any: its first problem, in
// the order Verifier lists the checks. streamProblem is its stream
// shard's first problem (verifierShard.check), dup whether its id
// appeared earlier in the log.
func (v *Verifier) add(e *domain.Event, streamProblem string, dup bool) *Fault {
	var problem string
	if v.events > 0 && e.Position <= v.lastPos {
		problem = fmt.Sprintf("position %d does not follow the previous event's position %d", e.Position, v.lastPos)
	} else {
		v.lastPos = e.Position
	}
	switch {
	case problem != "":
	case e.Stream == "":
		problem = "empty stream name"
	case streamProblem != "":
		problem = streamProblem
	case dup:
		problem = "event id appears earlier in the log"
	}
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
func contentProblem(e *domain.Event, buf []byte) (string, domain.Hash, []byte) {
	buf = append(buf[:0], e.PrevHash[:]...)
	buf = domain.AppendCanonical(buf, e)
	sum := domain.Hash(sha256.Sum256(buf))
	if sum != e.Hash {
		if e.Hash == (domain.Hash{}) {
			return "stored hash is zero or missing: it does not match the event's contents", sum, buf
		}
		return "hash does not match the event's contents (the event or its stored hash was edited)", sum, buf
	}
	if !jsonscan.ValidJSON(e.Data) {
		return "data is not valid JSON", sum, buf
	}
	return "", sum, buf
}

// check returns the first of e's problems that its shard checks (all but
// its position, an empty stream name and a repeated id) and records e in
// its stream (see Verifier for how a faulty event moves its stream).
// content is contentProblem's answer for e and sum its contents' hash.
func (sh *verifierShard) check(e *domain.Event, r streamRef, content string, sum domain.Hash) string {
	var problem string
	note := func(p string) {
		if problem == "" {
			problem = p
		}
	}
	if e.ID == "" {
		note("empty event id")
	}
	if e.Type == "" {
		note("empty event type")
	}
	var st verifiedStream
	var known bool
	var at headRef
	if r.order {
		st, at = sh.orders.lookup(r.id)
		known = at.found
	} else {
		st, known = sh.other[r.name]
	}
	var want int64
	var prev domain.Hash
	if known {
		want, prev = st.version+1, st.hash
	}
	switch {
	case e.Version < want:
		note(fmt.Sprintf("version %d repeats or goes back: the stream is already at version %d (reordered or duplicated event)", e.Version, want-1))
	case e.Version > want:
		note(fmt.Sprintf("version %d skips ahead: expected version %d (events missing before it)", e.Version, want))
	}
	if e.PrevHash != prev {
		if alt, ok := sh.alt[e.Stream]; !(ok && e.PrevHash == alt) {
			if want == 0 {
				note("prevHash of a stream's first event is not zero")
			} else {
				note(fmt.Sprintf("prevHash %s is not the hash %s of version %d (chain broken: an earlier event was changed or replaced)", short(e.PrevHash), short(prev), want-1))
			}
		}
	}
	if content != "" {
		note(content)
	}
	if known && e.Time < st.time {
		note(fmt.Sprintf("time %d is earlier than the previous event's time %d in the stream", e.Time, st.time))
	}
	if known && e.Version <= st.version {
		return problem // a step back: the stream stays where it was
	}
	// A store may hand out names that share memory with the whole event:
	// the map keeps a copy of the name.
	head := verifiedStream{version: e.Version, hash: e.Hash, time: e.Time}
	if r.order {
		sh.orders.set(r.id, at, head)
	} else {
		sh.other[strings.Clone(r.name)] = head
	}
	if sum != e.Hash {
		sh.alt[strings.Clone(e.Stream)] = sum
	} else if len(sh.alt) > 0 {
		delete(sh.alt, e.Stream)
	}
	return problem
}

// seen reports whether the id of key k was seen before, and records it.
func (sh *verifierShard) seen(k [16]byte) bool { return sh.ids.seen(k) }

func short(h domain.Hash) string { return h.String()[:12] + "…" }

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
	// Each shard's heads sorted on its own CPU, then merged.
	parts := make([][]StreamHead, len(v.shards))
	parallel(runtime.GOMAXPROCS(0), len(v.shards), func(s int) {
		parts[s] = v.shards[s].sortedHeads()
	})
	for len(parts) > 1 { // pairwise, each level's merges on every CPU
		next := make([][]StreamHead, (len(parts)+1)/2)
		parallel(runtime.GOMAXPROCS(0), len(next), func(i int) {
			if 2*i+1 == len(parts) {
				next[i] = parts[2*i]
			} else {
				next[i] = mergeHeads(parts[2*i], parts[2*i+1])
			}
		})
		parts = next
	}
	hs := parts[0]
	s := VerifySummary{
		OK:           v.faultCount == 0,
		Events:       v.events,
		Streams:      len(hs),
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

// sortedHeads returns the heads of sh's streams sorted by name. The order
// streams (all but a few) are sorted by their ids' digits as numbers, which
// orders them as their names without making and comparing the strings.
func (sh *verifierShard) sortedHeads() []StreamHead {
	type orderHead struct {
		key    uint64 // the id's digits, left-aligned in 19 digits
		digits uint8  // how many: "order-12" sorts before "order-120"
		id     int64
		st     verifiedStream
	}
	orders := make([]orderHead, 0, sh.orders.len())
	var others []StreamHead
	for stream, st := range sh.other {
		others = append(others, StreamHead{Stream: stream, Version: st.version, Hash: st.hash})
	}
	sh.orders.each(func(id int64, st verifiedStream) {
		if id < 0 {
			others = append(others, StreamHead{Stream: domain.OrderStream(id), Version: st.version, Hash: st.hash})
			return
		}
		key, digits := uint64(id), uint8(1)
		for n := id; n >= 10; n /= 10 {
			digits++
		}
		for d := digits; d < 19; d++ {
			key *= 10
		}
		orders = append(orders, orderHead{key: key, digits: digits, id: id, st: st})
	})
	slices.SortFunc(orders, func(a, b orderHead) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		return cmp.Compare(a.digits, b.digits)
	})
	slices.SortFunc(others, func(a, b StreamHead) int { return strings.Compare(a.Stream, b.Stream) })
	hs := make([]StreamHead, len(orders))
	for i := range orders {
		o := &orders[i]
		hs[i] = StreamHead{Stream: domain.OrderStream(o.id), Version: o.st.version, Hash: o.st.hash}
	}
	return mergeHeads(hs, others)
}

// mergeHeads merges two lists of heads sorted by stream name.
func mergeHeads(a, b []StreamHead) []StreamHead {
	out := make([]StreamHead, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Stream <= b[0].Stream {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// VerifyProgressEvery is how many events VerifyLog verifies between two
// progress calls.
const VerifyProgressEvery = 1 << 16

// verifyBatch is how many events VerifyLog hands to AddBatch at once: each
// step of a batch ends with every CPU's share done, and on a busy machine
// a worker may wait for a CPU each time (in batches of 1,024 events a
// verify took twice as long on a 2-CPU machine at a load of 4 to 5).
const verifyBatch = 16384

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
	// Records, when not nil, is given every event's recomputed hash, in
	// log order, a batch at a time, from a goroutine of its own: a batch's
	// while VerifyLog checks the next ones. VerifyLog returns once it has
	// taken them all.
	Records func(hashes []domain.Hash)
}

// VerifyLog reads store's whole log in commit order through a Verifier and
// returns its summary: every faulty event counted, the first MaxFaults
// listed, OK false when there is any. The error is only for a log that
// could not be read (EUNAVAILABLE, ctx's error …).
func VerifyLog(ctx context.Context, store domain.EventStore, opts VerifyOptions) (VerifySummary, error) {
	v := NewVerifier()
	v.MaxFaults, v.Records = opts.MaxFaults, opts.Records
	if v.Records != nil {
		// The Merkle records of a batch are built beside the checks of
		// the next ones instead of holding a CPU only while a batch's
		// shards are checked: nothing reads them before this returns.
		v.pipe = newRecordsPipe(v.Records)
		defer v.pipe.wait()
	}
	if head, err := store.Head(ctx); err == nil {
		v.Expect(head)
	}
	err := readahead.BatchesOf(ctx, store.ReadAll(ctx, 0, 0), verifyBatch, func(batch []domain.Event) bool {
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
