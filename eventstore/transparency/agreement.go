package transparency

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore"
)

// A log, its Merkle tree and the last checkpoint kept beside the tree
// must tell one story: the tree's records are the log's events, and the
// tree extends every checkpoint the log signed (C2SP tlog-checkpoint: a
// log must not sign a checkpoint inconsistent with one it signed). A log
// cut at its end (rows removed from its store), with or without its tree,
// tells another: serving it would append events at positions the signed
// tree holds with other hashes, a fork that only an outsider holding an
// old checkpoint could see. CheckAgreement is the cheap check every
// command that appends makes at start; Verify is the full one (the
// chains, the tree rebuilt from the events), which `tradeledger verify`
// and GET /api/v1/audit/verify answer.

// CheckAgreement returns what store's log, its tree and the checkpoint
// kept beside the tree say of each other, reading a few records and
// events (a bisection when they disagree): Problem is set when the log
// does not hold the tree's records (it was cut at its end, or its end
// was replaced), or the tree does not extend the kept checkpoint (the
// log and its tree were cut together, or the tree was rewritten). Only
// a checkpoint the log signed counts: one whose note opens under vkey,
// the log's verifier key ("": any). The error is for a log or tree that
// could not be read.
func CheckAgreement(ctx context.Context, store domain.EventStore, tree audit.TreeStore, vkey string) (audit.TreeVerdict, error) {
	var v audit.TreeVerdict
	size, err := tree.TreeSize(ctx)
	if err != nil {
		return v, err
	}
	v.Records = size
	kept, hasKept, err := keptSigned(ctx, tree, vkey)
	if err != nil {
		return v, err
	}
	if hasKept {
		v.Checkpoint, v.CheckpointRoot = kept.Size, kept.Root
	}
	head, err := store.Head(ctx)
	if err != nil {
		return v, err
	}
	if v.Agreed, err = agreedRecords(ctx, store, tree, size); err != nil {
		return v, err
	}
	v.LogEvents = v.Agreed
	if v.Agreed < size {
		if v.LostFrom, err = tree.RecordPosition(ctx, v.Agreed); err != nil {
			return v, err
		}
		if v.LostTo, err = tree.RecordPosition(ctx, size-1); err != nil {
			return v, err
		}
	}
	switch {
	case hasKept && kept.Size > v.Agreed:
		if v.Agreed == size {
			// The tree lacks records the checkpoint covers: cut with the
			// log, or only behind it (a tree kept in files, which
			// BuildTree catches up)?
			in, err := keptInLog(ctx, store, kept)
			if err != nil {
				return v, err
			}
			if in {
				break
			}
		}
		if v.LostFrom == 0 {
			v.LostFrom = head + 1
		}
	case hasKept:
		root, err := tlog.TreeHash(kept.Size, TreeHashReader(ctx, tree))
		if err != nil {
			return v, treeErr(err)
		}
		if root.String() != kept.Root {
			v.Problem = fmt.Sprintf("the Merkle tree's first %d records have root %s, not the root %s that the last checkpoint signed: the log or its tree was rewritten", kept.Size, root, kept.Root)
			return v, nil
		}
	}
	if hasKept && kept.Position > head && v.LostFrom != 0 {
		v.LostTo = max(v.LostTo, kept.Position) // the checkpoint's own event is gone too
	}
	if v.LostFrom != 0 {
		v.LostTo = max(v.LostTo, v.LostFrom)
	}
	if v.LostFrom != 0 {
		v.Problem = cutProblem(v, hasKept)
	}
	return v, nil
}

// cutProblem says, for a log cut at its end, how many events the tree
// and the last checkpoint cover, how many the log still has, and which
// positions are lost.
func cutProblem(v audit.TreeVerdict, hasKept bool) string {
	signed := "no checkpoint is kept"
	if hasKept {
		signed = fmt.Sprintf("the last checkpoint signed covers %d events", v.Checkpoint)
	}
	what := "the event log was cut at its end"
	if v.Agreed == v.Records {
		what = "the event log and its Merkle tree were cut at their end"
	}
	return fmt.Sprintf("%s: the Merkle tree holds %d records and %s, but the log holds only %d of them; positions %d to %d are lost",
		what, v.Records, signed, v.Agreed, v.LostFrom, v.LostTo)
}

// agreedRecords returns how many of the tree's first records (of size)
// are the log's events: size when the last one is, else found by
// bisection (a log cut or replaced from some record on).
func agreedRecords(ctx context.Context, store domain.EventStore, tree audit.TreeStore, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	if ok, err := recordInLog(ctx, store, tree, size-1); err != nil || ok {
		return size, err
	}
	// The answer k is in [lo, hi]: records [0, lo) agree, and record hi
	// (hence k = size) does not.
	lo, hi := int64(0), size-1
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		ok, err := recordInLog(ctx, store, tree, mid-1)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}

// keptInLog reports whether the log still holds the kept checkpoint's own
// event (and so every event the checkpoint covers, which came before it).
func keptInLog(ctx context.Context, store domain.EventStore, kept audit.KeptCheckpoint) (bool, error) {
	it := store.ReadAll(ctx, kept.Position, 1)
	defer it.Close()
	if !it.Next() {
		return false, it.Err()
	}
	e := it.Event()
	if e.Position != kept.Position || e.Type != domain.TypeCheckpointSigned || e.Stream != domain.StreamCheckpoints {
		return false, nil
	}
	var c domain.CheckpointSigned
	if err := e.Decode(&c); err != nil {
		return false, nil
	}
	return c == kept.CheckpointSigned, nil
}

// recordInLog reports whether the log holds record i's event: an event at
// the record's position whose recomputed hash gives the record's leaf.
func recordInLog(ctx context.Context, store domain.EventStore, tree audit.TreeStore, i int64) (bool, error) {
	pos, err := tree.RecordPosition(ctx, i)
	if err != nil {
		return false, err
	}
	leaf, err := tree.ReadTreeHashes(ctx, []int64{tlog.StoredHashIndex(0, i)})
	if err != nil {
		return false, err
	}
	it := store.ReadAll(ctx, pos, 1)
	defer it.Close()
	if !it.Next() {
		return false, it.Err()
	}
	e := it.Event()
	return e.Position == pos && audit.TreeLeaf(domain.ComputeHash(&e)) == leaf[0], nil
}

// Verify checks store's whole log (audit.VerifyLog with opts) and its
// tree: the tree rebuilt from the events has the stored tree's root at
// the stored tree's size, and the log extends the checkpoint kept beside
// the tree, if the log signed it (its note opens under vkey; "": any).
// The summary's Tree is that verdict; OK is false when either the
// chains or the tree fail, and Problem names the failures, the chains'
// first. Roots keeps the rebuilt tree's root at each of sizes too (a
// caller's saved checkpoints, Roots.Check). The error is for a log or
// tree that could not be read.
func Verify(ctx context.Context, store domain.EventStore, tree audit.TreeStore, vkey string, opts audit.VerifyOptions, sizes ...int64) (audit.VerifySummary, *Roots, error) {
	size, err := tree.TreeSize(ctx)
	if err != nil {
		return audit.VerifySummary{}, nil, err
	}
	kept, hasKept, err := keptSigned(ctx, tree, vkey)
	if err != nil {
		return audit.VerifySummary{}, nil, err
	}
	roots := NewRoots(append(append([]int64(nil), sizes...), size, kept.Size)...)
	if records := opts.Records; records != nil {
		opts.Records = func(hs []domain.Hash) { records(hs); roots.Add(hs) }
	} else {
		opts.Records = roots.Add
	}
	sum, err := audit.VerifyLog(ctx, store, opts)
	if err != nil {
		return sum, roots, err
	}
	v := audit.TreeVerdict{Records: size, LogEvents: roots.Size(), Agreed: min(size, roots.Size())}
	if hasKept {
		v.Checkpoint, v.CheckpointRoot = kept.Size, kept.Root
	}
	var problems []string
	if rebuilt, ok := roots.Root(size); !ok {
		problems = append(problems, fmt.Sprintf("the Merkle tree holds %d records, the log only %d events: events were removed from the log", size, roots.Size()))
		if v.LostFrom, err = tree.RecordPosition(ctx, roots.Size()); err != nil {
			return sum, roots, err
		}
		if v.LostTo, err = tree.RecordPosition(ctx, size-1); err != nil {
			return sum, roots, err
		}
	} else if size > 0 {
		v.Root = rebuilt.String()
		stored, err := tlog.TreeHash(size, TreeHashReader(ctx, tree))
		if err != nil {
			return sum, roots, treeErr(err)
		}
		if stored != rebuilt {
			problems = append(problems, fmt.Sprintf("the stored Merkle tree of %d records has root %s, the events give %s: events were changed after they were added (or the tree was)", size, stored, rebuilt))
		}
	}
	if hasKept {
		if err := roots.Check(Checkpoint{Size: kept.Size, Root: parseRoot(kept.Root)}); err != nil {
			problems = append(problems, fmt.Sprintf("the log does not extend the last checkpoint signed (%d events, root %s): %v", kept.Size, kept.Root, err))
		}
	}
	if len(problems) > 0 {
		v.Problem = strings.Join(problems, "; ")
		sum.OK = false
	}
	sum.Tree = &v
	sum.Problem = summaryProblem(sum)
	return sum, roots, nil
}

// parseRoot reads a checkpoint's root (zero when malformed: it then
// matches no tree).
func parseRoot(s string) tlog.Hash {
	h, _ := tlog.ParseHash(s)
	return h
}

// summaryProblem names sum's failures in plain words ("" when OK): the
// faulty events first, then the tree's verdict.
func summaryProblem(sum audit.VerifySummary) string {
	var parts []string
	if sum.FaultCount > 0 {
		p := fmt.Sprintf("%d faulty events", sum.FaultCount)
		if sum.Fault != nil {
			p += "; the first: " + sum.Fault.Error()
		}
		parts = append(parts, p)
	}
	if sum.Tree != nil && sum.Tree.Problem != "" {
		parts = append(parts, sum.Tree.Problem)
	}
	return strings.Join(parts, "; ")
}

// Verify is Verify over the Log's store and tree, with no saved
// checkpoints: what GET /api/v1/audit/verify answers.
func (l *Log) Verify(ctx context.Context, opts audit.VerifyOptions) (audit.VerifySummary, error) {
	sum, _, err := Verify(ctx, l.Store, l.Tree, l.Key.VerifierKey(), opts)
	return sum, err
}

// keptSigned is tree's kept checkpoint when the log signed it: its note
// opens under vkey (any when vkey is "") and says what the event says.
// A checkpoint of another key (the log's key was replaced, or someone
// recorded one that was never signed) is not this log's to hold it to.
func keptSigned(ctx context.Context, tree audit.TreeStore, vkey string) (audit.KeptCheckpoint, bool, error) {
	kept, ok, err := tree.KeptCheckpoint(ctx)
	if err != nil || !ok || vkey == "" {
		return kept, ok, err
	}
	c, err := OpenCheckpoint([]byte(kept.Note), vkey)
	if err != nil || c.Size != kept.Size || c.Root.String() != kept.Root {
		return audit.KeptCheckpoint{}, false, nil
	}
	return kept, true, nil
}

// extendsKept returns nil when the tree of size records extends the
// checkpoint kept beside it (or none is kept, or it is abandoned and
// afterCut: the first checkpoint after an accepted cut), else an
// EINTERNAL error saying why no checkpoint may be signed over this tree.
func (l *Log) extendsKept(ctx context.Context, size int64, afterCut bool) error {
	kept, ok, err := keptSigned(ctx, l.Tree, l.Key.VerifierKey())
	if err != nil || !ok || (afterCut && kept.Abandoned) {
		return err
	}
	if kept.Size > size {
		return domain.Errorf(domain.EINTERNAL, "no checkpoint signed: the Merkle tree holds %d records, fewer than the %d of the last checkpoint signed (the log was cut at its end)", size, kept.Size)
	}
	root, err := tlog.TreeHash(kept.Size, l.hashReader(ctx))
	if err != nil {
		return treeErr(err)
	}
	if root.String() != kept.Root {
		return domain.Errorf(domain.EINTERNAL, "no checkpoint signed: the Merkle tree's first %d records have root %s, not the last checkpoint's %s", kept.Size, root, kept.Root)
	}
	return nil
}

// AcceptCut goes on with a log cut at its end, as an operator decided
// (serve --accept-truncated-log) after CheckAgreement found v: the tree
// is cut back to the records the log still holds (v.Agreed) and caught
// up with the log; the decision is recorded (LogCutAccepted in the
// log-cuts stream: what was found, the lost positions, the last
// checkpoint kept, which the log no longer extends); and a checkpoint is
// signed whose extension line says so. It returns that checkpoint. A v
// without a problem is EINVALID: there is nothing to accept.
//
// A crash half-way leaves a log that the next start refuses again (the
// kept checkpoint is replaced only by the new one): accepting again
// records the decision again and signs.
func (l *Log) AcceptCut(ctx context.Context, v audit.TreeVerdict) (domain.CheckpointSigned, error) {
	if v.Problem == "" {
		return domain.CheckpointSigned{}, domain.Errorf(domain.EINVALID, "the log and its Merkle tree agree: no cut to accept")
	}
	// Cut (or only abandon the kept checkpoint, when the tree was cut
	// with the log).
	if err := l.Tree.CutTree(ctx, v.Agreed); err != nil {
		return domain.CheckpointSigned{}, fmt.Errorf("cut the Merkle tree to %d records: %w", v.Agreed, err)
	}
	if err := l.Tree.BuildTree(ctx, nil); err != nil {
		return domain.CheckpointSigned{}, err
	}
	kept, hasKept, err := keptSigned(ctx, l.Tree, l.Key.VerifierKey())
	if err != nil {
		return domain.CheckpointSigned{}, err
	}
	decision := domain.LogCutAccepted{Kept: v.Agreed, TreeRecords: v.Records, LostFrom: v.LostFrom, LostTo: v.LostTo, Problem: v.Problem}
	if hasKept {
		decision.Checkpoint = &kept.CheckpointSigned
	}
	cmds := l.Commands
	if cmds == nil {
		cmds = eventstore.NewCommands(l.Store, nil)
	}
	if _, err := eventstore.Run(ctx, cmds, eventstore.Command[struct{}]{
		Stream: domain.StreamLogCuts,
		Load: func(context.Context) (struct{}, domain.ExpectedVersion, error) {
			return struct{}{}, domain.Any, nil
		},
		Decide: func(struct{}) ([]domain.Event, error) { return domain.DecideLogCutAccepted(decision, l.Clock) },
	}); err != nil {
		return domain.CheckpointSigned{}, fmt.Errorf("record the accepted log cut: %w", err)
	}
	if err := l.Tree.BuildTree(ctx, nil); err != nil {
		return domain.CheckpointSigned{}, err
	}
	ext := fmt.Sprintf("log cut accepted: %d of %d records kept, positions %d to %d lost", v.Agreed, v.Records, v.LostFrom, v.LostTo)
	if hasKept {
		ext += fmt.Sprintf(", the checkpoint of %d records (root %s) abandoned", kept.Size, kept.Root)
	}
	c, _, err := l.issueCheckpoint(ctx, true, &cutIssue{extension: ext})
	if err != nil {
		return c, fmt.Errorf("sign the checkpoint after the accepted log cut: %w", err)
	}
	// The tree adds the checkpoint's event, and keeps it in place of the
	// abandoned one.
	return c, l.Tree.BuildTree(ctx, nil)
}
