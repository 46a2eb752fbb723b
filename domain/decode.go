package domain

import (
	"encoding/json"
	"unicode/utf8"
)

// The replay target (≥ 500,000 events/s, README "Benchmarks") leaves no room for
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

// lastStrings remembers, per field, the last string a replay's decoding
// interned: consecutive orders mostly share their exchange, pair, side,
// kind and fee asset, and comparing with the last one costs less than the
// Interner's lookup. Nil remembers nothing.
type lastStrings [lastFields]string

const (
	lastExchange = iota
	lastPair
	lastSide
	lastKind
	lastFeeAsset
	lastFields
)

// str is in.str(b), through the last string of field f.
func (l *lastStrings) str(in Interner, f int, b []byte) string {
	if l == nil {
		return in.str(b)
	}
	if l[f] == string(b) {
		return l[f]
	}
	s := in.str(b)
	l[f] = s
	return s
}

// scanner walks one flat JSON object.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) byte(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes, control characters or non-ASCII bytes.
func (s *scanner) str() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		if c == '"' {
			s.i = j + 1
			return s.b[start:j], true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return nil, false
}

// int reads -?(0|[1-9][0-9]*) that fits an int64, followed by a delimiter.
func (s *scanner) int() (int64, bool) {
	s.ws()
	j := s.i
	neg := false
	if j < len(s.b) && s.b[j] == '-' {
		neg = true
		j++
	}
	start := j
	var v uint64
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		if j-start >= 18 {
			return 0, false // let encoding/json judge long numbers
		}
		v = v*10 + uint64(s.b[j]-'0')
		j++
	}
	if j == start || (s.b[start] == '0' && j-start > 1) {
		return 0, false
	}
	if j < len(s.b) && s.b[j] != ',' && s.b[j] != '}' && s.b[j] != ' ' && s.b[j] != '\t' && s.b[j] != '\n' && s.b[j] != '\r' {
		return 0, false
	}
	s.i = j
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

func (s *scanner) decimal() (Decimal, bool, error) {
	v, ok := s.str()
	if !ok {
		return 0, false, nil
	}
	d, err := parseDecimal(v)
	return d, true, err
}

// object calls field for each key until the closing brace; field returns
// false when it cannot handle the key or its value. object reports whether
// the whole input was one well-formed object handled by field.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		s.ws()
		return s.i == len(s.b)
	}
	for {
		key, ok := s.str()
		if !ok || !s.byte(':') || !field(key) {
			return false
		}
		if s.byte(',') {
			continue
		}
		if !s.byte('}') {
			return false
		}
		s.ws()
		return s.i == len(s.b)
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
	var derr error
	s := scanner{b: b}
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
	var derr error
	s := scanner{b: b}
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
			var n int64
			n, ok = s.int()
			ok = ok && n >= 0
			f.Seq = uint64(n)
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
	s := scanner{b: b}
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
			p := &reqs[0]
			reqs = reqs[1:]
			err, e.decoded = decodeOrderRequested(e.Data, p, in, last, true), p
		case TypeOrderFilled:
			p := &fills[0]
			fills = fills[1:]
			err, e.decoded = decodeOrderFilled(e.Data, p, in, last, true), p
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
