package gunbot

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// Layout returns where a stored file of kind goes in a Gunbot folder
// (slash-separated): the layout Read reads.
func Layout(kind, name string) string {
	switch kind {
	case domain.FileBackup:
		return path.Join("backups", name)
	case domain.FileState:
		return path.Join("json", name)
	case domain.FileStrategy:
		return path.Join("customStrategies", name)
	}
	return name // autoconfig.json, custom-editor.json, AutoConfig variable files: at the top
}

// Files lists and reads stored files (projections.Files does).
type Files interface {
	// List returns the names of kind's files.
	List(kind string) []string
	// Get returns a file's stored content: JSON, or for a strategy a JSON
	// string holding its text.
	Get(kind, name string) (json.RawMessage, error)
}

// Tree is the state to write as a Gunbot folder: a configuration, its
// exchanges' secrets when they are to be written, and the stored files.
type Tree struct {
	// Config is the current configuration; a zero one writes no config.js.
	Config domain.Config
	// Secrets returns an exchange's secrets in clear (field path → value);
	// nil leaves every secret out and masks bot.service_wallet.
	Secrets func(exchange string) (map[string]string, error)
	Files   Files
}

// TreeFile is one file of a written tree.
type TreeFile struct {
	Path string      // in the folder, slash-separated, local (fs.ValidPath)
	Kind string      // "config" for config.js, else the stored file's kind
	Body []byte      // the file's bytes
	Mode fs.FileMode // 0600 for config.js (it may hold secrets), 0644 otherwise
}

// FileKindConfig is TreeFile.Kind of config.js.
const FileKindConfig = "config"

// Render returns the tree's files (config.js first, then the stored files
// by kind in domain.FileKinds order) and how many secret fields config.js
// holds in clear. A stored file whose name is not one the kind allows (the
// log may be hostile) or whose content does not decode is an error.
func (t Tree) Render() (files []TreeFile, secrets int, err error) {
	if !t.Config.IsZero() {
		doc, n, err := t.configDocument()
		if err != nil {
			return nil, 0, err
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, 0, err
		}
		body := append([]byte("module.exports = "), b...)
		body = append(body, ";\n"...)
		files = append(files, TreeFile{Path: "config.js", Kind: FileKindConfig, Body: body, Mode: 0o600})
		secrets = n
	}
	for _, kind := range domain.FileKinds {
		for _, name := range t.Files.List(kind) {
			content, err := t.Files.Get(kind, name)
			if err != nil {
				return nil, 0, fmt.Errorf("read %s file %s: %w", kind, name, err)
			}
			body := []byte(content)
			if kind == domain.FileStrategy {
				var text string // strategies are stored as a JSON string
				if err := json.Unmarshal(content, &text); err != nil {
					return nil, 0, fmt.Errorf("strategy %s: stored content is not a JSON string", name)
				}
				body = []byte(text)
			}
			if err := domain.ValidateFileName(kind, name); err != nil {
				return nil, 0, fmt.Errorf("%s file name %q: %s", kind, name, domain.ErrorMessage(err))
			}
			p := Layout(kind, name)
			if !fs.ValidPath(p) {
				return nil, 0, fmt.Errorf("refusing to write %q outside the folder", p)
			}
			files = append(files, TreeFile{Path: p, Kind: kind, Body: body, Mode: 0o644})
		}
	}
	return files, secrets, nil
}

// configDocument returns the configuration as config.js holds it: without
// secrets, or with them in clear when t.Secrets is set (isEncrypted false
// either way, so that import encrypts them again under its own key).
func (t Tree) configDocument() (map[string]any, int, error) {
	doc := t.Config.WithoutSecrets().Map()
	exchanges, _ := doc["exchanges"].(map[string]any)
	n := 0
	for name, v := range exchanges {
		entry, ok := v.(map[string]any)
		if !ok {
			continue
		}
		entry["isEncrypted"] = false
		if t.Secrets == nil {
			continue
		}
		inClear, err := t.Secrets(name)
		if err != nil {
			return nil, 0, fmt.Errorf("decrypt %s secrets: %w", name, err)
		}
		for k, s := range inClear {
			secrets.PutSecret(entry, k, s) // k is a path (secrets.SecretFieldName)
			n++
		}
	}
	if bot, ok := doc["bot"].(map[string]any); ok && t.Secrets == nil {
		// Masked like every other output; import keeps the target's
		// wallet when it reads the mask.
		if w, ok := bot["service_wallet"].(string); ok && w != "" {
			bot["service_wallet"] = secrets.Mask
		}
	}
	return doc, n, nil
}
