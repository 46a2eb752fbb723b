package domain

import "unicode/utf8"

// JSONLexer reads the tokens of a JSON text B from position I: the lexing
// every JSON scanner of this module shares (the replay's payload decoders,
// CheckJSON's key scanner, FlatObject, ValidJSON, the Gunbot state-file
// reader), each building only the grammar it needs on top and handing
// anything else to encoding/json. A method that does not find its token reports false and
// leaves I where it was, unless it says otherwise; none skips the
// whitespace before its token (SkipSpace does).
type JSONLexer struct {
	B []byte
	I int
}

// SkipSpace moves I past JSON whitespace (space, tab, newline, carriage
// return).
func (l *JSONLexer) SkipSpace() {
	b, i := l.B, l.I
	// b[i] <= ' ' first: compact JSON has no space, and most bytes are
	// above it.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	l.I = i
}

// Byte reports whether the byte at I is c, and moves past it if so.
func (l *JSONLexer) Byte(c byte) bool {
	if l.I < len(l.B) && l.B[l.I] == c {
		l.I++
		return true
	}
	return false
}

// AtEnd reports whether I is past the last byte.
func (l *JSONLexer) AtEnd() bool { return l.I >= len(l.B) }

// plainByte marks the bytes a plain string holds as they are: printable
// ASCII other than the quote and the backslash. A string of them decodes
// to its own bytes, whatever the decoder.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// PlainString reads a string at I made of plain bytes only (no escape, no
// control character, no byte outside ASCII), and returns its content, a
// slice of B that is also its decoded value. Any other string, or another
// token, reports false.
func (l *JSONLexer) PlainString() ([]byte, bool) {
	if l.I >= len(l.B) || l.B[l.I] != '"' {
		return nil, false
	}
	start := l.I + 1
	j := start
	for j < len(l.B) && plainByte[l.B[j]] {
		j++
	}
	if j < len(l.B) && l.B[j] == '"' {
		l.I = j + 1
		return l.B[start:j], true
	}
	return nil, false
}

// String passes over the string at I, escapes included, and returns its
// raw content (between the quotes, escapes as written) and whether it has
// escapes. It checks neither the escapes nor the bytes: the caller has
// validated the text, or checks the content itself. A string that does not
// close leaves I at the end and returns what there is.
func (l *JSONLexer) String() (raw []byte, escaped bool) {
	start := l.I + 1
	for j := start; j < len(l.B); j++ {
		switch l.B[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			l.I = j + 1
			return l.B[start:j], escaped
		}
	}
	l.I = len(l.B)
	return l.B[start:], escaped
}

// stringByte marks the bytes ValidString passes without a second look:
// the plain bytes and every byte outside ASCII (json.Valid accepts
// invalid UTF-8 in strings).
var stringByte = func() (t [256]bool) {
	for c := range t {
		t[c] = plainByte[c] || c >= utf8.RuneSelf
	}
	return t
}()

// ValidString reads the string at I as json.Valid checks one: no control
// character, escapes among \" \\ \/ \b \f \n \r \t and \u with four hex
// digits; bytes outside ASCII unchecked, as json.Valid leaves them. An
// invalid string reports false and leaves I anywhere.
func (l *JSONLexer) ValidString() bool {
	b, i := l.B, l.I+1
	for {
		for i < len(b) && stringByte[b[i]] {
			i++
		}
		switch {
		case i >= len(b):
			return false
		case b[i] == '"':
			l.I = i + 1
			return true
		case b[i] != '\\': // a control character
			return false
		}
		if i = validEscape(b, i+1); i < 0 {
			return false
		}
		i++
	}
}

// validEscape checks the escape whose letter is at b[i] and returns the
// index of its last byte, -1 if it is not one of JSON's.
func validEscape(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i
	case 'u':
		if len(b)-i <= 4 {
			return -1
		}
		for _, h := range b[i+1 : i+5] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return -1
			}
		}
		return i + 4
	}
	return -1
}

// Number reads a number at I as the JSON grammar writes one,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and returns its text.
func (l *JSONLexer) Number() ([]byte, bool) {
	b, i := l.B, l.I
	digits := func(i int) int { // one or more digits: the index after them, or -1
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return nil, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return nil, false
		}
	}
	start := l.I
	l.I = i
	return b[start:i], true
}

// Literal reports whether the bytes at I are word (true, false, null, or
// any fixed text), and moves past them if so.
func (l *JSONLexer) Literal(word string) bool {
	if len(l.B)-l.I < len(word) || string(l.B[l.I:l.I+len(word)]) != word {
		return false
	}
	l.I += len(word)
	return true
}

// Scalar reads a string, number, true, false or null at I and returns its
// text: strings by PlainString's rule (with their quotes), numbers by
// Number's.
func (l *JSONLexer) Scalar() ([]byte, bool) {
	start := l.I
	if l.I >= len(l.B) {
		return nil, false
	}
	var ok bool
	switch l.B[l.I] {
	case '"':
		_, ok = l.PlainString()
	case 't':
		ok = l.Literal("true")
	case 'f':
		ok = l.Literal("false")
	case 'n':
		ok = l.Literal("null")
	default:
		_, ok = l.Number()
	}
	if !ok {
		return nil, false
	}
	return l.B[start:l.I], true
}

// SkipValue passes over the value at I in a text that is valid JSON (it
// relies on that): a string, an object or array with everything in it, or
// a number or literal up to the next delimiter. It reports false only at
// the end of B.
func (l *JSONLexer) SkipValue() bool {
	if l.I >= len(l.B) {
		return false
	}
	switch l.B[l.I] {
	case '"':
		l.String()
	case '{', '[':
		for depth := 0; l.I < len(l.B); {
			switch l.B[l.I] {
			case '"':
				l.String()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			l.I++
			if depth == 0 {
				return true
			}
		}
		return false
	default:
		l.SkipToDelimiter()
	}
	return true
}

// SkipToDelimiter moves I to the next comma, closing brace or bracket, or
// whitespace: past a number or a literal of a valid text.
func (l *JSONLexer) SkipToDelimiter() {
	for l.I < len(l.B) {
		switch l.B[l.I] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return
		}
		l.I++
	}
}
