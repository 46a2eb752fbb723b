package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/eventstore/transparency/witness"
)

// runWitness is `tradeledger witness serve|add-log|key`: a witness of
// our own (c2sp.org/tlog-witness) for auditors, its state in --data.
func runWitness(ctx context.Context, args []string, env *Env) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if slices.ContainsFunc(args, isHelpFlag) {
			fs := newFlagSet("witness", env.Stderr)
			fs.String("data", "./witness", "the witness's directory (witness.db and witness.key, made at its first start, mode 0600); no environment twin: TRADELEDGER_DATA is the service's")
			fs.String("name", "", "the witness's name, a schema-less URL such as auditor.example/witness (fixed at its first start)")
			fs.String("listen", "127.0.0.1:7380", "serve: address to serve the witness on (POST /add-checkpoint)")
			fs.String("key", "", "add-log: the log's verifier key (tradeledger checkpoint key prints it)")
			fs.String("origin", "", "add-log: the log's origin (default: the key's name)")
			fs.Usage()
			return flag.ErrHelp
		}
		return errors.New("witness needs a subcommand: serve, add-log or key (tradeledger help witness)")
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet("witness "+sub, env.Stderr)
	data := fs.String("data", "./witness", "the witness's directory (witness.db and witness.key, made at its first start, mode 0600)")
	name := fs.String("name", "", "the witness's name, a schema-less URL such as auditor.example/witness (fixed at its first start)")
	switch sub {
	case "serve":
		listen := fs.String("listen", "127.0.0.1:7380", "address to serve the witness on (POST /add-checkpoint)")
		if err := parseWitnessFlags(fs, args); err != nil {
			return err
		}
		return serveWitness(ctx, *data, *name, *listen, env)
	case "add-log":
		key := fs.String("key", "", "the log's verifier key (tradeledger checkpoint key prints it)")
		origin := fs.String("origin", "", "the log's origin (default: the key's name, which is ours)")
		if err := parseWitnessFlags(fs, args); err != nil {
			return err
		}
		if *key == "" {
			return errors.New("--key VKEY is required: the log's verifier key (on the log's side: tradeledger checkpoint key)")
		}
		w, err := witness.Open(*data, *name)
		if err != nil {
			return err
		}
		defer w.Close()
		o, err := w.AddLog(ctx, *origin, *key)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "witness %s follows the log %s; give the log's operator: --witness '%s URL'\n", w.Name(), o, w.VerifierKey())
		return nil
	case "key":
		if err := parseWitnessFlags(fs, args); err != nil {
			return err
		}
		w, err := witness.Open(*data, *name)
		if err != nil {
			return err
		}
		defer w.Close()
		fmt.Fprintln(env.Stdout, w.VerifierKey())
		return nil
	}
	return fmt.Errorf("unknown witness subcommand %q: serve, add-log or key", sub)
}

// parseWitnessFlags parses without environment twins: a witness is not
// the service, and TRADELEDGER_DATA must not point it at the service's
// data dir.
func parseWitnessFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

// serveWitness runs the witness until ctx ends.
func serveWitness(ctx context.Context, dir, name, listen string, env *Env) error {
	w, err := witness.Open(dir, name)
	if err != nil {
		return err
	}
	defer w.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	fmt.Fprintf(env.Stdout, "witness %s serving on http://%s (POST /add-checkpoint)\nverifier key: %s\nfollow a log: tradeledger witness add-log --data %s --key VKEY\n",
		w.Name(), ln.Addr(), w.VerifierKey(), dir)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
