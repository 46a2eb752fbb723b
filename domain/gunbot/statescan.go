package gunbot

import (
	"encoding/json"

	"github.com/tradeledger/tradeledger/domain"
)

// scanStateOrders reads a state file's orders without encoding/json's
// reflection, for the plain shape Gunbot writes: valid JSON whose top-level
// object has one "orders" key holding an array of objects whose keys are
// among time, pair, type, rate, amount, id and cost, spelled so and each at
// most once, numbers as number literals, strings without escapes, ids
// numbers, strings or null. It returns ok false for anything else, and the
// caller decodes with encoding/json instead: what it returns is what
// decodeStateOrders' Decoder would have decoded.
func scanStateOrders(b []byte) (orders []decodedOrder, ok bool) {
	if !json.Valid(b) {
		return nil, false
	}
	// One copy of the file as a string: every field is a substring of it.
	s := stateScanner{JSONLexer: domain.JSONLexer{B: b}, text: string(b)}
	s.SkipSpace()
	if !s.Byte('{') {
		return nil, false
	}
	found := false
	for first := true; ; first = false {
		key, end, ok := s.member(first)
		if !ok {
			return nil, false
		}
		if end {
			break
		}
		if !equalFoldASCII(key, "orders") { // non-ASCII keys are not plain: encoding/json folds some to ASCII
			if !s.SkipValue() {
				return nil, false
			}
			continue
		}
		if key != "orders" || found {
			return nil, false
		}
		found = true
		if orders, ok = s.orders(); !ok {
			return nil, false
		}
	}
	return orders, true
}

// stateScanner reads a state file on the shared lexer; the strings it
// returns are substrings of text, one copy of the file.
type stateScanner struct {
	domain.JSONLexer
	text string // B as a string
}

// spaceThen skips spaces and reports true (for use in conditions).
func (s *stateScanner) spaceThen() bool { s.SkipSpace(); return true }

// member reads the next member's key and colon in an object whose '{' is
// read, and the spaces around them: end is true at the object's '}', ok
// false when what follows is not a plain member (first: no comma before it).
func (s *stateScanner) member(first bool) (key string, end, ok bool) {
	s.SkipSpace()
	if s.Byte('}') {
		return "", true, true
	}
	if !first && !(s.Byte(',') && s.spaceThen()) {
		return "", false, false
	}
	key, plain := s.str()
	if !plain {
		return "", false, false
	}
	s.SkipSpace()
	if !s.Byte(':') {
		return "", false, false
	}
	s.SkipSpace()
	return key, false, true
}

// str reads a plain string (domain.JSONLexer.PlainString: no escapes,
// control characters or non-ASCII bytes, which encoding/json would
// replace or fold); plain is false for any other value.
func (s *stateScanner) str() (v string, plain bool) {
	raw, ok := s.PlainString()
	if !ok {
		return "", false
	}
	end := s.I - 1 // the closing quote
	return s.text[end-len(raw) : end], true
}

// number reads a number literal.
func (s *stateScanner) number() (json.Number, bool) {
	start := s.I
	if _, ok := s.Number(); !ok {
		return "", false
	}
	return json.Number(s.text[start:s.I]), true
}

// orders reads the orders array (null gives none).
func (s *stateScanner) orders() ([]decodedOrder, bool) {
	if s.Literal("null") {
		return nil, true
	}
	if !s.Byte('[') {
		return nil, false
	}
	out := make([]decodedOrder, 0, len(s.B)/128)
	for first := true; ; first = false {
		s.SkipSpace()
		if s.Byte(']') {
			return out, true
		}
		if !first && !(s.Byte(',') && s.spaceThen()) {
			return nil, false
		}
		o, ok := s.order()
		if !ok {
			return nil, false
		}
		out = append(out, decodedOrder{stateOrder: o})
	}
}

// orderKeys are the keys an order object may have, each at most once.
var orderKeys = [...]string{"time", "pair", "type", "rate", "amount", "id", "cost"}

// order reads one order object.
func (s *stateScanner) order() (o stateOrder, ok bool) {
	if !s.Byte('{') {
		return o, false
	}
	var seen [len(orderKeys)]bool
	for first := true; ; first = false {
		key, end, ok := s.member(first)
		if !ok {
			return o, false
		}
		if end {
			return o, true
		}
		k := -1
		for j, name := range orderKeys {
			if key == name {
				k = j
			}
		}
		if k < 0 || seen[k] {
			return o, false
		}
		seen[k] = true
		if !s.orderField(&o, orderKeys[k]) {
			return o, false
		}
	}
}

// orderField reads the value of o's field key: pair and type plain
// strings, id a plain string, a number or null, the others numbers.
func (s *stateScanner) orderField(o *stateOrder, key string) (ok bool) {
	switch key {
	case "pair":
		o.Pair, ok = s.str()
	case "type":
		o.Type, ok = s.str()
	case "id":
		o.ID, ok = s.orderID()
	case "time":
		o.Time, ok = s.number()
	case "rate":
		o.Rate, ok = s.number()
	case "amount":
		o.Amount, ok = s.number()
	case "cost":
		o.Cost, ok = s.number()
	}
	return ok
}

// orderID reads an order's id: a plain string, a number, or null (nil).
func (s *stateScanner) orderID() (any, bool) {
	switch {
	case s.I < len(s.B) && s.B[s.I] == '"':
		return s.str()
	case s.Literal("null"):
		return nil, true
	}
	return s.number()
}

// equalFoldASCII is strings.EqualFold for an ASCII t.
func equalFoldASCII(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
