package domain

import (
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

func TestPlaceOrderRequestCheckSpot(t *testing.T) {
	ok := PlaceOrderRequest{ClientOrderID: "tl1", Pair: "USDT-BTC", Side: Buy, Kind: KindLimit, Amount: decimal.NewDecimal(1, -8), Price: decimal.NewDecimal(1, -8)}
	if err := ok.CheckSpot("binance"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*PlaceOrderRequest)
		want string
	}{
		{"no client id", func(r *PlaceOrderRequest) { r.ClientOrderID = "" }, "client order id"},
		{"no side", func(r *PlaceOrderRequest) { r.Side = "" }, "side"},
		{"stop kind", func(r *PlaceOrderRequest) { r.Kind = "stop" }, `"stop" is not supported by kraken`},
	} {
		r := ok
		c.edit(&r)
		err := r.CheckSpot("kraken")
		if ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want EINVALID naming %q", c.name, err, c.want)
		}
	}
}
