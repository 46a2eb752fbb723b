package domain

import (
	"encoding/binary"
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

// Interner returns one shared string per distinct byte sequence, so that
// the exchange, pair, side and fee asset of millions of events cost no
// allocation. Bounded: past maxInterned strings it allocates as usual. An
// Interner is not safe for concurrent use; nil interns nothing.
type Interner map[string]string

const maxInterned = 4096

func (in Interner) get(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in) < maxInterned {
		in[s] = s
	}
	return s
}

// str converts b: interned when in is not nil.
func (in Interner) str(b []byte) string {
	if in == nil {
		return string(b)
	}
	return in.get(b)
}

// lastStrings remembers, per field, the last few strings a replay's
// decoding interned: consecutive orders mostly share their exchange and
// fee asset, and draw their pair, side and kind from a few values, and
// comparing with those costs less than the Interner's lookup. Nil
// remembers nothing.
type lastStrings struct {
	s    [lastFields][lastKept]string
	next [lastFields]uint8 // the slot the next miss replaces
}

const lastKept = 4 // strings remembered per field

const (
	lastExchange = iota
	lastPair
	lastSide
	lastKind
	lastFeeAsset
	lastFields
)

// str is in.str(b), through the last strings of field f.
func (l *lastStrings) str(in Interner, f int, b []byte) string {
	if l == nil {
		return in.str(b)
	}
	kept := &l.s[f]
	for k := range kept {
		if kept[k] == string(b) {
			return kept[k]
		}
	}
	s := in.str(b)
	kept[l.next[f]] = s
	l.next[f] = (l.next[f] + 1) % lastKept
	return s
}

// scanner walks one flat JSON object, on the shared lexer.
type scanner struct{ jsonscan.JSONLexer }

// punct skips whitespace and reads the punctuation c.
func (s *scanner) punct(c byte) bool {
	s.SkipSpace()
	return s.Byte(c)
}

// str skips whitespace and reads a plain string (JSONLexer.PlainString):
// no escapes, control characters or non-ASCII bytes.
func (s *scanner) str() ([]byte, bool) {
	s.SkipSpace()
	return s.PlainString()
}

// int reads -?(0|[1-9][0-9]*) that fits an int64, followed by a delimiter.
func (s *scanner) int() (int64, bool) {
	s.SkipSpace()
	j := s.I
	neg := false
	if j < len(s.B) && s.B[j] == '-' {
		neg = true
		j++
	}
	start := j
	var v uint64
	for j < len(s.B) && s.B[j] >= '0' && s.B[j] <= '9' {
		if j-start >= 18 {
			return 0, false // let encoding/json judge long numbers
		}
		v = v*10 + uint64(s.B[j]-'0')
		j++
	}
	if j == start || (s.B[start] == '0' && j-start > 1) {
		return 0, false
	}
	if j < len(s.B) && s.B[j] != ',' && s.B[j] != '}' && s.B[j] != ' ' && s.B[j] != '\t' && s.B[j] != '\n' && s.B[j] != '\r' {
		return 0, false
	}
	s.I = j
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// uint reads what int reads without a minus sign: encoding/json refuses
// any negative number for an unsigned field, -0 included.
func (s *scanner) uint() (uint64, bool) {
	s.SkipSpace()
	if s.I < len(s.B) && s.B[s.I] == '-' {
		return 0, false
	}
	n, ok := s.int()
	return uint64(n), ok
}

func (s *scanner) decimal() (decimal.Decimal, bool, error) {
	v, ok := s.str()
	if !ok {
		return decimal.Zero, false, nil
	}
	d, err := decimal.ParseDecimalBytes(v)
	return d, true, err
}

// key reads the literal l (a key with its quotes and colon, and the comma
// before it) at the current position, with no whitespace around.
func (s *scanner) key(l string) bool {
	if len(s.B)-s.I < len(l) {
		return false
	}
	b := s.B[s.I : s.I+len(l)]
	if n := len(l); n >= 8 && n <= 16 {
		// Two overlapping words instead of a call to compare bytes.
		if binary.LittleEndian.Uint64(b) != word(l) || binary.LittleEndian.Uint64(b[n-8:]) != word(l[n-8:]) {
			return false
		}
	} else if string(b) != l {
		return false
	}
	s.I += len(l)
	return true
}

// word is the first 8 bytes of l as a little-endian number.
func word(l string) uint64 {
	_ = l[7]
	return uint64(l[0]) | uint64(l[1])<<8 | uint64(l[2])<<16 | uint64(l[3])<<24 |
		uint64(l[4])<<32 | uint64(l[5])<<40 | uint64(l[6])<<48 | uint64(l[7])<<56
}

// end reports whether the object closes at the current position and
// nothing follows.
func (s *scanner) end() bool {
	return s.I == len(s.B)-1 && s.B[s.I] == '}'
}

// object calls field for each key until the closing brace; field returns
// false when it cannot handle the key or its value. object reports whether
// the whole input was one well-formed object handled by field.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.punct('{') {
		return false
	}
	if s.punct('}') {
		s.SkipSpace()
		return s.AtEnd()
	}
	for {
		key, ok := s.str()
		if !ok || !s.punct(':') || !field(key) {
			return false
		}
		if s.punct(',') {
			continue
		}
		if !s.punct('}') {
			return false
		}
		s.SkipSpace()
		return s.AtEnd()
	}
}

// DecodeOrderRequested unmarshals an OrderRequested payload exactly as
// json.Unmarshal would. With an Interner (read models), strings are
// interned, and ClientOrderID, IdempotencyKey and IdempotencyFingerprint,
// which read models do not use, are checked but left empty.
func DecodeOrderRequested(b []byte, v *OrderRequested, in Interner) error {
	return decodeOrderRequested(b, v, in, nil, in == nil)
}

// decodeOrderRequested is DecodeOrderRequested that keeps ClientOrderID,
// IdempotencyKey and IdempotencyFingerprint if keepIDs, and interns
// through last (nil: straight through in).
func decodeOrderRequested(b []byte, v *OrderRequested, in Interner, last *lastStrings, keepIDs bool) error {
	var r OrderRequested
	if requestedInOrder(b, &r, in, last, keepIDs) {
		*v = r
		return nil
	}
	r = OrderRequested{}
	var derr error
	s := scanner{jsonscan.JSONLexer{B: b}}
	ok := s.object(func(k []byte) bool {
		var ok bool
		var err error
		switch string(k) {
		case "orderId":
			r.OrderID, ok = s.int()
		case "ocoId":
			r.OcoID, ok = s.int()
		case "exchange":
			var x []byte
			x, ok = s.str()
			r.Exchange = last.str(in, lastExchange, x)
		case "pair":
			var x []byte
			x, ok = s.str()
			r.Pair = last.str(in, lastPair, x)
		case "side":
			var x []byte
			x, ok = s.str()
			r.Side = Side(last.str(in, lastSide, x))
		case "kind":
			var x []byte
			x, ok = s.str()
			r.Kind = OrderKind(last.str(in, lastKind, x))
		case "clientOrderId":
			var x []byte
			x, ok = s.str()
			if keepIDs {
				r.ClientOrderID = string(x)
			}
		case "idempotencyKey":
			var x []byte
			x, ok = s.str()
			if keepIDs {
				r.IdempotencyKey = string(x)
			}
		case "idempotencyFingerprint":
			var x []byte
			x, ok = s.str()
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
func requestedInOrder(b []byte, r *OrderRequested, in Interner, last *lastStrings, keepIDs bool) bool {
	s := scanner{jsonscan.JSONLexer{B: b}}
	var ok bool
	var err error
	var x []byte
	if !s.key(`{"orderId":`) {
		return false
	}
	if r.OrderID, ok = s.int(); !ok || !s.key(`,"exchange":`) {
		return false
	}
	if x, ok = s.str(); !ok || !s.key(`,"pair":`) {
		return false
	}
	r.Exchange = last.str(in, lastExchange, x)
	if x, ok = s.str(); !ok || !s.key(`,"side":`) {
		return false
	}
	r.Pair = last.str(in, lastPair, x)
	if x, ok = s.str(); !ok || !s.key(`,"kind":`) {
		return false
	}
	r.Side = Side(last.str(in, lastSide, x))
	if x, ok = s.str(); !ok || !s.key(`,"amount":`) {
		return false
	}
	r.Kind = OrderKind(last.str(in, lastKind, x))
	if r.Amount, ok, err = s.decimal(); !ok || err != nil || !s.key(`,"price":`) {
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
	if s.key(`,"stopPrice":`) {
		if r.StopPrice, ok, err = s.decimal(); !ok || err != nil {
			return false
		}
	}
	if s.key(`,"limitPrice":`) {
		if r.LimitPrice, ok, err = s.decimal(); !ok || err != nil {
			return false
		}
	}
	if !s.key(`,"clientOrderId":`) {
		return false
	}
	if x, ok = s.str(); !ok {
		return false
	}
	if keepIDs {
		r.ClientOrderID = string(x)
	}
	if s.key(`,"ocoId":`) {
		if r.OcoID, ok = s.int(); !ok {
			return false
		}
	}
	if s.key(`,"idempotencyKey":`) {
		if x, ok = s.str(); !ok {
			return false
		}
		if keepIDs {
			r.IdempotencyKey = string(x)
		}
	}
	if s.key(`,"idempotencyFingerprint":`) {
		if x, ok = s.str(); !ok {
			return false
		}
		if keepIDs {
			r.IdempotencyFingerprint = string(x)
		}
	}
	return s.end()
}

// filledInOrder is requestedInOrder for an OrderFilled.
func filledInOrder(b []byte, f *OrderFilled, in Interner, last *lastStrings, keepIDs bool) bool {
	s := scanner{jsonscan.JSONLexer{B: b}}
	var ok bool
	var err error
	var x []byte
	if !s.key(`{"fillId":`) {
		return false
	}
	if x, ok = s.str(); !ok || !s.key(`,"price":`) {
		return false
	}
	if keepIDs {
		f.FillID = string(x)
	}
	if f.Price, ok, err = s.decimal(); !ok || err != nil || !s.key(`,"quantity":`) {
		return false
	}
	if f.Quantity, ok, err = s.decimal(); !ok || err != nil || !s.key(`,"fee":`) {
		return false
	}
	if f.Fee, ok, err = s.decimal(); !ok || err != nil || !s.key(`,"feeAsset":`) {
		return false
	}
	if x, ok = s.str(); !ok {
		return false
	}
	f.FeeAsset = last.str(in, lastFeeAsset, x)
	if s.key(`,"seq":`) {
		if f.Seq, ok = s.uint(); !ok {
			return false
		}
	}
	if s.key(`,"exchangeTime":`) {
		if f.ExchangeTime, ok = s.int(); !ok {
			return false
		}
	}
	return s.end()
}

// DecodeOrderFilled unmarshals an OrderFilled payload exactly as
// json.Unmarshal would. With an Interner, strings are interned and FillID,
// which read models do not use, is checked but left empty.
func DecodeOrderFilled(b []byte, v *OrderFilled, in Interner) error {
	return decodeOrderFilled(b, v, in, nil, in == nil)
}

// decodeOrderFilled is DecodeOrderFilled that keeps FillID if keepIDs, and
// interns through last (nil: straight through in).
func decodeOrderFilled(b []byte, v *OrderFilled, in Interner, last *lastStrings, keepIDs bool) error {
	var f OrderFilled
	if filledInOrder(b, &f, in, last, keepIDs) {
		*v = f
		return nil
	}
	f = OrderFilled{}
	var derr error
	s := scanner{jsonscan.JSONLexer{B: b}}
	ok := s.object(func(k []byte) bool {
		var ok bool
		var err error
		switch string(k) {
		case "fillId":
			var x []byte
			x, ok = s.str()
			if keepIDs {
				f.FillID = string(x)
			}
		case "feeAsset":
			var x []byte
			x, ok = s.str()
			f.FeeAsset = last.str(in, lastFeeAsset, x)
		case "price":
			f.Price, ok, err = s.decimal()
		case "quantity":
			f.Quantity, ok, err = s.decimal()
		case "fee":
			f.Fee, ok, err = s.decimal()
		case "seq":
			f.Seq, ok = s.uint()
		case "exchangeTime":
			f.ExchangeTime, ok = s.int()
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
	if s := (scanner{jsonscan.JSONLexer{B: b}}); s.key(`{"exchangeOrderId":`) {
		if x, ok := s.str(); ok && s.end() {
			*v = OrderAccepted{ExchangeOrderID: string(x)}
			return nil
		}
	}
	s := scanner{jsonscan.JSONLexer{B: b}}
	ok := s.object(func(k []byte) bool {
		if string(k) != "exchangeOrderId" {
			return false
		}
		x, ok := s.str()
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
func decodeFast(b []byte, v any, in Interner) (bool, error) {
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
func (e *Event) Predecode(in Interner) {
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

// predecodeBatch is Predecode on every event of evs, with the payloads of
// each type allocated together (one allocation per type per batch instead
// of one per event). Nothing keeps a payload past its batch: Payload's
// callers read it in place, Decode copies it.
func predecodeBatch(evs []Event, in Interner, last *lastStrings) {
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
