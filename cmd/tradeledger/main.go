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
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/tradeledger/tradeledger/domain"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, errorLine(err))
		}
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(int(ec))
		}
		os.Exit(1)
	}
}

// errorLine is the line main prints for a command's error: its text with
// every domain.Error in it written as its message alone. The message says
// what went wrong and which flag to use; the code is for programs and logs.
func errorLine(err error) string {
	s := err.Error()
	var plain func(error)
	plain = func(e error) {
		if de, ok := e.(*domain.Error); ok {
			s = strings.Replace(s, de.Error(), de.Message, 1)
		}
		if se, ok := e.(interface{ DomainError() (string, string) }); ok { // a domain sub-package's
			_, message := se.DomainError()
			s = strings.Replace(s, e.Error(), message, 1)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				plain(next)
			}
		case interface{ Unwrap() []error }:
			for _, next := range u.Unwrap() {
				plain(next)
			}
		}
	}
	plain(err)
	return "tradeledger: " + s
}

// exitCode is an error that asks for a particular exit status (verify exits
// 1 on tampering, for example) after its message is printed.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// command is one subcommand: it parses its own flags and runs until done or
// ctx ends.
type command struct {
	run func(ctx context.Context, args []string, env *Env) error
}

// Env is what a subcommand may touch of the process: standard streams.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

var commands = map[string]command{
	"serve":   {runServe},
	"passwd":  {runPasswd},
	"verify":  {runVerify},
	"replay":  {runReplay},
	"restore": {runRestore},
	"wallet":  {runWallet},
	"import":  {runImport},
	"export":  {runExport},
	"migrate": {runMigrate},
	"version": {runVersion},
	"token":   {runToken},

	"attention": {runAttention},

	"checkpoint":   {runCheckpoint},
	"proof":        {runProof},
	"verify-proof": {runVerifyProof},

	"snapshot": {runSnapshot},

	"sync":      {runSync},
	"reconcile": {runReconcile},
	"witness":   {runWitness},
}

// Run runs the subcommand named by args[0].
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	switch {
	case len(args) == 0:
		usage(stderr)
		return errors.New("no command given")
	case isHelpFlag(args[0]), args[0] == "help" && len(args) == 1:
		usage(stdout)
		return nil
	case args[0] == "help":
		// help COMMAND is COMMAND --help.
		args = []string{args[1], "--help"}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	if slices.ContainsFunc(args[1:], isHelpFlag) {
		// Asked-for help goes to stdout (for a pager), and is a success.
		env.Stderr = stdout
		if err := cmd.run(ctx, args[1:], env); err != nil && !errors.Is(err, flag.ErrHelp) {
			return err
		}
		return nil
	}
	return cmd.run(ctx, args[1:], env)
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tradeledger <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, helpText[n].summary)
	}
	fmt.Fprintln(w, "\n`tradeledger help COMMAND` (or COMMAND --help) explains a command, its flags and their environment twins.")
	fmt.Fprintln(w, "serve's settings and --data have environment twins (--files-listen is TRADELEDGER_FILES_LISTEN);")
	fmt.Fprintln(w, "one-shot arguments (--until, --out, --to, --from, …) have none.")
}

// newFlagSet returns a flag set whose usage is the command's help
// (help.go): what it does, its flags with their environment twins, and an
// example.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { commandHelp(fs.Output(), name, fs) }
	return fs
}

// envName is the environment name of a flag: --files-listen → TRADELEDGER_FILES_LISTEN.
// Only flags with hasEnvTwin have one.
func envName(flagName string) string {
	return "TRADELEDGER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args, then fills every flag that has an environment
// twin (hasEnvTwin: serve's settings and --data) and was not given on the
// command line from that variable, if set.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || !hasEnvTwin(f.Name) {
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
