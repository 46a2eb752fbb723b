package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// TestHelpForEveryCommand: `help COMMAND` and `COMMAND --help` succeed
// and print, on stdout, what the command does, its flags with their
// environment twins (and none for one-shot arguments), and an example.
func TestHelpForEveryCommand(t *testing.T) {
	for name := range commands {
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
			var stdout, stderr bytes.Buffer
			if err := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); err != nil {
				t.Errorf("%v: %v", args, err)
				continue
			}
			out := stdout.String()
			for _, want := range []string{"usage: tradeledger " + name, helpText[name].summary, "\nexample:\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("%v: help lacks %q:\n%s", args, want, out)
				}
			}
			if _, ex, _ := strings.Cut(out, "\nexample:\n"); !strings.Contains(ex, "tradeledger "+name) {
				t.Errorf("%v: the example does not run tradeledger %s: %q", args, name, ex)
			}
			// version and verify-proof (a bundle checked with nothing
			// else) open no data dir.
			noData := name == "version" || name == "verify-proof"
			if !noData && !strings.Contains(out, "--data") {
				t.Errorf("%v: help lists no --data flag:\n%s", args, out)
			}
			// witness's --data is the witness's own directory: the
			// service's TRADELEDGER_DATA must not reach it.
			if !noData && name != "witness" && !strings.Contains(out, "environment: TRADELEDGER_DATA") {
				t.Errorf("%v: help does not name --data's environment twin:\n%s", args, out)
			}
			for _, oneShot := range []string{"UNTIL", "OUT", "TO", "FROM", "POSITION"} {
				if strings.Contains(out, "TRADELEDGER_"+oneShot+"\n") {
					t.Errorf("%v: help offers TRADELEDGER_%s", args, oneShot)
				}
			}
			if stderr.Len() > 0 {
				t.Errorf("%v: help wrote to stderr: %s", args, stderr.String())
			}
		}
	}
	var stdout bytes.Buffer
	if err := Run(context.Background(), []string{"help", "serve"}, strings.NewReader(""), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--listen", "environment: TRADELEDGER_LISTEN", "--metrics-listen", "environment: TRADELEDGER_METRICS_LISTEN"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("serve help lacks %q", want)
		}
	}
	if err := Run(context.Background(), []string{"help", "nosuch"}, strings.NewReader(""), io.Discard, io.Discard); err == nil {
		t.Errorf("help nosuch succeeded")
	}
}

// TestOneShotFlagsHaveNoEnvTwin: a leftover TRADELEDGER_UNTIL (or OUT, TO,
// FROM) changes nothing; TRADELEDGER_DATA still sets --data.
func TestOneShotFlagsHaveNoEnvTwin(t *testing.T) {
	for _, v := range []string{"UNTIL", "OUT", "TO", "FROM", "POSITION"} {
		t.Setenv("TRADELEDGER_"+v, "leftover")
	}
	t.Setenv("TRADELEDGER_DATA", "/from/env")
	fs := newFlagSet("replay", io.Discard)
	data := fs.String("data", "./data", "")
	until := fs.String("until", "", "")
	out := fs.String("out", "", "")
	to := fs.String("to", "", "")
	from := fs.String("from", "", "")
	if err := parseFlags(fs, nil); err != nil {
		t.Fatal(err)
	}
	if *data != "/from/env" {
		t.Errorf("--data = %q, want TRADELEDGER_DATA's value", *data)
	}
	for name, v := range map[string]string{"until": *until, "out": *out, "to": *to, "from": *from} {
		if v != "" {
			t.Errorf("--%s = %q from the environment, want unset", name, v)
		}
	}
}

// TestEnvTwinsAreServeSettings: the flags with environment twins are
// exactly serve's settings plus --data.
func TestEnvTwinsAreServeSettings(t *testing.T) {
	var serve []string
	NewMain().flagSet(io.Discard).VisitAll(func(f *flag.Flag) { serve = append(serve, f.Name) })
	var twins []string
	for n := range envTwins {
		twins = append(twins, n)
	}
	sort.Strings(serve)
	sort.Strings(twins)
	if strings.Join(serve, " ") != strings.Join(twins, " ") {
		t.Fatalf("env twins %v, serve's flags %v", twins, serve)
	}
}

func TestVersion(t *testing.T) {
	var stdout bytes.Buffer
	if err := Run(context.Background(), []string{"version"}, strings.NewReader(""), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.HasPrefix(out, "tradeledger ") || !strings.Contains(out, "commit ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version printed %q", out)
	}
}
