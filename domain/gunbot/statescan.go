package gunbot

import (
	"encoding/json"
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
	s := stateScanner{b: b, text: string(b)}
	s.space()
	if !s.byte('{') {
		return nil, false
	}
	found := false
	for first := true; ; first = false {
		s.space()
		if s.byte('}') {
			break
		}
		if !first && !(s.byte(',') && s.spaceThen()) {
			return nil, false
		}
		key, plain := s.str()
		if !plain {
			return nil, false
		}
		s.space()
		if !s.byte(':') {
			return nil, false
		}
		s.space()
		if !equalFoldASCII(key, "orders") { // non-ASCII keys are not plain: encoding/json folds some to ASCII
			if !s.skip() {
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

type stateScanner struct {
	b    []byte
	text string // b as a string
	i    int
}

func (s *stateScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// spaceThen skips spaces and reports true (for use in conditions).
func (s *stateScanner) spaceThen() bool { s.space(); return true }

func (s *stateScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes; plain is false for any other value.
func (s *stateScanner) str() (v string, plain bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			v = s.text[start:s.i]
			s.i++
			return v, true
		case c == '\\' || c < 0x20 || c >= 0x80: // escapes; non-ASCII (encoding/json replaces invalid UTF-8)
			return "", false
		}
		s.i++
	}
	return "", false
}

// number reads a number literal (the input is valid JSON).
func (s *stateScanner) number() (json.Number, bool) {
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.i++
			continue
		}
		break
	}
	return json.Number(s.text[start:s.i]), s.i > start
}

// skip passes over one value (the input is valid JSON).
func (s *stateScanner) skip() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		s.skipString()
		return true
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return true
			}
		}
		return false
	}
	for s.i < len(s.b) { // a number, true, false or null
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		s.i++
	}
	return true
}

// skipString passes over a string, escapes included.
func (s *stateScanner) skipString() {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return
		}
		s.i++
	}
}

// orders reads the orders array (null gives none).
func (s *stateScanner) orders() ([]decodedOrder, bool) {
	if s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return nil, true
	}
	if !s.byte('[') {
		return nil, false
	}
	out := make([]decodedOrder, 0, len(s.b)/128)
	for first := true; ; first = false {
		s.space()
		if s.byte(']') {
			return out, true
		}
		if !first && !(s.byte(',') && s.spaceThen()) {
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
	if !s.byte('{') {
		return o, false
	}
	var seen [7]bool
	for first := true; ; first = false {
		s.space()
		if s.byte('}') {
			return o, true
		}
		if !first && !(s.byte(',') && s.spaceThen()) {
			return o, false
		}
		key, plain := s.str()
		if !plain {
			return o, false
		}
		s.space()
		if !s.byte(':') {
			return o, false
		}
		s.space()
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
			case s.i < len(s.b) && s.b[s.i] == '"':
				v, plain := s.str()
				if !plain {
					return o, false
				}
				o.ID = v
			case s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null":
				s.i += 4
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
