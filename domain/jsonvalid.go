package domain

import "encoding/json"

// jsonValidMaxDepth is the nesting ValidJSON checks itself; a deeper text
// goes to json.Valid, whose own limit (10,000) then decides.
const jsonValidMaxDepth = 256

// ValidJSON reports whether b is one JSON value with optional white space
// around it: exactly what json.Valid reports, for every input (bytes that
// are not UTF-8 inside strings are accepted, as json.Valid accepts them),
// several times faster. A verification checks every event's data with it.
// It is built on JSONLexer: the lexer reads the tokens, ValidJSON checks
// how they nest, without recursion.
func ValidJSON(b []byte) bool {
	v := jsonValidator{JSONLexer: JSONLexer{B: b}}
	v.SkipSpace()
	for {
		switch v.value() {
		case valueInvalid:
			return false
		case valueTooDeep:
			return json.Valid(b)
		case valueOpened:
			continue // its first value comes next
		}
		if more, ok := v.afterValue(); !more {
			return ok
		}
	}
}

// jsonValidator is ValidJSON's state: the lexer and the containers open
// at I.
type jsonValidator struct {
	JSONLexer
	stack [jsonValidMaxDepth]byte // '{' or '[' of each open container
	depth int
}

// What jsonValidator.value read.
const (
	valueRead    = iota // a whole value: a scalar or an empty container
	valueOpened         // a container's opening, and an object's first key and colon
	valueInvalid        // not a value
	valueTooDeep        // a container nested deeper than jsonValidMaxDepth
)

// value reads a value at I, or the opening of a non-empty container (and,
// in an object, the first member's key and colon), and the white space
// after an opening.
func (v *jsonValidator) value() int {
	if v.AtEnd() {
		return valueInvalid
	}
	c := v.B[v.I]
	if c != '{' && c != '[' {
		if !v.scalar(c) {
			return valueInvalid
		}
		return valueRead
	}
	if v.depth == len(v.stack) {
		return valueTooDeep
	}
	v.I++
	v.SkipSpace()
	if v.Byte(c + 2) { // '}' or ']': empty
		return valueRead
	}
	v.stack[v.depth] = c
	v.depth++
	if c == '{' && !v.member() {
		return valueInvalid
	}
	return valueOpened
}

// scalar reads the string, number or literal at I, whose first byte is c.
func (v *jsonValidator) scalar(c byte) bool {
	switch c {
	case '"':
		return v.ValidString()
	case 't':
		return v.Literal("true")
	case 'f':
		return v.Literal("false")
	case 'n':
		return v.Literal("null")
	}
	_, ok := v.Number()
	return ok
}

// afterValue reads what follows a whole value: the containers it closes,
// then the comma before the next element (and, in an object, the next
// key and colon). more is true when another value follows; when not, ok
// says whether the text ended well (the top value read, only white space
// after it).
func (v *jsonValidator) afterValue() (more, ok bool) {
	for {
		v.SkipSpace()
		if v.depth == 0 {
			return false, v.AtEnd()
		}
		open := v.stack[v.depth-1]
		if v.Byte(open + 2) {
			v.depth--
			continue
		}
		if !v.Byte(',') {
			return false, false
		}
		v.SkipSpace()
		if open == '{' && !v.member() {
			return false, false
		}
		return true, true
	}
}

// member reads an object member's key and colon at I, and the white space
// after each.
func (v *jsonValidator) member() bool {
	if v.AtEnd() || v.B[v.I] != '"' || !v.ValidString() {
		return false
	}
	v.SkipSpace()
	if !v.Byte(':') {
		return false
	}
	v.SkipSpace()
	return true
}
