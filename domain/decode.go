package domain

import (
	"encoding/json"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// The replay target (≥ 500,000 events/s, docs/benchmarks.md) leaves no room for
// encoding/json's reflection on the payloads that make up most of a trading
// log. DecodeOrderRequested, DecodeOrderFilled and DecodeOrderAccepted read
// the flat objects this package writes with a small scanner, and hand
// anything unusual (escapes, non-ASCII, unknown or differently cased keys,
// nulls, nested values, numbers that are not plain integers where integers
// go) to encoding/json, so the result is always exactly what json.Unmarshal
// gives. FuzzDecode checks that claim. Event.Decode takes these paths by
// itself, so every projection gets them.

// lastStrings remembers, per field, the last few strings a replay's
// decoding interned (jsonscan.Recent). Nil remembers nothing.
type lastStrings [lastFields]jsonscan.Recent

const (
	lastExchange = iota
	lastPair
	lastSide
	lastKind
	lastFeeAsset
	lastFields
)

// str is in.Str(b), through the last strings of field f. Small enough
// to inline: one call per string, as when it held the loop itself.
func (l *lastStrings) str(in jsonscan.Interner, f int, b []byte) string {
	var r *jsonscan.Recent
	if l != nil {
		r = &l[f]
	}
	return r.Str(in, b)
}

// scanner is jsonscan.Scanner that also reads a Decimal.
type scanner struct{ jsonscan.Scanner }

func newScanner(b []byte) scanner {
	return scanner{jsonscan.Scanner{JSONLexer: jsonscan.JSONLexer{B: b}}}
}

// decimal skips whitespace and reads a Decimal in a plain string; ok is
// false when there is no plain string, err set when it is not a Decimal.
func (s *scanner) decimal() (decimal.Decimal, bool, error) {
	v, ok := s.Str()
	if !ok {
		return decimal.Zero, false, nil
	}
	d, err := decimal.ParseDecimalBytes(v)
	return d, true, err
}

// DecodeOrderRequested unmarshals an OrderRequested payload exactly as
// json.Unmarshal would. With an Interner (read models), strings are
// interned, and ClientOrderID, IdempotencyKey and IdempotencyFingerprint,
// which read models do not use, are checked but left empty.
func DecodeOrderRequested(b []byte, v *OrderRequested, in jsonscan.Interner) error {
	return decodeOrderRequested(b, v, in, nil, in == nil)
}

// decodeOrderRequested is DecodeOrderRequested that keeps ClientOrderID,
// IdempotencyKey and IdempotencyFingerprint if keepIDs, and interns
// through last (nil: straight through in).
func decodeOrderRequested(b []byte, v *OrderRequested, in jsonscan.Interner, last *lastStrings, keepIDs bool) error {
	var r OrderRequested
	if requestedInOrder(b, &r, in, last, keepIDs) {
		*v = r
		return nil
	}
	r = OrderRequested{}
	var derr error
	s := newScanner(b)
	ok := s.Object(func(k []byte) bool {
		var ok bool
		var err error
		switch string(k) {
		case "orderId":
			r.OrderID, ok = s.Int()
		case "ocoId":
			r.OcoID, ok = s.Int()
		case "exchange":
			var x []byte
			x, ok = s.Str()
			r.Exchange = last.str(in, lastExchange, x)
		case "pair":
			var x []byte
			x, ok = s.Str()
			r.Pair = last.str(in, lastPair, x)
		case "side":
			var x []byte
			x, ok = s.Str()
			r.Side = Side(last.str(in, lastSide, x))
		case "kind":
			var x []byte
			x, ok = s.Str()
			r.Kind = OrderKind(last.str(in, lastKind, x))
		case "clientOrderId":
			var x []byte
			x, ok = s.Str()
			if keepIDs {
				r.ClientOrderID = string(x)
			}
		case "idempotencyKey":
			var x []byte
			x, ok = s.Str()
			if keepIDs {
				r.IdempotencyKey = string(x)
			}
		case "idempotencyFingerprint":
			var x []byte
			x, ok = s.Str()
			if keepIDs {
				r.IdempotencyFingerprint = string(x)
			}
		case "amount":
			r.Amount, ok, err = s.decimal()
		case "price":
			r.Price, ok, err = s.decimal()
		case "stopPrice":
			r.StopPrice, ok, err = s.decimal()
		case "limitPrice":
			r.LimitPrice, ok, err = s.decimal()
		}
		if err != nil && derr == nil {
			derr = err
		}
		return ok
	})
	if !ok || derr != nil {
		*v = OrderRequested{}
		err := json.Unmarshal(b, v)
		if !keepIDs {
			v.ClientOrderID, v.IdempotencyKey, v.IdempotencyFingerprint = "", "", ""
		}
		return err
	}
	*v = r
	return nil
}

// requestedInOrder decodes b into r (zero on entry) when it is an
// OrderRequested as encoding/json writes one: every key in the struct's
// order, without whitespace, the omitempty ones present or not. It
// reports false for anything else, which the general scanner then reads
// (and on to encoding/json): accepting only a subset of what the scanner
// accepts, with the same value readers, gives the same result, found
// without looking each key up.
func requestedInOrder(b []byte, r *OrderRequested, in jsonscan.Interner, last *lastStrings, keepIDs bool) bool {
	s := newScanner(b)
	var ok bool
	var err error
	var x []byte
	if !s.Key(`{"orderId":`) {
		return false
	}
	if r.OrderID, ok = s.Int(); !ok || !s.Key(`,"exchange":`) {
		return false
	}
	if x, ok = s.Str(); !ok || !s.Key(`,"pair":`) {
		return false
	}
	r.Exchange = last.str(in, lastExchange, x)
	if x, ok = s.Str(); !ok || !s.Key(`,"side":`) {
		return false
	}
	r.Pair = last.str(in, lastPair, x)
	if x, ok = s.Str(); !ok || !s.Key(`,"kind":`) {
		return false
	}
	r.Side = Side(last.str(in, lastSide, x))
	if x, ok = s.Str(); !ok || !s.Key(`,"amount":`) {
		return false
	}
	r.Kind = OrderKind(last.str(in, lastKind, x))
	if r.Amount, ok, err = s.decimal(); !ok || err != nil || !s.Key(`,"price":`) {
		return false
	}
	if r.Price, ok, err = s.decimal(); !ok || err != nil {
		return false
	}
	return requestedTail(&s, r, keepIDs)
}

// requestedTail is requestedInOrder after the price: the optional prices,
// the client order id, the optional OCO and idempotency fields, the end.
func requestedTail(s *scanner, r *OrderRequested, keepIDs bool) bool {
	var ok bool
	var err error
	var x []byte
	if s.Key(`,"stopPrice":`) {
		if r.StopPrice, ok, err = s.decimal(); !ok || err != nil {
			return false
		}
	}
	if s.Key(`,"limitPrice":`) {
		if r.LimitPrice, ok, err = s.decimal(); !ok || err != nil {
			return false
		}
	}
	if !s.Key(`,"clientOrderId":`) {
		return false
	}
	if x, ok = s.Str(); !ok {
		return false
	}
	if keepIDs {
		r.ClientOrderID = string(x)
	}
	if s.Key(`,"ocoId":`) {
		if r.OcoID, ok = s.Int(); !ok {
			return false
		}
	}
	if s.Key(`,"idempotencyKey":`) {
		if x, ok = s.Str(); !ok {
			return false
		}
		if keepIDs {
			r.IdempotencyKey = string(x)
		}
	}
	if s.Key(`,"idempotencyFingerprint":`) {
		if x, ok = s.Str(); !ok {
			return false
		}
		if keepIDs {
			r.IdempotencyFingerprint = string(x)
		}
	}
	return s.End()
}

// filledInOrder is requestedInOrder for an OrderFilled.
func filledInOrder(b []byte, f *OrderFilled, in jsonscan.Interner, last *lastStrings, keepIDs bool) bool {
	s := newScanner(b)
	var ok bool
	var err error
	var x []byte
	if !s.Key(`{"fillId":`) {
		return false
	}
	if x, ok = s.Str(); !ok || !s.Key(`,"price":`) {
		return false
	}
	if keepIDs {
		f.FillID = string(x)
	}
	if f.Price, ok, err = s.decimal(); !ok || err != nil || !s.Key(`,"quantity":`) {
		return false
	}
	if f.Quantity, ok, err = s.decimal(); !ok || err != nil || !s.Key(`,"fee":`) {
		return false
	}
	if f.Fee, ok, err = s.decimal(); !ok || err != nil || !s.Key(`,"feeAsset":`) {
		return false
	}
	if x, ok = s.Str(); !ok {
		return false
	}
	f.FeeAsset = last.str(in, lastFeeAsset, x)
	if s.Key(`,"seq":`) {
		if f.Seq, ok = s.Uint(); !ok {
			return false
		}
	}
	if s.Key(`,"exchangeTime":`) {
		if f.ExchangeTime, ok = s.Int(); !ok {
			return false
		}
	}
	return s.End()
}

// DecodeOrderFilled unmarshals an OrderFilled payload exactly as
// json.Unmarshal would. With an Interner, strings are interned and FillID,
// which read models do not use, is checked but left empty.
func DecodeOrderFilled(b []byte, v *OrderFilled, in jsonscan.Interner) error {
	return decodeOrderFilled(b, v, in, nil, in == nil)
}

// decodeOrderFilled is DecodeOrderFilled that keeps FillID if keepIDs, and
// interns through last (nil: straight through in).
func decodeOrderFilled(b []byte, v *OrderFilled, in jsonscan.Interner, last *lastStrings, keepIDs bool) error {
	var f OrderFilled
	if filledInOrder(b, &f, in, last, keepIDs) {
		*v = f
		return nil
	}
	f = OrderFilled{}
	var derr error
	s := newScanner(b)
	ok := s.Object(func(k []byte) bool {
		var ok bool
		var err error
		switch string(k) {
		case "fillId":
			var x []byte
			x, ok = s.Str()
			if keepIDs {
				f.FillID = string(x)
			}
		case "feeAsset":
			var x []byte
			x, ok = s.Str()
			f.FeeAsset = last.str(in, lastFeeAsset, x)
		case "price":
			f.Price, ok, err = s.decimal()
		case "quantity":
			f.Quantity, ok, err = s.decimal()
		case "fee":
			f.Fee, ok, err = s.decimal()
		case "seq":
			f.Seq, ok = s.Uint()
		case "exchangeTime":
			f.ExchangeTime, ok = s.Int()
		}
		if err != nil && derr == nil {
			derr = err
		}
		return ok
	})
	if !ok || derr != nil {
		*v = OrderFilled{}
		err := json.Unmarshal(b, v)
		if !keepIDs {
			v.FillID = ""
		}
		return err
	}
	*v = f
	return nil
}

// DecodeOrderAccepted unmarshals an OrderAccepted payload exactly as
// json.Unmarshal would.
func DecodeOrderAccepted(b []byte, v *OrderAccepted) error {
	var a OrderAccepted
	// As encoding/json writes it (see requestedInOrder), else the scanner.
	if s := newScanner(b); s.Key(`{"exchangeOrderId":`) {
		if x, ok := s.Str(); ok && s.End() {
			*v = OrderAccepted{ExchangeOrderID: string(x)}
			return nil
		}
	}
	s := newScanner(b)
	ok := s.Object(func(k []byte) bool {
		if string(k) != "exchangeOrderId" {
			return false
		}
		x, ok := s.Str()
		a.ExchangeOrderID = string(x)
		return ok
	})
	if !ok {
		*v = OrderAccepted{}
		return json.Unmarshal(b, v)
	}
	*v = a
	return nil
}

// decodeFast unmarshals the hot payload types without reflection; it
// reports false for other types.
func decodeFast(b []byte, v any, in jsonscan.Interner) (bool, error) {
	switch p := v.(type) {
	case *OrderRequested:
		return true, DecodeOrderRequested(b, p, in)
	case *OrderFilled:
		return true, DecodeOrderFilled(b, p, in)
	case *OrderAccepted:
		return true, DecodeOrderAccepted(b, p)
	}
	return false, nil
}

// Predecode decodes the payload of the hot event types (OrderRequested,
// OrderFilled, OrderAccepted) once, interning its exchange, pair, side,
// kind and fee asset in in and keeping every field, so that
// every projection's Decode of this event copies the result instead of
// parsing the JSON again. A replay calls it in its reading goroutine, before
// any projection sees the event; it must not be called on an event another
// goroutine may be reading. A payload that does not decode is left for
// Decode to report.
func (e *Event) Predecode(in jsonscan.Interner) {
	var err error
	switch e.Type {
	case TypeOrderRequested:
		p := new(OrderRequested)
		err, e.decoded = decodeOrderRequested(e.Data, p, in, nil, true), p
	case TypeOrderFilled:
		p := new(OrderFilled)
		err, e.decoded = decodeOrderFilled(e.Data, p, in, nil, true), p
	case TypeOrderAccepted:
		p := new(OrderAccepted)
		err, e.decoded = DecodeOrderAccepted(e.Data, p), p
	default:
		return
	}
	if err != nil {
		e.decoded = nil
	}
}

// Predecoder Predecodes a replay's batches, sharing strings across them;
// not safe for concurrent use.
type Predecoder struct {
	in   jsonscan.Interner
	last lastStrings
}

// NewPredecoder returns a Predecoder for one replay.
func NewPredecoder() *Predecoder { return &Predecoder{in: jsonscan.Interner{}} }

// Batch is Predecode on every event of evs, with the payloads of each type
// allocated together (one allocation per type per batch instead of one
// per event). Nothing keeps a payload past its batch: Payload's callers
// read it in place, Decode copies it.
func (pd *Predecoder) Batch(evs []Event) {
	in, last := pd.in, &pd.last
	var nr, nf, na int
	for i := range evs {
		switch evs[i].Type {
		case TypeOrderRequested:
			nr++
		case TypeOrderFilled:
			nf++
		case TypeOrderAccepted:
			na++
		}
	}
	reqs, fills, accs := make([]OrderRequested, nr), make([]OrderFilled, nf), make([]OrderAccepted, na)
	for i := range evs {
		e := &evs[i]
		var err error
		switch e.Type {
		case TypeOrderRequested:
			// Straight into the zeroed slot when in order: no copy.
			p := &reqs[0]
			reqs = reqs[1:]
			if !requestedInOrder(e.Data, p, in, last, true) {
				*p = OrderRequested{}
				err = decodeOrderRequested(e.Data, p, in, last, true)
			}
			e.decoded = p
		case TypeOrderFilled:
			p := &fills[0]
			fills = fills[1:]
			if !filledInOrder(e.Data, p, in, last, true) {
				*p = OrderFilled{}
				err = decodeOrderFilled(e.Data, p, in, last, true)
			}
			e.decoded = p
		case TypeOrderAccepted:
			p := &accs[0]
			accs = accs[1:]
			err, e.decoded = DecodeOrderAccepted(e.Data, p), p
		default:
			continue
		}
		if err != nil {
			e.decoded = nil
		}
	}
}

// copyDecoded copies a Predecode result into v when v is of its type.
// The payload types hold no slices or maps, so the copy shares nothing.
func copyDecoded(decoded, v any) bool {
	switch p := v.(type) {
	case *OrderRequested:
		d, ok := decoded.(*OrderRequested)
		if ok {
			*p = *d
		}
		return ok
	case *OrderFilled:
		d, ok := decoded.(*OrderFilled)
		if ok {
			*p = *d
		}
		return ok
	case *OrderAccepted:
		d, ok := decoded.(*OrderAccepted)
		if ok {
			*p = *d
		}
		return ok
	}
	return false
}
