package jsonscan

import "encoding/binary"

// Interner returns one shared string per distinct byte sequence, so that
// the exchange, pair, side and fee asset of millions of events cost no
// allocation. Bounded: past maxInterned strings it allocates as usual. An
// Interner is not safe for concurrent use; nil interns nothing.
type Interner map[string]string

const maxInterned = 4096

func (in Interner) get(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in) < maxInterned {
		in[s] = s
	}
	return s
}

// Str converts b: interned when in is not nil.
func (in Interner) Str(b []byte) string {
	if in == nil {
		return string(b)
	}
	return in.get(b)
}

// Recent remembers the last few strings one field of a stream of objects
// held (RecentKept of them): consecutive orders mostly share their
// exchange and fee asset, and draw their pair, side and kind from a few
// values, and comparing with those costs less than the Interner's lookup.
// The zero Recent remembers nothing yet.
type Recent struct {
	s    [RecentKept]string
	next uint8 // the slot the next miss replaces
}

// RecentKept is how many strings a Recent remembers.
const RecentKept = 4

// Str is in.Str(b), through the strings r remembers; a nil r remembers
// nothing.
func (r *Recent) Str(in Interner, b []byte) string {
	if r == nil {
		return in.Str(b)
	}
	for k := range r.s {
		if r.s[k] == string(b) {
			return r.s[k]
		}
	}
	s := in.Str(b)
	r.s[r.next] = s
	r.next = (r.next + 1) % RecentKept
	return s
}

// Scanner walks one flat JSON object on the lexer, for the decoders that
// read a payload's expected keys in their expected order and hand anything
// else to encoding/json (domain's DecodeOrderRequested and the others).
// Each read reports false, leaving I where it stopped, when the input is
// not what it reads.
type Scanner struct{ JSONLexer }

// Punct skips whitespace and reads the punctuation c.
func (s *Scanner) Punct(c byte) bool {
	s.SkipSpace()
	return s.Byte(c)
}

// Str skips whitespace and reads a plain string (JSONLexer.PlainString):
// no escapes, control characters or non-ASCII bytes.
func (s *Scanner) Str() ([]byte, bool) {
	s.SkipSpace()
	return s.PlainString()
}

// Int reads -?(0|[1-9][0-9]*) that fits an int64, followed by a delimiter.
func (s *Scanner) Int() (int64, bool) {
	s.SkipSpace()
	j := s.I
	neg := false
	if j < len(s.B) && s.B[j] == '-' {
		neg = true
		j++
	}
	start := j
	var v uint64
	for j < len(s.B) && s.B[j] >= '0' && s.B[j] <= '9' {
		if j-start >= 18 {
			return 0, false // let encoding/json judge long numbers
		}
		v = v*10 + uint64(s.B[j]-'0')
		j++
	}
	if j == start || (s.B[start] == '0' && j-start > 1) {
		return 0, false
	}
	if j < len(s.B) && s.B[j] != ',' && s.B[j] != '}' && s.B[j] != ' ' && s.B[j] != '\t' && s.B[j] != '\n' && s.B[j] != '\r' {
		return 0, false
	}
	s.I = j
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// Uint reads what Int reads without a minus sign: encoding/json refuses
// any negative number for an unsigned field, -0 included.
func (s *Scanner) Uint() (uint64, bool) {
	s.SkipSpace()
	if s.I < len(s.B) && s.B[s.I] == '-' {
		return 0, false
	}
	n, ok := s.Int()
	return uint64(n), ok
}

// Key reads the literal l (a key with its quotes and colon, and the comma
// before it) at the current position, with no whitespace around.
func (s *Scanner) Key(l string) bool {
	if len(s.B)-s.I < len(l) {
		return false
	}
	b := s.B[s.I : s.I+len(l)]
	if n := len(l); n >= 8 && n <= 16 {
		// Two overlapping words instead of a call to compare bytes.
		if binary.LittleEndian.Uint64(b) != word(l) || binary.LittleEndian.Uint64(b[n-8:]) != word(l[n-8:]) {
			return false
		}
	} else if string(b) != l {
		return false
	}
	s.I += len(l)
	return true
}

// word is the first 8 bytes of l as a little-endian number.
func word(l string) uint64 {
	_ = l[7]
	return uint64(l[0]) | uint64(l[1])<<8 | uint64(l[2])<<16 | uint64(l[3])<<24 |
		uint64(l[4])<<32 | uint64(l[5])<<40 | uint64(l[6])<<48 | uint64(l[7])<<56
}

// End reports whether the object closes at the current position and
// nothing follows.
func (s *Scanner) End() bool {
	return s.I == len(s.B)-1 && s.B[s.I] == '}'
}

// Object calls field for each key until the closing brace; field returns
// false when it cannot handle the key or its value. Object reports whether
// the whole input was one well-formed object handled by field.
func (s *Scanner) Object(field func(key []byte) bool) bool {
	if !s.Punct('{') {
		return false
	}
	if s.Punct('}') {
		s.SkipSpace()
		return s.AtEnd()
	}
	for {
		key, ok := s.Str()
		if !ok || !s.Punct(':') || !field(key) {
			return false
		}
		if s.Punct(',') {
			continue
		}
		if !s.Punct('}') {
			return false
		}
		s.SkipSpace()
		return s.AtEnd()
	}
}
