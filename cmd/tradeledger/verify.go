package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// Exit statuses of verify: 0 the log is sound, 1 it is not (tampering or a
// heads digest that differs from --digest), 2 it could not be read.
const (
	exitTampered   = exitCode(1)
	exitUnreadable = exitCode(2)
)

// auditFailure is an error that main prints as is and then exits with code.
type auditFailure struct {
	err  error
	code exitCode
}

func (e auditFailure) Error() string   { return e.err.Error() }
func (e auditFailure) Unwrap() []error { return []error{e.err, e.code} }

// storeFlags are the flags every audit command shares to reach the log.
type storeFlags struct {
	data       string
	eventstore string
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	f.data = "./data"
	fs.StringVar(&f.data, "data", f.data, "data directory")
	fs.StringVar(&f.eventstore, "eventstore", "", "event store URL (empty: the embedded SQLite file in the data directory; esdb://… for EventStoreDB)")
}

// dataDirFlags registers --data and --eventstore as passwd, attention, sync
// and reconcile have them, and returns their values.
func dataDirFlags(fs *flag.FlagSet) (data, storeURL *string) {
	return fs.String("data", "./data", "data directory"),
		fs.String("eventstore", "", "event store URL (empty: embedded SQLite in the data dir)")
}

// open opens the data directory for reading the log (a log cut at its end
// too: openDataDirToRead). A missing directory is an error rather than a
// fresh, empty log: an auditor who mistyped a path must not be told "0
// events, all sound".
func (f *storeFlags) open(ctx context.Context) (*DataDir, error) {
	if st, err := os.Stat(f.data); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("no data directory at %s: give --data the directory serve uses (default ./data)", f.data)
	}
	return openDataDirToRead(ctx, f.data, f.eventstore, zap.NewNop())
}

// verifyFlags are verify's flags.
type verifyFlags struct {
	store       storeFlags
	heads       bool
	maxFaults   int
	asJSON      bool
	digest      string
	saved       checkpointFiles
	since       string
	key         string
	witnessed   witnessKeys // --witness-key, --quorum (witnesscheck.go)
	snapshots   bool
	snapshotDir string
	pnlMethod   string
}

func (f *verifyFlags) register(fs *flag.FlagSet) {
	f.store.register(fs)
	fs.BoolVar(&f.heads, "heads", false, "also list every stream's head (version and hash); every order is a stream, so the list grows with the history")
	fs.IntVar(&f.maxFaults, "max-faults", audit.DefaultMaxFaults, "list at most this many faulty events (all are counted)")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON (the same document as GET /api/v1/audit/verify)")
	fs.StringVar(&f.digest, "digest", "", "heads digest recorded earlier (64 hex digits): a different digest now fails the check")
	fs.Var(&f.saved, "checkpoint", "a signed checkpoint FILE kept earlier (repeatable): the log must extend each (its signature, and the tree of its first N events has its root)")
	fs.StringVar(&f.since, "since", "", "a signed checkpoint FILE kept earlier: verify only the events after it, and that the log extends it")
	fs.StringVar(&f.key, "key", "", "verifier key of the checkpoints, or a file holding it (default: the data dir's own)")
	f.witnessed.register(fs)
	fs.BoolVar(&f.snapshots, "snapshots", false, "check each kept read-model snapshot instead: rebuild the state at its position from the log and compare")
	fs.StringVar(&f.snapshotDir, "snapshot-dir", "", "with --snapshots: the snapshots' directory (default: the data directory's snapshots/)")
	fs.StringVar(&f.pnlMethod, "pnl-method", "lofo", "with --snapshots: serve's --pnl-method (the order records' PNL in a snapshot depends on it)")
}

// check refuses the flags' combinations verify cannot honour (--snapshots
// or --since with the flags of a whole verification, a negative
// --max-faults) and returns the --digest given (the zero hash when none),
// or an error naming the flag.
func (f *verifyFlags) check() (domain.Hash, error) {
	var want domain.Hash
	if f.maxFaults < 0 {
		return want, fmt.Errorf("--max-faults must be 0 or more, not %d", f.maxFaults)
	}
	if f.snapshots && (f.since != "" || len(f.saved) > 0 || f.digest != "" || f.asJSON || f.heads) {
		return want, errors.New("--snapshots checks the read-model snapshots: it cannot be combined with --since, --checkpoint, --digest, --json or --heads")
	}
	if f.since != "" && (len(f.saved) > 0 || f.digest != "" || f.asJSON) {
		return want, errors.New("--since verifies the events after one checkpoint: it cannot be combined with --checkpoint, --digest or --json")
	}
	if f.digest != "" {
		if err := want.UnmarshalText([]byte(strings.TrimSpace(f.digest))); err != nil {
			return want, fmt.Errorf("--digest: %w", err)
		}
	}
	return want, nil
}

// verifierKey is the key the checkpoints are checked with: --key (the
// key, or a file holding it), else the data directory's own.
func (f *verifyFlags) verifierKey(d *DataDir) string {
	if f.key == "" {
		return d.CheckpointKey.VerifierKey()
	}
	if b, err := os.ReadFile(f.key); err == nil {
		return strings.TrimSpace(string(b))
	}
	return f.key
}

// options are the verification's options: --heads, and --max-faults (0
// counts the faults without listing any).
func (f *verifyFlags) options() audit.VerifyOptions {
	opts := audit.VerifyOptions{Heads: f.heads, MaxFaults: f.maxFaults}
	if f.maxFaults == 0 {
		opts.MaxFaults = -1 // count only
	}
	return opts
}

// openCheckpoints checks every checkpoint file given (--checkpoint and
// --since) before the log is read, so that a forged one fails first: its
// signature under vkey, then its witnesses' cosignatures (--witness-key;
// what they say goes to out). It returns the --checkpoint ones, in order.
func (f *verifyFlags) openCheckpoints(vkey string, out io.Writer) ([]savedCheckpoint, error) {
	var checkpoints []savedCheckpoint
	for i, file := range append(f.saved[:len(f.saved):len(f.saved)], f.since) {
		if file == "" {
			continue
		}
		c, err := openCheckpointFile(file, vkey)
		if err != nil {
			return nil, err
		}
		if err := f.witnessed.checkFile(file, out); err != nil {
			return nil, err
		}
		if i < len(f.saved) {
			checkpoints = append(checkpoints, c)
		}
	}
	return checkpoints, nil
}

func runVerify(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("verify", env.Stderr)
	var f verifyFlags
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	want, err := f.check()
	if err != nil {
		return err
	}
	d, err := f.store.open(ctx)
	if err != nil {
		return auditFailure{err, exitUnreadable}
	}
	defer d.Close()
	if f.snapshots {
		return verifySnapshots(ctx, d, f.snapshotDir, f.pnlMethod, env)
	}
	vkey := f.verifierKey(d)
	checkpoints, err := f.openCheckpoints(vkey, env.Stdout)
	if err != nil {
		return err
	}
	if f.since != "" {
		return verifySince(ctx, d, f.since, vkey, f.options(), env)
	}
	return verifyWhole(ctx, d, vkey, f.options(), checkpoints, f.digest, want, f.asJSON, env)
}

// verifyWhole is verify without --since: every event of the log, the tree
// rebuilt from them as they are read and compared with the stored tree's
// root, the kept checkpoint's and each saved checkpoint's
// (transparency.Verify); the verdict (verify_verdict.go) is printed as
// text or JSON and is an auditFailure when the log is not sound.
func verifyWhole(ctx context.Context, d *DataDir, vkey string, opts audit.VerifyOptions, checkpoints []savedCheckpoint, digest string, want domain.Hash, asJSON bool, env *Env) error {
	prog := newProgress(env.Stderr, "verify")
	head, _ := d.Store.Head(ctx)
	start := time.Now()
	opts.Progress = func(n int64, pos uint64) { prog.update(n, pos, head) }
	var sizes []int64
	for _, c := range checkpoints {
		sizes = append(sizes, c.cp.Size)
	}
	sum, roots, err := transparency.Verify(ctx, d.Store, d.Tree, vkey, opts, sizes...)
	prog.done()
	if err != nil {
		return auditFailure{err, exitUnreadable}
	}
	v := newVerifyVerdict(sum, roots, checkpoints, digest, want) // verify_verdict.go
	return v.report(env.Stdout, asJSON, time.Since(start))
}

// verifySince is verify --since FILE: the events after the checkpoint in
// FILE, and that the log extends it (transparency.VerifySince).
func verifySince(ctx context.Context, d *DataDir, file, vkey string, opts audit.VerifyOptions, env *Env) error {
	saved, err := openCheckpointFile(file, vkey)
	if err != nil {
		return err
	}
	start := time.Now()
	prog := newProgress(env.Stderr, "verify")
	head, _ := d.Store.Head(ctx)
	if err := d.Tree.BuildTree(ctx, func(n int64) { prog.update(n, 0, head) }); err != nil {
		prog.done()
		return auditFailure{fmt.Errorf("build the Merkle tree: %w", err), exitUnreadable}
	}
	opts.Progress = func(n int64, pos uint64) { prog.update(n, pos, head) }
	sum, err := transparency.VerifySince(ctx, d.Store, d.Tree, saved.cp, opts)
	prog.done()
	if err != nil {
		return auditFailure{err, exitUnreadable}
	}
	for _, f := range sum.Verify.Faults {
		fmt.Fprintf(env.Stdout, "bad event: stream %s version %d position %d id %s type %s: %s\n", f.Stream, f.Version, f.Position, f.ID, f.Type, f.Problem)
	}
	switch {
	case sum.Problem != "":
		fmt.Fprintf(env.Stdout, "TAMPERED: the log does not extend checkpoint %s (%d records): %s\n", file, saved.cp.Size, sum.Problem)
		return auditFailure{fmt.Errorf("log verification failed: checkpoint %s (%d records): %s", file, saved.cp.Size, sum.Problem), exitTampered}
	case !sum.Verify.OK:
		fmt.Fprintf(env.Stdout, "TAMPERED: %d faulty events among the %d after checkpoint %s\n", sum.Verify.FaultCount, sum.Verify.Events, file)
		return auditFailure{fmt.Errorf("log verification failed: %d faulty events after checkpoint %s; the first: %s", sum.Verify.FaultCount, file, sum.Verify.Fault.Error()), exitTampered}
	}
	fmt.Fprintf(env.Stdout, "OK: the log extends checkpoint %s (%d records, root %s): the %d events after it verified in %s, %d streams linked to it by inclusion proofs, consistency proof to %d records, root %s\n",
		file, saved.cp.Size, saved.cp.Root, sum.Verify.Events, time.Since(start).Round(time.Millisecond), sum.Linked, sum.To, sum.Root)
	return nil
}

// progress shows a self-overwriting progress line on stderr, only when
// stderr is a terminal (so logs and pipes stay clean).
type progress struct {
	w     io.Writer
	what  string
	on    bool
	last  time.Time
	shown bool
}

func newProgress(w io.Writer, what string) *progress {
	return &progress{w: w, what: what, on: isTerminal(w)}
}

// update shows n events done, at position pos of head (head 0: unknown).
func (p *progress) update(n int64, pos, head uint64) {
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	if head > 0 {
		fmt.Fprintf(p.w, "\r%s: %d events, position %d of %d (%.0f%%)   ", p.what, n, pos, head, 100*float64(pos)/float64(head))
	} else {
		fmt.Fprintf(p.w, "\r%s: %d events, position %d   ", p.what, n, pos)
	}
	p.shown = true
}

// done clears the progress line.
func (p *progress) done() {
	if p.shown {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 72))
		p.shown = false
	}
}
