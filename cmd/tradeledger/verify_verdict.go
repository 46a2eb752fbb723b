package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// verifyVerdict is the whole verdict of `tradeledger verify`, settled
// before anything is printed, so that stdout never says OK when the exit
// status is 1: the log's (its chains, its Merkle tree and the checkpoint
// kept beside it: transparency.Verify), then each saved checkpoint's
// (--checkpoint) and the recorded heads digest's (--digest).
type verifyVerdict struct {
	sum         audit.VerifySummary
	checkpoints []savedCheckpoint
	// failures are the log's problems beyond its summary's own: saved
	// checkpoints it does not extend, a digest that differs.
	failures []string
}

// newVerifyVerdict checks each saved checkpoint against the roots rebuilt
// from the events, and the heads digest against want when digest was
// given.
func newVerifyVerdict(sum audit.VerifySummary, roots *transparency.Roots, checkpoints []savedCheckpoint, digest string, want domain.Hash) verifyVerdict {
	v := verifyVerdict{sum: sum, checkpoints: checkpoints}
	for _, c := range checkpoints {
		if err := roots.Check(c.cp); err != nil {
			v.failures = append(v.failures, fmt.Sprintf("checkpoint %s (%d records): %v", c.file, c.cp.Size, err))
		}
	}
	if digest != "" && sum.HeadsDigest != want {
		v.failures = append(v.failures, fmt.Sprintf("heads digest %s differs from the recorded %s (a stream was rewritten or cut at its end)", sum.HeadsDigest, want))
	}
	if len(v.failures) > 0 {
		v.sum.OK = false
		v.sum.Problem = strings.Join(append(nonEmpty(v.sum.Problem), v.failures...), "; ")
	}
	return v
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// report writes the verdict to w (JSON: the summary, the same document as
// GET /api/v1/audit/verify, its problem including the saved checkpoints'
// and the digest's) and returns the exit: nil when sound, else an
// exitTampered failure naming the problem.
func (v verifyVerdict) report(w io.Writer, asJSON bool, elapsed time.Duration) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v.sum); err != nil {
			return err
		}
	} else {
		var problems []string
		if v.sum.Tree != nil && v.sum.Tree.Problem != "" {
			problems = append(problems, v.sum.Tree.Problem)
		}
		printVerifySummary(w, v.sum, append(problems, v.failures...), elapsed)
		if v.sum.OK {
			for _, c := range v.checkpoints {
				fmt.Fprintf(w, "checkpoint %s: the log extends it (%d records, root %s)\n", c.file, c.cp.Size, c.cp.Root)
			}
		}
	}
	if !v.sum.OK {
		return auditFailure{errors.New("log verification failed: " + v.sum.Problem), exitTampered}
	}
	return nil
}

// printVerifySummary writes the heads when the summary has them (one
// "head STREAM VERSION HASH" line each), one line per listed fault
// ("bad event: …"), and one final summary line that starts with the
// verdict: "OK: …", or "TAMPERED: " and the failure first — the faulty
// events, else the problems (a log cut at its end, a tree that differs,
// a checkpoint not extended, a digest that differs), then the counts.
// problems are the failures beyond the faulty events. An OK line ends
// with the Merkle root of the tree's records, rebuilt from the events.
func printVerifySummary(w io.Writer, s audit.VerifySummary, problems []string, elapsed time.Duration) {
	for _, h := range s.Heads {
		fmt.Fprintf(w, "head %s %d %s\n", h.Stream, h.Version, h.Hash)
	}
	for _, f := range s.Faults {
		fmt.Fprintf(w, "bad event: stream %s version %d position %d id %s type %s: %s\n", f.Stream, f.Version, f.Position, f.ID, f.Type, f.Problem)
	}
	switch {
	case s.FaultCount > 0:
		more, also := "", ""
		if n := s.FaultCount - int64(len(s.Faults)); n > 0 {
			more = fmt.Sprintf(" (%d not listed: --max-faults N lists more)", n)
		}
		if len(problems) > 0 {
			also = "; also: " + strings.Join(problems, "; ")
		}
		fmt.Fprintf(w, "TAMPERED: %d faulty events%s among %d events in %d streams, up to position %d; heads digest %s%s\n",
			s.FaultCount, more, s.Events, s.Streams, s.LastPosition, s.HeadsDigest, also)
	case !s.OK:
		fmt.Fprintf(w, "TAMPERED: %s; %d events in %d streams, up to position %d; heads digest %s\n",
			strings.Join(problems, "; "), s.Events, s.Streams, s.LastPosition, s.HeadsDigest)
	default:
		tree := ""
		if s.Tree != nil && s.Tree.Records > 0 {
			tree = fmt.Sprintf("; Merkle root of the first %d events %s", s.Tree.Records, s.Tree.Root)
		}
		fmt.Fprintf(w, "OK: %d events in %d streams verified up to position %d in %s; heads digest %s%s\n",
			s.Events, s.Streams, s.LastPosition, elapsed.Round(time.Millisecond), s.HeadsDigest, tree)
	}
}
