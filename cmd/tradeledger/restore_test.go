package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/projections"
)

// restoreSource builds a data dir with configuration, credentials, every
// kind of file, filled orders and balances; the last event (a second
// strategy) comes after the position it returns, for --position tests.
func restoreSource(t *testing.T) (dir string, beforeLast uint64) {
	t.Helper()
	ctx := context.Background()
	dir = filepath.Join(t.TempDir(), "src")
	d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	box, err := secrets.NewSecretBox(d.MasterKey)
	if err != nil {
		t.Fatal(err)
	}
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_000_000))
	app := func(stream string, typ string, data any) uint64 {
		t.Helper()
		e := domain.NewEvent(clock, typ, data)
		e.Actor = "test"
		res, err := d.Store.Append(ctx, stream, domain.Any, e)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
		return res.LastPosition
	}
	file := func(kind, name, content string) uint64 {
		fw, err := domain.NewFileWritten(kind, name, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return app(domain.FileStream(kind, name), domain.TypeFileWritten, fw)
	}
	app(domain.StreamCredentials, domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: "binance", Fields: map[string]string{"key": box.Seal("KEY-123"), "secret": box.Seal("SECRET-456")}})
	app(domain.StreamConfig, domain.TypePairAdded, domain.PairAdded{Exchange: "binance", Pair: "USDT-BTC", Strategy: "gain", Enabled: true, Override: json.RawMessage(`{"GAIN":2}`)})
	file(domain.FileAutoconfig, domain.AutoconfigFileName, `{"pairs":{"binance":{"enabled":true}}}`)
	file(domain.FileBackup, domain.BackupFileName(1_699_000_000_000), `{"old":true}`)
	file(domain.FileACVar, "autoconfig-variables.json", `{"x": 1}`)
	file(domain.FileCustomEditor, domain.CustomEditorFileName, `{"layout":"grid"}`)
	file(domain.FileStrategy, "mine.js", "// my strategy\nmodule.exports = function () {}\n")
	dec := decimal.MustDecimal
	order := func(id int64, side domain.Side, price, qty string) {
		s := domain.OrderStream(id)
		app(s, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "USDT-BTC", Side: side, Kind: domain.KindLimit, Amount: dec(qty), Price: dec(price), ClientOrderID: fmt.Sprint("c", id)})
		app(s, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprint("x", id)})
		app(s, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint("f", id), Price: dec(price), Quantity: dec(qty), Fee: dec("0"), FeeAsset: "USDT"})
	}
	order(1, domain.Buy, "30000", "0.01")
	order(2, domain.Sell, "31000", "0.005")
	app(domain.BalanceStream("binance"), domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "binance", Balances: []domain.AssetBalance{{Asset: "USDT", Available: dec("9855"), OnOrder: dec("0")}}})
	beforeLast, _ = d.Store.Head(ctx)
	file(domain.FileStrategy, "later.js", "// written after the cut\n")
	return dir, beforeLast
}

// readModels replays a data dir's log into the config and files read
// models.
func readModels(t *testing.T, dir string) (*projections.Config, *projections.Files, *secrets.SecretBox) {
	t.Helper()
	ctx := context.Background()
	d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ledger := projections.NewLedger(domain.LOFO)
	cfg, files := projections.NewConfig(), projections.NewFiles(ledger)
	if _, err := replayLog(ctx, d.Store, nil, logCut{}, []projections.Projection{cfg, ledger, files}, nil, nil); err != nil {
		t.Fatal(err)
	}
	box, err := secrets.NewSecretBox(d.MasterKey)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, files, box
}

func TestRestoreImportRoundTrip(t *testing.T) {
	src, _ := restoreSource(t)
	out := filepath.Join(t.TempDir(), "gunbot")
	stdout, errOut, code := auditRun(t, "restore", "--data", src, "--out", out, "--with-secrets")
	if code != 0 {
		t.Fatalf("restore: exit %d: %s%s", code, stdout, errOut)
	}
	if !strings.Contains(stdout, "restored "+out) || !strings.Contains(stdout, "2 exchange secrets in clear") {
		t.Fatalf("summary line: %s", stdout)
	}
	for _, f := range []string{"config.js", "autoconfig.json", "backups/autoconfig.json.1699000000000", "autoconfig-variables.json",
		"custom-editor.json", "customStrategies/mine.js", "customStrategies/later.js", "json/binance-USDT-BTC-state.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatalf("restored tree lacks %s", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "customStrategies/mine.js")); string(b) != "// my strategy\nmodule.exports = function () {}\n" {
		t.Fatalf("strategy file restored as %q", b)
	}
	if st, _ := os.Stat(filepath.Join(out, "config.js")); st.Mode().Perm() != 0o600 {
		t.Fatalf("config.js with secrets has mode %v", st.Mode().Perm())
	}

	dst := filepath.Join(t.TempDir(), "dst")
	if stdout, errOut, code := auditRun(t, "import", "--data", dst, "--from", out, "--take-wallet"); code != 0 {
		t.Fatalf("import: exit %d: %s%s", code, stdout, errOut)
	}

	srcCfg, srcFiles, srcBox := readModels(t, src)
	dstCfg, dstFiles, dstBox := readModels(t, dst)
	// The configuration answers the same (with the same secrets, now under
	// the new data dir's master key).
	if a, b := srcCfg.Public(), dstCfg.Public(); string(a) != string(b) {
		t.Fatalf("config differs after round trip:\n%s\n%s", a, b)
	}
	if a, b := srcCfg.Wallet(), dstCfg.Wallet(); a != b {
		t.Fatalf("wallet %q, want %q", b, a)
	}
	s1, err1 := srcCfg.Secrets("binance", srcBox)
	s2, err2 := dstCfg.Secrets("binance", dstBox)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(s1, s2) || s1["secret"] != "SECRET-456" {
		t.Fatalf("secrets %v (%v) vs %v (%v)", s1, err1, s2, err2)
	}
	// Every stored file reads back the same.
	for _, kind := range []string{domain.FileAutoconfig, domain.FileBackup, domain.FileACVar, domain.FileStrategy, domain.FileCustomEditor} {
		names := srcFiles.List(kind)
		if got := dstFiles.List(kind); !reflect.DeepEqual(got, names) || len(names) == 0 {
			t.Fatalf("%s files %v, want %v (and at least one)", kind, got, names)
		}
		for _, n := range names {
			a, _ := srcFiles.Get(kind, n)
			b, _ := dstFiles.Get(kind, n)
			if string(a) != string(b) {
				t.Fatalf("%s %s: %s, want %s", kind, n, b, a)
			}
		}
	}
	// State files: the same orders (import gives orders ids of its own,
	// and balances are not part of an import).
	names := srcFiles.List(domain.FileState)
	if got := dstFiles.List(domain.FileState); !reflect.DeepEqual(got, names) || len(names) != 1 {
		t.Fatalf("state files %v, want %v", got, names)
	}
	stateOrders := func(f *projections.Files) []map[string]any {
		raw, err := f.Get(domain.FileState, names[0])
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Orders []map[string]any }
		json.Unmarshal(raw, &st)
		for _, o := range st.Orders {
			delete(o, "id")
		}
		return st.Orders
	}
	if a, b := stateOrders(srcFiles), stateOrders(dstFiles); len(a) != 2 || !reflect.DeepEqual(a, b) {
		t.Fatalf("state orders after round trip:\n%v\nwant\n%v", b, a)
	}
}

func TestRestoreAsOfPositionAndWithoutSecrets(t *testing.T) {
	src, before := restoreSource(t)
	out := filepath.Join(t.TempDir(), "gunbot")
	if stdout, errOut, code := auditRun(t, "restore", "--data", src, "--out", out, "--position", fmt.Sprint(before)); code != 0 {
		t.Fatalf("restore: exit %d: %s%s", code, stdout, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "customStrategies/later.js")); err == nil {
		t.Fatal("a file written after --position was restored")
	}
	if _, err := os.Stat(filepath.Join(out, "customStrategies/mine.js")); err != nil {
		t.Fatal("a file written before --position is missing")
	}
	b, _ := os.ReadFile(filepath.Join(out, "config.js"))
	if !strings.HasPrefix(string(b), "module.exports = {") || strings.Contains(string(b), "SECRET-456") || strings.Contains(string(b), "KEY-123") {
		t.Fatalf("config.js without --with-secrets:\n%s", b)
	}
	// Restoring into a non-empty directory is refused.
	if _, errOut, code := auditRun(t, "restore", "--data", src, "--out", out); code == 0 || !strings.Contains(errOut, "not empty") {
		t.Fatalf("restore into a non-empty dir: exit %d %s", code, errOut)
	}
	if _, errOut, code := auditRun(t, "restore", "--data", src, "--out", t.TempDir()+"/x", "--until", "yesterday"); code == 0 || !strings.Contains(errOut, "--until") {
		t.Fatalf("bad --until: exit %d %s", code, errOut)
	}
}
