package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// helpText is what `tradeledger help COMMAND` says beyond the one-line
// summary: the synopsis, more about what the command does, and examples.
var helpText = map[string]struct{ summary, synopsis, about, example string }{
	"serve": {"serve the API (embedded store and paper exchange by default)",
		"serve [flags]",
		"Opens the data dir (initialising it on first start: configuration with TRADELEDGER_WALLET or a generated\n" +
			"wallet, password from TRADELEDGER_PASSWORD), replays the log into the read models and serves the API.\n" +
			"GET /healthz and /readyz need no token; /metrics needs one unless served on --metrics-listen.",
		"TRADELEDGER_PASSWORD='s3cret' tradeledger serve --data /var/lib/tradeledger --listen 127.0.0.1:3000"},
	"passwd": {"set or change the login password (first line of stdin, or typed twice on a terminal); revokes earlier tokens",
		"passwd [--data DIR] [--eventstore URL]",
		"Reads the new password from the first line of stdin (typed twice on a terminal) and records it; every\n" +
			"token issued before is revoked.",
		"printf 'new password\\n' | tradeledger passwd --data ./data"},
	"verify": {"check every hash chain of the log; exit 1 naming every bad event",
		"verify [--data DIR] [--eventstore URL] [--heads] [--max-faults N] [--json] [--digest HEX]",
		"Checks every hash chain of the log and prints a summary (events, streams, heads digest). Exit 0 when sound;\n" +
			"1 when any event is faulty: all are counted, the first --max-faults are named. --heads lists every stream's head.",
		"tradeledger verify --data ./data --json"},
	"replay": {"rebuild balances, open orders and PNL as of a time or log position",
		"replay [--data DIR] [--until TIME|DATE | --position N] [--json] [--timezone TZ] [--pnl-method M]",
		"Rebuilds balances, open orders and PNL from the log alone: as of now (the whole log), as of a log position,\n" +
			"or as of a time in trade time (--until: RFC 3339, ms, or a date meaning the end of that day in --timezone;\n" +
			"each event counts by its own time, a fill by the exchange's trade time). The output names the cut used.",
		"tradeledger replay --data ./data --until 2026-03-01 --timezone Europe/Amsterdam --json"},
	"restore": {"materialize config, files and state files from the log as a Gunbot-style folder",
		"restore [--data DIR] --out DIR [--until TIME | --position N] [--with-secrets]",
		"Writes a Gunbot-style folder (config.js, autoconfig, backups, state files, strategies) from the log.",
		"tradeledger restore --data ./data --out ./gunbot-restored"},
	"wallet": {"print the service wallet (bot.service_wallet) of the data dir",
		"wallet [--data DIR]",
		"Prints config.bot.service_wallet, the key clients encrypt the login password with.",
		"tradeledger wallet --data ./data"},
	"import": {"import a Gunbot-style folder (--from DIR) as events; idempotent",
		"import [--data DIR] --from GUNBOT_DIR",
		"Imports a Gunbot folder (config.js or config.json, autoconfig.json, backups/, json/*-state.json,\n" +
			"customStrategies/*.js, AutoConfig variable files) as events. Importing the same folder again writes nothing.",
		"tradeledger import --data ./data --from ~/gunbot"},
	"export": {"export clickhouse --to URL: backfill the ClickHouse analytics tables from the log",
		"export clickhouse [--data DIR] [--eventstore URL] --to URL [--batch-rows N] [--pnl-method M]",
		"Backfills the ClickHouse analytics tables from the log, resuming from ClickHouse's checkpoint.",
		"tradeledger export clickhouse --data ./data --to clickhouse://127.0.0.1:9000/tradeledger"},
	"migrate": {"copy the embedded log (--data DIR) into --to URL (EventStoreDB), in order and idempotently",
		"migrate [--data DIR] --to URL",
		"Copies the embedded log into EventStoreDB/KurrentDB in order; running it again copies only what is new.",
		"tradeledger migrate --data ./data --to 'esdb://127.0.0.1:2113?tls=false'"},
	"token": {"create, list or revoke scoped API tokens (read, trade, admin) for dashboards, bots and auditors",
		"token create --scope read|trade|admin [--ttl 30d] --name NAME | token list | token revoke NAME   [--data DIR]",
		"create prints a new token once (only its id is stored, as a TokenCreated event); read tokens read everything\n" +
			"but secrets and change nothing (403), trade tokens also place and cancel orders, admin tokens do everything.\n" +
			"revoke takes effect on the next request. A password login keeps issuing full-access tokens.",
		"tradeledger token create --scope read --ttl 30d --name grafana --data ./data"},
	"version": {"print the version, the commit and the Go version of this binary",
		"version",
		"Prints the version and commit the binary was built from and the Go version that built it.",
		"tradeledger version"},
}

// commandHelp writes the help of command name (its first word: "export
// clickhouse" is export's) with fs's flags.
func commandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	base, _, _ := strings.Cut(name, " ")
	h := helpText[base]
	fmt.Fprintf(w, "usage: tradeledger %s\n\n%s.\n", h.synopsis, h.summary)
	if h.about != "" {
		fmt.Fprintf(w, "\n%s\n", h.about)
	}
	var flags []string
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		line += "\n      " + usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			line += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		if hasEnvTwin(f.Name) {
			line += "\n      environment: " + envName(f.Name)
		}
		flags = append(flags, line)
	})
	if len(flags) > 0 {
		fmt.Fprintf(w, "\nflags:\n%s\n", strings.Join(flags, "\n"))
	}
	if h.example != "" {
		fmt.Fprintf(w, "\nexample:\n  %s\n", h.example)
	}
}

// envTwins are the flags with an environment twin: serve's settings and
// --data. One-shot arguments (--until, --out, --to, --from, --position …)
// have none, so a variable left in the environment cannot change what a
// replay or a restore does.
// TestEnvTwinsAreServeSettings keeps the list equal to serve's flags.
var envTwins = map[string]bool{
	"data": true, "listen": true, "files-listen": true, "eventstore": true, "clickhouse": true,
	"read-from": true, "pnl-method": true, "token-ttl": true, "tls-cert": true, "tls-key": true,
	"log-level": true, "log-format": true, "metrics-listen": true, "cors-origins": true, "trusted-proxies": true, "max-conns": true,
}

func hasEnvTwin(flagName string) bool { return envTwins[flagName] }

// Set at build time by the Makefile (-ldflags "-X main.version=… -X
// main.commit=…"); otherwise read from the module's build information.
var version, commit string

// runVersion is `tradeledger version`.
func runVersion(_ context.Context, args []string, env *Env) error {
	fs := newFlagSet("version", env.Stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v, c := buildVersion()
	fmt.Fprintf(env.Stdout, "tradeledger %s (commit %s, %s %s/%s)\n", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildVersion returns the version and commit of the binary: the linker's
// values when set, else the module version and VCS revision Go recorded
// ("(devel)" and "unknown" for a build without either).
func buildVersion() (v, c string) {
	v, c = version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && c == "":
				c = s.Value
			case s.Key == "vcs.modified" && s.Value == "true" && c != "" && !strings.HasSuffix(c, "-dirty"):
				c += "-dirty"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	}
	return v, c
}
