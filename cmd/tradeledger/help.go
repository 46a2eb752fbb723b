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
	"attention": {"show or clear an order that needs attention (an exchange sent a number the ledger cannot hold; its pair paused)",
		"attention clear|show --order ID [--note TEXT] [--data DIR] [--eventstore URL]",
		"An exchange number the ledger cannot represent (more than 12 decimals, beyond about 1.7e26) is never recorded\n" +
			"as 0: the order gets OrderNeedsAttention and new orders on its pair are refused (409) until every such order\n" +
			"of the pair is cleared. show prints why; clear records that it was dealt with (OrderAttentionCleared).",
		"tradeledger attention clear --data ./data --order 42 --note 'fill booked by hand'"},
	"passwd": {"set or change the login password (first line of stdin, or typed twice on a terminal); revokes earlier tokens",
		"passwd [--data DIR] [--eventstore URL]",
		"Reads the new password from the first line of stdin (typed twice on a terminal) and records it; every\n" +
			"token issued before is revoked.",
		"printf 'new password\\n' | tradeledger passwd --data ./data"},
	"verify": {"check every hash chain of the log and its Merkle tree; exit 1 naming every bad event or the first broken checkpoint",
		"verify [--data DIR] [--eventstore URL] [--heads] [--max-faults N] [--json] [--digest HEX] [--checkpoint FILE]... [--key VKEY]\n" +
			"       verify [--data DIR] [--eventstore URL] --since FILE [--key VKEY]\n" +
			"       verify [--data DIR] [--eventstore URL] --snapshots [--snapshot-dir DIR] [--pnl-method M]",
		"Checks every hash chain of the log, rebuilds its Merkle tree from the events and compares it with the stored\n" +
			"one, and prints a summary (events, streams, heads digest, root). Exit 0 when sound; 1 when any event is faulty\n" +
			"(all are counted, the first --max-faults are named) or the tree differs. --checkpoint FILE (repeatable): the\n" +
			"log must extend each signed checkpoint kept earlier (its signature under --key, default the data dir's key,\n" +
			"and the tree of its first N events has its root); exit 1 naming the first it breaks. --since FILE reads only\n" +
			"the events after that checkpoint: their chains, each continued stream's head proven in the checkpoint, and the\n" +
			"consistency proof from it to the tree now. --heads lists every stream's head. It reads the log alone: a\n" +
			"read-model snapshot is never evidence. --snapshots checks the snapshots instead: each kept one, oldest first,\n" +
			"against the state rebuilt from the log at its position (one pass), projection by projection, and its signature\n" +
			"by the log's key; exit 1 naming the snapshot, the projection and the first value that differs.",
		"tradeledger verify --data ./data --checkpoint ./kept/2026-03-01.checkpoint"},
	"checkpoint": {"sign a checkpoint of the log's Merkle tree now and print it (checkpoint key: print the verifier key)",
		"checkpoint [--data DIR] [--eventstore URL]  |  checkpoint key [--data DIR]",
		"Signs a checkpoint (C2SP checkpoint text: origin, tree size, root hash, signed as a note with the data dir's\n" +
			"Ed25519 key, checkpoint.key or TRADELEDGER_CHECKPOINT_KEY) of every event so far, records it in the\n" +
			"checkpoints stream and prints it; keep the output somewhere the operator cannot change. `checkpoint key`\n" +
			"prints the verifier key that checks it (origin+hash+base64), never the private key.",
		"tradeledger checkpoint --data ./data > kept/$(date +%F).checkpoint"},
	"proof": {"write an order's proof bundle: its events, their inclusion proofs and a signed checkpoint",
		"proof [--data DIR] [--eventstore URL] --order ID --out FILE",
		"Writes every event of the order, each with its record index and inclusion proof, and the signed checkpoint\n" +
			"they are proven against (a new one when none covers the order's last event yet), as one JSON file that\n" +
			"verify-proof checks with the verifier key alone.",
		"tradeledger proof --data ./data --order 1234 --out order-1234.proof.json"},
	"sync": {"read an exchange account's whole activity from a date into the log (resumable)",
		"sync [--data DIR] --exchange NAME --since DATE",
		"Reads the account's history on the exchange — every trade (those this service did not place recorded as\n" +
			"external trades), deposits, withdrawals with their network fees, dust conversions and convert trades — from\n" +
			"--since (a date in UTC, RFC 3339 or ms) to now into the log, each fact keyed by the exchange's own id, so\n" +
			"that reading it again records nothing twice. The first sync states the account's balances now as its\n" +
			"opening (docs/auditing.md). A fill of this service's orders the log lacks is recorded (by the actor sync).\n" +
			"Progress shows on a terminal; a sync stopped (an error, Ctrl-C) resumes where it stopped when run again.\n" +
			"It runs beside a serve of the same data dir; serve itself reads new activity every minute.",
		"tradeledger sync --data ./data --exchange binance --since 2026-01-01"},
	"reconcile": {"reconcile an exchange account: balances, fills and activity against the exchange's",
		"reconcile [--data DIR] --exchange NAME [--from TIME] [--to TIME] [--json]",
		"Reads the account's history of the window (default: the last 24 hours; times by the exchange's clock: a\n" +
			"date in UTC, RFC 3339 or ms) and records what the log lacks, then compares, per asset, the balance the\n" +
			"ledger implies with the exchange's, to the unit, and this service's fills with the exchange's list\n" +
			"(matched, missing then recorded, extra: in the log and not listed, mismatched). --json prints the API's\n" +
			"shape (GET /api/v1/reconciliation). Exit status 2 when a balance differs.",
		"tradeledger reconcile --data ./data --exchange binance --from 2026-01-01 --json"},
	"snapshot": {"write a read-model snapshot of the log's head now (serve writes them by itself)",
		"snapshot [--data DIR] [--snapshot-dir DIR] [--position N] [--pnl-method M]",
		"Builds every read model serve keeps from the data dir's newest valid snapshot and the events after it, and\n" +
			"writes their snapshot at the log's head (or at log position --position) into the data dir's snapshots/\n" +
			"(<position>.snap; the 3 newest are kept; --snapshot-dir: elsewhere, as serve's flag). Give serve's\n" +
			"--pnl-method if it is not lofo: the order records' PNL depends on it. It runs beside a serve of the same data dir, in a process of its own. A snapshot is a cache: serve\n" +
			"starts from the newest valid one and replays only the events after it; deleting them all changes nothing\n" +
			"but the start's time. serve writes one every --snapshot-every events (default 100,000) or\n" +
			"--snapshot-interval (default 10m).",
		"tradeledger snapshot --data ./data"},
	"verify-proof": {"check an order's proof bundle with the verifier key alone (no data dir, no network)",
		"verify-proof FILE --key VKEY",
		"Checks the bundle's checkpoint signature with VKEY (or a file holding it), recomputes each event's hash from\n" +
			"its JSON, its leaf and its inclusion proof against the checkpoint's root, checks the events chain from\n" +
			"version 0, and prints what the bundle proves in one sentence. Exit 1 when anything does not check.",
		"tradeledger verify-proof order-1234.proof.json --key 'tradeledger/log/…+1a2b3c4d+AbC…'"},
	"witness": {"run a witness of our own for auditors (c2sp.org/tlog-witness): serve, add-log, key",
		"witness serve [--data DIR] [--listen ADDR] [--name NAME]  |  witness add-log [--data DIR] --key VKEY [--origin O]  |  witness key [--data DIR]",
		"A witness keeps, for each log it follows, the latest checkpoint it cosigned, and cosigns a newer one only\n" +
			"with a consistency proof from it: a log forked or rewritten under the same key never gets its cosignature\n" +
			"again. serve makes the witness at its first start (witness.db and an Ed25519 key, witness.key, mode 0600,\n" +
			"in --data; --name is fixed then) and answers POST /add-checkpoint with the protocol's status codes. add-log\n" +
			"follows a log by its verifier key (tradeledger checkpoint key on the log's side); key prints the witness's\n" +
			"verifier key, which the log's operator gives serve --witness and auditors give verify --witness-key.",
		"tradeledger witness serve --data ./witness --listen 0.0.0.0:7380 --name auditor.example/witness"},
	"replay": {"rebuild balances, open orders and PNL as of a time or log position",
		"replay [--data DIR] [--until TIME|DATE | --position N] [--json] [--timezone TZ] [--pnl-method M]",
		"Rebuilds balances, open orders and PNL from the log alone: as of now (the whole log), as of a log position,\n" +
			"or as of a time in trade time (--until: RFC 3339, ms, or a date meaning the end of that day in --timezone;\n" +
			"each event counts by its own time, a fill by the exchange's trade time). The output names the cut used and\n" +
			"what the state was built from. --from-snapshot starts from the newest valid read-model snapshot within the\n" +
			"cut instead (faster; a snapshot is a cache, not evidence).",
		"tradeledger replay --data ./data --until 2026-03-01 --timezone Europe/Amsterdam --json"},
	"restore": {"materialize config, files and state files from the log as a Gunbot-style folder",
		"restore [--data DIR] --out DIR [--until TIME | --position N] [--with-secrets] [--from-snapshot]",
		"Writes a Gunbot-style folder (config.js, autoconfig, backups, state files, strategies) from the log alone\n" +
			"(--from-snapshot: from the newest valid read-model snapshot within the cut and the log after it); the summary\n" +
			"line says which.",
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
	"export": {"export the books as CSV (--format fills|koinly|cointracking|cointracker|realized), or backfill ClickHouse (export clickhouse)",
		"export --format F [--from T] [--to T] [--out FILE] [--timezone TZ] [--method M] [--currency C] [--keys K] [--until T] [--from-snapshot] [--data DIR]\n" +
			"       tradeledger export clickhouse [--data DIR] [--eventstore URL] --to URL [--instance NAME] [--batch-rows N] [--pnl-method M]",
		"--format writes the books of the log as a CSV: every fill with every field of its order record (fills),\n" +
			"Koinly's universal, CoinTracking's or CoinTracker's import format, or the realized gains lot by lot\n" +
			"(realized); the period is by trade time, dates in --timezone (the tax tools' in UTC); rows are written as the\n" +
			"fills are read; the same log and options give the same bytes; the books come from the log alone unless\n" +
			"--from-snapshot is given (the summary line says which). export clickhouse backfills the ClickHouse\n" +
			"analytics tables from the log, resuming from ClickHouse's checkpoint.",
		"tradeledger export --format koinly --from 2025-01-01 --to 2025-12-31 --out koinly-2025.csv --data ./data"},
	"migrate": {"copy the embedded log (--data DIR) into --to URL (EventStoreDB), in order and idempotently",
		"migrate [--data DIR] --to URL",
		"Copies the embedded log into EventStoreDB/KurrentDB in order; running it again copies only what is new.",
		"tradeledger migrate --data ./data --to 'esdb://127.0.0.1:2113?tls=false'"},
	"token": {"create, list or revoke scoped API tokens (read, trade, admin) for dashboards, bots and auditors",
		"token create --scope read|trade|admin [--ttl 30d] --name NAME | token list | token revoke NAME   [--data DIR]",
		"create prints a new token once (only its id is stored, as a TokenCreated event); read tokens read everything\n" +
			"but secrets and change nothing (403), trade tokens also place and cancel orders, admin tokens do everything.\n" +
			"revoke is refused by a service running beside it from its next look at the log (at most half a second).\n" +
			"A password login keeps issuing full-access tokens.",
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
	"data": true, "listen": true, "files-listen": true, "eventstore": true, "clickhouse": true, "instance": true,
	"read-from": true, "pnl-method": true, "token-ttl": true, "tls-cert": true, "tls-key": true,
	"log-level": true, "log-format": true, "metrics-listen": true, "cors-origins": true, "trusted-proxies": true, "max-conns": true,
	"checkpoint-interval": true, "public-tlog": true, "snapshot-every": true, "snapshot-interval": true, "snapshot-dir": true,
	"sync-interval": true,
	"witness":       true, "witness-quorum": true,
	"snapshot-check-share": true,
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
