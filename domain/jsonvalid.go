package domain

import "encoding/json"

// jsonValidMaxDepth is the nesting ValidJSON checks itself; a deeper text
// goes to json.Valid, whose own limit (10,000) then decides.
const jsonValidMaxDepth = 256

// ValidJSON reports whether b is one JSON value with optional white space
// around it: exactly what json.Valid reports, for every input (bytes that
// are not UTF-8 inside strings are accepted, as json.Valid accepts them),
// several times faster. A verification checks every event's data with it.
func ValidJSON(b []byte) bool {
	var stack [jsonValidMaxDepth]byte // '{' or '[' of each open container
	depth := 0
	i := skipSpace(b, 0)
	for {
		// A value at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if depth == len(stack) {
				return json.Valid(b)
			}
			stack[depth] = c
			depth++
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']': empty
				depth--
				i++
				break
			}
			if c == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
			continue // the first value
		case c == '"':
			if i = jsonString(b, i); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = jsonNumber(b, i); i < 0 {
				return false
			}
		case c == 't':
			if !hasAt(b, i, "true") {
				return false
			}
			i += 4
		case c == 'f':
			if !hasAt(b, i, "false") {
				return false
			}
			i += 5
		case c == 'n':
			if !hasAt(b, i, "null") {
				return false
			}
			i += 4
		default:
			return false
		}
		// After a value: close containers, or the next element.
		for {
			i = skipSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			open := stack[depth-1]
			if b[i] == open+2 {
				depth--
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipSpace(b, i+1)
			if open == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// member reads an object member's key and colon at i (white space
// skipped after each) and returns where its value begins, -1 if there is
// no key and colon.
func member(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = jsonString(b, i); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

func hasAt(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// jsonString reads the string at b[i] == '"' and returns the index after
// its closing quote, -1 if it is not a valid string.
func jsonString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i <= 4 {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// jsonNumber reads the number at i and returns the index after it, -1 if
// it is not a valid number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1
		}
	}
	return i
}
