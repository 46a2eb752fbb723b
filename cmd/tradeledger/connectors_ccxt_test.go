//go:build ccxt

package main

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/ccxt/krakenfixture"
	"github.com/tradeledger/tradeledger/exchange/engine"
)

func ccxtConfig(t *testing.T, sim bool) domain.Config {
	t.Helper()
	c, err := domain.ConfigFromMap(map[string]any{"bot": map[string]any{"SIMULATOR": sim}, "pairs": map[string]any{}, "strategies": map[string]any{}, "GUI": map[string]any{},
		"exchanges": map[string]any{
			"kraken":   map[string]any{"connector": "ccxt"},
			"kraken#2": map[string]any{"connector": "ccxt", "ccxtId": "kraken"},
			"okx":      map[string]any{},
			"paperkr":  map[string]any{"connector": "ccxt", "simulator": true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChooseConnectorCCXT(t *testing.T) {
	for _, c := range []struct {
		sim                 bool
		exchange, connector string
		reason              string
	}{
		{true, "kraken", "paper", "bot.SIMULATOR is true"},
		{false, "kraken", "ccxt", "bot.SIMULATOR is false"},
		{false, "kraken#2", "ccxt", "bot.SIMULATOR is false"},
		{false, "paperkr", "paper", "simulator is true"},
		{false, "okx", "paper", "set connector: ccxt"},
	} {
		ch, err := testConnectors().Choose(ccxtConfig(t, c.sim), c.exchange)
		if err != nil || ch.Connector != c.connector || !strings.Contains(ch.Reason, c.reason) {
			t.Errorf("SIMULATOR=%v %s: %+v %v, want connector %s, reason with %q", c.sim, c.exchange, ch, err, c.connector, c.reason)
		}
	}
}

// The chooser serves a `connector: ccxt` exchange through the ccxt
// connector: an order reaches the (Kraken) fixture with its client id,
// each instance is its own account, and /healthz names the connector.
func TestConnectorsServeCCXT(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString([]byte("cmd-kraken-secret"))
	fx := krakenfixture.New("cmd-key", secret)
	defer fx.Close()
	c := &engine.Connectors{
		List:   connectorList(nil),
		Config: func() domain.Config { return ccxtConfig(t, false) },
		Keys: func(string) (map[string]string, error) {
			return map[string]string{"key": "cmd-key", "secret": secret}, nil
		},
		URLs: map[string]string{"ccxt": fx.URL},
	}
	x, err := c.Exchange("kraken")
	if err != nil {
		t.Fatal(err)
	}
	id := domain.ClientOrderID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
	o, err := x.PlaceOrder(context.Background(), domain.PlaceOrderRequest{ClientOrderID: id, Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit,
		Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("20000")})
	if err != nil {
		t.Fatal(err)
	}
	if got := fx.Orders(strings.TrimPrefix(id, "tl")); len(got) != 1 || got[0] != o.ID {
		t.Fatalf("fixture orders with the client id: %v, want [%s]", got, o.ID)
	}
	y, err := c.Exchange("kraken#2")
	if err != nil || y.Name() != "kraken#2" {
		t.Fatalf("kraken#2: %v %v", y, err)
	}
	found := false
	for _, s := range c.Statuses() {
		if s.Exchange == "kraken" {
			found = s.Connector == "ccxt"
		}
	}
	if !found {
		t.Fatalf("statuses %+v: kraken should use the ccxt connector", c.Statuses())
	}
	bad := &engine.Connectors{List: connectorList(nil), Config: func() domain.Config { return ccxtConfig(t, false) }, Keys: func(string) (map[string]string, error) { return nil, nil }}
	if _, err := bad.Exchange("kraken"); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("no keys: err=%v, want EINVALID", err)
	}
}
