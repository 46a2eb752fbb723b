package http

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

func listOf(t *testing.T, b []byte) []string {
	t.Helper()
	var resp struct {
		Status string   `json:"status"`
		Result []string `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Status != "success" || resp.Result == nil {
		t.Fatalf("list response %s: %v", b, err)
	}
	return resp.Result
}

func TestFilesACVar(t *testing.T) {
	e := newCfgEnv(t)
	if got := listOf(t, e.must(200, "GET", "/files/acvar", nil)); len(got) != 0 {
		t.Fatalf("list=%v", got)
	}
	fw, err := domain.NewFileWritten(domain.FileACVar, "autoconfig-variables.json", []byte(`{"x": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	e.append(domain.FileStream(domain.FileACVar, fw.Name), domain.NewEvent(e.clock, domain.TypeFileWritten, fw))
	if got := listOf(t, e.must(200, "GET", "/files/acvar", nil)); len(got) != 1 || got[0] != "autoconfig-variables.json" {
		t.Fatalf("list=%v", got)
	}
	if b := e.must(200, "POST", "/files/acvar/get", map[string]any{"filename": "autoconfig-variables.json"}); strings.TrimSpace(string(b)) != `{"x":1}` {
		t.Fatalf("get=%s", b)
	}
	e.refuse(404, "not found", "POST", "/files/acvar/get", map[string]any{"filename": "other.json"})
	e.refuse(400, "plain file name", "POST", "/files/acvar/get", map[string]any{"filename": "../config.json"})
	e.refuse(400, "plain file name", "POST", "/files/acvar/get", map[string]any{"filename": "a/b.json"})
	e.refuse(400, "must end in .json", "POST", "/files/acvar/get", map[string]any{"filename": "vars.txt"})
	// Without a filename (or without a body): the default variables file.
	if b := e.must(200, "POST", "/files/acvar/get", map[string]any{}); strings.TrimSpace(string(b)) != `{"x":1}` {
		t.Fatalf("get without filename=%s", b)
	}
	if b := e.must(200, "POST", "/files/acvar/get", nil); strings.TrimSpace(string(b)) != `{"x":1}` {
		t.Fatalf("get without body=%s", b)
	}
}

func TestFilesAutoconfigAndBackups(t *testing.T) {
	e := newCfgEnv(t)
	if got := listOf(t, e.must(200, "POST", "/files/backup", nil)); len(got) != 0 {
		t.Fatalf("backups=%v", got)
	}
	e.must(200, "POST", "/files/autoconfig/write", map[string]any{"document": map[string]any{"jobs": map[string]any{"a": 1}}})
	if got := listOf(t, e.must(200, "POST", "/files/backup", nil)); len(got) != 0 {
		t.Fatalf("first write made a backup: %v", got)
	}
	e.clock.Advance(time.Second)
	e.must(200, "POST", "/files/autoconfig/write", map[string]any{"document": `{"jobs":{"b":2}}`}) // a string holding JSON
	want := domain.BackupFileName(e.clock.Now().UnixMilli())
	backups := listOf(t, e.must(200, "POST", "/files/backup", nil))
	if len(backups) != 1 || backups[0] != want {
		t.Fatalf("backups=%v, want [%s]", backups, want)
	}
	if b := e.must(200, "POST", "/files/backup/get", map[string]any{"filename": want}); strings.TrimSpace(string(b)) != `{"jobs":{"a":1}}` {
		t.Fatalf("backup holds %s, want the previous content", b)
	}
	// Same millisecond: the next backup takes the next free name.
	e.must(200, "POST", "/files/autoconfig/write", map[string]any{"document": map[string]any{"jobs": map[string]any{}}})
	backups = listOf(t, e.must(200, "POST", "/files/backup", nil))
	if len(backups) != 2 || backups[1] != domain.BackupFileName(e.clock.Now().UnixMilli()+1) {
		t.Fatalf("backups=%v", backups)
	}
	cur, err := e.srv.Files.Get(domain.FileAutoconfig, domain.AutoconfigFileName)
	if err != nil || string(cur) != `{"jobs":{}}` {
		t.Fatalf("autoconfig=%s %v", cur, err)
	}
	// The event records the content's SHA-256.
	for _, ev := range e.events() {
		if ev.Type == domain.TypeFileWritten {
			var fw domain.FileWritten
			if err := ev.Decode(&fw); err != nil || fw.SHA256 != domain.FileSHA256(fw.Content) {
				t.Fatalf("event %s: sha256 %s does not match its content %s", ev.Stream, fw.SHA256, fw.Content)
			}
		}
	}

	e.refuse(400, "document is required", "POST", "/files/autoconfig/write", map[string]any{})
	e.refuse(400, "document must be a JSON object", "POST", "/files/autoconfig/write", map[string]any{"document": []int{1}})
	e.refuse(400, "document is larger than", "POST", "/files/autoconfig/write",
		map[string]any{"document": map[string]any{"big": strings.Repeat("x", domain.MaxFileBytes)}})
	e.refuse(404, "not found", "POST", "/files/backup/get", map[string]any{"filename": "autoconfig.json.1"})
	e.refuse(400, "autoconfig.json.<timestamp ms>", "POST", "/files/backup/get", map[string]any{"filename": "autoconfig.json.x"})
	e.refuse(400, "plain file name", "POST", "/files/backup/get", map[string]any{"filename": "../autoconfig.json.1"})
}

func TestFilesCustomEditor(t *testing.T) {
	e := newCfgEnv(t)
	if b := e.must(200, "POST", "/files/custom-editor/get", nil); strings.TrimSpace(string(b)) != "{}" {
		t.Fatalf("before the first write: %s", b)
	}
	e.must(200, "POST", "/files/custom-editor/write", map[string]any{"document": map[string]any{"blocks": []int{1, 2}}})
	if b := e.must(200, "POST", "/files/custom-editor/get", nil); strings.TrimSpace(string(b)) != `{"blocks":[1,2]}` {
		t.Fatalf("after write: %s", b)
	}
	e.refuse(400, "document is required", "POST", "/files/custom-editor/write", map[string]any{})
	e.refuse(400, "document must be a JSON object", "POST", "/files/custom-editor/write", map[string]any{"document": 5})
}

func TestFilesState(t *testing.T) {
	e := newCfgEnv(t)
	if got := listOf(t, e.must(200, "GET", "/files/state", nil)); len(got) != 0 {
		t.Fatalf("list=%v", got)
	}
	req := domain.NewEvent(e.clock, domain.TypeOrderRequested, domain.OrderRequested{
		OrderID: 7, Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit,
		Amount: decimal.MustDecimal("0.002"), Price: decimal.MustDecimal("50000"), ClientOrderID: "c7"})
	e.append(domain.OrderStream(7), req,
		domain.NewEvent(e.clock, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: "x"}))
	// Not filled yet: no state file.
	if got := listOf(t, e.must(200, "GET", "/files/state", nil)); len(got) != 0 {
		t.Fatalf("list=%v", got)
	}
	e.clock.Advance(time.Minute)
	e.append(domain.OrderStream(7),
		domain.NewEvent(e.clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "f1", Price: decimal.MustDecimal("50000"), Quantity: decimal.MustDecimal("0.001"), FeeAsset: "USDT"}),
		domain.NewEvent(e.clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "f2", Price: decimal.MustDecimal("49000"), Quantity: decimal.MustDecimal("0.001"), FeeAsset: "USDT"}))
	e.append(domain.BalanceStream("binance"), domain.NewEvent(e.clock, domain.TypeBalancesObserved, domain.BalancesObserved{
		Exchange: "binance", Balances: []domain.AssetBalance{{Asset: "USDT", Available: decimal.MustDecimal("901"), OnOrder: decimal.MustDecimal("0")}}}))
	name := "binance-USDT-BTC-state.json"
	if got := listOf(t, e.must(200, "GET", "/files/state", nil)); len(got) != 1 || got[0] != name {
		t.Fatalf("list=%v", got)
	}
	b := e.must(200, "POST", "/files/state/get", map[string]any{"filename": name})
	want := `{"orders":[{"time":` + filesJSONInt(e.clock.Now().UnixMilli()) + `,"pair":"USDT-BTC","type":"buy","rate":49500,"amount":0.002,"id":7,"cost":99}],"balances":{"USDT":{"available":901,"onOrder":0}}}`
	if strings.TrimSpace(string(b)) != want {
		t.Fatalf("state=%s\nwant  %s", b, want)
	}
	e.refuse(404, "not found", "POST", "/files/state/get", map[string]any{"filename": "binance-USDT-ETH-state.json"})
	e.refuse(400, "-state.json", "POST", "/files/state/get", map[string]any{"filename": "binance.json"})
}

func filesJSONInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestFilesStrategy(t *testing.T) {
	e := newCfgEnv(t)
	if got := listOf(t, e.must(200, "GET", "/files/strategy", nil)); len(got) != 0 {
		t.Fatalf("list=%v", got)
	}
	src := "// my strategy\nmodule.exports = function(gb) { gb.log('hi') }\n"
	e.must(200, "POST", "/files/strategy/write", map[string]any{"filename": "mine.js", "document": src})
	if got := listOf(t, e.must(200, "GET", "/files/strategy", nil)); len(got) != 1 || got[0] != "mine.js" {
		t.Fatalf("list=%v", got)
	}
	if got := string(e.must(200, "POST", "/files/strategy/get", map[string]any{"filename": "mine.js"})); got != src {
		t.Fatalf("get=%q, want the file's text as written", got)
	}
	e.refuse(400, "must end in .js", "POST", "/files/strategy/write", map[string]any{"filename": "mine.ts", "document": src})
	e.refuse(400, "plain file name", "POST", "/files/strategy/write", map[string]any{"filename": "../../etc/x.js", "document": src})
	e.refuse(400, "plain file name", "POST", "/files/strategy/write", map[string]any{"filename": `a\b.js`, "document": src})
	e.refuse(400, "document must be a string", "POST", "/files/strategy/write", map[string]any{"filename": "x.js", "document": map[string]any{}})
	e.refuse(400, "document must be a string", "POST", "/files/strategy/write", map[string]any{"filename": "x.js"})
	e.refuse(400, "document is larger than", "POST", "/files/strategy/write", map[string]any{"filename": "x.js", "document": strings.Repeat("a", domain.MaxFileBytes+1)})
	e.refuse(400, "filename is longer than", "POST", "/files/strategy/write", map[string]any{"filename": strings.Repeat("a", 200) + ".js", "document": src})
	e.refuse(404, "not found", "POST", "/files/strategy/get", map[string]any{"filename": "other.js"})
	e.refuse(404, "not found", "POST", "/files/strategy/delete", map[string]any{"filename": "other.js"})
	e.refuse(400, "must end in .js", "POST", "/files/strategy/delete", map[string]any{"filename": "mine.json"})

	e.must(200, "POST", "/files/strategy/delete", map[string]any{"filename": "mine.js"})
	if got := listOf(t, e.must(200, "GET", "/files/strategy", nil)); len(got) != 0 {
		t.Fatalf("list after delete=%v", got)
	}
	e.refuse(404, "not found", "POST", "/files/strategy/get", map[string]any{"filename": "mine.js"})
	// Written again after the delete: the stream goes on.
	e.must(200, "POST", "/files/strategy/write", map[string]any{"filename": "mine.js", "document": "v2"})
	if v := e.srv.Files.Version(domain.FileStrategy, "mine.js"); v != 2 {
		t.Fatalf("stream version %d, want 2", v)
	}
}
