package gunbot

import (
	"cmp"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// historyState is testdata/gunbot-history's state file, newest first as
// Gunbot keeps it, with one entry that is not an order.
const historyState = `{"orders": [
  {"time": 1709650800000, "pair": "USDT-BTC", "type": "sell", "rate": 51000, "amount": 0.015, "id": 9004, "cost": 765},
  {"time": 1709542800000, "pair": "USDT-BTC", "type": "hold", "rate": 49000, "amount": 0.01, "id": 9005},
  {"time": 1709542800, "pair": "USDT-BTC", "type": "BUY", "rate": 49000, "amount": 0.01, "id": "9003", "cost": 490},
  {"time": 1709380800000, "pair": "USDT-BTC", "type": "sell", "rate": 52000, "amount": 0.005, "id": 9002, "cost": 260},
  {"time": 1709287200000, "pair": "USDT-BTC", "type": "buy", "rate": 50000, "amount": 0.01, "id": 9001, "cost": 500}
], "balances": {}}`

func TestReadFolder(t *testing.T) {
	fsys := fstest.MapFS{
		"config.json":                      {Data: []byte(`{"pairs": {}, "bot": {"service_wallet": "0xabc"}}`)},
		"autoconfig.json":                  {Data: []byte(`{"a": 1}`)},
		"my-variables.json":                {Data: []byte(`{"x": 1}`)},
		"backups/autoconfig.json.17000":    {Data: []byte(`{}`)},
		"backups/config.js.17000":          {Data: []byte(`{}`)},
		"customStrategies/dca.js":          {Data: []byte("// dca\n")},
		"json/binance-USDT-BTC-state.json": {Data: []byte(historyState)},
		"json/binance-USDT-ETH-state.json": {Data: []byte(`{"orders": [{"time": 1709000000000, "pair": "USDT-BTC", "type": "buy", "rate": 1, "amount": 1}]}`)},
		"json/nopair-state.json":           {Data: []byte(`{"orders": []}`)},
		"json/kraken-USD-XBT-state.json":   {Data: []byte(`{"orders": [`)},
	}
	f, err := Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if f.Config == nil || f.Config.Name != "config.json" || string(f.Config.JSON) != string(fsys["config.json"].Data) {
		t.Fatalf("config %+v", f.Config)
	}
	var files []string
	for _, fl := range f.Files {
		files = append(files, fl.Written.Kind+":"+fl.Path)
	}
	if got, want := strings.Join(files, ","), "autoconfig:autoconfig.json,acvar:my-variables.json,backup:backups/autoconfig.json.17000,strategy:customStrategies/dca.js"; got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	var skipped []string
	for _, s := range f.Skipped {
		skipped = append(skipped, s.Path+": "+s.Reason)
	}
	for _, want := range []string{
		"backups/config.js.17000: only autoconfig.json.<timestamp ms> backups are kept",
		`json/binance-USDT-BTC-state.json: order 1: type "hold" is neither buy nor sell`,
		`json/binance-USDT-ETH-state.json: order 0: pair "USDT-BTC" does not match the file's pair USDT-ETH`,
		"json/kraken-USD-XBT-state.json: not a state file: unexpected end of JSON input",
		"json/nopair-state.json: name is not <exchange>-<QUOTE>-<BASE>-state.json",
	} {
		if !strings.Contains(strings.Join(skipped, "\n"), want) {
			t.Fatalf("skipped:\n%s\nlacks %s", strings.Join(skipped, "\n"), want)
		}
	}
	if len(skipped) != 5 {
		t.Fatalf("skipped %d items, want 5:\n%s", len(skipped), strings.Join(skipped, "\n"))
	}
	// Oldest first, whatever the file's order; a time in seconds read as
	// such; the side's case ignored; ids derived from the order's fields.
	var got []string
	for _, o := range f.Orders {
		got = append(got, o.SourceID+" "+string(o.Side)+" "+time.UnixMilli(o.Time).UTC().Format(time.RFC3339))
	}
	if g, want := strings.Join(got, ", "), "9001 buy 2024-03-01T10:00:00Z, 9002 sell 2024-03-02T12:00:00Z, 9003 buy 2024-03-04T09:00:00Z, 9004 sell 2024-03-05T15:00:00Z"; g != want {
		t.Fatalf("orders %s, want %s", g, want)
	}
	// An order's LegacyID is the id earlier versions gave it (a re-import
	// into a log they wrote gives it again); its ID starts with the
	// trade's second, so later trades get larger ids.
	if got, want := f.Orders[0].LegacyID, int64(6368116228558753); got != want {
		t.Fatalf("legacy order id %d, want %d", got, want)
	}
	if got, want := f.Orders[0].ID, int64(3147958581268385); got != want {
		t.Fatalf("order id %d, want %d", got, want)
	}
	for i, o := range f.Orders {
		if o.ID < 1<<51 || o.ID >= 1<<52 || (o.ID-1<<51)>>19 != o.Time/1000 || !IsLegacyOrderID(o.LegacyID) || IsLegacyOrderID(o.ID) {
			t.Fatalf("order %d at %d: id %d, legacy id %d", i, o.Time, o.ID, o.LegacyID)
		}
		if i > 0 && o.ID <= f.Orders[i-1].ID {
			t.Fatalf("order %d's id %d is not above the earlier trade's %d", i, o.ID, f.Orders[i-1].ID)
		}
	}
}

// TestReadFolderOneBadEntry: one entry that does not decode as an order
// object costs only itself.
func TestReadFolderOneBadEntry(t *testing.T) {
	f, err := Read(fstest.MapFS{"json/binance-USDT-BTC-state.json": {Data: []byte(`{"orders": [
		{"time": 1709287200000, "type": "buy", "rate": 50000, "amount": 0.01, "id": 1},
		{"time": "soon", "type": "buy", "rate": 50000, "amount": 0.01, "id": 2},
		[1, 2],
		{"time": 1709287300000, "type": "sell", "rate": 50000, "amount": 0.01, "id": {"x": 1}},
		{"time": 1709287400000, "type": "sell", "rate": -1, "amount": 0.01, "id": 4},
		{"time": 1709287500000, "type": "sell", "rate": 50000, "amount": 0.01, "id": 5}
	]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Orders) != 2 || f.Orders[0].SourceID != "1" || f.Orders[1].SourceID != "5" {
		t.Fatalf("orders %+v, want ids 1 and 5", f.Orders)
	}
	if len(f.Skipped) != 4 || !strings.Contains(f.Skipped[0].Reason, "order 1: not an order object") || !strings.Contains(f.Skipped[1].Reason, "order 2: not an order object") ||
		!strings.Contains(f.Skipped[2].Reason, "id must be") || !strings.Contains(f.Skipped[3].Reason, "must be positive") {
		t.Fatalf("skipped %+v", f.Skipped)
	}
}

func TestReadConfigJS(t *testing.T) {
	js := "// header {not this}\nmodule.exports = {\n  pairs: { binance: { 'USDT-BTC': { strategy: 'gain', override: { GAIN: +1.5, X: 0x10, Y: .5, } } } },\n  /* c */ bot: { service_wallet: \"0xfeed\", },\n};\n"
	f, err := Read(fstest.MapFS{"config.js": {Data: []byte(js)}, "config.json": {Data: []byte(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"bot":{"service_wallet":"0xfeed"},"pairs":{"binance":{"USDT-BTC":{"override":{"GAIN":1.5,"X":16,"Y":0.5},"strategy":"gain"}}}}`
	if f.Config.Name != "config.js" || string(f.Config.JSON) != want {
		t.Fatalf("config %s %s, want %s", f.Config.Name, f.Config.JSON, want)
	}
	// The literal is what names the import (its hash): from the first {
	// outside comments and strings to the end, without the final semicolon.
	if b := string(f.Config.Body); !strings.HasPrefix(b, "{\n  pairs") || !strings.HasSuffix(b, "}") {
		t.Fatalf("body %q", b)
	}
}

func TestReadConfigErrors(t *testing.T) {
	for _, c := range []struct{ js, want string }{
		{"// header\nmodule.exports = {\n  pairs: {},\n  bot: { x: 1 \n    y: 2 },\n};\n", "config.js:5:5: "},
		{"module.exports = 42;", "config.js: no object literal"},
		{"module.exports = {a: Infinity}", "config.js:1:22: Infinity is not a JSON number"},
		{"module.exports = {a: 'x\n'}", "config.js:1:24: line break in a string"},
		{"module.exports = {\n  a: ,\n}", "config.js:2:6: invalid character ','"},
		{"module.exports = {a: 1", "config.js:1:23: invalid end of input"},
		{"/* {a: 1} */ module.exports = [1]", "config.js: no object literal"},
	} {
		_, err := Read(fstest.MapFS{"config.js": {Data: []byte(c.js)}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.js, err, c.want)
		}
	}
}

func TestSplitStateName(t *testing.T) {
	for _, c := range []struct{ name, exchange, pair string }{
		{"binance-USDT-BTC-state.json", "binance", "USDT-BTC"},
		{"binance-futures-USDT-BTC-state.json", "binance-futures", "USDT-BTC"},
		{"USDT-BTC-state.json", "", ""},
		{"binance--BTC-state.json", "", ""},
		{"binance-USDT-BTC.json", "", ""},
	} {
		ex, pair, ok := SplitStateName(c.name)
		if ex != c.exchange || pair != c.pair || ok != (c.exchange != "") {
			t.Errorf("%s: %q %q %v", c.name, ex, pair, ok)
		}
	}
}

// TestImporterIDs: the ids are the ones earlier versions derived, so a
// folder imported by them imports again as "already present".
func TestImporterIDs(t *testing.T) {
	if got, want := ID(domain.TypeOrderFilled, "6368116228558753", "filled"), "e7977d71-83eb-864d-a74d-c1b0595a53a7"; got != want {
		t.Fatalf("ID = %s, want %s", got, want)
	}
	if got, want := ID(domain.TypeFileWritten, "strategy", "dca.js", "abc"), "23f5759b-ec9a-8774-9735-bf29965de776"; got != want {
		t.Fatalf("ID = %s, want %s", got, want)
	}
	im := &Importer{Clock: domain.NewManualClock(time.UnixMilli(1_800_000_000_000))}
	f, err := Read(fstest.MapFS{"json/binance-USDT-BTC-state.json": {Data: []byte(historyState)}})
	if err != nil {
		t.Fatal(err)
	}
	u := im.Order(f.Orders[0])
	// The stream is order-<ID>; its events' ids start with the trade time
	// (0x018df974d500 ms) and are those earlier versions gave the order's
	// events (derived from its LegacyID).
	if u.Stream != "order-3147958581268385" || u.Expected != domain.NoStream || len(u.Events) != 3 || u.Events[0].ID != "018df974-d500-8b21-b375-384a466bcf4d" {
		t.Fatalf("unit %+v", u)
	}
	if id := u.Events[1].ID; !strings.HasPrefix(id, "018df974-d500-8") || id == u.Events[0].ID {
		t.Fatalf("accepted id %s", id)
	}
	// A stream written by an earlier version (IDs, not TimeIDs) holds the
	// same order; another order's does not.
	legacy := u.Events[0]
	legacy.ID = "5b213375-384a-866b-8f4d-11335e47bc47"
	if !IsImportedOrder(&u, &legacy) {
		t.Fatal("the legacy stream's first event is not recognized")
	}
	other := im.Order(f.Orders[1])
	if IsImportedOrder(&u, &other.Events[0]) || IsImportedOrder(&u, &u.Events[1]) {
		t.Fatal("another order or event recognized as this order")
	}
	byHand := legacy
	byHand.Actor = "admin"
	if IsImportedOrder(&u, &byHand) {
		t.Fatal("an order not appended by an import recognized")
	}
	for i, typ := range []string{domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled} {
		e := u.Events[i]
		if e.Type != typ || e.Time != 1709287200000 || e.Actor != domain.ActorImport {
			t.Fatalf("event %d: %s at %d by %s", i, e.Type, e.Time, e.Actor)
		}
	}
	var fill domain.OrderFilled
	if err := u.Events[2].Decode(&fill); err != nil || fill.FeeAsset != "USDT" || fill.Price.Cmp(decimal.MustDecimal("50000")) != 0 || fill.Quantity.Cmp(decimal.MustDecimal("0.01")) != 0 {
		t.Fatalf("fill %+v %v", fill, err)
	}
}

// TestImporterConfigWallet: the data dir's wallet is kept unless
// TakeWallet, and the ConfigReplaced id covers the outcome.
func TestImporterConfigWallet(t *testing.T) {
	box, err := secrets.NewSecretBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	c := &ConfigFile{Name: "config.json", Body: []byte("x"), JSON: []byte(`{"bot": {"service_wallet": "0xfolder"}, "exchanges": {"binance": {"isEncrypted": false, "masterkey": "K", "mastersecret": "S"}, "kraken": {"isEncrypted": true, "masterkey": "E"}}}`)}
	ids := map[string]bool{}
	for _, cs := range []struct {
		wallet string
		take   bool
		note   string
	}{
		{"0xdata", false, "kept the data dir's service wallet; the folder's differs"},
		{"0xdata", true, "took the folder's service wallet"},
		{"", false, "service wallet unchanged"},
		{"0xfolder", false, "service wallet unchanged"},
	} {
		im := &Importer{Box: box, Clock: domain.NewManualClock(time.UnixMilli(1)), Wallet: cs.wallet, TakeWallet: cs.take}
		u, notes, err := im.Config(c)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(notes.Wallet, cs.note) || notes.SecretsDropped != 1 {
			t.Fatalf("%+v: notes %+v", cs, notes)
		}
		if u.Stream != domain.StreamConfig || len(u.Events) != 2 || u.Events[1].Type != domain.TypeExchangeKeysSet {
			t.Fatalf("%+v: unit %+v", cs, u)
		}
		if strings.Contains(string(u.Events[0].Data), `"K"`) || strings.Contains(string(u.Events[1].Data), `"S"`) {
			t.Fatalf("a secret in clear: %s %s", u.Events[0].Data, u.Events[1].Data)
		}
		ids[u.Events[0].ID] = true
	}
	if len(ids) != 2 { // 0xdata kept; 0xfolder taken, or already the data dir's
		t.Fatalf("%d distinct ConfigReplaced ids, want 2", len(ids))
	}
}

// TestSortByTimeIsStable: orders sorted by time, those of one time in the
// order they came, as a stable sort leaves them.
func TestSortByTimeIsStable(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		orders := make([]Order, n)
		for i := range orders {
			orders[i] = Order{Time: int64(rng.Intn(n/3 + 1)), SourceID: strconv.Itoa(i)}
		}
		want := slices.Clone(orders)
		slices.SortStableFunc(want, func(a, b Order) int { return cmp.Compare(a.Time, b.Time) })
		sortByTime(orders)
		if !slices.Equal(orders, want) {
			t.Fatalf("%d orders: sortByTime differs from a stable sort", n)
		}
	}
}
