package http

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// The Gunbot routes' answers in the formats the spec gives (issue 42): the
// spec's tables (../shared/spec/control-api.md, "Resources and their
// fields" and "Endpoints") transcribed as shapes, one per route, and each
// route's real answer — on a paper account whose amounts have finer
// digits than 8 decimals — checked against its shape: every field the
// spec names is there, of the spec's type, and in the spec's format
// where it gives one (a decimal with 8 places, a YYYY-MM-DD date, a
// percent, milliseconds, seconds, a pair symbol, a CSS colour). Fields of
// our own beyond the spec are allowed.

// A spec shape is a kind (a string below), an object shape (field → shape;
// a field ending in "?" may be absent), an array of one shape
// ([]any{elem}), or an object whose every value has one shape (specMapOf).
const (
	kString   = "string"
	kNumber   = "number"
	kInteger  = "integer"
	kBool     = "boolean"
	kObject   = "object" // any object
	kArray    = "array"  // any array
	kAny      = "any"
	kDecimal8 = "decimal with 8 places" // a string
	kDecimal  = "decimal string"
	kPercent  = "percent string"
	kDate     = "date YYYY-MM-DD"
	kMs       = "ms since the epoch"
	kSeconds  = "UNIX seconds"
	kSymbol   = "pair symbol QUOTE-BASE"
	kCSS      = "CSS colour"
)

var (
	reDecimal8 = regexp.MustCompile(`^-?[0-9]+\.[0-9]{8}$`)
	reDecimal  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	reDate     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	reSymbol   = regexp.MustCompile(`^[A-Z0-9]+-[A-Z0-9]+$`)
	reCSS      = regexp.MustCompile(`^(#[0-9a-fA-F]{3,8}|[a-z]+|rgba?\([0-9., ]+\))$`)
)

// The spec's resource shapes.
var (
	specOrderRecord = map[string]any{
		"time": kMs, "pair": kSymbol, "type": kString, "rate": kNumber, "amount": kNumber, "id": kNumber, "cost": kNumber,
		"toCancel?": kBool, "fees": kNumber, "baseValue": kNumber, "costProceed": kNumber, "averagePrice": kNumber,
		"pnlPrice": kNumber, "balance": kNumber, "baseBalance": kNumber, "inventory_cost": kNumber, "ABP": kNumber, "pnl": kNumber,
	}
	specBalance    = map[string]any{"Asset": kString, "Exchange": kString, "Available Qty": kDecimal8, "On Order": kDecimal8}
	specAssetPoint = map[string]any{"id": kInteger, "base_key": kString, "amount": kNumber, "timestamp": kMs}
	specChartMark  = map[string]any{"exchange": kString, "pair": kSymbol, "id": kString, "time": kSeconds, "color": kCSS, "label": kString, "tooltip": []any{kString}}
	specPeriod     = map[string]any{"pnl": kNumber}
	specOverview   = map[string]any{
		"today":     map[string]any{"pnl": kNumber, "perPair": kObject},
		"yesterday": specPeriod, "weekAgo": specPeriod, "monthAgo": specPeriod, "lastYear": specPeriod,
		"yearAgo": map[string]any{"pnl": kNumber, "perPair": kObject},
		"total": map[string]any{"pnl": kNumber, "numberOfTrades": kNumber, "heroTrade": map[string]any{"pnl": kNumber, "time": kMs},
			"fuckupTrade": map[string]any{"pnl": kNumber, "time": kMs}, "averagePnl": kNumber, "sellCount": kNumber, "buyCount": kNumber,
			"winning": kNumber, "losing": kNumber, "breakeven": kNumber, "winRate": kPercent, "buyPnl": kNumber, "sellPnl": kNumber,
			"buyBaseValue": kNumber, "sellBaseValue": kNumber},
		"dailyHistory": []any{map[string]any{"date": kDate, "numberOfTrades": kNumber, "totalVolume": kNumber, "pnl": kNumber,
			"cumulativePnl": kNumber, "cumulativePnlPercent": kNumber}},
		"pnlsPerPair": []any{map[string]any{"key": kString, "pnl": kNumber}},
		"detailedPerPair": []any{map[string]any{"strategy": kString, "cumulative_pnl": kNumber, "cumulative_profit": kNumber,
			"cumulative_loss": kNumber, "cumulative_fees": kNumber, "cumulative_costproceed_wins": kNumber,
			"cumulative_costproceed_losses": kNumber, "profit_count": kNumber, "loss_count": kNumber, "unique_profit_count": kNumber,
			"unique_loss_count": kNumber, "buy_count": kNumber, "sell_count": kNumber, "unique_buy_count": kNumber,
			"unique_sell_count": kNumber, "cumulative_buy_value": kNumber, "cumulative_sell_value": kNumber, "unrealized_pnl": kNumber,
			"daily_pnl_per_thousand": kDecimal, "key": kString}},
		"unit": kString,
	}
	specStatus    = map[string]any{"status": kString}
	specFileList  = map[string]any{"status": kString, "result": []any{kString}}
	specTradeAck  = map[string]any{"status": kString, "message": kString}
	specConfigDoc = map[string]any{"status": kString, "config": kObject}
)

// specMapOf is an object keyed by names the spec does not fix (quote
// currencies), each value of the shape elem.
type specMapOf struct{ elem any }

// checkSpecShape fails the test unless v has the shape want (path names v
// in the messages).
func checkSpecShape(t *testing.T, path string, v any, want any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		obj, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s = %T %v, want an object", path, v, v)
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name, optional := strings.CutSuffix(k, "?")
			fv, present := obj[name]
			if !present {
				if !optional {
					t.Errorf("%s.%s is missing", path, name)
				}
				continue
			}
			checkSpecShape(t, path+"."+name, fv, w[k])
		}
	case specMapOf:
		obj, ok := v.(map[string]any)
		if !ok || len(obj) == 0 {
			t.Errorf("%s = %T %v, want a non-empty object", path, v, v)
			return
		}
		for k, e := range obj {
			checkSpecShape(t, path+"."+k, e, w.elem)
		}
	case []any:
		arr, ok := v.([]any)
		if !ok {
			t.Errorf("%s = %T %v, want an array", path, v, v)
			return
		}
		for i, e := range arr {
			checkSpecShape(t, fmt.Sprintf("%s[%d]", path, i), e, w[0])
		}
	case string:
		if msg := specKindProblem(v, w); msg != "" {
			t.Errorf("%s = %#v: %s", path, v, msg)
		}
	default:
		t.Fatalf("bad shape %T for %s", want, path)
	}
}

// specKindProblem says how v is not of kind ("" when it is).
func specKindProblem(v any, kind string) string {
	str, isStr := v.(string)
	num, isNum := v.(float64)
	switch kind {
	case kAny:
		return ""
	case kString:
		if !isStr {
			return "want a string"
		}
	case kNumber:
		if !isNum {
			return "want a number"
		}
	case kInteger:
		if !isNum || num != float64(int64(num)) {
			return "want an integer"
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			return "want a boolean"
		}
	case kObject:
		if _, ok := v.(map[string]any); !ok {
			return "want an object"
		}
	case kArray:
		if _, ok := v.([]any); !ok {
			return "want an array"
		}
	case kDecimal8:
		if !isStr || !reDecimal8.MatchString(str) {
			return "want a string, a decimal with 8 places"
		}
	case kDecimal, kPercent:
		if !isStr || !reDecimal.MatchString(str) {
			return "want a string holding a decimal number"
		}
	case kDate:
		if !isStr || !reDate.MatchString(str) {
			return "want a string YYYY-MM-DD"
		}
	case kMs:
		// Milliseconds of a time from 2001 on; 0 only where nothing
		// happened (a period's hero trade of none).
		if !isNum || num != float64(int64(num)) || (num != 0 && num < 1e12) {
			return "want milliseconds since the epoch"
		}
	case kSeconds:
		if !isNum || num != float64(int64(num)) || num < 1e9 || num >= 1e11 {
			return "want UNIX seconds"
		}
	case kSymbol:
		if !isStr || !reSymbol.MatchString(str) {
			return "want a pair symbol QUOTE-BASE"
		}
	case kCSS:
		if !isStr || !reCSS.MatchString(str) {
			return "want a CSS colour"
		}
	default:
		return "unknown kind " + kind
	}
	return ""
}

// specRoute is one Gunbot route of the spec: how to call it and the shape
// of its answer.
type specRoute struct {
	method, path string
	body         any
	shape        any
}

func TestGunbotRoutesAnswerInTheSpecFormats(t *testing.T) {
	ss := newSDKServer(t)
	// A paper account whose amounts have finer digits than 8 decimals:
	// a price of 9 decimals makes the quote spent 11.
	ss.json("POST", "/config/pair/add", map[string]any{"exchange": "binance", "pair": "USDT-BTC", "settings": map[string]any{"strategy": "manual"}})
	ss.json("POST", "/files/strategy/write", map[string]any{"filename": "spec.js", "document": "// spec\n"})
	ss.json("POST", "/files/autoconfig/write", map[string]any{"document": map[string]any{"pairs": map[string]any{}}})
	ss.json("POST", "/files/custom-editor/write", map[string]any{"document": map[string]any{}})
	if err := ss.Sim.SetPrice("binance", "USDT-BTC", decimal.MustDecimal("50000.123456789")); err != nil {
		t.Fatal(err)
	}
	ss.json("POST", "/system/start", nil)
	ss.step("50000.123456789")
	buy := func(amt float64) {
		ss.json("POST", "/trade/buy/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": amt}})
	}
	buy(0.01)
	ss.step("50001.987654321")
	ss.json("POST", "/trade/sell/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.004}})
	ss.json("POST", "/trade/sell", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.003, "price": 70000.5}})
	ss.step("50002.5")

	// The exact balances have more than 8 decimals: that is the case.
	var exact []domain.BalancesObserved = ss.Trader.Balances()
	finer := false
	for _, ob := range exact {
		for _, b := range ob.Balances {
			if b.Available.Round(8) != b.Available || b.OnOrder.Round(8) != b.OnOrder {
				finer = true
			}
		}
	}
	if !finer {
		t.Fatalf("no balance with finer digits than 8 decimals: %+v", exact)
	}

	now := ss.Clock.Now().UnixMilli()
	key := url.QueryEscape("binance/USDT-BTC")
	routes := []specRoute{
		// Balances, assets, pairs.
		{"POST", "/balances", nil, []any{specBalance}},
		{"POST", "/assets/total", map[string]any{"exchange": "binance", "base": "USDT", "start": 0, "end": now}, []any{specAssetPoint}},
		{"GET", "/pairs?exchange=binance", nil, map[string]any{"status": kString, "pairList": []any{kSymbol}}},
		{"GET", "/pairs/detailed?exchange=binance", nil, map[string]any{"status": kString, "pairList": specMapOf{[]any{map[string]any{
			"pairName": kSymbol, "volume": kNumber, "low": kDecimal, "high": kDecimal, "change": kPercent}}}}},
		// Order history.
		{"GET", "/orders?key=" + key, nil, map[string]any{"data": []any{specOrderRecord}}},
		{"GET", "/orders/day?timezone=UTC&keys[]=" + key, nil, map[string]any{"days": kArray, "orders": kArray, "closeOrders": kArray}},
		{"GET", "/orders/page?key=" + key + "&page=0&pageSize=10", nil, map[string]any{"total": kNumber, "page": kNumber, "data": []any{specOrderRecord}}},
		{"GET", "/orders/page/multi?keys[]=" + key + "&page=0&pageSize=10", nil, map[string]any{"total": kNumber, "totalCount": kNumber, "page": kNumber, "data": []any{specOrderRecord}}},
		// Market, chart and core memory.
		{"GET", "/market/candles?key=" + key, nil, map[string]any{"data": map[string]any{"close": kArray, "high": kArray, "low": kArray, "volume": kArray, "open": kArray}}},
		{"GET", "/market/orderbook?key=" + key, nil, map[string]any{"data": map[string]any{"ask": kArray, "bid": kArray}}},
		{"POST", "/coremem/raw", map[string]any{"exchange": "binance", "pair": "USDT-BTC"}, map[string]any{"ABP": kNumber, "Bid": kNumber}},
		{"POST", "/coremem", nil, kObject},
		{"POST", "/coremem/single", map[string]any{"exchange": "binance", "pair": "USDT-BTC"}, kObject},
		{"POST", "/chart/data", map[string]any{"exchange": "binance", "pair": "USDT-BTC"}, kObject},
		{"GET", fmt.Sprintf("/chart/marks?exchange=binance&pair=USDT-BTC&interval=15&startTime=0&endTime=%d", now/1000), nil, []any{specChartMark}},
		// PNL.
		{"POST", "/pnl/overview", map[string]any{"timezone": "UTC", "keys": []string{"All"}}, specOverview},
		{"GET", fmt.Sprintf("/pnl/daily?key=%s&startTimestamp=0&endTimestamp=%d", key, now), nil, map[string]any{"dateRangeDailyHistory": kArray, "unmatchedBaseValuePerDateRange": kNumber}},
		{"GET", fmt.Sprintf("/pnl/daily/paginated?key=%s&pageNum=1&pageSize=10&endTime=%d", key, now), nil, map[string]any{"totalSize": kNumber, "data": kArray}},
		{"GET", fmt.Sprintf("/pnl/sum?exchange=binance&startTimestamp=0&endTimestamp=%d", now), nil, map[string]any{"tournamentData": map[string]any{"sommaPnl": kDecimal, "invested": kDecimal}, "data": kArray}},
		{"GET", "/pnl/total?key=" + key, nil, kObject},
		// System, time, license.
		{"GET", "/time", nil, map[string]any{"serverTime": kMs}},
		{"POST", "/system/stop", nil, kObject},
		{"POST", "/system/start", nil, kObject},
		// Configuration.
		{"GET", "/config/full", nil, specConfigDoc},
		{"POST", "/config/pair/add", map[string]any{"pair": "USDT-ETH", "exchange": "binance"}, specStatus},
		{"POST", "/config/pair/remove", map[string]any{"pair": "USDT-ETH", "exchange": "binance"}, specStatus},
		{"POST", "/config/strategy/add", map[string]any{"name": "specStrategy"}, specStatus},
		{"POST", "/config/strategy/remove", map[string]any{"name": "specStrategy"}, specStatus},
		// Files.
		{"GET", "/files/acvar", nil, specFileList},
		{"POST", "/files/acvar/get", nil, kObject},
		{"POST", "/files/autoconfig/write", map[string]any{"document": map[string]any{}}, specStatus},
		{"POST", "/files/backup", nil, specFileList},
		{"POST", "/files/custom-editor/write", map[string]any{"document": map[string]any{}}, specStatus},
		{"GET", "/files/state", nil, specFileList},
		{"GET", "/files/strategy", nil, specFileList},
		{"POST", "/files/strategy/write", map[string]any{"filename": "spec2.js", "document": "//\n"}, specStatus},
		{"POST", "/files/strategy/delete", map[string]any{"filename": "spec2.js"}, specStatus},
		// Trading.
		{"POST", "/trade/buy", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 40000}}, specTradeAck},
		{"POST", "/trade/sell", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 90000}}, specTradeAck},
		{"POST", "/trade/buy/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001}}, specTradeAck},
		{"POST", "/trade/sell/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001}}, specTradeAck},
		{"POST", "/trade/buy/stoplimit", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "stopPrice": 60000, "limitPrice": 60100}}, specTradeAck},
		{"POST", "/trade/sell/stoplimit", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "stopPrice": 40000, "limitPrice": 39900}}, specTradeAck},
		{"POST", "/trade/buy/trailingstop", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 50000, "stopPrice": 49000}}, specTradeAck},
		{"POST", "/trade/sell/trailingstop", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 51000, "stopPrice": 52000}}, specTradeAck},
		{"POST", "/trade/buy/oco", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 40000, "stopPrice": 60000, "limit": 60100}}, specTradeAck},
	}
	for _, r := range routes {
		t.Run(r.method+" "+strings.SplitN(r.path, "?", 2)[0], func(t *testing.T) {
			checkSpecShape(t, r.path, ss.json(r.method, r.path, r.body), r.shape)
		})
	}

	// trade/cancel takes the id as a string (the spec).
	t.Run("POST /trade/cancel", func(t *testing.T) {
		ack := asObject(t, "trade/buy", ss.json("POST", "/trade/buy", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.001, "price": 41000}}))
		id := fmt.Sprint(asInteger(t, "id", ack["id"]))
		checkSpecShape(t, "/trade/cancel", ss.json("POST", "/trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "id": id, "price": 41000, "type": "limit"}}), specTradeAck)
	})
	// A state file (the pair's, made from its filled orders): orders in the
	// order record's subset, and balances.
	t.Run("POST /files/state/get", func(t *testing.T) {
		names := asArray(t, "files/state result", asObject(t, "files/state", ss.json("GET", "/files/state", nil))["result"])
		if len(names) != 1 {
			t.Fatalf("state files %v, want the pair's", names)
		}
		checkSpecShape(t, "/files/state/get", ss.json("POST", "/files/state/get", map[string]any{"filename": names[0]}), map[string]any{
			"orders":   []any{map[string]any{"time": kMs, "pair": kSymbol, "type": kString, "rate": kNumber, "amount": kNumber, "id": kNumber, "cost": kNumber}},
			"balances": kObject})
	})
	// Read-back routes of files written above.
	t.Run("POST /files/strategy/get", func(t *testing.T) {
		if ct, _ := ss.call(200, "POST", "/files/strategy/get", map[string]any{"filename": "spec.js"}); !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("Content-Type %q", ct)
		}
	})
	// Authentication.
	t.Run("POST /auth/login", func(t *testing.T) {
		enc, err := secrets.EncryptLoginPassword(testPassword, testWallet)
		if err != nil {
			t.Fatal(err)
		}
		status, b := ss.do("POST", "/api/v1/auth/login", map[string]any{"password": enc}, "")
		var v any
		if err := json.Unmarshal(b, &v); err != nil || status != 200 {
			t.Fatalf("login = %d %s", status, b)
		}
		checkSpecShape(t, "/auth/login", v, map[string]any{"status": kString, "token": kString})
	})
	t.Run("GET /auth/status", func(t *testing.T) {
		checkSpecShape(t, "/auth/status", ss.json("GET", "/auth/status", nil), map[string]any{"code": kInteger, "isDemo": kBool,
			"isRegistered": kBool, "isTwoFA": kBool, "metamask": kBool, "status": kString, "message": kString})
	})
}

// The balance entry's amounts are the exact ones rounded once, half to
// even, to 8 decimals; the exact values sit beside them in fields of our
// own.
func TestBalancesRoundedHalfEvenBesideTheExact(t *testing.T) {
	for _, c := range []struct{ exact, want string }{
		{"10051.706515463454", "10051.70651546"},
		{"0.000000005", "0.00000000"}, // half: to the even 0
		{"0.000000015", "0.00000002"}, // half: to the even 2
		{"0.000000025", "0.00000002"},
		{"0.0000000251", "0.00000003"},
		{"-1.123456785", "-1.12345678"},
		{"7", "7.00000000"},
	} {
		e := newBalanceEntry("binance", domain.AssetBalance{Asset: "BTC", Available: decimal.MustDecimal(c.exact), OnOrder: decimal.MustDecimal(c.exact)})
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got["Available Qty"] != c.want || got["On Order"] != c.want || got["availableExact"] != decimal.MustDecimal(c.exact).String() || got["onOrderExact"] != got["availableExact"] {
			t.Errorf("%s: %s, want %s beside the exact value", c.exact, b, c.want)
		}
	}
}
