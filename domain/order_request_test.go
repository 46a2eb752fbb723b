package domain

import (
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

func TestOrderRequestValidate(t *testing.T) {
	ok := OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: Buy, Kind: KindLimit, Amount: decimal.MustDecimal("1"), Price: decimal.MustDecimal("100")}
	with := func(f func(*OrderRequest)) OrderRequest { r := ok; f(&r); return r }
	cases := []struct {
		name  string
		req   OrderRequest
		check func(OrderRequest) error
		field string // "" : valid
	}{
		{"limit", ok, OrderRequest.Validate, ""},
		{"no exchange", with(func(r *OrderRequest) { r.Exchange = "" }), OrderRequest.Validate, `field "exch" is required`},
		{"slash in exchange", with(func(r *OrderRequest) { r.Exchange = "a/b" }), OrderRequest.Validate, `field "exch"`},
		{"no pair", with(func(r *OrderRequest) { r.Pair = "" }), OrderRequest.Validate, `field "pair" is required`},
		{"bad pair", with(func(r *OrderRequest) { r.Pair = "BTC" }), OrderRequest.Validate, `field "pair"`},
		{"side", with(func(r *OrderRequest) { r.Side = "hold" }), OrderRequest.Validate, `field "side"`},
		{"zero amount", with(func(r *OrderRequest) { r.Amount = decimal.Zero }), OrderRequest.Validate, `field "amt" is required`},
		{"negative amount", with(func(r *OrderRequest) { r.Amount = decimal.MustDecimal("-1") }), OrderRequest.Validate, `field "amt" must be greater than 0`},
		{"limit without price", with(func(r *OrderRequest) { r.Price = decimal.Zero }), OrderRequest.Validate, `field "price"`},
		{"market without price", with(func(r *OrderRequest) { r.Kind, r.Price = KindMarket, decimal.Zero }), OrderRequest.Validate, ""},
		{"market negative price", with(func(r *OrderRequest) { r.Kind, r.Price = KindMarket, decimal.MustDecimal("-1") }), OrderRequest.Validate, `field "price"`},
		{"stop-limit", with(func(r *OrderRequest) {
			r.Kind, r.StopPrice, r.LimitPrice = KindStopLimit, decimal.NewDecimal(1, -8), decimal.NewDecimal(2, -8)
		}), OrderRequest.Validate, ""},
		{"stop-limit without limit", with(func(r *OrderRequest) { r.Kind, r.StopPrice = KindStopLimit, decimal.NewDecimal(1, -8) }), OrderRequest.Validate, `field "limitPrice"`},
		{"trailing equal prices", with(func(r *OrderRequest) { r.Kind, r.StopPrice = KindTrailingStop, r.Price }), OrderRequest.Validate, `field "stopPrice" must differ`},
		{"unknown kind", with(func(r *OrderRequest) { r.Kind = "iceberg" }), OrderRequest.Validate, `field "type"`},
		{"long key", with(func(r *OrderRequest) { r.IdempotencyKey = strings.Repeat("k", MaxIdempotencyKey+1) }), OrderRequest.Validate, "Idempotency-Key"},
		{"oco", with(func(r *OrderRequest) {
			r.StopPrice, r.LimitPrice = decimal.NewDecimal(1, -8), decimal.NewDecimal(2, -8)
		}), OrderRequest.ValidateOCO, ""},
		{"oco without limit", with(func(r *OrderRequest) { r.StopPrice = decimal.NewDecimal(1, -8) }), OrderRequest.ValidateOCO, `field "limit"`},
		{"close all", with(func(r *OrderRequest) { r.Amount = decimal.Zero }), OrderRequest.ValidateClose, ""},
		{"close negative", with(func(r *OrderRequest) { r.Amount = decimal.MustDecimal("-1") }), OrderRequest.ValidateClose, `field "amt"`},
	}
	for _, c := range cases {
		if err := c.check(c.req); !invalidAsWanted(err, c.field) {
			t.Errorf("%s: %v, want EINVALID naming %s (\"\": valid)", c.name, err, c.field)
		}
	}
}
