// Package krakenfixture is a local Kraken spot REST server (httptest) for
// the ccxt connector's tests: one account, one pair (XBT/USDT), a fixed
// book, and faults to inject. Requests and answers follow Kraken's API
// documentation:
//
//   - envelope, errors: every answer is HTTP 200 {"error": [...],
//     "result": {...}}; a non-empty error array means the request failed
//     (https://docs.kraken.com/api/docs/guides/spot-errors: EAPI:Invalid
//     key, EAPI:Invalid signature, EAPI:Invalid nonce, EAPI:Rate limit
//     exceeded, EOrder:Insufficient funds, EOrder:Unknown order,
//     EService:Unavailable, EQuery:Unknown asset pair);
//   - signing: private calls are POSTs, form-encoded with a nonce, and
//     carry API-Key and API-Sign = base64(HMAC-SHA512(base64-decoded
//     secret, URI path + SHA256(nonce + POST data))); the nonce must grow
//     (https://docs.kraken.com/api/docs/guides/spot-rest-auth);
//   - public: Assets, AssetPairs (lot_decimals, pair_decimals, ordermin,
//     costmin), Ticker (a, b, c, v, l, h, o), Depth, OHLC
//     (https://docs.kraken.com/api/docs/rest-api/get-tradable-asset-pairs,
//     …/get-ticker-information, …/get-order-book, …/get-ohlc-data);
//   - private: BalanceEx (balance, hold_trade), AddOrder (pair, type,
//     ordertype, volume, price, cl_ord_id → descr, txid), CancelOrder
//     (txid → count), QueryOrders (txid), OpenOrders and ClosedOrders
//     (filtered by cl_ord_id), TradesHistory (trades by id, newest first,
//     50 a page from ofs)
//     (https://docs.kraken.com/api/docs/rest-api/add-order, …/cancel-order,
//     …/get-orders-info, …/get-open-orders, …/get-closed-orders,
//     …/get-trade-history, …/get-extended-balance; cl_ord_id:
//     https://docs.kraken.com/api/docs/guides/spot-clordid).
//
// Where the documentation is silent the fixture says what it assumes:
// QueryOrders leaves out txids it does not know (no error); a cancel of a
// closed order is EOrder:Unknown order like an unknown one. lot_decimals
// is 6 here (Kraken's XBT pairs have 8) so that the suite's filter case
// has a step above 1e-8.
package krakenfixture

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/exchangetest/fixturekit"
)

// The fixture's pair and prices.
const (
	PairID  = "XBTUSDT"
	Bid     = "30000.0"
	Ask     = "30000.1"
	feeRate = "0.0026" // taker fee, 0.26 %
)

// Market is the fixture's one pair: Kraken's pair and asset names, its
// book's best prices, its AssetPairs precision and minimums, and the
// account's starting balances (by Kraken asset name).
type Market struct {
	ID, WSName                string // "XBTUSDT", "XBT/USDT"
	Base, BaseAlt, Quote      string // Kraken asset names: "XXBT", "XBT", "USDT"
	Bid, Ask                  decimal.Decimal
	PairDecimals, LotDecimals int
	OrderMin, CostMin         decimal.Decimal
	Balances                  map[string]decimal.Decimal
}

// DefaultMarket is XBT/USDT with 1 BTC and 100,000 USDT (New).
var DefaultMarket = Market{ID: PairID, WSName: "XBT/USDT", Base: "XXBT", BaseAlt: "XBT", Quote: "USDT",
	Bid: decimal.MustDecimal(Bid), Ask: decimal.MustDecimal(Ask), PairDecimals: 1, LotDecimals: 6,
	OrderMin: decimal.MustDecimal("0.0001"), CostMin: decimal.MustDecimal("0.5"),
	Balances: map[string]decimal.Decimal{"XXBT": decimal.MustDecimal("1"), "USDT": decimal.MustDecimal("100000")}}

// tick is the pair's price step.
func (m Market) tick() decimal.Decimal { return decimal.NewDecimal(1, -m.PairDecimals) }

// Server is the fixture; URL is its base.
type Server struct {
	URL      string
	Key      string
	SecretB4 string // the API secret, base64 as Kraken issues it
	// Clock, when set, is the clock of the account's times (orders,
	// trades, transfers, the ledger); nil: the real one.
	Clock func() time.Time

	srv *httptest.Server
	mk  Market

	// TradeFaults are the test's faults of the trade list: a trade's
	// fields in TradesHistory read as given text ("price", "vol", "fee",
	// "cost": TradeText, a number the fixture's own decimals cannot hold),
	// trades listed late (DelayTrades, ReleaseTrades; their balances move
	// at once), and the history endpoints (TradesHistory, DepositStatus,
	// WithdrawStatus, Ledgers) answering EService:Unavailable once
	// FailHistoryAfter's count runs out.
	fixturekit.TradeFaults[string]

	mu         sync.Mutex
	lastNonce  int64
	balance    map[string]decimal.Decimal // XXBT, USDT
	hold       map[string]decimal.Decimal
	orders     map[string]*order // by txid
	order      []string          // txids in placement order
	trades     []*trade
	seq        int
	lastTrade  int64 // ms of the last trade: each later trade is ≥ 1 ms later
	requests   map[string]int
	lose       int // 0 none, 1 lose before placing, 2 lose after placing
	serverErr  bool
	rateLimit  time.Duration
	rateLimitN bool
	hold1      chan struct{} // closed to release a held request
	reached    chan struct{}
	// The account's history beside its orders (account.go).
	deposits, withdrawals []*transfer
	ledger                []*ledgerEntry
}

type order struct {
	txid, clOrdID, side, kind string
	price, vol, volExec       decimal.Decimal
	cost, fee                 decimal.Decimal
	status                    string
	opentm, closetm           float64
	trades                    []string
}

type trade struct {
	id, ordertxid, side, kind string
	price, vol, cost, fee     decimal.Decimal
	time                      float64
	text                      map[string]string
}

// New starts a fixture for the key and the base64 secret, with 1 BTC and
// 100,000 USDT (DefaultMarket).
func New(key, secretB64 string) *Server { return NewMarket(key, secretB64, DefaultMarket) }

// NewMarket starts a fixture whose one pair is m.
func NewMarket(key, secretB64 string, m Market) *Server {
	s := &Server{Key: key, SecretB4: secretB64, mk: m,
		balance:  map[string]decimal.Decimal{},
		hold:     map[string]decimal.Decimal{},
		orders:   map[string]*order{},
		requests: map[string]int{},
	}
	for a, v := range m.Balances {
		s.balance[a] = v
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// LoseNextPlacement makes the next AddOrder drop its connection without an
// answer, after placing the order when placed is true.
func (s *Server) LoseNextPlacement(placed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose = 1
	if placed {
		s.lose = 2
	}
}

// ServerError makes the next AddOrder answer HTTP 503 EService:Unavailable
// without placing anything.
func (s *Server) ServerError() {
	s.mu.Lock()
	s.serverErr = true
	s.mu.Unlock()
}

// RateLimit makes the next request answer HTTP 429 with Retry-After and
// EAPI:Rate limit exceeded; with d == 0, the error alone (HTTP 200, as
// Kraken's documentation shows it).
func (s *Server) RateLimit(d time.Duration) {
	s.mu.Lock()
	s.rateLimit, s.rateLimitN = d, true
	s.mu.Unlock()
}

// HoldNext makes the next request wait, unanswered, until release is
// called; reached is closed when it arrives.
func (s *Server) HoldNext() (reached <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold1, s.reached = make(chan struct{}), make(chan struct{})
	h := s.hold1
	var once sync.Once
	return s.reached, func() { once.Do(func() { close(h) }) }
}

// Requests counts the requests to a path ("/0/private/AddOrder").
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// Fill fills qty of the resting order with the client order id at its
// limit price (a counterparty's order crossed it).
func (s *Server) Fill(clientOrderID string, qty decimal.Decimal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.order {
		o := s.orders[id]
		if (o.clOrdID == clientOrderID || "tl"+o.clOrdID == clientOrderID) && o.status == "open" {
			if o.vol.Sub(o.volExec).Cmp(qty) < 0 {
				return fmt.Errorf("order %s has %v left, less than %v", id, o.vol.Sub(o.volExec), qty)
			}
			s.execute(o, o.price, qty, true)
			return nil
		}
	}
	return fmt.Errorf("no open order with client order id %s", clientOrderID)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if h := s.hold1; h != nil {
		s.hold1 = nil
		close(s.reached)
		s.mu.Unlock()
		<-h
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	s.requests[r.URL.Path]++
	if s.rateLimitN {
		s.rateLimitN = false
		if s.rateLimit > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(s.rateLimit/time.Second)))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			json.NewEncoder(w).Encode(map[string]any{"error": []string{"EAPI:Rate limit exceeded"}, "result": map[string]any{}})
			return
		}
		fail(w, "EAPI:Rate limit exceeded")
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/0/public/")
	if ok {
		s.public(w, r, name)
		return
	}
	name, ok = strings.CutPrefix(r.URL.Path, "/0/private/")
	if !ok || r.Method != http.MethodPost {
		fail(w, "EGeneral:Unknown method")
		return
	}
	form, errMsg := s.authenticate(r)
	if errMsg != "" {
		fail(w, errMsg)
		return
	}
	s.private(w, r, name, form)
}

func fail(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"error": []string{msg}, "result": map[string]any{}})
}

func ok(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"error": []string{}, "result": result})
}

// authenticate checks API-Key, API-Sign and the nonce, and returns the
// form, or the error Kraken would answer.
func (s *Server) authenticate(r *http.Request) (url.Values, string) {
	body := make([]byte, 0, 512)
	buf := make([]byte, 512)
	for {
		n, err := r.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	if r.Header.Get("API-Key") != s.Key {
		return nil, "EAPI:Invalid key"
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, "EGeneral:Invalid arguments"
	}
	nonce := form.Get("nonce")
	secret, err := base64.StdEncoding.DecodeString(s.SecretB4)
	if err != nil {
		return nil, "EAPI:Invalid key"
	}
	sum := sha256.Sum256([]byte(nonce + string(body)))
	mac := hmac.New(sha512.New, secret)
	mac.Write([]byte(r.URL.Path))
	mac.Write(sum[:])
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(r.Header.Get("API-Sign")), []byte(want)) {
		return nil, "EAPI:Invalid signature"
	}
	n, err := strconv.ParseInt(nonce, 10, 64)
	if err != nil || n <= s.lastNonce {
		return nil, "EAPI:Invalid nonce"
	}
	s.lastNonce = n
	return form, ""
}

func (s *Server) public(w http.ResponseWriter, r *http.Request, name string) {
	q := r.URL.Query()
	if p := q.Get("pair"); p != "" && name != "AssetPairs" {
		for _, one := range strings.Split(p, ",") {
			if one != s.mk.ID {
				fail(w, "EQuery:Unknown asset pair")
				return
			}
		}
	}
	switch name {
	case "Assets":
		ok(w, map[string]any{
			s.mk.Base:  map[string]any{"aclass": "currency", "altname": s.mk.BaseAlt, "decimals": 10, "display_decimals": 5, "collateral_value": 1, "status": "enabled"},
			s.mk.Quote: map[string]any{"aclass": "currency", "altname": s.mk.Quote, "decimals": 8, "display_decimals": 4, "collateral_value": 1, "status": "enabled"},
		})
	case "AssetPairs":
		ok(w, map[string]any{s.mk.ID: map[string]any{
			"altname": s.mk.ID, "wsname": s.mk.WSName, "aclass_base": "currency", "base": s.mk.Base, "aclass_quote": "currency", "quote": s.mk.Quote,
			"lot": "unit", "cost_decimals": 5, "pair_decimals": s.mk.PairDecimals, "lot_decimals": s.mk.LotDecimals, "lot_multiplier": 1,
			"leverage_buy": []int{}, "leverage_sell": []int{},
			"fees":                [][]float64{{0, 0.26}, {50000, 0.24}},
			"fees_maker":          [][]float64{{0, 0.16}, {50000, 0.14}},
			"fee_volume_currency": "ZUSD", "margin_call": 80, "margin_stop": 40,
			"ordermin": s.mk.OrderMin.String(), "costmin": s.mk.CostMin.String(), "tick_size": s.mk.tick().String(), "status": "online",
		}})
	case "Ticker":
		if s.mk.ID == PairID {
			ok(w, map[string]any{PairID: map[string]any{
				"a": []string{Ask, "1", "1.000"}, "b": []string{Bid, "2", "2.000"}, "c": []string{"30000.0", "0.01000000"},
				"v": []string{"12.5", "40.25"}, "p": []string{"29950.3", "29810.7"}, "t": []int{120, 800},
				"l": []string{"29500.0", "29100.0"}, "h": []string{"30500.0", "30900.0"}, "o": "29600.0",
			}})
			return
		}
		bid, ask := s.mk.Bid.String(), s.mk.Ask.String()
		ok(w, map[string]any{s.mk.ID: map[string]any{
			"a": []string{ask, "1", "1.000"}, "b": []string{bid, "2", "2.000"}, "c": []string{bid, "1"},
			"v": []string{"12.5", "40.25"}, "p": []string{bid, bid}, "t": []int{120, 800},
			"l": []string{bid, bid}, "h": []string{ask, ask}, "o": bid,
		}})
	case "Depth":
		count, _ := strconv.Atoi(q.Get("count"))
		if count <= 0 || count > 10 {
			count = 10
		}
		now := time.Now().Unix()
		var bids, asks [][]any
		for i := 0; i < count; i++ {
			step := decimal.DecimalFromInt(int64(i))
			if s.mk.ID != PairID {
				step = s.mk.tick().MulInt(int64(i))
			}
			bids = append(bids, []any{s.mk.Bid.Sub(step).String(), "0.5", now})
			asks = append(asks, []any{s.mk.Ask.Add(step).String(), "0.5", now})
		}
		ok(w, map[string]any{s.mk.ID: map[string]any{"bids": bids, "asks": asks}})
	case "OHLC":
		interval, _ := strconv.Atoi(q.Get("interval"))
		if interval <= 0 {
			interval = 1
		}
		step := int64(interval) * 60
		start := time.Now().Unix()/step*step - 9*step
		var rows [][]any
		for i := int64(0); i < 10; i++ {
			if s.mk.ID != PairID {
				b := s.mk.Bid.String()
				rows = append(rows, []any{start + i*step, b, b, b, b, b, "1.25", 12})
				continue
			}
			o := 29900 + 10*i
			rows = append(rows, []any{start + i*step, fmt.Sprintf("%d.0", o), fmt.Sprintf("%d.0", o+20), fmt.Sprintf("%d.0", o-15), fmt.Sprintf("%d.0", o+5), fmt.Sprintf("%d.0", o), "1.25", 12})
		}
		ok(w, map[string]any{s.mk.ID: rows, "last": start + 9*step})
	case "Time":
		now := time.Now()
		ok(w, map[string]any{"unixtime": now.Unix(), "rfc1123": now.UTC().Format(time.RFC1123)})
	default:
		fail(w, "EGeneral:Unknown method")
	}
}

func (s *Server) private(w http.ResponseWriter, r *http.Request, name string, form url.Values) {
	switch name {
	case "Balance", "BalanceEx":
		out := map[string]any{}
		for asset, b := range s.balance {
			out[asset] = map[string]string{"balance": b.String(), "hold_trade": s.hold[asset].String()}
		}
		ok(w, out)
	case "AddOrder":
		s.addOrder(w, r, form)
	case "CancelOrder":
		id := form.Get("txid")
		o := s.find(id)
		if o == nil || o.status != "open" {
			fail(w, "EOrder:Unknown order")
			return
		}
		s.release(o)
		o.status, o.closetm = "canceled", s.now()
		ok(w, map[string]any{"count": 1, "pending": false})
	case "QueryOrders":
		out := map[string]any{}
		for _, id := range strings.Split(form.Get("txid"), ",") {
			if o, found := s.orders[id]; found {
				out[id] = s.orderJSON(o)
			}
		}
		ok(w, out)
	case "OpenOrders", "ClosedOrders":
		status := "open"
		if name == "ClosedOrders" {
			status = "closed"
		}
		out := map[string]any{}
		for _, id := range s.order {
			o := s.orders[id]
			if (o.status == "open") != (status == "open") {
				continue
			}
			if c := form.Get("cl_ord_id"); c != "" && c != o.clOrdID {
				continue
			}
			out[id] = s.orderJSON(o)
		}
		if status == "open" {
			ok(w, map[string]any{"open": out})
		} else {
			ok(w, map[string]any{"closed": out, "count": len(out)})
		}
	case "TradesHistory":
		if s.historyFault(w) {
			return
		}
		ofs, _ := strconv.Atoi(form.Get("ofs"))
		start, _ := strconv.ParseFloat(form.Get("start"), 64)
		end, err := strconv.ParseFloat(form.Get("end"), 64)
		if err != nil {
			end = math.Inf(1)
		}
		var sel []*trade
		for i := len(s.trades) - 1; i >= 0; i-- { // newest first
			if t := s.trades[i]; t.time > start && t.time <= end && !s.TradeFaults.Hidden(t.id) {
				sel = append(sel, t)
			}
		}
		count := len(sel)
		if ofs > len(sel) {
			ofs = len(sel)
		}
		sel = sel[ofs:]
		if len(sel) > 50 {
			sel = sel[:50]
		}
		out := map[string]any{}
		for _, t := range sel {
			tj := map[string]any{
				"ordertxid": t.ordertxid, "postxid": "TKH2SE-M7IF5-CFI7LT", "pair": s.mk.ID, "time": t.time,
				"type": t.side, "ordertype": t.kind, "price": t.price.String(), "cost": t.cost.String(), "fee": t.fee.String(),
				"vol": t.vol.String(), "margin": "0.00000", "misc": "", "maker": t.kind == "limit",
			}
			for k, v := range t.text {
				tj[k] = v
			}
			out[t.id] = tj
		}
		ok(w, map[string]any{"trades": out, "count": count})
	case "DepositStatus", "WithdrawStatus":
		s.transferStatus(w, name, form)
	case "Ledgers":
		s.ledgers(w, form)
	default:
		fail(w, "EGeneral:Unknown method")
	}
}

// now is the fixture's time in seconds with four decimals, as Kraken
// writes its times.
func (s *Server) now() float64 { return float64(s.clock().UnixMicro()/100) / 10_000 }

// clock is the fixture's clock: Clock, else the real one.
func (s *Server) clock() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// find returns the order with the txid or the client order id.
func (s *Server) find(id string) *order {
	if o, ok := s.orders[id]; ok {
		return o
	}
	for _, tx := range s.order {
		if o := s.orders[tx]; o.clOrdID != "" && o.clOrdID == id {
			return o
		}
	}
	return nil
}

func (s *Server) addOrder(w http.ResponseWriter, r *http.Request, form url.Values) {
	lose, serverErr := s.lose, s.serverErr
	s.lose, s.serverErr = 0, false
	if serverErr {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]any{"error": []string{"EService:Unavailable"}, "result": map[string]any{}})
		return
	}
	if lose == 1 {
		hangUp(w)
		return
	}
	if form.Get("pair") != s.mk.ID {
		fail(w, "EQuery:Unknown asset pair")
		return
	}
	side, kind := form.Get("type"), form.Get("ordertype")
	vol, err := decimal.ParseDecimal(form.Get("volume"))
	if err != nil || vol.Sign() <= 0 || (side != "buy" && side != "sell") || (kind != "limit" && kind != "market") {
		fail(w, "EGeneral:Invalid arguments")
		return
	}
	if vol.Cmp(s.mk.OrderMin) < 0 {
		fail(w, "EOrder:Order minimum not met")
		return
	}
	var price decimal.Decimal
	switch {
	case kind == "limit":
		if price, err = decimal.ParseDecimal(form.Get("price")); err != nil || price.Sign() <= 0 || !price.Rem(s.mk.tick()).IsZero() {
			fail(w, "EOrder:Invalid price:Invalid price argument")
			return
		}
	case side == "buy":
		price = s.mk.Ask
	default:
		price = s.mk.Bid
	}
	cl := form.Get("cl_ord_id")
	if cl != "" {
		for _, tx := range s.order {
			if o := s.orders[tx]; o.clOrdID == cl && o.status == "open" {
				fail(w, "EOrder:Duplicate cl_ord_id")
				return
			}
		}
	}
	need, asset := vol, s.mk.Base
	if side == "buy" {
		need, asset = vol.Mul(price).Add(vol.Mul(price).Mul(decimal.MustDecimal(feeRate))), s.mk.Quote
	}
	if s.balance[asset].Sub(s.hold[asset]).Cmp(need) < 0 {
		fail(w, "EOrder:Insufficient funds")
		return
	}
	s.seq++
	o := &order{txid: fmt.Sprintf("O%05d-FIXTR-%06d", s.seq, s.seq), clOrdID: cl, side: side, kind: kind, price: price, vol: vol, status: "open", opentm: s.now()}
	s.orders[o.txid] = o
	s.order = append(s.order, o.txid)
	if kind == "market" {
		s.execute(o, price, vol, false)
	} else {
		s.hold[asset] = s.hold[asset].Add(s.holdOf(o, vol))
	}
	if lose == 2 {
		hangUp(w)
		return
	}
	descr := fmt.Sprintf("%s %s %s @ %s", side, vol, s.mk.ID, kind)
	if kind == "limit" {
		descr += " " + price.String()
	}
	ok(w, map[string]any{"descr": map[string]string{"order": descr}, "txid": []string{o.txid}})
}

// holdOf is what a resting order of qty holds: base for a sell, quote
// (with the fee) for a buy.
func (s *Server) holdOf(o *order, qty decimal.Decimal) decimal.Decimal {
	if o.side == "sell" {
		return qty
	}
	c := qty.Mul(o.price)
	return c.Add(c.Mul(decimal.MustDecimal(feeRate)))
}

func (s *Server) release(o *order) {
	asset := s.mk.Base
	if o.side == "buy" {
		asset = s.mk.Quote
	}
	s.hold[asset] = s.hold[asset].Sub(s.holdOf(o, o.vol.Sub(o.volExec)))
}

// execute fills qty of o at price; resting tells whether o held funds.
func (s *Server) execute(o *order, price, qty decimal.Decimal, resting bool) {
	cost := qty.Mul(price)
	fee := cost.Mul(decimal.MustDecimal(feeRate))
	if resting {
		asset := s.mk.Base
		if o.side == "buy" {
			asset = s.mk.Quote
		}
		s.hold[asset] = s.hold[asset].Sub(s.holdOf(o, qty))
	}
	b, q := s.mk.Base, s.mk.Quote
	if o.side == "buy" {
		s.balance[q] = s.balance[q].Sub(cost).Sub(fee)
		s.balance[b] = s.balance[b].Add(qty)
	} else {
		s.balance[b] = s.balance[b].Sub(qty)
		s.balance[q] = s.balance[q].Add(cost).Sub(fee)
	}
	ms := s.clock().UnixMilli()
	if ms <= s.lastTrade {
		ms = s.lastTrade + 1
	}
	s.lastTrade = ms
	s.seq++
	t := &trade{id: fmt.Sprintf("T%05d-FIXTR-%06d", s.seq, s.seq), ordertxid: o.txid, side: o.side, kind: o.kind,
		price: price, vol: qty, cost: cost, fee: fee, time: float64(ms) / 1000, text: s.TradeFaults.TakeText()}
	s.trades = append(s.trades, t)
	s.TradeFaults.Made(t.id)
	o.trades = append(o.trades, t.id)
	o.volExec, o.cost, o.fee = o.volExec.Add(qty), o.cost.Add(cost), o.fee.Add(fee)
	if o.volExec == o.vol {
		o.status, o.closetm = "closed", t.time
	}
}

func (s *Server) orderJSON(o *order) map[string]any {
	avg := decimal.Decimal(decimal.Zero)
	if o.volExec.Sign() > 0 {
		avg = o.cost.Div(o.volExec)
	}
	price := o.price.String()
	if o.kind == "market" {
		price = "0"
	}
	out := map[string]any{
		"refid": nil, "userref": 0, "cl_ord_id": o.clOrdID, "status": o.status, "reason": nil,
		"opentm": o.opentm, "starttm": 0, "expiretm": 0,
		"descr": map[string]any{"pair": s.mk.ID, "type": o.side, "ordertype": o.kind, "price": price, "price2": "0",
			"leverage": "none", "order": fmt.Sprintf("%s %s %s @ %s %s", o.side, o.vol, s.mk.ID, o.kind, price), "close": ""},
		"vol": o.vol.String(), "vol_exec": o.volExec.String(), "cost": o.cost.String(), "fee": o.fee.String(),
		"price": avg.String(), "stopprice": "0.00000", "limitprice": "0.00000", "misc": "", "oflags": "fciq",
		"trades": append([]string(nil), o.trades...),
	}
	if o.status != "open" {
		out["closetm"] = o.closetm
	}
	if o.clOrdID == "" {
		delete(out, "cl_ord_id")
	}
	return out
}

// hangUp drops the connection without an answer.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("krakenfixture: the response writer cannot hijack")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

// Balance returns an asset's total (Kraken's asset name: XXBT, USDT).
func (s *Server) Balance(asset string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balance[asset]
}

// Orders returns the txids of the orders with a client order id, in
// placement order.
func (s *Server) Orders(clOrdID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.order {
		if s.orders[id].clOrdID == clOrdID {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
