package jsonscan

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
// isFlatCompact), calling field, when not nil, with each key (a plain
// string, JSONLexer.PlainString, so its bytes are the key) and raw value,
// in order. Callers read the common shapes of small JSON bodies in one pass
// this way, and hand anything else to encoding/json.
func FlatObject(b []byte, field func(key, value []byte)) bool {
	l := JSONLexer{B: b}
	if !l.Byte('{') {
		return false
	}
	if l.Byte('}') {
		return l.AtEnd()
	}
	for {
		key, ok := l.PlainString()
		if !ok || !l.Byte(':') {
			return false
		}
		value, ok := l.Scalar()
		if !ok {
			return false
		}
		if field != nil {
			field(key, value)
		}
		switch {
		case l.Byte(','):
		case l.Byte('}'):
			return l.AtEnd()
		default:
			return false
		}
	}
}
