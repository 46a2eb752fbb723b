package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
)

// runToken is `tradeledger token create|list|revoke`: scoped API tokens,
// recorded as events in the tokens stream (the token itself is printed
// once and never stored: the log keeps its id). A running serve on the
// same data dir sees a new or revoked token within half a second.
func runToken(ctx context.Context, args []string, env *Env) error {
	sub := ""
	if len(args) > 0 && !isHelpFlag(args[0]) {
		sub, args = args[0], args[1:]
	}
	fs := newFlagSet("token", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	scope := fs.String("scope", "", "create: read (reads everything but secrets, changes nothing), trade (also orders) or admin (everything)")
	ttl := fs.String("ttl", "30d", "create: lifetime, in days (30d) or as a duration (720h)")
	name := fs.String("name", "", "create, revoke: the token's name (letters, digits, . _ -); revoke also takes it as its argument")
	positional := ""
	if sub == "revoke" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		positional, args = args[0], args[1:] // token revoke NAME [flags]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if sub == "revoke" && positional == "" && fs.NArg() == 1 {
		positional = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if positional != "" {
		*name = positional
	}
	if err := parseFlags(fs, nil); err != nil { // the environment twins (--data, --eventstore)
		return err
	}
	switch sub {
	case "create", "list", "revoke":
	case "":
		return errors.New("token: create, list or revoke (tradeledger help token)")
	default:
		return fmt.Errorf("token %s: unknown; use create, list or revoke", sub)
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	tokens, version, err := readTokens(ctx, d.Store)
	if err != nil {
		return err
	}
	clock := domain.SystemClock{}
	now := clock.Now()
	switch sub {
	case "list":
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
	case "revoke":
		if err := domain.CheckTokenName(*name); err != nil {
			return err
		}
		t, ok := tokens.Latest(*name)
		if !ok {
			return fmt.Errorf("no token named %q", *name)
		}
		if t.Revoked {
			fmt.Fprintf(env.Stdout, "token %q was already revoked\n", *name)
			return nil
		}
		ev := domain.NewEvent(clock, domain.TypeTokenRevoked, domain.TokenRevoked{Name: t.Name, ID: t.ID})
		if err := appendToken(ctx, d, version, ev); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "token %q revoked; requests with it are refused from now on\n", *name)
		return nil
	}
	// create
	if err := domain.CheckTokenName(*name); err != nil {
		return err
	}
	sc, err := domain.ParseScope(*scope)
	if err != nil {
		return fmt.Errorf("--scope: %s", domain.ErrorMessage(err))
	}
	life, err := domain.ParseTTL(*ttl)
	if err != nil {
		return fmt.Errorf("--ttl: %s", domain.ErrorMessage(err))
	}
	if t, ok := tokens.Latest(*name); ok && !t.Revoked && now.Before(t.Expires) {
		return fmt.Errorf("a token named %q is active; revoke it first or choose another name", *name)
	}
	auth := &tlhttp.Authenticator{Secret: d.JWTSecret, Clock: clock}
	token, id, expires, err := auth.IssueScoped(*name, sc, life)
	if err != nil {
		return err
	}
	ev := domain.NewEvent(clock, domain.TypeTokenCreated, domain.TokenCreated{Name: *name, Scope: sc, ID: id, Expires: expires.UnixMilli()})
	if err := appendToken(ctx, d, version, ev); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "token %q (scope %s) valid until %s; it is shown once, keep it:\n", *name, sc, expires.UTC().Format(time.RFC3339))
	fmt.Fprintln(env.Stdout, token)
	return nil
}

// readTokens replays the tokens stream and returns its version (-1: none).
func readTokens(ctx context.Context, store domain.EventStore) (*projections.Tokens, int64, error) {
	tokens := projections.NewTokens()
	it := store.ReadStream(ctx, domain.StreamTokens, 0, 0)
	defer it.Close()
	version := int64(-1)
	for it.Next() {
		e := it.Event()
		if err := tokens.Apply(&e); err != nil {
			return nil, 0, err
		}
		version = e.Version
	}
	return tokens, version, it.Err()
}

// appendToken appends e to the tokens stream if nobody else did since it
// was read (a concurrent create of the same name loses).
func appendToken(ctx context.Context, d *DataDir, version int64, e domain.Event) error {
	e.Actor = "cli"
	expected := domain.ExpectedVersion(version)
	if version < 0 {
		expected = domain.NoStream
	}
	if _, err := d.Store.Append(ctx, domain.StreamTokens, expected, e); err != nil {
		return fmt.Errorf("append %s: %w", domain.StreamTokens, err)
	}
	return nil
}
