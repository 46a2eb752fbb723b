package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// runCheckpoint is `tradeledger checkpoint` (sign a checkpoint of the
// whole log now and print it) and `tradeledger checkpoint key` (print the
// verifier key).
func runCheckpoint(ctx context.Context, args []string, env *Env) error {
	ctx = eventstore.WithActor(ctx, domain.ActorCLI)
	keyOnly := len(args) > 0 && args[0] == "key"
	if keyOnly {
		args = args[1:]
	}
	fs := newFlagSet("checkpoint", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	open := sf.openToWrite // it signs and records a checkpoint
	if keyOnly {
		open = sf.open
	}
	d, err := open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	if keyOnly {
		fmt.Fprintln(env.Stdout, d.CheckpointKey.VerifierKey())
		return nil
	}
	l, err := openTlog(ctx, d, env, "checkpoint")
	if err != nil {
		return err
	}
	c, issued, err := l.Issue(ctx, true)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if !issued {
		fmt.Fprintf(env.Stderr, "checkpoint: nothing new since the last checkpoint (%d records); it is printed again\n", c.Size)
	}
	fmt.Fprint(env.Stdout, c.Note)
	return nil
}

// openTlog returns the data dir's transparency log, its tree caught up
// with the log (with progress on a terminal).
func openTlog(ctx context.Context, d *DataDir, env *Env, what string) (*transparency.Log, error) {
	l := transparency.NewLog(d.Store, d.Tree, d.CheckpointKey, domain.SystemClock{})
	if err := l.Open(ctx); err != nil {
		return nil, err
	}
	prog := newProgress(env.Stderr, what+": building the Merkle tree")
	head, _ := d.Store.Head(ctx)
	err := l.Build(ctx, func(n int64) { prog.update(n, 0, head) })
	prog.done()
	if err != nil {
		return nil, fmt.Errorf("build the Merkle tree: %w", err)
	}
	return l, nil
}

// runProof is `tradeledger proof --order ID --out FILE`: the order's proof
// bundle, which verify-proof checks with the verifier key alone.
func runProof(ctx context.Context, args []string, env *Env) error {
	ctx = eventstore.WithActor(ctx, domain.ActorCLI) // a checkpoint it may issue
	fs := newFlagSet("proof", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	order := fs.Int64("order", 0, "the order's id")
	out := fs.String("out", "", "file to write the bundle to (- for stdout)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *order <= 0 {
		return errors.New("--order ID is required (a positive order id)")
	}
	if *out == "" {
		return errors.New("--out FILE is required")
	}
	d, err := sf.openToWrite(ctx) // it may sign a checkpoint
	if err != nil {
		return err
	}
	defer d.Close()
	l, err := openTlog(ctx, d, env, "proof")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := l.WriteOrderBundle(ctx, *order, &buf); err != nil {
		return fmt.Errorf("proof: %w", err)
	}
	if *out == "-" {
		_, err = env.Stdout.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("proof: %w", err)
	}
	c, _ := l.Latest()
	fmt.Fprintf(env.Stdout, "wrote the proof bundle of order %d to %s, proven against the checkpoint of %d records of %s; check it with: tradeledger verify-proof %s --key %s\n",
		*order, *out, c.Size, c.Origin, *out, l.VerifierKey())
	return nil
}

// runVerifyProof is `tradeledger verify-proof FILE --key VKEY`: it checks
// a proof bundle with nothing else (no data dir, no network).
func runVerifyProof(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("verify-proof", env.Stderr)
	key := fs.String("key", "", "the log's verifier key (note format: origin+hash+base64), or a file holding it")
	var witnessed witnessKeys // --witness-key, --quorum (witnesscheck.go)
	witnessed.register(fs)
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if file == "" {
		return errors.New("the bundle FILE is required: tradeledger verify-proof FILE --key VKEY")
	}
	if *key == "" {
		return errors.New("--key VKEY is required: the verifier key you trust for this log (tradeledger checkpoint key prints it)")
	}
	vkey := *key
	if b, err := os.ReadFile(vkey); err == nil {
		vkey = strings.TrimSpace(string(b))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return auditFailure{fmt.Errorf("verify-proof: %w", err), exitUnreadable}
	}
	st, err := transparency.VerifyBundle(data, vkey)
	if err != nil {
		return auditFailure{fmt.Errorf("verify-proof: %s: %s", file, domain.ErrorMessage(err)), exitTampered}
	}
	var b transparency.Bundle
	_ = json.Unmarshal(data, &b) // VerifyBundle read it
	if err := witnessed.check("the bundle's checkpoint", []byte(b.Checkpoint), env.Stdout); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "OK: "+st.Sentence())
	return nil
}

// checkpointFiles is a repeatable flag of saved checkpoint files.
type checkpointFiles []string

func (c *checkpointFiles) String() string { return strings.Join(*c, ",") }
func (c *checkpointFiles) Set(v string) error {
	*c = append(*c, v)
	return nil
}

var _ flag.Value = (*checkpointFiles)(nil)

// savedCheckpoint is a checkpoint file an auditor kept, opened with the
// verifier key.
type savedCheckpoint struct {
	file string
	cp   transparency.Checkpoint
}

// openCheckpointFile reads and checks the signed checkpoint in file.
func openCheckpointFile(file, vkey string) (savedCheckpoint, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return savedCheckpoint{}, auditFailure{fmt.Errorf("checkpoint %s: %w", file, err), exitUnreadable}
	}
	c, err := transparency.OpenCheckpoint(b, vkey)
	if err != nil {
		return savedCheckpoint{}, auditFailure{fmt.Errorf("checkpoint %s: %s", file, domain.ErrorMessage(err)), exitTampered}
	}
	return savedCheckpoint{file: file, cp: c}, nil
}
