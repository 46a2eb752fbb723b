package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckJSON returns nil when b is exactly one JSON value, in valid UTF-8,
// in which no object repeats a key at any depth; otherwise a *JSONError
// (EINVALID) saying which: `field "a.b" is not valid UTF-8` (the string value holding the
// first invalid byte, with its path, array elements as [i]), `a key in "a"
// is not valid UTF-8`, "not valid UTF-8 at byte N" (outside any string),
// "malformed JSON at byte N: …", "trailing data after the JSON value",
// `duplicate key "a.b"` (the key with its path), or `field "a.b" holds a
// lone surrogate escape` (a \uD800–\uDFFF escape that is not half of a
// pair: no character). encoding/json accepts all of these silently (it
// replaces bad bytes and lone surrogates with U+FFFD and keeps the last of
// two keys), so writers check with CheckJSON before they decode: two
// readers of one body must never see different values, nor a credential
// be stored as something else than what was sent.
func CheckJSON(b []byte) error {
	validUTF8 := utf8.Valid(b)
	if !json.Valid(b) {
		if !validUTF8 {
			return invalidJSON("not valid UTF-8 at byte %d", invalidUTF8At(b))
		}
		_, err := DecodeJSONValue(b)
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return invalidJSON("malformed JSON at byte %d: %s", se.Offset, se.Error())
		case errors.As(err, new(*JSONError)):
			return err
		case err != nil:
			return invalidJSON("malformed JSON: %v", err)
		}
		return invalidJSON("malformed JSON")
	}
	s := keyScanner{JSONLexer: JSONLexer{B: b}, checkUTF8: !validUTF8}
	path := s.value()
	switch {
	case path == nil:
		return nil
	case s.surrogate != "" && s.badKey && len(path) == 1:
		return invalidJSON("a key of the top-level object holds a lone surrogate escape (%s): no character", s.surrogate)
	case s.surrogate != "" && s.badKey:
		return invalidJSON("a key in %q holds a lone surrogate escape (%s): no character", joinKeyPath(path[1:]), s.surrogate)
	case s.surrogate != "" && len(path) == 0:
		return invalidJSON("the top-level string holds a lone surrogate escape (%s): no character", s.surrogate)
	case s.surrogate != "":
		return invalidJSON("field %q holds a lone surrogate escape (%s): no character, which a decoder would silently replace", joinKeyPath(path), s.surrogate)
	case !s.badUTF8:
		return invalidJSON("duplicate key %q", joinKeyPath(path))
	case s.badKey && len(path) == 1:
		return invalidJSON("a key of the top-level object is not valid UTF-8")
	case s.badKey:
		return invalidJSON("a key in %q is not valid UTF-8", joinKeyPath(path[1:]))
	case len(path) == 0:
		return invalidJSON("the top-level string is not valid UTF-8")
	}
	return invalidJSON("field %q is not valid UTF-8", joinKeyPath(path))
}

// invalidUTF8At returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence (len(b) when there is none).
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// loneSurrogate returns the first \u escape of the raw string contents s
// (escapes as written) that is a UTF-16 surrogate without its other half,
// as written ("\ud800"), or "".
func loneSurrogate(s []byte) string {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // a two-byte escape: skip its second byte
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00: // high: a low must follow
			if lo, ok := hex4(i + 6); ok && lo >= 0xDC00 && lo < 0xE000 {
				i += 11
				continue
			}
			return string(s[i : i+6])
		case r >= 0xDC00 && r < 0xE000: // a low without its high
			return string(s[i : i+6])
		}
		i += 5
	}
	return ""
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
// looking for a repeated object key, and, with checkUTF8, a string that is
// not valid UTF-8 (json.Valid lets such bytes through inside strings). It
// allocates only for objects with more than smallObject keys and for the
// path of what it finds.
type keyScanner struct {
	JSONLexer
	checkUTF8 bool
	// badUTF8: the path value returned leads to invalid UTF-8, not to a
	// duplicate key: in its innermost key when badKey, else in the string
	// value at that path (an empty path: the top-level value).
	badUTF8, badKey bool
	// surrogate, when set, is the lone surrogate escape the path leads to
	// (in its innermost key when badKey).
	surrogate string
}

const smallObject = 16

// value skips one value; it returns the path of the first duplicate key in
// it (innermost first), or nil.
func (s *keyScanner) value() []string {
	s.SkipSpace()
	switch s.B[s.I] {
	case '{':
		return s.object()
	case '[':
		s.I++
		for n := 0; ; n++ {
			s.SkipSpace()
			if s.B[s.I] == ']' {
				s.I++
				return nil
			}
			if path := s.value(); path != nil {
				return append(path, "["+strconv.Itoa(n)+"]")
			}
			s.SkipSpace()
			if s.B[s.I] == ',' {
				s.I++
			}
		}
	case '"':
		raw, escaped := s.String()
		if s.checkUTF8 && !utf8.Valid(raw) {
			s.badUTF8 = true
			return []string{}
		}
		if escaped {
			if u := loneSurrogate(raw); u != "" {
				s.surrogate = u
				return []string{}
			}
		}
	default:
		s.SkipToDelimiter()
	}
	return nil
}

func (s *keyScanner) object() []string {
	s.I++
	var small [smallObject][]byte
	n := 0
	var many map[string]struct{}
	for {
		s.SkipSpace()
		if s.B[s.I] == '}' {
			s.I++
			return nil
		}
		raw, escaped := s.String()
		if s.checkUTF8 && !utf8.Valid(raw) {
			s.badUTF8, s.badKey = true, true
			return []string{string(raw)}
		}
		if escaped {
			if u := loneSurrogate(raw); u != "" {
				s.surrogate, s.badKey = u, true
				return []string{string(raw)}
			}
		}
		key := raw
		if escaped {
			// "\u0061" and "a" are one key to every decoder.
			var k string
			_ = json.Unmarshal(s.B[s.I-len(raw)-2:s.I], &k)
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
		s.SkipSpace()
		s.I++ // ':'
		if path := s.value(); path != nil {
			return append(path, string(key))
		}
		s.SkipSpace()
		if s.B[s.I] == ',' {
			s.I++
		}
	}
}

// DecodeJSONValue decodes one JSON value with numbers kept as json.Number,
// refusing trailing data (a *JSONError); encoding/json's errors as they are.
func DecodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	// dec.More is not enough: it reports a stray '}' or ']' as the end.
	if rest := b[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return nil, invalidJSON("trailing data after the JSON value")
	}
	return v, nil
}

// JSONError is a JSON text CheckJSON or DecodeJSONValue refuses, Message
// saying why. domain reports it as EINVALID with Message (DomainError), and
// its text is that of a domain.Error of code EINVALID.
type JSONError struct {
	Message string
}

func (e *JSONError) Error() string {
	return fmt.Sprintf("tradeledger error: code=invalid message=%s", e.Message)
}

// DomainError returns the domain error e stands for: code "invalid"
// (domain.EINVALID) and Message.
func (e *JSONError) DomainError() (code, message string) { return "invalid", e.Message }

func invalidJSON(format string, args ...any) *JSONError {
	return &JSONError{Message: fmt.Sprintf(format, args...)}
}
