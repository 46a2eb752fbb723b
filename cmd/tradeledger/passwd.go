package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/term"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/argon2id"
	"github.com/tradeledger/tradeledger/eventstore"
)

// runPasswd sets or changes the login password: the first line of stdin
// (or, on a terminal, typed twice without echo), hashed with argon2id and
// appended as PasswordSet with the next generation, which revokes every
// token issued before. A server running on the same data dir sees the
// change within half a second (sqlite.DefaultPollInterval).
func runPasswd(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("passwd", env.Stderr)
	data, storeURL := dataDirFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	password, err := readNewPassword(env)
	if err != nil {
		return err
	}
	hash, err := argon2id.Hash(password)
	if err != nil {
		return errors.New(domain.ErrorMessage(err))
	}
	logger := cliLogger(env.Stderr, zap.InfoLevel)
	d, err := OpenDataDir(ctx, *data, *storeURL, logger)
	if err != nil {
		return err
	}
	defer d.Close()
	gen, _, err := appendPassword(ctx, d.Store, domain.SystemClock{}, hash, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "password set (generation %d); tokens issued before it are no longer accepted\n", gen)
	return nil
}

// readNewPassword asks for the password twice, without echo, when stdin is
// a terminal; otherwise it reads the first line of stdin.
func readNewPassword(env *Env) (string, error) {
	f, ok := env.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return readPassword(env.Stdin)
	}
	ask := func(prompt string) (string, error) {
		fmt.Fprint(env.Stderr, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.Stderr)
		if err != nil {
			return "", fmt.Errorf("read password from the terminal: %w", err)
		}
		return string(b), nil
	}
	first, err := ask("New password: ")
	if err != nil {
		return "", err
	}
	if first == "" {
		return "", errors.New("no password given; nothing changed")
	}
	again, err := ask("Repeat it: ")
	if err != nil {
		return "", err
	}
	if again != first {
		return "", errors.New("the two entries differ; nothing changed")
	}
	return first, nil
}

// readPassword returns the first line of r without its line ending (other
// spaces are part of the password).
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReaderSize(r, 4096).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("no password on stdin (give it as the first line)")
	}
	return line, nil
}

// initPassword is the initialize step that sets the first password from
// TRADELEDGER_PASSWORD, only when no password exists yet: once set, the
// variable is ignored and `tradeledger passwd` changes the password.
func initPassword(ctx context.Context, d *DataDir, logger *zap.Logger) error {
	password := os.Getenv("TRADELEDGER_PASSWORD")
	if password == "" {
		return nil
	}
	st, _, err := loadPassword(d.Store)(ctx)
	if err != nil {
		return err
	}
	if st.Generation > 0 {
		logger.Debug("TRADELEDGER_PASSWORD ignored: a password is already set (tradeledger passwd changes it)")
		return nil
	}
	hash, err := argon2id.Hash(password)
	if err != nil {
		return fmt.Errorf("TRADELEDGER_PASSWORD: %s", domain.ErrorMessage(err))
	}
	gen, appended, err := appendPassword(ctx, d.Store, domain.SystemClock{}, hash, true)
	if err != nil {
		return err
	}
	if appended {
		logger.Info("login password set from TRADELEDGER_PASSWORD", zap.Int64("generation", gen))
	}
	return nil
}

// loadPassword loads the password state from the credentials stream.
func loadPassword(store domain.EventStore) func(context.Context) (domain.PasswordState, domain.ExpectedVersion, error) {
	return eventstore.LoadStream(store, domain.StreamCredentials, func() domain.PasswordState { return domain.PasswordState{} }, domain.ApplyPasswordEvent)
}

// appendPassword sets hash as the next generation's password through the
// command path (actor cli): decided against the credentials stream and
// appended expecting the version it read, so that two concurrent changes
// cannot share a generation (a conflict is decided again). With onlyIfNone
// it appends nothing once a password exists (appended is false then).
func appendPassword(ctx context.Context, store domain.EventStore, clock domain.Clock, hash string, onlyIfNone bool) (generation int64, appended bool, err error) {
	ctx = eventstore.WithActor(ctx, domain.ActorCLI)
	res, err := eventstore.Run(ctx, eventstore.NewCommands(store, nil), eventstore.Command[domain.PasswordState]{
		Stream: domain.StreamCredentials,
		Load:   loadPassword(store),
		Decide: func(st domain.PasswordState) ([]domain.Event, error) {
			return domain.DecidePasswordSet(st, hash, onlyIfNone, clock)
		},
		Conflict: "append PasswordSet: the credentials stream keeps changing; try again",
	})
	if domain.ErrorCode(err) == domain.ECONFLICT {
		return 0, false, errors.New(domain.ErrorMessage(err)) // the message alone: it says what to do
	}
	if err != nil {
		return 0, false, err
	}
	if !res.Appended() {
		st, _, err := loadPassword(store)(ctx)
		return st.Generation, false, err
	}
	var set domain.PasswordSet
	if err := res.Events[0].Decode(&set); err != nil {
		return 0, false, err
	}
	return set.Generation, true, nil
}
