package domain

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckJSON returns nil when b is exactly one JSON value, in valid UTF-8,
// in which no object repeats a key at any depth; otherwise EINVALID saying
// which: "not valid UTF-8", "malformed JSON at byte N: …", "trailing data
// after the JSON value", or `duplicate key "a.b"` (the key with its path,
// array elements as [i]). encoding/json accepts all of these silently (it
// replaces bad bytes and keeps the last of two keys), so writers check
// with CheckJSON before they decode: two readers of one body must never
// see different values.
func CheckJSON(b []byte) error {
	if !utf8.Valid(b) {
		return Errorf(EINVALID, "not valid UTF-8")
	}
	if !json.Valid(b) {
		_, err := decodeJSONValue(b)
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return Errorf(EINVALID, "malformed JSON at byte %d: %s", se.Offset, se.Error())
		case ErrorCode(err) == EINVALID:
			return err
		case err != nil:
			return Errorf(EINVALID, "malformed JSON: %v", err)
		}
		return Errorf(EINVALID, "malformed JSON")
	}
	s := keyScanner{b: b}
	if path := s.value(); path != nil {
		return Errorf(EINVALID, "duplicate key %q", joinKeyPath(path))
	}
	return nil
}

// joinKeyPath joins the path keyScanner returns (innermost first).
func joinKeyPath(path []string) string {
	var sb strings.Builder
	for i := len(path) - 1; i >= 0; i-- {
		if sb.Len() > 0 && !strings.HasPrefix(path[i], "[") {
			sb.WriteByte('.')
		}
		sb.WriteString(path[i])
	}
	return sb.String()
}

// keyScanner walks a JSON text that json.Valid accepted (so it need not
// check the grammar, and nesting is at most encoding/json's depth limit)
// looking for a repeated object key. It allocates only for objects with
// more than smallObject keys and for the path of a duplicate.
type keyScanner struct {
	b []byte
	i int
}

const smallObject = 16

func (s *keyScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value skips one value; it returns the path of the first duplicate key in
// it (innermost first), or nil.
func (s *keyScanner) value() []string {
	s.ws()
	switch s.b[s.i] {
	case '{':
		return s.object()
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.ws()
			if s.b[s.i] == ']' {
				s.i++
				return nil
			}
			if path := s.value(); path != nil {
				return append(path, "["+strconv.Itoa(n)+"]")
			}
			s.ws()
			if s.b[s.i] == ',' {
				s.i++
			}
		}
	case '"':
		s.str()
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return nil
			}
			s.i++
		}
	}
	return nil
}

func (s *keyScanner) object() []string {
	s.i++
	var small [smallObject][]byte
	n := 0
	var many map[string]struct{}
	for {
		s.ws()
		if s.b[s.i] == '}' {
			s.i++
			return nil
		}
		raw, escaped := s.str()
		key := raw
		if escaped {
			// "\u0061" and "a" are one key to every decoder.
			var k string
			_ = json.Unmarshal(s.b[s.i-len(raw)-2:s.i], &k)
			key = []byte(k)
		}
		dup := false
		if many != nil {
			_, dup = many[string(key)]
			many[string(key)] = struct{}{}
		} else {
			for _, k := range small[:n] {
				if string(k) == string(key) {
					dup = true
					break
				}
			}
			if n < smallObject {
				small[n] = key
				n++
			} else {
				many = make(map[string]struct{}, 2*smallObject)
				for _, k := range small {
					many[string(k)] = struct{}{}
				}
				many[string(key)] = struct{}{}
			}
		}
		if dup {
			return []string{string(key)}
		}
		s.ws()
		s.i++ // ':'
		if path := s.value(); path != nil {
			return append(path, string(key))
		}
		s.ws()
		if s.b[s.i] == ',' {
			s.i++
		}
	}
}

// str skips a string at s.i and returns its raw content (without quotes)
// and whether it has escapes.
func (s *keyScanner) str() (raw []byte, escaped bool) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			s.i = j + 1
			return s.b[start:j], escaped
		}
	}
	s.i = len(s.b)
	return s.b[start:], escaped
}
