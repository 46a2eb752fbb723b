package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/gunbot"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/projections"
)

// RestoreSummary counts what restore wrote.
type RestoreSummary struct {
	Out      string
	AsOf     replayResult
	Config   bool
	Files    map[string]int // kind → files written
	Secrets  int            // exchange secret fields written in clear (--with-secrets)
	Filesize int64
}

// String is restore's final summary line.
func (s RestoreSummary) String() string {
	n := 0
	for _, c := range s.Files {
		n += c
	}
	cfg := "no config"
	if s.Config {
		cfg = "config.js"
	}
	line := fmt.Sprintf("restored %s as of position %d (%d events, %s): %s, %d files (autoconfig %d, backups %d, state %d, strategies %d, AutoConfig variables %d, custom editor %d), %d bytes",
		s.Out, s.AsOf.Position, s.AsOf.Events, replaySource(s.AsOf), cfg, n, s.Files[domain.FileAutoconfig], s.Files[domain.FileBackup], s.Files[domain.FileState],
		s.Files[domain.FileStrategy], s.Files[domain.FileACVar], s.Files[domain.FileCustomEditor], s.Filesize)
	if s.Secrets > 0 {
		line += fmt.Sprintf("; %d exchange secrets in clear in config.js (mode 0600)", s.Secrets)
	}
	return line
}

// writeTree writes a rendered Gunbot folder into out, which must not
// exist or be empty.
func writeTree(out string, tree gunbot.Tree, sum *RestoreSummary) error {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("--out %s is not empty; restore writes into a new or empty directory", out)
	}
	files, secrets, err := tree.Render()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	sum.Files = map[string]int{}
	for _, f := range files {
		if err := writeRestored(out, filepath.FromSlash(f.Path), f.Body, f.Mode, sum); err != nil {
			return err
		}
		if f.Kind == gunbot.FileKindConfig {
			sum.Config, sum.Secrets = true, secrets
		} else {
			sum.Files[f.Kind]++
		}
	}
	return nil
}

// writeRestored writes body at rel under out, refusing paths that would
// leave out (names come from the log, which may be hostile).
func writeRestored(out, rel string, body []byte, mode os.FileMode, sum *RestoreSummary) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("refusing to write %q outside --out", rel)
	}
	path := filepath.Join(out, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, body, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	sum.Filesize += int64(len(body))
	return nil
}

func runRestore(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("restore", env.Stderr)
	var sf storeFlags
	sf.register(fs)
	out := fs.String("out", "", "directory to write the Gunbot-style tree into (new or empty)")
	until := fs.String("until", "", "restore the state as of this time: RFC 3339 or milliseconds since the epoch (default: now)")
	position := fs.Uint64("position", 0, "restore the state as of this log position (inclusive)")
	withSecrets := fs.Bool("with-secrets", false, "write exchange secrets decrypted into config.js (default: left out)")
	fromSnapshot := fs.Bool("from-snapshot", false, fromSnapshotUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required: the directory to write")
	}
	cut, err := newLogCut(*until, *position, nil)
	if err != nil {
		return err
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	sum, err := restore(ctx, d, *fromSnapshot, cut, *out, *withSecrets, newProgress(env.Stderr, "restore"), env.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, sum.String())
	return nil
}

// restore writes the Gunbot tree of the log up to cut into out, built
// from the log alone, or with fromSnapshot from the data dir's newest
// read-model snapshot within the cut and the log after it.
func restore(ctx context.Context, d *DataDir, fromSnapshot bool, cut logCut, out string, withSecrets bool, prog *progress, warn io.Writer) (RestoreSummary, error) {
	sum := RestoreSummary{Out: out}
	ledger := projections.NewLedger(domain.LOFO) // state files come from its fills
	cfg, files := projections.NewConfig(), projections.NewFiles(ledger)
	res, err := replayLog(ctx, d.Store, snapshotsIf(fromSnapshot, d), cut, []projections.Projection{cfg, ledger, files}, prog, warn)
	if prog != nil {
		prog.done()
	}
	if err != nil {
		return sum, err
	}
	sum.AsOf = res
	tree := gunbot.Tree{Config: cfg.Current(), Files: files}
	if withSecrets {
		box, err := secrets.NewSecretBox(d.MasterKey)
		if err != nil {
			return sum, fmt.Errorf("master key: %w", err)
		}
		tree.Secrets = func(exchange string) (map[string]string, error) { return cfg.Secrets(exchange, box) }
	}
	if err := writeTree(out, tree, &sum); err != nil {
		return sum, err
	}
	return sum, nil
}
