//go:build ccxt

package ccxt

import "strings"

// profile is what differs between exchanges behind ccxt's unified API:
// the field that carries the client order id, the longest id it takes,
// and how an order is found by that id.
type profile struct {
	// param is the createOrder parameter carrying the client order id, in
	// the exchange's own name (ccxt passes unknown parameters through).
	param string
	// maxLen is the longest client order id the exchange takes; longer
	// ids of the form "tl" + 32 hex digits are sent as the 32 digits.
	maxLen int
	// openClosed: find an order by client id among the open, then the
	// closed orders (fetchOpenOrders/fetchClosedOrders with the id);
	// otherwise fetchOrder with ccxt's clientOrderId parameter.
	openClosed bool
	// lookupParam is the parameter the look-ups take the id in.
	lookupParam string
	// tradesBySymbol: fetchMyTrades needs a symbol.
	tradesBySymbol bool
	// amountParam and priceParam are the createOrder parameters in which
	// the exchange takes the amount and the limit price: the connector
	// sends its exact decimal text there (ccxt lets parameters override
	// the request it builds from float64s). Empty: ccxt's float goes.
	amountParam, priceParam string
	// tradeKeys name the fields of a trade's info that hold the exchange's
	// own text of its price, quantity and fee; orderKeys those of an
	// order's info: its limit price, amount and filled amount. Empty: the
	// float ccxt parsed (see Numbers in market.go).
	tradeKeys, orderKeys [3]string
}

// profiles, from each exchange's API documentation (as ccxt's docstrings
// cite it):
//   - Kraken AddOrder `cl_ord_id`: a UUID (long or 32 hex digits) or free
//     text of at most 18 characters, unique among open orders; OpenOrders
//     and ClosedOrders filter by `cl_ord_id`
//     (https://docs.kraken.com/api/docs/guides/spot-clordid). Kraken's
//     `userref` is an int32 and not unique: not used.
//   - Bybit v5 `orderLinkId`, at most 36 characters.
//   - OKX `clOrdId`, 1 to 32 letters and digits.
//   - KuCoin `clientOid`, at most 40 characters.
//   - Coinbase Advanced `client_order_id` (ccxt drops the unified
//     clientOrderId there).
//   - Binance `newClientOrderId`, at most 36 characters.
//
// Numbers: Kraken's AddOrder takes `volume` and `price` as decimal text,
// and its trades (TradesHistory) and orders (QueryOrders) carry `price`,
// `vol`, `fee`, `vol_exec` as text; Binance's trades carry `price`, `qty`,
// `commission` and its orders `price`, `origQty`, `executedQty`.
var profiles = map[string]profile{
	"kraken": {param: "cl_ord_id", maxLen: 18, openClosed: true, lookupParam: "clientOrderId",
		amountParam: "volume", priceParam: "price", tradeKeys: [3]string{"price", "vol", "fee"}, orderKeys: [3]string{"", "vol", "vol_exec"}},
	"bybit":            {param: "orderLinkId", maxLen: 36, lookupParam: "clientOrderId"},
	"okx":              {param: "clOrdId", maxLen: 32, lookupParam: "clientOrderId"},
	"myokx":            {param: "clOrdId", maxLen: 32, lookupParam: "clientOrderId"},
	"okxus":            {param: "clOrdId", maxLen: 32, lookupParam: "clientOrderId"},
	"kucoin":           {param: "clientOid", maxLen: 40, lookupParam: "clientOrderId"},
	"coinbase":         {param: "client_order_id", maxLen: 64, lookupParam: "clientOrderId"},
	"coinbaseadvanced": {param: "client_order_id", maxLen: 64, lookupParam: "clientOrderId"},
	"binance": {param: "newClientOrderId", maxLen: 36, lookupParam: "clientOrderId", tradesBySymbol: true,
		tradeKeys: [3]string{"price", "qty", "commission"}, orderKeys: [3]string{"price", "origQty", "executedQty"}},
	"binanceus": {param: "newClientOrderId", maxLen: 36, lookupParam: "clientOrderId", tradesBySymbol: true,
		tradeKeys: [3]string{"price", "qty", "commission"}, orderKeys: [3]string{"price", "origQty", "executedQty"}},
}

// defaultProfile serves the other exchanges: ccxt's unified clientOrderId,
// the conservative 32 characters, fetchOrder by client id, trades per
// symbol.
var defaultProfile = profile{param: "clientOrderId", maxLen: 32, lookupParam: "clientOrderId", tradesBySymbol: true}

func profileOf(id string) profile {
	if p, ok := profiles[id]; ok {
		return p
	}
	return defaultProfile
}

// ParamFor returns the createOrder parameter that carries the client order
// id on the ccxt exchange id.
func ParamFor(id string) string { return profileOf(strings.ToLower(id)).param }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// wireID is the client order id as the exchange gets it; ok is false
// when it is too long and has no short form.
func (p profile) wireID(id string) (string, bool) {
	if len(id) <= p.maxLen {
		return id, true
	}
	if len(id) == 34 && strings.HasPrefix(id, "tl") && isHex(id[2:]) {
		return id[2:], true
	}
	return "", false
}

// fromWire is the client order id as the order manager knows it.
func (p profile) fromWire(id string) string {
	if p.maxLen < 34 && len(id) == 32 && isHex(id) {
		return "tl" + id
	}
	if p.maxLen < 34 && len(id) == 36 && id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' {
		// An exchange that gives a short UUID back in its long form.
		if h := strings.ReplaceAll(id, "-", ""); len(h) == 32 && isHex(h) {
			return "tl" + h
		}
	}
	return id
}
