package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/gunbot"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/domain/streams"
	"github.com/tradeledger/tradeledger/projections"
)

const gunbotExampleDir = "../../testdata/gunbot-example"

func importRun(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestImportGunbotFolder(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	data := filepath.Join(t.TempDir(), "data")
	out, warn, err := importRun(t, "import", "--data", data, "--from", gunbotExampleDir, "--take-wallet")
	if err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	if !strings.Contains(out, "took the folder's service wallet (--take-wallet)") {
		t.Fatalf("summary does not say the wallet was taken: %s", out)
	}
	// config 1; files: autoconfig, variables, 1 backup, 1 strategy; orders 3 + 1 (the "hold" is skipped)
	if !strings.Contains(out, "config 1, files 4, orders 4") || !strings.Contains(out, "2 skipped") ||
		!strings.Contains(out, "2 encrypted exchange secrets not imported") {
		t.Fatalf("summary: %s\nwarnings: %s", out, warn)
	}
	if !strings.Contains(warn, "backups/config.js.1699999000000") || !strings.Contains(warn, `type "hold"`) {
		t.Fatalf("warnings: %s", warn)
	}

	d, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	head1, _ := d.Store.Head(context.Background())
	cfg, files, events := importReplay(t, d)

	c := cfg.Current()
	if got := c.Wallet(); got != "0x1111222233334444555566667777888899990000" {
		t.Fatalf("wallet=%q", got)
	}
	p, ok := c.Pair("binance", "USDT-BTC")
	if !ok || p.Strategy != "gain" || p.Override["GAIN"] != json.Number("1.5") {
		t.Fatalf("pair=%+v %v", p, ok)
	}
	if _, ok := c.Section("imap_listener"); !ok {
		t.Fatal("unknown section dropped")
	}
	box, _ := secrets.NewSecretBox(d.MasterKey)
	sec, err := cfg.Secrets("binance", box)
	if err != nil || sec["masterkey"] != "IMPORTED-BINANCE-KEY-abc123" || sec["mastersecret"] != "IMPORTED-BINANCE-SECRET-def456" {
		t.Fatalf("binance secrets=%v %v", sec, err)
	}
	if cfg.HasCredentials("kraken") {
		t.Fatal("kraken's Gunbot-encrypted keys were imported as if clear")
	}
	for _, ev := range events {
		for _, s := range []string{"IMPORTED-BINANCE-KEY-abc123", "IMPORTED-BINANCE-SECRET-def456", "gunbotEncrypted"} {
			if strings.Contains(string(ev.Data), s) {
				t.Fatalf("event %s %s holds secret %q", ev.Stream, ev.Type, s)
			}
		}
	}

	for kind, want := range map[string]string{
		domain.FileAutoconfig: "autoconfig.json", domain.FileACVar: "autoconfig-variables.json",
		domain.FileBackup: "autoconfig.json.1699999000000", domain.FileStrategy: "dca.js",
		domain.FileState: "binance-USDT-BTC-state.json,binance-USDT-ETH-state.json",
	} {
		if got := strings.Join(files.List(kind), ","); got != want {
			t.Fatalf("%s files=%s, want %s", kind, got, want)
		}
	}
	st, err := files.Get(domain.FileState, "binance-USDT-BTC-state.json")
	if err != nil {
		t.Fatal(err)
	}
	wantState := `{"orders":[` +
		`{"time":1699996000000,"pair":"USDT-BTC","type":"buy","rate":35100,"amount":0.0042,"id":ID3,"cost":147.42},` +
		`{"time":1699995000000,"pair":"USDT-BTC","type":"sell","rate":35600,"amount":0.004,"id":ID2,"cost":142.4},` +
		`{"time":1699990000000,"pair":"USDT-BTC","type":"buy","rate":35000.5,"amount":0.004,"id":ID1,"cost":140.002}],"balances":{}}`
	var parsed struct {
		Orders []struct {
			ID int64 `json:"id"`
		} `json:"orders"`
	}
	json.Unmarshal(st, &parsed)
	if len(parsed.Orders) == 3 {
		for i, o := range parsed.Orders {
			wantState = strings.Replace(wantState, "ID"+string(rune('3'-i)), importJSONNum(o.ID), 1)
		}
	}
	if string(st) != wantState {
		t.Fatalf("state=%s\nwant  %s", st, wantState)
	}
	st, _ = files.Get(domain.FileState, "binance-USDT-ETH-state.json")
	if !strings.Contains(string(st), `"time":1699991000000`) {
		t.Fatalf("a time in seconds was not read as such: %s", st)
	}
	for _, ev := range events {
		if strings.HasPrefix(ev.Stream, "order-") && ev.Actor != domain.ActorImport {
			t.Fatalf("order event actor %q", ev.Actor)
		}
	}
	d.Close()

	// Importing again adds nothing.
	out, _, err = importRun(t, "import", "--data", data, "--from", gunbotExampleDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ": 0 new, 9 already present") {
		t.Fatalf("second import: %s", out)
	}
	d2, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if head2, _ := d2.Store.Head(context.Background()); head2 != head1 {
		t.Fatalf("second import moved the log from %d to %d", head1, head2)
	}

	// The wallet command prints the imported wallet.
	d2.Close()
	out, _, err = importRun(t, "wallet", "--data", data)
	if err != nil || strings.TrimSpace(out) != "0x1111222233334444555566667777888899990000" {
		t.Fatalf("wallet: %q %v", out, err)
	}
}

func importJSONNum(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func importReplay(t *testing.T, d *DataDir) (*projections.Config, *projections.Files, []domain.Event) {
	t.Helper()
	ledger := projections.NewLedger(domain.LOFO)
	cfg, files := projections.NewConfig(), projections.NewFiles(ledger)
	it := d.Store.ReadAll(context.Background(), 0, 0)
	defer it.Close()
	var events []domain.Event
	for it.Next() {
		e := it.Event()
		events = append(events, e)
		if err := cfg.Apply(&e); err != nil {
			t.Fatalf("config apply %s: %v", e.Type, err)
		}
		if err := ledger.Apply(&e); err != nil {
			t.Fatalf("ledger apply %s: %v", e.Type, err)
		}
		if err := files.Apply(&e); err != nil {
			t.Fatalf("files apply %s: %v", e.Type, err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return cfg, files, events
}

func TestInitConfigAndWallet(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("cd", 32))
	t.Setenv("TRADELEDGER_WALLET", "0xfeedfeedfeedfeedfeedfeed")
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := importRun(t, "wallet", "--data", data)
	if err != nil || strings.TrimSpace(out) != "0xfeedfeedfeedfeedfeedfeed" {
		t.Fatalf("wallet=%q %v", out, err)
	}
	d, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cfg, _, events := importReplay(t, d)
	if len(events) != 1 {
		t.Fatalf("%d events after two opens, want the one initial ConfigReplaced", len(events))
	}
	c := cfg.Current()
	if !c.Simulator() || strings.Join(c.StrategyNames(), ",") != "gain,manual,stepgrid" || len(c.Pairs()) != 0 {
		t.Fatalf("initial config: %s", importMarshal(c))
	}
	if _, ok := c.Exchange("binance"); !ok {
		t.Fatal("no paper exchange in the initial config")
	}
	if _, ok := c.Section("GUI"); !ok {
		t.Fatal("no GUI section")
	}
}

// A generated wallet is the login password's encryption key: the first
// start says how to read it (`tradeledger wallet`) and never logs it.
func TestInitConfigGeneratesWallet(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("cd", 32))
	t.Setenv("TRADELEDGER_WALLET", "")
	data := filepath.Join(t.TempDir(), "data")
	var logs bytes.Buffer
	logger := zap.New(importLogCore(&logs))
	d, err := OpenDataDir(context.Background(), data, "", logger)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, _ := importReplay(t, d)
	w := cfg.Wallet()
	d.Close()
	if len(w) != 42 || !strings.HasPrefix(w, "0x") {
		t.Fatalf("wallet %q", w)
	}
	if strings.Contains(logs.String(), w[:16]) {
		t.Fatalf("the log shows the wallet: %s", logs.String())
	}
	if !strings.Contains(logs.String(), "`tradeledger wallet --data "+data+"` prints it") {
		t.Fatalf("the log does not say how to read the wallet: %s", logs.String())
	}
	logs.Reset()
	d, err = OpenDataDir(context.Background(), data, "", logger)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if strings.Contains(logs.String(), w) {
		t.Fatal("the wallet was logged again on the second open")
	}
}

func importMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func importLogCore(w io.Writer) zapcore.Core {
	return zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(w), zap.DebugLevel)
}

// TestImportManyOrders imports a generated folder of several batches of
// orders (newest first in each state file): every order is appended, in
// trade-time order across pairs, the log verifies, and importing it again
// appends nothing.
func TestImportManyOrders(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	const orders = importChunk + 37
	from := filepath.Join(t.TempDir(), "gunbot")
	writeImportFolder(t, from, orders)
	data := filepath.Join(t.TempDir(), "data")
	out, warn, err := importRun(t, "import", "--data", data, "--from", from)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	want := fmt.Sprintf(": %d new, 0 already present, 0 skipped (config 1, files 0, orders %d; %d events appended)", orders+1, orders, 3*orders+1)
	if !strings.Contains(out, want) {
		t.Fatalf("summary %q, want %q", out, want)
	}
	if stdout, errOut, code := auditRun(t, "verify", "--data", data); code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, stdout, errOut)
	}

	d, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	head1, _ := d.Store.Head(context.Background())
	it := d.Store.ReadAll(context.Background(), 0, 0)
	var last int64
	fills := 0
	for it.Next() {
		e := it.Event()
		if !strings.HasPrefix(e.Stream, "order-") {
			continue
		}
		if e.Time < last {
			t.Fatalf("event %d (%s %s) at %d after one at %d: not in trade-time order", e.Position, e.Stream, e.Type, e.Time, last)
		}
		last = e.Time
		if e.Type == domain.TypeOrderFilled {
			fills++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	d.Close()
	if fills != orders {
		t.Fatalf("%d fills, want %d", fills, orders)
	}

	out, _, err = importRun(t, "import", "--data", data, "--from", from)
	if err != nil || !strings.Contains(out, fmt.Sprintf(": 0 new, %d already present", orders+1)) {
		t.Fatalf("second import: %s %v", out, err)
	}
	d, err = OpenDataDir(context.Background(), data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if head2, _ := d.Store.Head(context.Background()); head2 != head1 {
		t.Fatalf("the second import moved the log from %d to %d", head1, head2)
	}
}

// TestImportAfterAnEarlierVersion: an order an earlier version imported
// (at its LegacyID, events under other ids) counts as already present, and
// is not appended twice: the data dir goes on giving legacy ids.
func TestImportAfterAnEarlierVersion(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	d, err := OpenDataDir(ctx, data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	folder, err := gunbot.Read(os.DirFS(gunbotHistoryDir))
	if err != nil {
		t.Fatal(err)
	}
	o := folder.Orders[1]
	o.ID = o.LegacyID
	u := (&gunbot.Importer{Clock: domain.SystemClock{}}).Order(o)
	for i, suffix := range []string{"requested", "accepted", "filled"} {
		// The ids earlier versions gave an order's events.
		u.Events[i].ID = gunbot.ID(u.Events[i].Type, strings.TrimPrefix(u.Stream, "order-"), suffix)
	}
	if _, err := d.Store.Append(ctx, u.Stream, domain.Any, u.Events...); err != nil {
		t.Fatal(err)
	}
	d.Close()
	out, warn, err := importRun(t, "import", "--data", data, "--from", gunbotHistoryDir)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, warn)
	}
	if !strings.Contains(out, ": 4 new, 1 already present, 0 skipped (config 1, files 0, orders 4; 10 events appended)") {
		t.Fatalf("summary: %s", out)
	}
	d, err = OpenDataDir(ctx, data, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, _, events := importReplay(t, d)
	fills := 0
	for _, e := range events {
		if e.Type == domain.TypeOrderFilled {
			fills++
		}
		if id, ok := streams.OrderStreamID(e.Stream); ok && !gunbot.IsLegacyOrderID(id) {
			t.Fatalf("%s: not a legacy id, in a data dir an earlier version imported into", e.Stream)
		}
	}
	if fills != 4 {
		t.Fatalf("%d fills, want the history's 4", fills)
	}
}

// sharedIDOrders returns two state-file entries of orders traded in the
// same second, at different ms, that gunbot.OrderID gives the same id,
// the earlier trade first (found among 3,000 such orders: with 19 bits of
// hash, about 8 pairs share an id).
func sharedIDOrders(t *testing.T) (first, second string) {
	t.Helper()
	const ms = int64(1_709_287_200_000)
	entry := func(i int) string {
		return fmt.Sprintf(`{"time": %d, "type": "buy", "rate": 50000, "amount": 0.%06d, "id": %d}`, ms+int64(i%1000), i+1, i)
	}
	var all []string
	for i := range 3000 {
		all = append(all, entry(i))
	}
	f, err := gunbot.Read(fstest.MapFS{"json/binance-USDT-BTC-state.json": {Data: []byte(`{"orders": [` + strings.Join(all, ",") + `]}`)}})
	if err != nil || len(f.Orders) != 3000 {
		t.Fatalf("read: %v (%d orders)", err, len(f.Orders))
	}
	byID := map[int64]int{}
	for _, o := range f.Orders {
		i, _ := strconv.Atoi(o.SourceID)
		if j, ok := byID[o.ID]; ok && i%1000 != j%1000 {
			if i%1000 < j%1000 {
				return entry(i), entry(j) // the earlier trade first
			}
			return entry(j), entry(i)
		}
		byID[o.ID] = i
	}
	t.Fatal("no two of 3,000 orders in one second share an id")
	return "", ""
}

// TestImportOrdersSharingAnID: two orders traded in the same second may
// get the same time-ordered id; the later one moves to the next id. Both
// are imported, a re-import finds both, and so does an import into a data
// dir that already holds the later one at the shared id.
func TestImportOrdersSharingAnID(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	first, second := sharedIDOrders(t)
	folder := func(entries ...string) string {
		dir := filepath.Join(t.TempDir(), "gunbot")
		if err := os.MkdirAll(filepath.Join(dir, "json"), 0o755); err != nil {
			t.Fatal(err)
		}
		state := `{"orders": [` + strings.Join(entries, ",") + `]}`
		if err := os.WriteFile(filepath.Join(dir, "json", "binance-USDT-BTC-state.json"), []byte(state), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	filledStreams := func(data string) []string {
		d, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		_, _, events := importReplay(t, d)
		var got []string
		for _, e := range events {
			if e.Type == domain.TypeOrderFilled {
				got = append(got, e.Stream)
			}
		}
		return got
	}
	both := folder(second, first)

	data := filepath.Join(t.TempDir(), "data")
	for i, want := range []string{": 2 new, 0 already present", ": 0 new, 2 already present"} {
		out, warn, err := importRun(t, "import", "--data", data, "--from", both)
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("import %d: %s %v\n%s", i+1, out, err, warn)
		}
	}
	got := filledStreams(data)
	if len(got) != 2 {
		t.Fatalf("filled streams %v, want two", got)
	}
	a, _ := streams.OrderStreamID(got[0])
	b, _ := streams.OrderStreamID(got[1])
	if b != a+1 {
		t.Fatalf("streams %v: the second order is not at the next id", got)
	}

	// The later order imported alone takes the shared id; the earlier one,
	// imported next, moves to the next id, and the later one is found.
	data = filepath.Join(t.TempDir(), "data")
	if out, warn, err := importRun(t, "import", "--data", data, "--from", folder(second)); err != nil || !strings.Contains(out, ": 1 new, 0 already present") {
		t.Fatalf("import of the later order: %s %v\n%s", out, err, warn)
	}
	for i, want := range []string{": 1 new, 1 already present", ": 0 new, 2 already present"} {
		out, warn, err := importRun(t, "import", "--data", data, "--from", both)
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("import %d of both: %s %v\n%s", i+1, out, err, warn)
		}
	}
	if got := filledStreams(data); len(got) != 2 || got[0] != fmt.Sprintf("order-%d", a) || got[1] != fmt.Sprintf("order-%d", a+1) {
		t.Fatalf("filled streams %v, want order-%d then order-%d", got, a, a+1)
	}
}

// An import never starts trading on its own: a folder whose GUI.start is
// true leaves the core stopped and says so; --start starts it (again after
// a stop, as asked); an import that changes a started core's
// configuration stops it, and one that changes nothing leaves it running.
func TestImportNeverStartsTradingUnlessAsked(t *testing.T) {
	t.Setenv("TRADELEDGER_MASTER_KEY", strings.Repeat("ab", 32))
	folder := func(start bool, strategy string) string {
		dir := t.TempDir()
		cfg := fmt.Sprintf(`module.exports = {
  pairs: { binance: { "USDT-BTC": { strategy: "%s", enabled: true, override: {} } } },
  strategies: { manual: { STRATEGY: "manual" }, grid: { STRATEGY: "stepgrid" } },
  exchanges: { binance: { isEncrypted: false, delay: 5 } },
  bot: { SIMULATOR: true },
  GUI: { start: %v },
};`, strategy, start)
		if err := os.WriteFile(filepath.Join(dir, "config.js"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	systemEvents := func(data string) string {
		t.Helper()
		d, err := OpenDataDir(context.Background(), data, "", zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		it := d.Store.ReadStream(context.Background(), domain.StreamSystem, 0, 0)
		defer it.Close()
		var out []string
		for it.Next() {
			out = append(out, it.Event().Type+" by "+it.Event().Actor)
		}
		return strings.Join(out, ", ")
	}
	importSays := func(data, from, want string, flags ...string) {
		t.Helper()
		out, warn, err := importRun(t, append([]string{"import", "--data", data, "--from", from}, flags...)...)
		if err != nil || !strings.Contains(out, "; "+want) {
			t.Fatalf("import %v: %v\n%s%s\nwant the summary to say %q", flags, err, out, warn, want)
		}
	}

	data := filepath.Join(t.TempDir(), "gui-start")
	starts := folder(true, "manual")
	importSays(data, starts, "the bot core stays stopped: the configuration's GUI.start is true, but an import never starts trading on its own; start it with tradeledger import --start")
	if got := systemEvents(data); got != "" {
		t.Fatalf("system stream %q after an import of GUI.start true, want nothing", got)
	}
	// Asked: started. The same folder again changes nothing: it runs on.
	importSays(data, starts, "the bot core is started, as --start says", "--start")
	importSays(data, starts, "the bot core keeps running (its configuration is unchanged)")
	// Another configuration while it runs: stopped, and it says why.
	importSays(data, folder(true, "grid"), "the bot core is stopped: this import changed its configuration, and the configuration's GUI.start is true, but an import never starts trading on its own")
	// --start after a stop starts it again (the operator's request, not
	// the folder's: a new event).
	importSays(data, starts, "the bot core is started, as --start says", "--start")
	importSays(data, starts, "the bot core was running already (--start)", "--start")
	if got, want := systemEvents(data), "SystemStarted by import, SystemStopped by import, SystemStarted by import"; got != want {
		t.Fatalf("system stream %q, want %q", got, want)
	}

	data = filepath.Join(t.TempDir(), "stopped")
	importSays(data, folder(false, "manual"), "the bot core stays stopped: an import never starts trading on its own; start it with")
	if got := systemEvents(data); got != "" {
		t.Fatalf("system stream %q, want none", got)
	}
}
