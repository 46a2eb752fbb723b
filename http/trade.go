package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// OrderPlacer is the command side of trading, what the trade routes send
// (exchange/engine.Trader). Every method returns once its events are
// durable and applied by the projections. Errors carry domain codes:
// EINVALID (bad field, refused order, precondition), ENOTFOUND,
// ECONFLICT, EUNAVAILABLE.
type OrderPlacer interface {
	// Submit places a limit, market, stop-limit or trailing-stop order.
	Submit(ctx context.Context, req domain.OrderRequest) (int64, error)
	// SubmitOCO places an OCO (limit at Price, stop-limit at
	// StopPrice/LimitPrice) and returns its id.
	SubmitOCO(ctx context.Context, req domain.OrderRequest) (int64, error)
	// ClosePosition sells the held base of a pair (Amount 0: all of it).
	ClosePosition(ctx context.Context, req domain.OrderRequest) (int64, error)
	// Cancel cancels an order of exchange and pair.
	Cancel(ctx context.Context, exchange, pair string, orderID int64, actor, correlation string) error
}

// Trader is the trading side as cmd fills Server.Trader with it
// (exchange/engine.Trader): the trade routes send its OrderPlacer
// commands, the pair lists read its MarketLister (pairs.go) and the
// balances route its BalanceReader (balances.go).
type Trader interface {
	OrderPlacer
	MarketLister
	BalanceReader
}

// tradeHandler serves the trade routes: it parses a trade call into a
// domain.OrderRequest (strings, finite numbers; the OrderPlacer
// validates it) and sends it. Without an OrderPlacer they answer 503.
type tradeHandler struct {
	trader OrderPlacer
}

// register registers the trade calls. Every order call accepts
// an Idempotency-Key header (at most domain.MaxIdempotencyKey characters): the
// same key with the same request (endpoint and fields, nested in data or
// not) answers what the first request answered and places nothing; the
// same key with a different request is 409 "Idempotency-Key reused with a
// different request" and places nothing either. The OrderPlacer records a
// fingerprint of the request with the key, so both hold after a restart.
func (h *tradeHandler) register(r *mux.Router) {
	r.Handle("/trade/buy", h.handleOrder(domain.Buy, domain.KindLimit)).Methods("POST")
	r.Handle("/trade/sell", h.handleOrder(domain.Sell, domain.KindLimit)).Methods("POST")
	r.Handle("/trade/buy/market", h.handleOrder(domain.Buy, domain.KindMarket)).Methods("POST")
	r.Handle("/trade/sell/market", h.handleOrder(domain.Sell, domain.KindMarket)).Methods("POST")
	r.Handle("/trade/buy/stoplimit", h.handleOrder(domain.Buy, domain.KindStopLimit)).Methods("POST")
	r.Handle("/trade/sell/stoplimit", h.handleOrder(domain.Sell, domain.KindStopLimit)).Methods("POST")
	r.Handle("/trade/buy/trailingstop", h.handleOrder(domain.Buy, domain.KindTrailingStop)).Methods("POST")
	r.Handle("/trade/sell/trailingstop", h.handleOrder(domain.Sell, domain.KindTrailingStop)).Methods("POST")
	r.Handle("/trade/buy/oco", h.handleOCO(domain.Buy)).Methods("POST")
	r.Handle("/trade/sell/oco", h.handleOCO(domain.Sell)).Methods("POST")
	r.Handle("/trade/close", h.handleClose(domain.KindLimit)).Methods("POST")
	r.Handle("/trade/close/market", h.handleClose(domain.KindMarket)).Methods("POST")
	r.Handle("/trade/cancel", handlerFunc(h.handleCancel)).Methods("POST")
}

// orderSent is the answer of every trade call (the spec's body, plus the
// order's id).
type orderSent struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	ID      int64  `json:"id,omitempty"`
}

// answerOrderSent answers a trade call with writeOrderSent once err, the
// outcome of the order's command, is nil; otherwise it returns err (for
// handlerFunc to answer).
func answerOrderSent(w http.ResponseWriter, id int64, err error) error {
	if err != nil {
		return err
	}
	writeOrderSent(w, id)
	return nil
}

// writeOrderSent answers a trade call: orderSent as writeJSON would
// encode it, written without reflection (every order answers this).
func writeOrderSent(w http.ResponseWriter, id int64) {
	body := make([]byte, 0, 64)
	body = append(body, `{"status":"success","message":"Order sent"`...)
	if id != 0 {
		body = append(body, `,"id":`...)
		body = strconv.AppendInt(body, id, 10)
	}
	body = append(body, "}\n"...)
	writeBody(w, http.StatusOK, body)
}

// tradeFields are a trade call's fields: nested in "data" (the spec) or at
// the top level (some clients); data wins when both are present.
type tradeFields map[string]json.RawMessage

// decodeTrade reads a trade body under decodeJSON's rules (Content-Type,
// size, UTF-8, repeated keys, trailing data). A value that is not JSON
// (NaN, Infinity) is a 400 naming its field.
func decodeTrade(r *http.Request) (tradeFields, error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, domain.Errorf(domain.EINVALID, "request body is empty; a JSON object is required")
	}
	if f, ok := flatTradeFields(body); ok {
		return f, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) && syntax.Offset > 0 && int(syntax.Offset) <= len(body) {
			if m := lastKey.FindSubmatch(body[:syntax.Offset]); m != nil {
				return nil, domain.Errorf(domain.EINVALID, "field %q: not a valid JSON value (%s)", m[1], syntax.Error())
			}
		}
		return nil, unmarshalBody(body, &top)
	}
	if err := checkBody(body); err != nil {
		return nil, err
	}
	if top == nil {
		return nil, domain.Errorf(domain.EINVALID, "request body must be a JSON object")
	}
	f := tradeFields{}
	for k, v := range top {
		if k != "data" {
			f[k] = v
		}
	}
	if raw, ok := top["data"]; ok && string(raw) != "null" {
		var data map[string]json.RawMessage
		if err := json.Unmarshal(raw, &data); err != nil {
			return nil, domain.Errorf(domain.EINVALID, "field \"data\" must be an object")
		}
		for k, v := range data {
			f[k] = v
		}
	}
	return f, nil
}

// flatTradeFields reads the two usual shapes of a trade body in one pass,
// {"data":{…}} and {…}, when every field is a plain string, number, true,
// false or null written compactly (jsonscan.FlatObject): the fields are then
// exactly what the encoding/json path below finds. Anything else reports
// false and takes that path (and its error messages).
func flatTradeFields(body []byte) (tradeFields, bool) {
	f := tradeFields{}
	dup := false
	add := func(k, v []byte) {
		if _, seen := f[string(k)]; seen {
			dup = true // the encoding/json path names it
		}
		f[string(k)] = v
	}
	const prefix = `{"data":`
	if bytes.HasPrefix(body, []byte(prefix)) && len(body) > len(prefix) && body[len(prefix)] == '{' {
		inner := body[len(prefix) : len(body)-1]
		if body[len(body)-1] != '}' || !jsonscan.FlatObject(inner, add) || dup {
			return nil, false
		}
		return f, true
	}
	if !jsonscan.FlatObject(body, add) || dup {
		return nil, false
	}
	if _, ok := f["data"]; ok { // "data":null or a scalar: the slow path decides
		return nil, false
	}
	return f, true
}

var lastKey = regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*[^"]*$`)

// str returns a string field, trimmed; "" when absent or null.
func (f tradeFields) str(name string) (string, error) {
	raw, ok := f[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	if s, ok := plainString(raw); ok {
		return strings.TrimSpace(s), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", domain.Errorf(domain.EINVALID, "field %q must be a string", name)
	}
	return strings.TrimSpace(s), nil
}

// plainString reads a JSON string of printable ASCII without escapes (what
// trade bodies hold: exchange and pair names), which decodes to its bytes;
// anything else reports false and takes encoding/json.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(in), true
}

// num returns a number field: a JSON number, finite, with at most 8
// decimals; 0 when absent or null. Strings are refused ("strings where
// numbers belong"). Whether the value fits the order is
// domain.OrderRequest.Validate's to say.
func (f tradeFields) num(name string) (decimal.Decimal, error) {
	raw, ok := f[name]
	if !ok || string(raw) == "null" {
		return decimal.Zero, nil
	}
	lit := strings.TrimSpace(string(raw))
	if lit == "" || lit[0] == '"' || lit[0] == '{' || lit[0] == '[' || lit == "true" || lit == "false" {
		return decimal.Zero, domain.Errorf(domain.EINVALID, "field %q must be a number", name)
	}
	var d decimal.Decimal
	var err error
	if strings.ContainsAny(lit, "eE") {
		var v float64
		v, err = strconv.ParseFloat(lit, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return decimal.Zero, domain.Errorf(domain.EINVALID, "field %q must be a finite number", name)
		}
		d, err = decimal.DecimalFromFloat(v)
	} else {
		d, err = decimal.ParseDecimal(lit)
	}
	if err != nil {
		return decimal.Zero, domain.Errorf(domain.EINVALID, "field %q: %s", name, domain.ErrorMessage(err))
	}
	return d, nil
}

// nums reads number fields into their destinations, stopping at the first
// that does not parse.
func (f tradeFields) nums(fields ...numField) error {
	for _, nf := range fields {
		v, err := f.num(nf.name)
		if err != nil {
			return err
		}
		*nf.dst = v
	}
	return nil
}

// numField is a number field of a trade body and where it goes.
type numField struct {
	name string
	dst  *decimal.Decimal
}

// orderRequest reads the common fields of a trade call (exch, pair, amt
// and the Idempotency-Key header). It only parses: the OrderPlacer
// validates the request (domain.OrderRequest.Validate).
func orderRequest(r *http.Request, f tradeFields, side domain.Side, kind domain.OrderKind) (domain.OrderRequest, error) {
	req := domain.OrderRequest{Side: side, Kind: kind, Actor: subject(r), Correlation: requestID(r), IdempotencyKey: r.Header.Get("Idempotency-Key")}
	var err error
	if req.Exchange, err = f.str("exch"); err != nil {
		return req, err
	}
	if req.Pair, err = f.str("pair"); err != nil {
		return req, err
	}
	req.Amount, err = f.num("amt")
	return req, err
}

// prepare reads a trade call's body (503 first without an OrderPlacer).
func (h *tradeHandler) prepare(r *http.Request) (tradeFields, error) {
	if h.trader == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "trading is not configured")
	}
	return decodeTrade(r)
}

// handleOrder serves the limit, market, stop-limit and trailing-stop
// endpoints.
func (h *tradeHandler) handleOrder(side domain.Side, kind domain.OrderKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, err := h.prepare(r)
		if err != nil {
			return err
		}
		req, err := orderRequest(r, f, side, kind)
		if err == nil {
			err = f.nums(priceFields(kind, &req)...)
		}
		if err != nil {
			return err
		}
		id, err := h.trader.Submit(r.Context(), req)
		return answerOrderSent(w, id, err)
	}
}

// priceFields names the price fields an order kind reads from the body
// (a market order's price is optional: absent, null or 0, as the SDK's
// examples send, mean the market price).
func priceFields(kind domain.OrderKind, req *domain.OrderRequest) []numField {
	switch kind {
	case domain.KindStopLimit:
		return []numField{{"stopPrice", &req.StopPrice}, {"limitPrice", &req.LimitPrice}}
	case domain.KindTrailingStop:
		return []numField{{"price", &req.Price}, {"stopPrice", &req.StopPrice}}
	}
	return []numField{{"price", &req.Price}}
}

// handleOCO serves trade/buy/oco and trade/sell/oco: price (limit leg),
// stopPrice and limit (the stop-limit leg).
func (h *tradeHandler) handleOCO(side domain.Side) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, err := h.prepare(r)
		if err != nil {
			return err
		}
		req, err := orderRequest(r, f, side, domain.KindLimit)
		if err == nil {
			err = f.nums(numField{"price", &req.Price}, numField{"stopPrice", &req.StopPrice}, numField{"limit", &req.LimitPrice})
		}
		if err != nil {
			return err
		}
		id, err := h.trader.SubmitOCO(r.Context(), req)
		return answerOrderSent(w, id, err)
	}
}

// handleClose serves trade/close (limit at price) and trade/close/market:
// sell the held base of the pair (amt optional: all of it).
func (h *tradeHandler) handleClose(kind domain.OrderKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, err := h.prepare(r)
		if err != nil {
			return err
		}
		req, err := orderRequest(r, f, domain.Sell, kind)
		if err == nil {
			req.Price, err = f.num("price")
		}
		if err != nil {
			return err
		}
		id, err := h.trader.ClosePosition(r.Context(), req)
		return answerOrderSent(w, id, err)
	}
}

// cancelTypes are the order types trade/cancel accepts in its type field.
var cancelTypes = map[string]bool{"limit": true, "market": true, string(domain.KindStopLimit): true, string(domain.KindTrailingStop): true, "oco": true}

// handleCancel serves trade/cancel: exch, pair, id (a string, as the spec
// says; a number is accepted too), price and type (limit, market,
// stoplimit, trailingstop or oco) as the client placed the order; price
// and type are checked for shape and otherwise unused. id is any id a
// trade call acknowledged: an order's, or an OCO's, which cancels both its
// legs. Unknown id: 404; finished order: 409.
func (h *tradeHandler) handleCancel(w http.ResponseWriter, r *http.Request) error {
	f, err := h.prepare(r)
	if err != nil {
		return err
	}
	exch, err := f.str("exch")
	if err != nil {
		return err
	}
	pair, err := f.str("pair")
	if err != nil {
		return err
	}
	raw, present := f["id"]
	if !present || string(raw) == "null" {
		return domain.Errorf(domain.EINVALID, "field \"id\" is required")
	}
	idText := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	id, perr := strconv.ParseInt(idText, 10, 64)
	if perr != nil || id <= 0 {
		return domain.Errorf(domain.EINVALID, "field \"id\" must be an order id (a positive integer, as a string)")
	}
	switch price, err := f.num("price"); {
	case err != nil:
		return err
	case price.Sign() <= 0:
		return domain.Errorf(domain.EINVALID, "field \"price\" is required and must be greater than 0")
	}
	switch typ, err := f.str("type"); {
	case err != nil:
		return err
	case !cancelTypes[typ]:
		return domain.Errorf(domain.EINVALID, "field \"type\" must be limit, market, stoplimit, trailingstop or oco")
	}
	return answerOrderSent(w, id, h.trader.Cancel(r.Context(), exch, pair, id, subject(r), requestID(r)))
}
