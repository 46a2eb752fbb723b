package gunbot

import (
	"encoding/json"
	"strconv"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The payloads of an imported order's three events, encoded by hand: at
// 200,000 orders, encoding/json's reflection was a sixth of an import's
// CPU. Each encoder gives exactly json.Marshal's bytes (the tests compare
// them over many orders) and hands any string that json.Marshal would
// escape to json.Marshal itself, so the log is the same either way.

// plainJSON reports whether json.Marshal writes s as is between quotes:
// printable ASCII without '"', '\\' and the HTML characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// jsonWriter appends object members; ok turns false at the first string
// it cannot write as is.
type jsonWriter struct {
	b  []byte
	ok bool
}

func (w *jsonWriter) key(k string) {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) str(k, v string) {
	if !plainJSON(v) {
		w.ok = false
		return
	}
	w.key(k)
	w.b = append(w.b, '"')
	w.b = append(w.b, v...)
	w.b = append(w.b, '"')
}

func (w *jsonWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

// dec writes a Decimal as its MarshalJSON does.
func (w *jsonWriter) dec(k string, v decimal.Decimal) {
	w.key(k)
	w.b = append(w.b, '"')
	w.b = v.Append(w.b)
	w.b = append(w.b, '"')
}

func newJSONWriter(size int) jsonWriter {
	return jsonWriter{b: append(make([]byte, 0, size), '{'), ok: true}
}

// done returns the object, or json.Marshal(v) when a string needed it.
func (w *jsonWriter) done(v any) []byte {
	if !w.ok {
		return marshal(v)
	}
	return append(w.b, '}')
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("marshal an order payload: " + err.Error()) // the payload types of domain always marshal
	}
	return b
}

// orderRequestedJSON is json.Marshal(v).
func orderRequestedJSON(v *domain.OrderRequested) []byte {
	w := newJSONWriter(192)
	w.int("orderId", v.OrderID)
	w.str("exchange", v.Exchange)
	w.str("pair", v.Pair)
	w.str("side", string(v.Side))
	w.str("kind", string(v.Kind))
	w.dec("amount", v.Amount)
	w.dec("price", v.Price)
	if !v.StopPrice.IsZero() {
		w.dec("stopPrice", v.StopPrice)
	}
	if !v.LimitPrice.IsZero() {
		w.dec("limitPrice", v.LimitPrice)
	}
	w.str("clientOrderId", v.ClientOrderID)
	if v.OcoID != 0 {
		w.int("ocoId", v.OcoID)
	}
	if v.IdempotencyKey != "" {
		w.str("idempotencyKey", v.IdempotencyKey)
	}
	if v.IdempotencyFingerprint != "" {
		w.str("idempotencyFingerprint", v.IdempotencyFingerprint)
	}
	return w.done(v)
}

// orderAcceptedJSON is json.Marshal(v).
func orderAcceptedJSON(v *domain.OrderAccepted) []byte {
	w := newJSONWriter(48)
	if v.ExchangeOrderID != "" {
		w.str("exchangeOrderId", v.ExchangeOrderID)
	}
	return w.done(v)
}

// orderFilledJSON is json.Marshal(v).
func orderFilledJSON(v *domain.OrderFilled) []byte {
	w := newJSONWriter(128)
	w.str("fillId", v.FillID)
	w.dec("price", v.Price)
	w.dec("quantity", v.Quantity)
	w.dec("fee", v.Fee)
	w.str("feeAsset", v.FeeAsset)
	if v.Seq != 0 {
		w.key("seq")
		w.b = strconv.AppendUint(w.b, v.Seq, 10)
	}
	if v.ExchangeTime != 0 {
		w.int("exchangeTime", v.ExchangeTime)
	}
	return w.done(v)
}
