// Command tradeledger is the self-hosted trading bot control service and its
// operator tools. This package only parses flags and wires the adapters
// together; one file per subcommand.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "tradeledger:", err)
		}
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(int(ec))
		}
		os.Exit(1)
	}
}

// exitCode is an error that asks for a particular exit status (verify exits
// 1 on tampering, for example) after its message is printed.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// command is one subcommand: it parses its own flags and runs until done or
// ctx ends.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, env *Env) error
}

// Env is what a subcommand may touch of the process: standard streams.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

var commands = map[string]command{
	"serve":   {"serve the API (embedded store and paper exchange by default)", runServe},
	"passwd":  {"set or change the login password (first line of stdin, or typed twice on a terminal); revokes earlier tokens", runPasswd},
	"verify":  {"check every hash chain of the log; exit 1 naming the first bad event", runVerify},
	"replay":  {"rebuild balances, open orders and PNL as of a time or log position", runReplay},
	"restore": {"materialize config, files and state files from the log as a Gunbot-style folder", runRestore},
	"wallet":  {"print the service wallet (bot.service_wallet) of the data dir", runWallet},
	"import":  {"import a Gunbot-style folder (--from DIR) as events; idempotent", runImport},
	"export":  {"export clickhouse --to URL: backfill the ClickHouse analytics tables from the log", runExport},
	"migrate": {"copy the embedded log (--data DIR) into --to URL (EventStoreDB), in order and idempotently", runMigrate},
}

// Run runs the subcommand named by args[0].
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd.run(ctx, args[1:], env)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tradeledger <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nEvery flag has an environment twin: --data is TRADELEDGER_DATA, --files-listen is TRADELEDGER_FILES_LISTEN.")
}

// newFlagSet returns a flag set whose usage mentions env twins.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// envName is the environment twin of a flag: --files-listen → TRADELEDGER_FILES_LISTEN.
func envName(flagName string) string {
	return "TRADELEDGER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args, then fills every flag not given on the command
// line from its environment twin, if set.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", envName(f.Name), v, err))
			}
		}
	})
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	return errors.Join(errs...)
}
