package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
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

// open opens the data directory for reading the log. A missing directory is
// an error rather than a fresh, empty log: an auditor who mistyped a path
// must not be told "0 events, all sound".
func (f *storeFlags) open(ctx context.Context) (*DataDir, error) {
	if st, err := os.Stat(f.data); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("no data directory at %s: give --data the directory serve uses (default ./data)", f.data)
	}
	return OpenDataDir(ctx, f.data, f.eventstore, zap.NewNop())
}

func runVerify(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("verify", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	heads := fs.Bool("heads", false, "also list every stream's head (version and hash); every order is a stream, so the list grows with the history")
	maxFaults := fs.Int("max-faults", domain.DefaultMaxFaults, "list at most this many faulty events (all are counted)")
	asJSON := fs.Bool("json", false, "print the result as JSON (the same document as GET /api/v1/audit/verify)")
	digest := fs.String("digest", "", "heads digest recorded earlier (64 hex digits): a different digest now fails the check")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *maxFaults < 0 {
		return fmt.Errorf("--max-faults must be 0 or more, not %d", *maxFaults)
	}
	var want domain.Hash
	if *digest != "" {
		if err := want.UnmarshalText([]byte(strings.TrimSpace(*digest))); err != nil {
			return fmt.Errorf("--digest: %w", err)
		}
	}
	d, err := sf.open(ctx)
	if err != nil {
		return auditFailure{err, exitUnreadable}
	}
	defer d.Close()

	prog := newProgress(env.Stderr, "verify")
	head, _ := d.Store.Head(ctx)
	start := time.Now()
	opts := domain.VerifyOptions{Heads: *heads, MaxFaults: *maxFaults, Progress: func(n int64, pos uint64) { prog.update(n, pos, head) }}
	if *maxFaults == 0 {
		opts.MaxFaults = -1 // count only
	}
	sum, err := domain.VerifyLog(ctx, d.Store, opts)
	prog.done()
	if err != nil {
		return auditFailure{err, exitUnreadable}
	}
	elapsed := time.Since(start)

	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printVerifySummary(env.Stdout, sum, elapsed)
	}
	if !sum.OK {
		msg := fmt.Sprintf("log verification failed: %d faulty events", sum.FaultCount)
		if sum.Fault != nil {
			msg += "; the first: " + sum.Fault.Error()
		}
		return auditFailure{errors.New(msg), exitTampered}
	}
	if *digest != "" && sum.HeadsDigest != want {
		return auditFailure{fmt.Errorf("log verification failed: heads digest %s differs from the recorded %s (a stream was rewritten or cut at its end)", sum.HeadsDigest, want), exitTampered}
	}
	return nil
}

// printVerifySummary writes the heads when the summary has them (one
// "head STREAM VERSION HASH" line each), one line per listed fault
// ("bad event: …"), and one final summary line: "OK: …" or "TAMPERED: …".
func printVerifySummary(w io.Writer, s domain.VerifySummary, elapsed time.Duration) {
	for _, h := range s.Heads {
		fmt.Fprintf(w, "head %s %d %s\n", h.Stream, h.Version, h.Hash)
	}
	for _, f := range s.Faults {
		fmt.Fprintf(w, "bad event: stream %s version %d position %d id %s type %s: %s\n", f.Stream, f.Version, f.Position, f.ID, f.Type, f.Problem)
	}
	if !s.OK {
		more := ""
		if n := s.FaultCount - int64(len(s.Faults)); n > 0 {
			more = fmt.Sprintf(" (%d not listed: --max-faults N lists more)", n)
		}
		fmt.Fprintf(w, "TAMPERED: %d faulty events%s among %d events in %d streams, up to position %d; heads digest %s\n",
			s.FaultCount, more, s.Events, s.Streams, s.LastPosition, s.HeadsDigest)
		return
	}
	fmt.Fprintf(w, "OK: %d events in %d streams verified up to position %d in %s; heads digest %s\n",
		s.Events, s.Streams, s.LastPosition, elapsed.Round(time.Millisecond), s.HeadsDigest)
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
