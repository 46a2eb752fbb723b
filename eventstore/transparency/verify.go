package transparency

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/domain/readahead"
)

// Roots rebuilds the log's tree from the events themselves, as a
// verification reads them (its Add is audit.VerifyOptions.Records), and
// keeps its root at chosen sizes: a saved checkpoint holds for the log
// when the tree of its first Size events has its root.
type Roots struct {
	frontier audit.TreeFrontier
	at       map[int64]tlog.Hash
}

// NewRoots returns Roots that keeps the root at each of sizes.
func NewRoots(sizes ...int64) *Roots {
	r := &Roots{at: make(map[int64]tlog.Hash, len(sizes))}
	for _, n := range sizes {
		r.at[n] = tlog.Hash{}
	}
	if _, ok := r.at[0]; ok {
		r.at[0] = tlog.Hash(r.frontier.Root())
	}
	return r
}

// Add adds the next records: each event's recomputed hash, in log order.
func (r *Roots) Add(hashes []domain.Hash) {
	for _, h := range hashes {
		var buf [64]domain.Hash
		r.frontier.Add(h, buf[:0])
		if _, ok := r.at[r.frontier.Size()]; ok {
			r.at[r.frontier.Size()] = tlog.Hash(r.frontier.Root())
		}
	}
}

// Size returns the number of records added.
func (r *Roots) Size() int64 { return r.frontier.Size() }

// Root returns the root of the tree of the first size records, when
// NewRoots was asked for it and that many were added.
func (r *Roots) Root(size int64) (tlog.Hash, bool) {
	h, ok := r.at[size]
	return h, ok && size <= r.frontier.Size()
}

// Check returns nil when the rebuilt tree has c's root at c's size, or
// what differs: the log holds fewer events (it was cut), or another tree
// (an event at or before c's size was edited, removed, inserted or
// reordered, whatever its stream's chain says now).
func (r *Roots) Check(c Checkpoint) error {
	if c.Size > r.Size() {
		return fmt.Errorf("the log holds %d events, fewer than the checkpoint's %d: it was cut", r.Size(), c.Size)
	}
	root, ok := r.Root(c.Size)
	if !ok {
		return fmt.Errorf("no root kept for %d records", c.Size)
	}
	if root != c.Root {
		return fmt.Errorf("the log's first %d events have root %s, not the checkpoint's %s: they were changed since it was signed", c.Size, root, c.Root)
	}
	return nil
}

// SinceSummary is what VerifySince found.
type SinceSummary struct {
	// From is the checkpoint's size; To the tree's size verified up to,
	// Root the root of its To records, rebuilt from the events.
	From, To int64
	Root     tlog.Hash
	// Verify is the verification of the events after the checkpoint
	// (records From to To−1): their chains, linked to the heads their
	// streams had within the checkpoint.
	Verify audit.VerifySummary
	// Linked counts the streams whose earlier head was proven to be in
	// the checkpoint's tree (an inclusion proof against its root).
	Linked int
	// Consistency is the proof that the checkpoint's tree is a prefix of
	// the tree of To records (tlog.CheckTree holds).
	Consistency []tlog.Hash
	// Problem says why the log does not extend the checkpoint ("" when it
	// does); the events' own faults are in Verify.
	Problem string
}

// OK reports whether the log extends the checkpoint and the events after
// it are sound.
func (s SinceSummary) OK() bool { return s.Problem == "" && s.Verify.OK }

// VerifySince checks that the log extends the checkpoint c, reading only
// the events after it: the stored tree's first c.Size records have c's
// root; the events after them are sound (audit.Verifier), each stream's
// first one linked to its stream's previous event, which an inclusion
// proof against c's root shows to be the one c covers; and the tree
// rebuilt from c's frontier and those events is the stored tree, whose
// consistency proof with c is returned. Events at or before c's size
// that no later event links to are c's to vouch for: a verification
// against c itself (VerifyCheckpoints) reads them. The error is only for a
// log that could not be read.
func VerifySince(ctx context.Context, store domain.EventStore, tree audit.TreeStore, c Checkpoint, opts audit.VerifyOptions) (SinceSummary, error) {
	sum := SinceSummary{From: c.Size}
	size, err := tree.TreeSize(ctx)
	if err != nil {
		return sum, err
	}
	sum.To = size
	if size < c.Size {
		sum.Problem = fmt.Sprintf("the log's tree holds %d records, fewer than the checkpoint's %d: the log was cut", size, c.Size)
		return sum, nil
	}
	hr := cachedReader(TreeHashReader(ctx, tree))
	if sum.Problem, err = checkPrefix(hr, c); err != nil || sum.Problem != "" {
		return sum, err
	}
	frontier, err := frontierAt(ctx, tree, c.Size)
	if err != nil {
		return sum, err
	}
	from, err := positionAfter(ctx, tree, c.Size)
	if err != nil {
		return sum, err
	}
	n := int(size - c.Size)
	firsts, err := streamFirsts(ctx, store, from, n)
	if err != nil {
		return sum, err
	}
	v := audit.NewVerifier()
	v.MaxFaults = opts.MaxFaults
	if sum.Linked, sum.Problem, err = seedLinks(ctx, store, tree, hr, c, firsts, v); err != nil || sum.Problem != "" {
		return sum, err
	}
	records, err := verifyAfter(ctx, store, from, n, v, &frontier, opts.Progress)
	if err != nil {
		return sum, err
	}
	sum.Verify = v.Summary(opts.Heads)
	if records != int64(n) {
		sum.Problem = fmt.Sprintf("the log holds %d events after the checkpoint, its tree %d records", records, n)
		return sum, nil
	}
	sum.Root = tlog.Hash(frontier.Root())
	sum.Consistency, sum.Problem, err = extendsCheckpoint(hr, c, size, sum.Root)
	return sum, err
}

// checkPrefix checks that the stored tree's first c.Size records have c's
// root; problem says why not.
func checkPrefix(hr tlog.HashReader, c Checkpoint) (problem string, err error) {
	root, err := tlog.TreeHash(c.Size, hr)
	if err != nil {
		return "", treeErr(err)
	}
	if root != c.Root {
		return fmt.Sprintf("the log's tree of %d records has root %s, not the checkpoint's %s: the log was rewritten", c.Size, root, c.Root), nil
	}
	return "", nil
}

// positionAfter returns the position from which the events after the
// tree's first size records are read: after the last of them (0 when
// size is 0).
func positionAfter(ctx context.Context, tree audit.TreeStore, size int64) (uint64, error) {
	if size == 0 {
		return 0, nil
	}
	last, err := tree.RecordPosition(ctx, size-1)
	if err != nil {
		return 0, err
	}
	return last + 1, nil
}

// streamFirsts reads the n events from position from and returns the
// streams they continue, each with the version of its first event there.
func streamFirsts(ctx context.Context, store domain.EventStore, from uint64, n int) (map[string]int64, error) {
	firsts := map[string]int64{}
	if n == 0 {
		return firsts, nil
	}
	err := readahead.Batches(ctx, store.ReadAll(ctx, from, n), func(batch []domain.Event) bool {
		for i := range batch {
			if _, ok := firsts[batch[i].Stream]; !ok {
				firsts[strings.Clone(batch[i].Stream)] = batch[i].Version
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("read the log after the checkpoint: %w", err)
	}
	return firsts, nil
}

// seedLinks seeds v with the head each stream of firsts had within c (the
// event before its first one after c), proven to be in c's tree by
// provenHead, in stream order; linked counts the streams seeded, problem
// says why a head could not be proven (then the seeding stops there).
func seedLinks(ctx context.Context, store domain.EventStore, tree audit.TreeStore, hr tlog.HashReader, c Checkpoint, firsts map[string]int64, v *audit.Verifier) (linked int, problem string, err error) {
	for _, s := range slices.Sorted(maps.Keys(firsts)) {
		version := firsts[s]
		if version <= 0 {
			continue
		}
		prev, problem, err := provenHead(ctx, store, tree, hr, c, s, version-1)
		if err != nil || problem != "" {
			return linked, problem, err
		}
		v.Seed(s, prev.Version, domain.ComputeHash(prev), prev.Time)
		linked++
	}
	return linked, "", nil
}

// verifyAfter verifies the n events from position from with v, adding
// their records to frontier and telling progress (if set) after each
// batch, and returns how many records it added.
func verifyAfter(ctx context.Context, store domain.EventStore, from uint64, n int, v *audit.Verifier, frontier *audit.TreeFrontier, progress func(records int64, position uint64)) (int64, error) {
	records := int64(0)
	v.Records = func(hs []domain.Hash) {
		var buf [64]domain.Hash
		for _, h := range hs {
			frontier.Add(h, buf[:0])
		}
		records += int64(len(hs))
	}
	if n == 0 {
		return 0, nil
	}
	err := readahead.Batches(ctx, store.ReadAll(ctx, from, n), func(batch []domain.Event) bool {
		v.AddBatch(batch)
		if progress != nil {
			progress(records, batch[len(batch)-1].Position)
		}
		return true
	})
	if err != nil {
		return records, fmt.Errorf("read the log after the checkpoint: %w", err)
	}
	return records, nil
}

// extendsCheckpoint checks that the stored tree of size records has root
// (the one the events give) and proves it consistent with c: the proof
// (empty for an empty c), or problem saying why not.
func extendsCheckpoint(hr tlog.HashReader, c Checkpoint, size int64, root tlog.Hash) (proof []tlog.Hash, problem string, err error) {
	stored, err := tlog.TreeHash(size, hr)
	if err != nil {
		return nil, "", treeErr(err)
	}
	if stored != root {
		return nil, fmt.Sprintf("the stored tree of %d records has root %s, the events give %s: the tree does not match the log", size, stored, root), nil
	}
	if c.Size == 0 {
		return []tlog.Hash{}, "", nil // every tree extends the empty one
	}
	p, err := tlog.ProveTree(size, c.Size, hr)
	if err != nil {
		return nil, "", treeErr(err)
	}
	if err := tlog.CheckTree(p, size, root, c.Size, c.Root); err != nil {
		return nil, fmt.Sprintf("no consistency proof from the checkpoint's %d records to %d: %v", c.Size, size, err), nil
	}
	return nonNil(p), "", nil
}

// provenHead reads stream's event at version and proves it is in c's
// tree: its record index, below c's size, and an inclusion proof of its
// recomputed hash against c's root. problem says why not.
func provenHead(ctx context.Context, store domain.EventStore, tree audit.TreeStore, hr tlog.HashReader, c Checkpoint, stream string, version int64) (*domain.Event, string, error) {
	it := store.ReadStream(ctx, stream, version, 1)
	defer it.Close()
	if !it.Next() {
		if err := it.Err(); err != nil {
			return nil, "", err
		}
		return nil, fmt.Sprintf("stream %s has no version %d, which its first event after the checkpoint follows: the log was cut", stream, version), nil
	}
	e := it.Event()
	idx, err := tree.RecordIndex(ctx, e.Position)
	if domain.ErrorCode(err) == domain.ENOTFOUND || (err == nil && idx >= c.Size) {
		return nil, fmt.Sprintf("stream %s version %d (position %d) is not among the checkpoint's %d records: the log was reordered", stream, version, e.Position, c.Size), nil
	}
	if err != nil {
		return nil, "", err
	}
	p, err := tlog.ProveRecord(c.Size, idx, hr)
	if err != nil {
		return nil, "", treeErr(err)
	}
	h := domain.ComputeHash(&e)
	if tlog.CheckRecord(p, c.Size, c.Root, idx, tlog.RecordHash(h[:])) != nil {
		return nil, fmt.Sprintf("stream %s version %d (record %d) is not the event the checkpoint covers: it was changed since", stream, version, idx), nil
	}
	return &e, "", nil
}

// frontierAt reads the tree's frontier at size from its stored hashes.
func frontierAt(ctx context.Context, tree audit.TreeStore, size int64) (audit.TreeFrontier, error) {
	levels, idx := audit.FrontierLevels(size)
	indexes := make([]int64, len(levels))
	for i, l := range levels {
		indexes[i] = tlog.StoredHashIndex(l, idx[i])
	}
	hs, err := tree.ReadTreeHashes(ctx, indexes)
	if err != nil {
		return audit.TreeFrontier{}, err
	}
	return audit.NewTreeFrontier(size, hs)
}

// cachedReader remembers the hashes r read: the proofs of one
// verification share their upper levels.
func cachedReader(r tlog.HashReader) tlog.HashReader {
	cache := map[int64]tlog.Hash{}
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		var missing []int64
		for _, x := range indexes {
			if _, ok := cache[x]; !ok {
				missing = append(missing, x)
			}
		}
		if len(missing) > 0 {
			hs, err := r.ReadHashes(missing)
			if err != nil {
				return nil, err
			}
			for i, x := range missing {
				cache[x] = hs[i]
			}
		}
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			out[i] = cache[x]
		}
		return out, nil
	})
}

// BundleStatement is what a checked Bundle proves.
type BundleStatement struct {
	Order      int64
	Checkpoint Checkpoint
	Events     []BundleEvent
}

// Sentence says in one sentence what the bundle proves, and what it does
// not.
func (s BundleStatement) Sentence() string {
	types := make([]string, len(s.Events))
	idx := make([]string, len(s.Events))
	for i, e := range s.Events {
		types[i] = e.Event.Type
		idx[i] = fmt.Sprint(e.Index)
	}
	return fmt.Sprintf("The %d events of order %d (%s, versions 0 to %d, each chained to the one before) are records %s of log %s, whose tree of %d records has root %s as its key signed; events of the order recorded after that checkpoint, if any, are not covered.",
		len(s.Events), s.Order, strings.Join(types, ", "), len(s.Events)-1, strings.Join(idx, ", "), s.Checkpoint.Origin, s.Checkpoint.Size, s.Checkpoint.Root)
}

// VerifyBundle checks a bundle with the verifier key vkey and nothing
// else: the checkpoint's signature; that the events are the order's
// stream from version 0, each chained to the one before; each event's
// hash recomputed from its fields (its data compacted, as the log stores
// it), its leaf, and its inclusion proof against the checkpoint's root.
// Any failure is EINVALID, saying which.
func VerifyBundle(data []byte, vkey string) (BundleStatement, error) {
	var b Bundle
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: not a proof bundle: %v", err)
	}
	if b.Format != BundleFormat {
		return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: format %q, want %q", b.Format, BundleFormat)
	}
	c, err := OpenCheckpoint([]byte(b.Checkpoint), vkey)
	if err != nil {
		return BundleStatement{}, err
	}
	if len(b.Events) == 0 {
		return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: no events")
	}
	stream := domain.OrderStream(b.Order)
	var prev domain.Hash
	for i := range b.Events {
		be := &b.Events[i]
		e := be.Event
		var compact bytes.Buffer
		if err := json.Compact(&compact, e.Data); err != nil {
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d: data is not JSON", i)
		}
		e.Data = compact.Bytes()
		switch {
		case e.Stream != stream:
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d is of stream %s, not the order's %s", i, e.Stream, stream)
		case e.Version != int64(i):
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d has version %d: the order's events must all be there, from version 0", i, e.Version)
		case e.PrevHash != prev:
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d (version %d) is not chained to the one before", i, e.Version)
		}
		h := domain.ComputeHash(&e)
		if h != e.Hash {
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d (version %d): its hash does not match its contents", i, e.Version)
		}
		if be.Index < 0 || be.Index >= c.Size {
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d is record %d, outside the checkpoint's %d records", i, be.Index, c.Size)
		}
		if i > 0 && be.Index <= b.Events[i-1].Index {
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d is record %d, not after the one before", i, be.Index)
		}
		if err := tlog.CheckRecord(be.Proof, c.Size, c.Root, be.Index, tlog.RecordHash(h[:])); err != nil {
			return BundleStatement{}, domain.Errorf(domain.EINVALID, "bundle: event %d (version %d, record %d) is not in the checkpoint's tree: %v", i, e.Version, be.Index, err)
		}
		prev = h
	}
	return BundleStatement{Order: b.Order, Checkpoint: c, Events: b.Events}, nil
}
