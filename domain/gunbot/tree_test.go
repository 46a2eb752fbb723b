package gunbot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// mapFiles is a Files over a map kind → name → stored content.
type mapFiles map[string]map[string]string

func (m mapFiles) List(kind string) []string {
	var names []string
	for n := range m[kind] {
		names = append(names, n)
	}
	return names
}

func (m mapFiles) Get(kind, name string) (json.RawMessage, error) {
	return json.RawMessage(m[kind][name]), nil
}

func TestTreeRender(t *testing.T) {
	cfg, err := domain.ConfigFromMap(map[string]any{
		"bot":       map[string]any{"service_wallet": "0xwallet"},
		"exchanges": map[string]any{"binance": map[string]any{"isEncrypted": true}},
		"pairs":     map[string]any{}, "strategies": map[string]any{}, "GUI": map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	files := mapFiles{
		domain.FileStrategy: {"mine.js": `"// mine\n"`},
		domain.FileState:    {"binance-USDT-BTC-state.json": `{"orders":[]}`},
		domain.FileBackup:   {domain.BackupFileName(1_699_000_000_000): `{}`},
	}
	for _, withSecrets := range []bool{false, true} {
		tree := Tree{Config: cfg, Files: files}
		if withSecrets {
			tree.Secrets = func(ex string) (map[string]string, error) { return map[string]string{"masterkey": "K-" + ex}, nil }
		}
		out, secrets, err := tree.Render()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]TreeFile{}
		for _, f := range out {
			got[f.Path] = f
		}
		if len(out) != 4 || out[0].Path != "config.js" || out[0].Mode != 0o600 {
			t.Fatalf("files %+v", out)
		}
		js := string(got["config.js"].Body)
		if !strings.HasPrefix(js, "module.exports = {") || !strings.HasSuffix(js, "};\n") || !strings.Contains(js, `"isEncrypted": false`) {
			t.Fatalf("config.js:\n%s", js)
		}
		if withSecrets != strings.Contains(js, `"masterkey": "K-binance"`) || withSecrets != strings.Contains(js, "0xwallet") || withSecrets != (secrets == 1) {
			t.Fatalf("with secrets %v, %d secrets:\n%s", withSecrets, secrets, js)
		}
		if f := got["customStrategies/mine.js"]; string(f.Body) != "// mine\n" || f.Mode != 0o644 || f.Kind != domain.FileStrategy {
			t.Fatalf("strategy %+v", f)
		}
		if _, ok := got["json/binance-USDT-BTC-state.json"]; !ok {
			t.Fatalf("no state file: %+v", out)
		}
		if _, ok := got["backups/autoconfig.json.1699000000000"]; !ok {
			t.Fatalf("no backup: %+v", out)
		}
		// What restore writes, import reads back.
		if _, err := ParseJSON5(got["config.js"].Body[len("module.exports = "):]); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTreeRenderRefusesHostileNames(t *testing.T) {
	for _, f := range []mapFiles{
		{domain.FileStrategy: {"../../etc/x.js": `"x"`}},
		{domain.FileBackup: {"config.js": `{}`}},
		{domain.FileStrategy: {"x.js": `{"not": "a string"}`}},
	} {
		if out, _, err := (Tree{Files: f}).Render(); err == nil {
			t.Fatalf("%v rendered as %+v", f, out)
		}
	}
}
