package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// realConfigJS is config.js as people keep it: comments, unquoted keys,
// single quotes, trailing commas.
const realConfigJS = `// my Gunbot config
/* edited by hand */
module.exports = {
  pairs: {
    binance: {
      'USDT-BTC': { strategy: 'gain', enabled: true, override: { GAIN: 1.5, }, }, // trailing commas
    },
  },
  strategies: { gain: { STRATEGY: 'gain', GAIN: 1, TRADING_LIMIT: 100, }, },
  exchanges: { binance: { isEncrypted: false, delay: 5, }, },
  bot: { service_wallet: '0xfeedfeedfeedfeedfeedfeedfeedfeed', },
};
`

func writeFolder(t *testing.T, configJS string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.js"), []byte(configJS), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestImportConfigJSAsPeopleKeepIt: a JavaScript object literal imports; the
// data dir's wallet is kept (the summary says so) unless --take-wallet.
func TestImportConfigJSAsPeopleKeepIt(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	t.Setenv("TRADELEDGER_WALLET", "0x0123456789abcdef0123456789abcdef")
	data := filepath.Join(t.TempDir(), "data")
	from := writeFolder(t, realConfigJS)
	out, warn, err := importRun(t, "import", "--data", data, "--from", from)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	if !strings.Contains(out, "kept the data dir's service wallet; the folder's differs (--take-wallet to use it)") {
		t.Fatalf("summary: %s", out)
	}
	d, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, _ := importReplay(t, d)
	c := cfg.Current()
	d.Close()
	if got := c.Wallet(); got != "0x0123456789abcdef0123456789abcdef" {
		t.Fatalf("wallet %q, want the data dir's", got)
	}
	p, ok := c.Pair("binance", "USDT-BTC")
	if !ok || p.Strategy != "gain" || p.Override["GAIN"] == nil {
		t.Fatalf("pair %+v %v", p, ok)
	}

	out, _, err = importRun(t, "import", "--data", data, "--from", from, "--take-wallet")
	if err != nil || !strings.Contains(out, "took the folder's service wallet") || !strings.Contains(out, "1 new") {
		t.Fatalf("import --take-wallet: %s %v", out, err)
	}
	out, _, _ = importRun(t, "wallet", "--data", data)
	if strings.TrimSpace(out) != "0xfeedfeedfeedfeedfeedfeedfeedfeed" {
		t.Fatalf("wallet after --take-wallet: %q", out)
	}
}

// TestImportErrorsNameLineAndColumn: a syntax error in config.js names
// its line and column, and the data dir the import would have created is
// gone.
func TestImportErrorsNameLineAndColumn(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	bad := "// header\nmodule.exports = {\n  pairs: {},\n  bot: { x: 1 \n    y: 2 },\n};\n"
	data := filepath.Join(t.TempDir(), "data")
	_, _, err := importRun(t, "import", "--data", data, "--from", writeFolder(t, bad))
	if err == nil || !strings.Contains(err.Error(), "config.js:5:5:") {
		t.Fatalf("err = %v, want config.js:5:5", err)
	}
	if _, statErr := os.Stat(data); !os.IsNotExist(statErr) {
		t.Fatalf("a failed import left the new data dir %s behind (%v)", data, statErr)
	}

	// An existing data dir is kept as it was.
	if _, _, err := importRun(t, "wallet", "--data", data); err != nil {
		t.Fatal(err)
	}
	if _, _, err := importRun(t, "import", "--data", data, "--from", writeFolder(t, bad)); err == nil {
		t.Fatal("bad import succeeded")
	}
	if _, err := os.Stat(filepath.Join(data, "events.db")); err != nil {
		t.Fatalf("a failed import into an existing data dir removed it: %v", err)
	}
}
