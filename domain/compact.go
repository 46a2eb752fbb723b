package domain

// isFlatCompact reports whether b is a JSON object in compact form whose
// values are plain strings, numbers, true, false or null: the shape of most
// event payloads (json.Marshal of a flat struct). Such a payload is valid and
// already compact, so PrepareAppend keeps it without running json.Compact,
// which costs about as much as the rest of an append's checks. Anything
// else (nesting, escapes, non-ASCII, whitespace) reports false and takes
// json.Compact. It never accepts what json.Compact would change or refuse
// (FuzzIsFlatCompact).
func isFlatCompact(b []byte) bool { return FlatObject(b, nil) }

// FlatObject reports whether b is a flat compact JSON object (as
// isFlatCompact), calling field, when not nil, with each key (no escapes,
// so its bytes are the key) and raw value, in order. Callers read the
// common shapes of small JSON bodies in one pass this way, and hand
// anything else to encoding/json.
func FlatObject(b []byte, field func(key, value []byte)) bool {
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	i := 1
	if b[i] == '}' {
		return len(b) == 2
	}
	for {
		k := i
		if i = flatString(b, i); i < 0 || i >= len(b) || b[i] != ':' {
			return false
		}
		v := i + 1
		if i = flatValue(b, v); i < 0 || i >= len(b) {
			return false
		}
		if field != nil {
			field(b[k+1:v-2], b[v:i])
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i == len(b)-1
		default:
			return false
		}
	}
}

// flatString scans a string without escapes, control characters or
// non-ASCII bytes starting at b[i]; it returns the index after it, or -1.
func flatString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20 || c >= 0x7f || c == '\\':
			return -1
		}
	}
	return -1
}

// flatValue scans a string, number, true, false or null at b[i]; it returns
// the index after it, or -1.
func flatValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return flatString(b, i)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	}
	return flatNumber(b, i)
}

func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// flatNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func flatNumber(b []byte, i int) int {
	digits := func(i int) int { // one or more digits
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
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return -1
		}
	}
	return i
}
