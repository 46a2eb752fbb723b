package gunbot

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SyntaxError is a JSON5 syntax error at byte Offset of the parsed text.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return e.Msg }

// ParseJSON5 parses one JSON5 value (https://spec.json5.org: comments,
// trailing commas, unquoted keys, single-quoted strings, hexadecimal and
// signed numbers) as people write config.js, and returns it as
// encoding/json would decode it with UseNumber: map[string]any, []any,
// string, json.Number (the number as written, normalized to JSON: "+1" is
// "1", ".5" is "0.5", "0x10" is "16"), bool, nil. A key given twice keeps
// its last value. What follows the value is not read. Infinity and NaN have
// no JSON form and are errors.
func ParseJSON5(b []byte) (any, error) {
	p := &json5Parser{b: b}
	p.space()
	return p.value(0)
}

type json5Parser struct {
	b []byte
	i int
}

// maxDepth bounds nesting, so that a hostile file cannot exhaust the stack.
const maxDepth = 1000

func (p *json5Parser) fail(at int, format string, args ...any) error {
	return &SyntaxError{Offset: at, Msg: fmt.Sprintf(format, args...)}
}

// describe names the character at i for an error message.
func (p *json5Parser) describe(i int) string {
	if i >= len(p.b) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.b[i:])
	return "character " + strconv.QuoteRune(r)
}

// space skips white space and comments. An unterminated block comment is
// left for the next token to fail on.
func (p *json5Parser) space() {
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			p.i++
		case c == '/' && p.i+1 < len(p.b) && p.b[p.i+1] == '/':
			for p.i < len(p.b) && p.b[p.i] != '\n' && p.b[p.i] != '\r' {
				p.i++
			}
		case c == '/' && p.i+1 < len(p.b) && p.b[p.i+1] == '*':
			end := strings.Index(string(p.b[p.i+2:]), "*/")
			if end < 0 {
				return
			}
			p.i += 2 + end + 2
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r != '\uFEFF' && r != '\u2028' && r != '\u2029' && !unicode.Is(unicode.Zs, r) {
				return
			}
			p.i += n
		default:
			return
		}
	}
}

func (p *json5Parser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.fail(p.i, "nested too deeply")
	}
	if p.i >= len(p.b) {
		return nil, p.fail(p.i, "unexpected end of input, expecting a value")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"' || c == '\'':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return s, nil
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '/' && p.i+1 < len(p.b) && p.b[p.i+1] == '*':
		return nil, p.fail(p.i, "comment not terminated")
	}
	start := p.i
	word := p.identifier()
	switch word {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	case "Infinity", "NaN":
		return nil, p.fail(start, "%s is not a JSON number", word)
	}
	return nil, p.fail(start, "invalid %s looking for the beginning of a value", p.describe(start))
}

func (p *json5Parser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	err := p.elements('}', "object key:value pair", func() error {
		key, err := p.key()
		if err != nil {
			return err
		}
		p.space()
		if !p.skip(':') {
			return p.fail(p.i, "invalid %s after object key %q, expecting ':'", p.describe(p.i), key)
		}
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		m[key] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// elements reads an object's or array's elements, each with elem, after
// its opening bracket and up to its closing one, close: separated by
// commas, a trailing comma allowed. what names an element in the error
// when neither follows one.
func (p *json5Parser) elements(close byte, what string, elem func() error) error {
	for {
		p.space()
		if p.skip(close) {
			return nil
		}
		if err := elem(); err != nil {
			return err
		}
		p.space()
		if p.skip(',') {
			continue
		}
		if p.skip(close) {
			return nil
		}
		return p.fail(p.i, "invalid %s after %s, expecting ',' or '%c'", p.describe(p.i), what, close)
	}
}

// skip consumes c when it is the next byte, and says whether it was.
func (p *json5Parser) skip(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads an object key: a string or an ECMAScript identifier name.
func (p *json5Parser) key() (string, error) {
	if p.i < len(p.b) && (p.b[p.i] == '"' || p.b[p.i] == '\'') {
		return p.str()
	}
	start := p.i
	if k := p.identifier(); k != "" {
		return k, nil
	}
	return "", p.fail(start, "invalid %s looking for an object key", p.describe(start))
}

// identifier reads an identifier name ($, _, letters, then digits and
// combining marks too); "" when there is none at p.i.
func (p *json5Parser) identifier() string {
	start := p.i
	for p.i < len(p.b) {
		r, n := utf8.DecodeRune(p.b[p.i:])
		first := p.i == start
		ok := r == '$' || r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) ||
			(!first && (unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc) || r == '\u200C' || r == '\u200D'))
		if !ok {
			break
		}
		p.i += n
	}
	return string(p.b[start:p.i])
}

func (p *json5Parser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	err := p.elements(']', "array element", func() error {
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		a = append(a, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// str reads a single- or double-quoted string with JSON5's escapes.
func (p *json5Parser) str() (string, error) {
	quote := p.b[p.i]
	start := p.i
	p.i++
	var sb strings.Builder
	for {
		if p.i >= len(p.b) {
			return "", p.fail(start, "string not terminated")
		}
		c := p.b[p.i]
		switch {
		case c == quote:
			p.i++
			return sb.String(), nil
		case c == '\n' || c == '\r':
			return "", p.fail(p.i, "line break in a string (escape it with \\)")
		case c != '\\':
			sb.WriteByte(c)
			p.i++
			continue
		}
		if err := p.escape(&sb, start); err != nil {
			return "", err
		}
	}
}

// simpleEscapes are the one-letter escapes and the control character each
// stands for.
var simpleEscapes = [256]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// escape reads an escape (p.i at its backslash) of the string that starts
// at start, and writes what it stands for to sb.
func (p *json5Parser) escape(sb *strings.Builder, start int) error {
	p.i++
	if p.i >= len(p.b) {
		return p.fail(start, "string not terminated")
	}
	e := p.b[p.i]
	p.i++
	if c := simpleEscapes[e]; c != 0 {
		sb.WriteByte(c)
		return nil
	}
	switch e {
	case '0':
		if p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			return p.fail(p.i-2, "octal escape in a string")
		}
		sb.WriteByte(0)
	case '\n': // a line continuation
	case '\r':
		if p.i < len(p.b) && p.b[p.i] == '\n' {
			p.i++
		}
	case 'x':
		v, ok := hexValue(p.b, p.i, 2)
		if !ok {
			return p.fail(p.i-2, "invalid \\x escape")
		}
		sb.WriteRune(rune(v))
		p.i += 2
	case 'u':
		r, err := p.unicodeEscape()
		if err != nil {
			return err
		}
		sb.WriteRune(r)
	default:
		if e >= '1' && e <= '9' {
			return p.fail(p.i-2, "digit escape in a string")
		}
		// Any other character stands for itself (\' \" \\ \/ and the
		// rest); a multi-byte one is copied whole, and U+2028 and U+2029
		// after a backslash are line continuations.
		p.i--
		r, n := utf8.DecodeRune(p.b[p.i:])
		p.i += n
		if r != '\u2028' && r != '\u2029' {
			sb.WriteString(string(p.b[p.i-n : p.i]))
		}
	}
	return nil
}

// unicodeEscape reads the XXXX of \uXXXX (p.i after the u), joining a
// surrogate pair written as two escapes.
func (p *json5Parser) unicodeEscape() (rune, error) {
	v, ok := hexValue(p.b, p.i, 4)
	if !ok {
		return 0, p.fail(p.i-2, "invalid \\u escape")
	}
	p.i += 4
	r := rune(v)
	if r >= 0xD800 && r < 0xDC00 && p.i+6 <= len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
		if lo, ok := hexValue(p.b, p.i+2, 4); ok && lo >= 0xDC00 && lo < 0xE000 {
			p.i += 6
			return (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000, nil
		}
	}
	if r >= 0xD800 && r < 0xE000 {
		return utf8.RuneError, nil
	}
	return r, nil
}

func hexValue(b []byte, at, n int) (uint64, bool) {
	if at+n > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+n]), 16, 32)
	return v, err == nil
}

// number reads a JSON5 number and returns it as a JSON number.
func (p *json5Parser) number() (any, error) {
	start := p.i
	neg := false
	if c := p.b[p.i]; c == '+' || c == '-' {
		neg = c == '-'
		p.i++
	}
	if p.i < len(p.b) && (p.b[p.i] == 'I' || p.b[p.i] == 'N') {
		return nil, p.nonFinite(start)
	}
	if p.i+1 < len(p.b) && p.b[p.i] == '0' && (p.b[p.i+1] == 'x' || p.b[p.i+1] == 'X') {
		return p.hexNumber(start, neg)
	}
	intPart, frac := p.digits(), ""
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		frac = p.digits()
	}
	if intPart == "" && frac == "" {
		return nil, p.fail(start, "invalid number")
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		return nil, p.fail(start, "invalid number (a leading zero)")
	}
	exp, err := p.exponent(start)
	if err != nil {
		return nil, err
	}
	return jsonNumber(neg, intPart, frac, exp), nil
}

// jsonNumber writes a decimal number's parts as JSON does: "-" when neg, an
// integer part of at least one digit, the fraction after a dot when it has
// digits, then the exponent as written.
func jsonNumber(neg bool, intPart, frac, exp string) json.Number {
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	if intPart == "" {
		intPart = "0"
	}
	sb.WriteString(intPart)
	if frac != "" {
		sb.WriteString("." + frac)
	}
	sb.WriteString(exp)
	return json.Number(sb.String())
}

// nonFinite is the error for a number (from start, its sign read) that
// spells a word: Infinity and NaN by name, anything else as invalid.
func (p *json5Parser) nonFinite(start int) error {
	word := p.identifier()
	if word == "Infinity" || word == "NaN" {
		return p.fail(start, "%s is not a JSON number", word)
	}
	return p.fail(start, "invalid number")
}

// hexNumber reads a hexadecimal number (p.i at its 0x) as a JSON number in
// decimal, negated when neg.
func (p *json5Parser) hexNumber(start int, neg bool) (any, error) {
	p.i += 2
	from := p.i
	for p.i < len(p.b) && isHexDigit(p.b[p.i]) {
		p.i++
	}
	v, ok := new(big.Int).SetString(string(p.b[from:p.i]), 16)
	if !ok {
		return nil, p.fail(start, "invalid hexadecimal number")
	}
	if neg {
		v.Neg(v)
	}
	return json.Number(v.String()), nil
}

// digits reads a run of decimal digits, "" when there is none.
func (p *json5Parser) digits() string {
	from := p.i
	for p.i < len(p.b) && isDigit(p.b[p.i]) {
		p.i++
	}
	return string(p.b[from:p.i])
}

// exponent reads a number's exponent as written ("e+5"), "" when there is
// none; an exponent without digits is an error at start, the number's.
func (p *json5Parser) exponent(start int) (string, error) {
	if p.i >= len(p.b) || (p.b[p.i] != 'e' && p.b[p.i] != 'E') {
		return "", nil
	}
	from := p.i
	p.i++
	if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
		p.i++
	}
	if p.digits() == "" {
		return "", p.fail(start, "invalid number (an exponent without digits)")
	}
	return string(p.b[from:p.i]), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
