package domain

import "testing"

func TestDecodePnlConfig(t *testing.T) {
	c, ok := DecodePnlConfig([]byte(`{"config":{"bot":{"REPORTING_CURRENCY":"BTC","PNL_METHOD":"lifo"},"pairs":{"binance":{"USDT-BTC":{"strategy":"gain"}}}}}`))
	if !ok || c.Reporting != "BTC" || c.Method != LIFO || len(c.Strategies) != 1 || c.Strategies[0] != (PairStrategy{"binance", "USDT-BTC", "gain"}) {
		t.Fatalf("%+v %v", c, ok)
	}
	if c, ok := DecodePnlConfig([]byte(`{"config":{"bot":{"REPORTING_CURRENCY":7}}}`)); !ok || c.Reporting != "" {
		t.Fatalf("a non-string currency: %+v %v", c, ok)
	}
	if _, ok := DecodePnlConfig([]byte(`{"config":[]}`)); ok {
		t.Fatal("a document that does not decode: ok")
	}
}
