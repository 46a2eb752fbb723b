package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tradeledger/tradeledger/domain"
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
	line := fmt.Sprintf("restored %s as of position %d (%d events): %s, %d files (autoconfig %d, backups %d, state %d, strategies %d, AutoConfig variables %d, custom editor %d), %d bytes",
		s.Out, s.AsOf.Position, s.AsOf.Events, cfg, n, s.Files[domain.FileAutoconfig], s.Files[domain.FileBackup], s.Files[domain.FileState],
		s.Files[domain.FileStrategy], s.Files[domain.FileACVar], s.Files[domain.FileCustomEditor], s.Filesize)
	if s.Secrets > 0 {
		line += fmt.Sprintf("; %d exchange secrets in clear in config.js (mode 0600)", s.Secrets)
	}
	return line
}

// restoreLayout places each file kind in a Gunbot-style tree; this is the
// layout `tradeledger import` reads.
func restoreLayout(kind, name string) string {
	switch kind {
	case domain.FileBackup:
		return filepath.Join("backups", name)
	case domain.FileState:
		return filepath.Join("json", name)
	case domain.FileStrategy:
		return filepath.Join("customStrategies", name)
	}
	return name // autoconfig.json, custom-editor.json, AutoConfig variable files: at the top
}

// Restorer materializes the config and files read models as a folder.
type Restorer struct {
	Config *projections.Config
	Files  *projections.Files
	// Box, when set, decrypts exchange secrets into config.js; without it
	// config.js carries no secret (isEncrypted false, fields removed).
	Box *domain.SecretBox
}

// Write writes the tree into out, which must not exist or be empty.
func (r *Restorer) Write(out string, sum *RestoreSummary) error {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("--out %s is not empty; restore writes into a new or empty directory", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	sum.Files = map[string]int{}
	cfg := r.Config.Current()
	if !cfg.IsZero() {
		doc, secrets, err := r.configDocument(cfg)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		body := append([]byte("module.exports = "), b...)
		body = append(body, ";\n"...)
		if err := writeRestored(out, "config.js", body, 0o600, sum); err != nil {
			return err
		}
		sum.Config, sum.Secrets = true, secrets
	}
	for _, kind := range domain.FileKinds {
		for _, name := range r.Files.List(kind) {
			content, err := r.Files.Get(kind, name)
			if err != nil {
				return fmt.Errorf("read %s file %s: %w", kind, name, err)
			}
			body := []byte(content)
			if kind == domain.FileStrategy {
				var text string // strategies are stored as a JSON string
				if err := json.Unmarshal(content, &text); err != nil {
					return fmt.Errorf("strategy %s: stored content is not a JSON string", name)
				}
				body = []byte(text)
			}
			if err := domain.ValidateFileName(kind, name); err != nil {
				return fmt.Errorf("%s file name %q: %s", kind, name, domain.ErrorMessage(err))
			}
			if err := writeRestored(out, restoreLayout(kind, name), body, 0o644, sum); err != nil {
				return err
			}
			sum.Files[kind]++
		}
	}
	return nil
}

// configDocument returns the configuration as config.js holds it: without
// secrets, or with them decrypted when r.Box is set (isEncrypted false, so
// that import encrypts them again under its own key).
func (r *Restorer) configDocument(cfg domain.Config) (map[string]any, int, error) {
	doc := cfg.WithoutSecrets().Map()
	exchanges, _ := doc["exchanges"].(map[string]any)
	n := 0
	for name, v := range exchanges {
		entry, ok := v.(map[string]any)
		if !ok {
			continue
		}
		entry["isEncrypted"] = false
		if r.Box == nil {
			continue
		}
		secrets, err := r.Config.Secrets(name, r.Box)
		if err != nil {
			return nil, 0, fmt.Errorf("decrypt %s secrets: %w", name, err)
		}
		for k, s := range secrets {
			domain.PutSecret(entry, k, s) // k is a path (domain.SecretFieldName)
			n++
		}
	}
	if bot, ok := doc["bot"].(map[string]any); ok && r.Box == nil {
		// Masked like every other output; import keeps the target's
		// wallet when it reads the mask.
		if w, ok := bot["service_wallet"].(string); ok && w != "" {
			bot["service_wallet"] = domain.Mask
		}
	}
	return doc, n, nil
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
	sum, err := restore(ctx, d, cut, *out, *withSecrets, newProgress(env.Stderr, "restore"), env.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, sum.String())
	return nil
}

func restore(ctx context.Context, d *DataDir, cut logCut, out string, withSecrets bool, prog *progress, warn io.Writer) (RestoreSummary, error) {
	sum := RestoreSummary{Out: out}
	ledger := projections.NewLedger(domain.LOFO) // state files come from its fills
	cfg, files := projections.NewConfig(), projections.NewFiles(ledger)
	res, err := replayLog(ctx, d.Store, cut, []projections.Projection{cfg, ledger, files}, prog, warn)
	if err != nil {
		return sum, err
	}
	sum.AsOf = res
	r := &Restorer{Config: cfg, Files: files}
	if withSecrets {
		if r.Box, err = domain.NewSecretBox(d.MasterKey); err != nil {
			return sum, fmt.Errorf("master key: %w", err)
		}
	}
	if err := r.Write(out, &sum); err != nil {
		return sum, err
	}
	return sum, nil
}
