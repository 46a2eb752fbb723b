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

// id reads a plain string into *dst when keep (the ids read models do
// not use are checked but left empty).
func (s *scanner) id(dst *string, keep bool) bool {
	x, ok := s.Str()
	if keep {
		*dst = string(x)
	}
	return ok
}

// decoding is how a decode keeps strings: interned in in, through last
// (nil: straight through in), the ids read models do not use only if
// keepIDs.
type decoding struct {
	in      jsonscan.Interner
	last    *lastStrings
	keepIDs bool
}

// hotPayload is what decodeHot needs of a payload type: inOrder reads it
// when it is exactly as encoding/json writes it, field reads one key's
// value of an object in any other order, both reporting false for
// anything they do not read; dropIDs empties the ids read models do not
// use.
type hotPayload[T any] interface {
	*T
	inOrder(b []byte, d decoding) bool
	field(s *scanner, k []byte, d decoding) bool
	dropIDs()
}

// decodeHot unmarshals b into v (zero on entry) exactly as json.Unmarshal
// would, the fastest way that reads it: as encoding/json writes it
// (straight into v: a Batch's slots are not even copied), else key by
// key, else through encoding/json. Small enough to inline, so that the
// common case is a direct call.
func decodeHot[T any, P hotPayload[T]](b []byte, v P, d decoding) error {
	if v.inOrder(b, d) {
		return nil
	}
	return decodeAnyOrder(b, v, d)
}

// decodeAnyOrder is decodeHot when b is not as encoding/json writes it.
func decodeAnyOrder[T any, P hotPayload[T]](b []byte, v P, d decoding) error {
	var r T
	s := newScanner(b)
	if s.Object(func(k []byte) bool { return P(&r).field(&s, k, d) }) {
		*v = r
		return nil
	}
	*v = *new(T)
	err := json.Unmarshal(b, v)
	if !d.keepIDs {
		v.dropIDs()
	}
	return err
}

// DecodeOrderRequested unmarshals an OrderRequested payload exactly as
// json.Unmarshal would. With an Interner (read models), strings are
// interned, and ClientOrderID, IdempotencyKey and IdempotencyFingerprint,
// which read models do not use, are checked but left empty.
func DecodeOrderRequested(b []byte, v *OrderRequested, in jsonscan.Interner) error {
	*v = OrderRequested{}
	return decodeHot(b, v, decoding{in: in, keepIDs: in == nil})
}

func (r *OrderRequested) dropIDs() {
	r.ClientOrderID, r.IdempotencyKey, r.IdempotencyFingerprint = "", "", ""
}

func (r *OrderRequested) field(s *scanner, k []byte, d decoding) bool {
	var ok bool
	var err error
	var x []byte
	switch string(k) {
	case "orderId":
		r.OrderID, ok = s.Int()
	case "ocoId":
		r.OcoID, ok = s.Int()
	case "exchange":
		x, ok = s.Str()
		r.Exchange = d.last.str(d.in, lastExchange, x)
	case "pair":
		x, ok = s.Str()
		r.Pair = d.last.str(d.in, lastPair, x)
	case "side":
		x, ok = s.Str()
		r.Side = Side(d.last.str(d.in, lastSide, x))
	case "kind":
		x, ok = s.Str()
		r.Kind = OrderKind(d.last.str(d.in, lastKind, x))
	case "clientOrderId":
		ok = s.id(&r.ClientOrderID, d.keepIDs)
	case "idempotencyKey":
		ok = s.id(&r.IdempotencyKey, d.keepIDs)
	case "idempotencyFingerprint":
		ok = s.id(&r.IdempotencyFingerprint, d.keepIDs)
	case "amount":
		r.Amount, ok, err = s.decimal()
	case "price":
		r.Price, ok, err = s.decimal()
	case "stopPrice":
		r.StopPrice, ok, err = s.decimal()
	case "limitPrice":
		r.LimitPrice, ok, err = s.decimal()
	}
	return ok && err == nil
}

// inOrder decodes an OrderRequested (r zero on entry) as encoding/json
// writes one: every key in the struct's order, without whitespace, the
// omitempty ones present or not. It reports false for anything else,
// which field then reads (and on to encoding/json): accepting only a
// subset of what field accepts, with the same value readers, gives the
// same result, found without looking each key up.
func (r *OrderRequested) inOrder(b []byte, d decoding) bool {
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
	r.Exchange = d.last.str(d.in, lastExchange, x)
	if x, ok = s.Str(); !ok || !s.Key(`,"side":`) {
		return false
	}
	r.Pair = d.last.str(d.in, lastPair, x)
	if x, ok = s.Str(); !ok || !s.Key(`,"kind":`) {
		return false
	}
	r.Side = Side(d.last.str(d.in, lastSide, x))
	if x, ok = s.Str(); !ok || !s.Key(`,"amount":`) {
		return false
	}
	r.Kind = OrderKind(d.last.str(d.in, lastKind, x))
	if r.Amount, ok, err = s.decimal(); !ok || err != nil || !s.Key(`,"price":`) {
		return false
	}
	if r.Price, ok, err = s.decimal(); !ok || err != nil {
		return false
	}
	return r.tailInOrder(&s, d.keepIDs)
}

// tailInOrder is inOrder after the price: the optional prices, the client
// order id, the optional OCO and idempotency fields, the end.
func (r *OrderRequested) tailInOrder(s *scanner, keepIDs bool) bool {
	var ok bool
	var err error
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
	if !s.Key(`,"clientOrderId":`) || !s.id(&r.ClientOrderID, keepIDs) {
		return false
	}
	if s.Key(`,"ocoId":`) {
		if r.OcoID, ok = s.Int(); !ok {
			return false
		}
	}
	if s.Key(`,"idempotencyKey":`) && !s.id(&r.IdempotencyKey, keepIDs) {
		return false
	}
	if s.Key(`,"idempotencyFingerprint":`) && !s.id(&r.IdempotencyFingerprint, keepIDs) {
		return false
	}
	return s.End()
}

// DecodeOrderFilled unmarshals an OrderFilled payload exactly as
// json.Unmarshal would. With an Interner, strings are interned and FillID,
// which read models do not use, is checked but left empty.
func DecodeOrderFilled(b []byte, v *OrderFilled, in jsonscan.Interner) error {
	*v = OrderFilled{}
	return decodeHot(b, v, decoding{in: in, keepIDs: in == nil})
}

func (f *OrderFilled) dropIDs() { f.FillID = "" }

func (f *OrderFilled) field(s *scanner, k []byte, d decoding) bool {
	var ok bool
	var err error
	switch string(k) {
	case "fillId":
		ok = s.id(&f.FillID, d.keepIDs)
	case "feeAsset":
		var x []byte
		x, ok = s.Str()
		f.FeeAsset = d.last.str(d.in, lastFeeAsset, x)
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
	return ok && err == nil
}

// inOrder is OrderRequested.inOrder for an OrderFilled.
func (f *OrderFilled) inOrder(b []byte, d decoding) bool {
	s := newScanner(b)
	var ok bool
	var err error
	if !s.Key(`{"fillId":`) || !s.id(&f.FillID, d.keepIDs) || !s.Key(`,"price":`) {
		return false
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
	x, ok := s.Str()
	if !ok {
		return false
	}
	f.FeeAsset = d.last.str(d.in, lastFeeAsset, x)
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

// DecodeOrderAccepted unmarshals an OrderAccepted payload exactly as
// json.Unmarshal would.
func DecodeOrderAccepted(b []byte, v *OrderAccepted) error {
	*v = OrderAccepted{}
	return decodeHot(b, v, decoding{keepIDs: true})
}

func (a *OrderAccepted) dropIDs() {}

func (a *OrderAccepted) field(s *scanner, k []byte, _ decoding) bool {
	return string(k) == "exchangeOrderId" && s.id(&a.ExchangeOrderID, true)
}

func (a *OrderAccepted) inOrder(b []byte, _ decoding) bool {
	s := newScanner(b)
	return s.Key(`{"exchangeOrderId":`) && s.id(&a.ExchangeOrderID, true) && s.End()
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
	d := decoding{in: in, keepIDs: true}
	var err error
	switch e.Type {
	case TypeOrderRequested:
		p := new(OrderRequested)
		err, e.decoded = decodeHot(e.Data, p, d), p
	case TypeOrderFilled:
		p := new(OrderFilled)
		err, e.decoded = decodeHot(e.Data, p, d), p
	case TypeOrderAccepted:
		p := new(OrderAccepted)
		err, e.decoded = decodeHot(e.Data, p, d), p
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
	d := decoding{in: pd.in, last: &pd.last, keepIDs: true}
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
	reqs, fills, accs := make(slab[OrderRequested], nr), make(slab[OrderFilled], nf), make(slab[OrderAccepted], na)
	for i := range evs {
		e := &evs[i]
		var err error
		switch e.Type {
		case TypeOrderRequested:
			p := reqs.next()
			err, e.decoded = decodeHot(e.Data, p, d), p
		case TypeOrderFilled:
			p := fills.next()
			err, e.decoded = decodeHot(e.Data, p, d), p
		case TypeOrderAccepted:
			p := accs.next()
			err, e.decoded = decodeHot(e.Data, p, d), p
		default:
			continue
		}
		if err != nil {
			e.decoded = nil
		}
	}
}

// slab hands out the elements of one allocation one at a time.
type slab[T any] []T

func (s *slab[T]) next() *T {
	p := &(*s)[0]
	*s = (*s)[1:]
	return p
}

// copyDecoded copies a Predecode result into v when v is of its type.
// The payload types hold no slices or maps, so the copy shares nothing.
func copyDecoded(decoded, v any) bool {
	switch p := v.(type) {
	case *OrderRequested:
		return copyAs(decoded, p)
	case *OrderFilled:
		return copyAs(decoded, p)
	case *OrderAccepted:
		return copyAs(decoded, p)
	}
	return false
}

// copyAs copies decoded into p when it is a *T.
func copyAs[T any](decoded any, p *T) bool {
	d, ok := decoded.(*T)
	if ok {
		*p = *d
	}
	return ok
}
