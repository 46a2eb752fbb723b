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
		s.SkipSpace()
		if s.Byte('}') {
			break
		}
		if !first && !(s.Byte(',') && s.spaceThen()) {
			return nil, false
		}
		key, plain := s.str()
		if !plain {
			return nil, false
		}
		s.SkipSpace()
		if !s.Byte(':') {
			return nil, false
		}
		s.SkipSpace()
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

// order reads one order object.
func (s *stateScanner) order() (o stateOrder, ok bool) {
	if !s.Byte('{') {
		return o, false
	}
	var seen [7]bool
	for first := true; ; first = false {
		s.SkipSpace()
		if s.Byte('}') {
			return o, true
		}
		if !first && !(s.Byte(',') && s.spaceThen()) {
			return o, false
		}
		key, plain := s.str()
		if !plain {
			return o, false
		}
		s.SkipSpace()
		if !s.Byte(':') {
			return o, false
		}
		s.SkipSpace()
		k := -1
		for j, name := range [...]string{"time", "pair", "type", "rate", "amount", "id", "cost"} {
			if key == name {
				k = j
			}
		}
		if k < 0 || seen[k] {
			return o, false
		}
		seen[k] = true
		switch k {
		case 1, 2: // pair, type
			v, plain := s.str()
			if !plain {
				return o, false
			}
			if k == 1 {
				o.Pair = v
			} else {
				o.Type = v
			}
		case 5: // id
			switch {
			case s.I < len(s.B) && s.B[s.I] == '"':
				v, plain := s.str()
				if !plain {
					return o, false
				}
				o.ID = v
			case s.Literal("null"):
			default:
				n, ok := s.number()
				if !ok {
					return o, false
				}
				o.ID = n
			}
		default: // numbers
			n, ok := s.number()
			if !ok {
				return o, false
			}
			switch k {
			case 0:
				o.Time = n
			case 3:
				o.Rate = n
			case 4:
				o.Amount = n
			case 6:
				o.Cost = n
			}
		}
	}
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
