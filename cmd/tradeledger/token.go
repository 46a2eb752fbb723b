package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
)

// runToken is `tradeledger token create|list|revoke`: scoped API tokens,
// recorded as events in the tokens stream (the token itself is printed
// once and never stored: the log keeps its id). A running serve on the
// same data dir accepts a new token from its first use (it catches up with
// the log when it meets a token it does not know) and refuses a revoked one
// within half a second.
func runToken(ctx context.Context, args []string, env *Env) error {
	ta, err := parseTokenArgs(args, env)
	if err != nil {
		return err
	}
	open := ta.store.openToWrite
	if ta.sub == "list" {
		open = ta.store.open
	}
	d, err := open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	clock := domain.SystemClock{}
	switch ta.sub {
	case "list":
		return tokenList(ctx, d, clock, env)
	case "revoke":
		return tokenRevoke(ctx, d, clock, ta.name, env)
	}
	return tokenCreate(ctx, d, clock, ta, env)
}

// tokenArgs is a parsed `token` command line.
type tokenArgs struct {
	sub              string // create, list or revoke
	store            storeFlags
	scope, ttl, name string
}

// parseTokenArgs parses `token SUB [NAME] [flags]` (revoke takes the name
// as its argument too) and the flags' environment twins.
func parseTokenArgs(args []string, env *Env) (tokenArgs, error) {
	var ta tokenArgs
	if len(args) > 0 && !isHelpFlag(args[0]) {
		ta.sub, args = args[0], args[1:]
	}
	fs := newFlagSet("token", env.Stderr)
	ta.store.register(fs)
	fs.StringVar(&ta.scope, "scope", "", "create: read (reads everything but secrets, changes nothing), trade (also orders) or admin (everything)")
	fs.StringVar(&ta.ttl, "ttl", "30d", "create: lifetime, in days (30d) or as a duration (720h)")
	fs.StringVar(&ta.name, "name", "", "create, revoke: the token's name (letters, digits, . _ -); revoke also takes it as its argument")
	positional := ""
	if ta.sub == "revoke" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		positional, args = args[0], args[1:] // token revoke NAME [flags]
	}
	if err := fs.Parse(args); err != nil {
		return ta, err
	}
	if ta.sub == "revoke" && positional == "" && fs.NArg() == 1 {
		positional = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return ta, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if positional != "" {
		ta.name = positional
	}
	if err := parseFlags(fs, nil); err != nil { // the environment twins (--data, --eventstore)
		return ta, err
	}
	switch ta.sub {
	case "create":
		if ta.name == "" {
			return ta, errors.New("token create: --name is required, saying what the token is for (1-64 letters, digits, '.', '_' or '-'): " +
				"tradeledger token create --name grafana --scope read")
		}
		if ta.scope == "" {
			return ta, errors.New("token create: --scope is required: read (reads everything but secrets), trade (also orders) or admin (everything)")
		}
		return ta, nil
	case "revoke":
		if ta.name == "" {
			return ta, errors.New("token revoke: name the token to revoke: tradeledger token revoke NAME (tradeledger token list shows them)")
		}
		return ta, nil
	case "list":
		return ta, nil
	case "":
		return ta, errors.New("token: create, list or revoke (tradeledger help token)")
	}
	return ta, fmt.Errorf("token %s: unknown; use create, list or revoke", ta.sub)
}

// tokenList prints every token with its scope, dates and state.
func tokenList(ctx context.Context, d *DataDir, clock domain.Clock, env *Env) error {
	tokens, err := readTokens(ctx, d.Store)
	if err != nil {
		return err
	}
	now := clock.Now()
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSCOPE\tCREATED\tEXPIRES\tSTATE")
	for _, t := range tokens.List() {
		state := "active"
		switch {
		case t.Revoked:
			state = "revoked"
		case !now.Before(t.Expires):
			state = "expired"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Scope, t.Created.Format(time.RFC3339), t.Expires.Format(time.RFC3339), state)
	}
	return w.Flush()
}

// tokenRevoke revokes the token called name (again: says so, changes
// nothing).
func tokenRevoke(ctx context.Context, d *DataDir, clock domain.Clock, name string, env *Env) error {
	if err := domain.CheckTokenName(name); err != nil {
		return err
	}
	res, err := runTokenCommand(ctx, d.Store, func(st domain.TokenState) ([]domain.Event, error) {
		return domain.DecideTokenRevoke(st, name, clock)
	})
	if err != nil {
		return err
	}
	if !res.Appended() {
		fmt.Fprintf(env.Stdout, "token %q was already revoked\n", name)
		return nil
	}
	fmt.Fprintf(env.Stdout, "token %q revoked; a service running on this data dir refuses it from its next look at the log (within half a second)\n", name)
	return nil
}

// tokenCreate issues a token of ta's name, scope and lifetime, records it
// and prints it, once.
func tokenCreate(ctx context.Context, d *DataDir, clock domain.Clock, ta tokenArgs, env *Env) error {
	if err := domain.CheckTokenName(ta.name); err != nil {
		return fmt.Errorf("--name: %s", domain.ErrorMessage(err))
	}
	sc, err := domain.ParseScope(ta.scope)
	if err != nil {
		return fmt.Errorf("--scope: %s", domain.ErrorMessage(err))
	}
	life, err := domain.ParseTTL(ta.ttl)
	if err != nil {
		return fmt.Errorf("--ttl: %s", domain.ErrorMessage(err))
	}
	auth := &tlhttp.Authenticator{Secret: d.JWTSecret, Clock: clock}
	token, id, expires, err := auth.IssueScoped(ta.name, sc, life)
	if err != nil {
		return err
	}
	created := domain.TokenCreated{Name: ta.name, Scope: sc, ID: id, Expires: expires.UnixMilli()}
	if _, err := runTokenCommand(ctx, d.Store, func(st domain.TokenState) ([]domain.Event, error) {
		return domain.DecideTokenCreate(st, created, clock)
	}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "token %q (scope %s) valid until %s; it is shown once, keep it:\n", ta.name, sc, expires.UTC().Format(time.RFC3339))
	fmt.Fprintln(env.Stdout, token)
	return nil
}

// runTokenCommand runs a token command (actor cli) through the command
// path, decided against the tokens stream and appended expecting the
// version it read (a concurrent create of the same name loses). A refusal
// (no such token, an active one of that name) is returned as its message
// alone, as the other usage errors are.
func runTokenCommand(ctx context.Context, store domain.EventStore, decide func(domain.TokenState) ([]domain.Event, error)) (eventstore.Result, error) {
	res, err := eventstore.Run(eventstore.WithActor(ctx, domain.ActorCLI), eventstore.NewCommands(store, nil), eventstore.Command[domain.TokenState]{
		Stream: domain.StreamTokens,
		Load:   eventstore.LoadStream(store, domain.StreamTokens, func() domain.TokenState { return domain.TokenState{} }, domain.ApplyTokenEvent),
		Decide: decide,
	})
	if code := domain.ErrorCode(err); code == domain.ENOTFOUND || code == domain.ECONFLICT {
		return res, errors.New(domain.ErrorMessage(err))
	}
	return res, err
}

// readTokens replays the tokens stream.
func readTokens(ctx context.Context, store domain.EventStore) (*projections.Tokens, error) {
	tokens := projections.NewTokens()
	it := store.ReadStream(ctx, domain.StreamTokens, 0, 0)
	defer it.Close()
	for it.Next() {
		e := it.Event()
		if err := tokens.Apply(&e); err != nil {
			return nil, err
		}
	}
	return tokens, it.Err()
}
