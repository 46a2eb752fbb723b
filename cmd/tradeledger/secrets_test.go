package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Issue 13 §3 through the real wiring: credentials are recognised by rule
// at any depth of an exchange entry — encrypted at rest, never in clear in
// the log, masked in config responses, audit/events, events/stream and
// restore — and bot.service_wallet is masked in every output too.
func TestSecretsByRuleMaskedEverywhere(t *testing.T) {
	clock := &tickingClock{now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	m, token := startLoadMain(t, clock)
	c := loadClient{m: m, token: token, hc: http.DefaultClient}

	// Secrets in clear, under names no fixed list knows, at several depths.
	plain := map[string]string{
		"apiSecretKey":           "clear-apiSecretKey-1",
		"clientSecret":           "clear-clientSecret-2",
		"accessKey":              "clear-accessKey-3",
		"secret2":                "clear-secret2-4",
		"subaccount.secret":      "clear-subaccount-5",
		"accounts.[0].authToken": "clear-accounts-6",
	}
	status, body := serveGet(t, m, "/api/v1/config/full", token)
	var full struct{ Config map[string]any }
	if err := json.Unmarshal([]byte(body), &full); status != 200 || err != nil {
		t.Fatalf("config/full = %d %v", status, err)
	}
	doc := full.Config
	doc["bot"].(map[string]any)["service_wallet"] = domain.Mask // keep the wallet
	entry := doc["exchanges"].(map[string]any)["binance"].(map[string]any)
	entry["isEncrypted"] = false
	for k, v := range entry { // the stored ones, sent back masked, stay
		if s, ok := v.(string); ok && s == domain.Mask {
			delete(entry, k)
		}
	}
	entry["apiSecretKey"], entry["clientSecret"], entry["accessKey"], entry["secret2"] = plain["apiSecretKey"], plain["clientSecret"], plain["accessKey"], plain["secret2"]
	entry["subaccount"] = map[string]any{"name": "sub-1", "secret": plain["subaccount.secret"]}
	entry["accounts"] = []any{map[string]any{"authToken": plain["accounts.[0].authToken"], "label": "main"}}
	var outputs strings.Builder // every output a client or auditor sees
	status, body = c.post(t, "config/update", map[string]any{"data": doc})
	outputs.WriteString(body)
	if status != 200 {
		t.Fatalf("config/update = %d %s", status, body)
	}
	if !strings.Contains(body, `"name":"sub-1"`) || !strings.Contains(body, `"secret":"********"`) || !strings.Contains(body, `"authToken":"********"`) {
		t.Fatalf("config/update answer does not mask the nested secrets in place: %s", body)
	}
	// Sending the masked document back keeps every stored secret.
	var again struct{ Config map[string]any }
	json.Unmarshal([]byte(body), &again)
	status, body = c.post(t, "config/update", map[string]any{"data": again.Config})
	outputs.WriteString(body)
	if status != 200 {
		t.Fatalf("config/update with the masks = %d %s", status, body)
	}

	// At rest: ciphertext under each path, nothing in clear in any event.
	keys := map[string]string{}
	it := m.DataDir.Store.ReadAll(context.Background(), 0, 0)
	for it.Next() {
		e := it.Event()
		for name, v := range plain {
			if strings.Contains(string(e.Data), v) {
				t.Fatalf("%s in clear in %s/%d (%s)", name, e.Stream, e.Version, e.Type)
			}
		}
		if e.Type == domain.TypeExchangeKeysSet {
			var k domain.ExchangeKeysSet
			e.Decode(&k)
			keys = k.Fields
		}
	}
	it.Close()
	for name := range plain {
		if keys[name] == "" {
			t.Fatalf("no ciphertext for %s in %v", name, keys)
		}
	}
	secrets, err := m.models.config.Secrets("binance", mustBox(t, m))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range plain {
		if secrets[name] != v {
			t.Fatalf("decrypted %s = %q, want %q", name, secrets[name], v)
		}
	}

	// Audit listing and the live event stream.
	_, body = serveGet(t, m, "/api/v1/audit/events?from=0&limit=1000", token)
	outputs.WriteString(body)
	if !strings.Contains(body, "ConfigReplaced") {
		t.Fatalf("audit/events lists no ConfigReplaced: %s", body)
	}
	outputs.WriteString(readSSE(t, m, token, "?from=0"))

	// restore without --with-secrets: no secret, the wallet masked; with
	// it, the secrets at their places and the wallet in clear.
	m.Close()
	dir := m.Config.Data
	out := filepath.Join(t.TempDir(), "restored")
	if o, e, code := auditRun(t, "restore", "--data", dir, "--out", out); code != 0 {
		t.Fatalf("restore: %d %s %s", code, o, e)
	}
	cfgJS, err := os.ReadFile(filepath.Join(out, "config.js"))
	if err != nil {
		t.Fatal(err)
	}
	outputs.Write(cfgJS)
	if !strings.Contains(string(cfgJS), `"service_wallet": "********"`) {
		t.Fatalf("restored config.js does not mask the wallet:\n%s", cfgJS)
	}
	o, _, _ := auditRun(t, "replay", "--data", dir, "--position", "1000000", "--json")
	outputs.WriteString(o)
	o, _, _ = auditRun(t, "verify", "--data", dir, "--json", "--heads")
	outputs.WriteString(o)

	all := outputs.String()
	for name, v := range plain {
		if strings.Contains(all, v) {
			t.Fatalf("%s reached an output", name)
		}
	}
	if strings.Contains(all, e2eWallet) {
		t.Fatal("bot.service_wallet reached an output")
	}

	out2 := filepath.Join(t.TempDir(), "with-secrets")
	if o, e, code := auditRun(t, "restore", "--data", dir, "--out", out2, "--with-secrets"); code != 0 {
		t.Fatalf("restore --with-secrets: %d %s %s", code, o, e)
	}
	cfgJS, _ = os.ReadFile(filepath.Join(out2, "config.js"))
	var restored map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(cfgJS)), "module.exports = "), ";")), &restored); err != nil {
		t.Fatal(err)
	}
	b := restored["exchanges"].(map[string]any)["binance"].(map[string]any)
	if b["subaccount"].(map[string]any)["secret"] != plain["subaccount.secret"] || b["accounts"].([]any)[0].(map[string]any)["authToken"] != plain["accounts.[0].authToken"] || b["apiSecretKey"] != plain["apiSecretKey"] {
		t.Fatalf("restore --with-secrets: %v", b)
	}
	if restored["bot"].(map[string]any)["service_wallet"] != e2eWallet {
		t.Fatal("restore --with-secrets does not give the wallet back")
	}
}

func mustBox(t *testing.T, m *Main) *domain.SecretBox {
	t.Helper()
	box, err := domain.NewSecretBox(m.DataDir.MasterKey)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// readSSE reads events/stream until the log's head and returns what it read.
func readSSE(t *testing.T, m *Main, token, query string) string {
	t.Helper()
	head, err := m.DataDir.Store.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", m.Server.URL()+"/api/v1/events/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got strings.Builder
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream ended before position %d: %v", head, err)
		}
		got.WriteString(line)
		if strings.HasPrefix(line, "id: ") && strings.TrimSpace(line[4:]) == itoa(head) {
			line, _ = r.ReadString('\n')
			got.WriteString(line)
			return got.String()
		}
	}
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }
