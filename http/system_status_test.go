package http

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// system/status names an imported, stopped core: importedAt is the time of
// the import that made the configuration in force, until the core is
// started; a configuration changed since by anyone else, or a start, ends
// it.
func TestSystemStatusSaysImportedAndStopped(t *testing.T) {
	cs := newCoreServer(t)
	status := func() systemStatusResponse {
		t.Helper()
		st, body := cs.get("/api/v1/system/status")
		if st != 200 {
			t.Fatalf("system/status: %d %s", st, body)
		}
		return decodeBody[systemStatusResponse](t, body)
	}
	if got := status(); got.Running || got.ImportedAt != 0 {
		t.Fatalf("a configuration set by a test: %+v, want stopped, not imported", got)
	}
	// An import replaces the configuration.
	imported := domain.NewEvent(cs.Clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: json.RawMessage(coreTestConfig)})
	imported.Actor = domain.ActorImport
	res, err := cs.Store.Append(context.Background(), domain.StreamConfig, domain.Any, imported)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Runner.WaitFor(context.Background(), res.LastPosition); err != nil {
		t.Fatal(err)
	}
	if got := status(); got.Running || got.ImportedAt != imported.Time || got.ImportedAt == 0 {
		t.Fatalf("after an import: %+v, want stopped and importedAt %d", got, imported.Time)
	}
	// Started, then stopped: no longer the import's untouched core.
	for _, path := range []string{"/api/v1/system/start", "/api/v1/system/stop"} {
		if st, body := cs.post(path, nil); st != 200 {
			t.Fatalf("%s: %d %s", path, st, body)
		}
		if got := status(); got.ImportedAt != 0 {
			t.Fatalf("after %s: %+v, want no importedAt", path, got)
		}
	}
	// Imported again, then a pair added from the API: the configuration in
	// force is no longer the import's.
	again := domain.NewEvent(cs.Clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: json.RawMessage(coreTestConfig)})
	again.Actor = domain.ActorImport
	if res, err = cs.Store.Append(context.Background(), domain.StreamConfig, domain.Any, again); err != nil {
		t.Fatal(err)
	}
	if err := cs.Runner.WaitFor(context.Background(), res.LastPosition); err != nil {
		t.Fatal(err)
	}
	if got := status(); got.ImportedAt != again.Time {
		t.Fatalf("imported again: %+v", got)
	}
	if st, body := cs.post("/api/v1/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "settings": map[string]any{"strategy": "manual"}}); st != 200 {
		t.Fatalf("pair/add: %d %s", st, body)
	}
	if got := status(); got.ImportedAt != 0 {
		t.Fatalf("after a pair was added: %+v, want no importedAt", got)
	}
}
