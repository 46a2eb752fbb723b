package http_test

import (
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// bot.service_wallet and configuration credentials at any depth (as older
// logs may hold them) are masked in audit/events and events/stream.
func TestAuditMasksWalletAndNestedCredentials(t *testing.T) {
	a := newAuditServer(t)
	cfg := map[string]any{
		"bot": map[string]any{"service_wallet": "0xWALLET-in-clear-0001"},
		"exchanges": map[string]any{"kraken": map[string]any{
			"delay": 5, "subaccount": map[string]any{"name": "s", "clientSecret": "nested-in-clear"},
		}},
	}
	a.append(t, domain.StreamConfig, domain.TypeConfigReplaced, map[string]any{"config": cfg})
	a.append(t, "order-1", domain.TypeOrderRequested, map[string]any{"orderId": 1, "idempotencyKey": "kept-as-is"})

	var page eventsPage
	code, body := a.get(t, "/api/v1/audit/events?from=0", &page)
	if code != 200 || len(page.Events) != 2 {
		t.Fatalf("audit/events = %d %s", code, body)
	}
	c := a.stream(t, "?from=0", "")
	defer c.close()
	var streamed strings.Builder
	for i := 0; i < 2; i++ {
		_, e := c.nextEvent(t)
		streamed.Write(e.Data)
	}
	for what, out := range map[string]string{"audit/events": body, "events/stream": streamed.String()} {
		if strings.Contains(out, "0xWALLET-in-clear-0001") || strings.Contains(out, "nested-in-clear") {
			t.Fatalf("%s shows a secret: %s", what, out)
		}
		if !strings.Contains(out, `"name":"s"`) || !strings.Contains(out, "kept-as-is") {
			t.Fatalf("%s masks more than secrets: %s", what, out)
		}
	}
	if !page.Events[0].Redacted || page.Events[1].Redacted {
		t.Fatalf("redacted flags %v %v, want the config only", page.Events[0].Redacted, page.Events[1].Redacted)
	}
}
