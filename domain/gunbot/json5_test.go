package gunbot

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseJSON5(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `{}`},
		{`{a: 1, 'b': "x", "c": [1, 2,], $d_1: null, é: true,}`, `{"$d_1":null,"a":1,"b":"x","c":[1,2],"é":true}`},
		{"{a: 1 /* c */, // line\n b: 2}", `{"a":1,"b":2}`},
		{`{n: [+1, -2, .5, 5., 0x1F, -0xff, 1e3, 2.5E-2, 0, -0.0]}`, `{"n":[1,-2,0.5,5,31,-255,1e3,2.5E-2,0,-0.0]}`},
		{`{s: 'it\'s "q" \x41\u00e9\uD83D\uDE00 \0 \a'}`, `{"s":"it's \"q\" Aé😀 \u0000 a"}`},
		{"{s: 'a\\\nb'}", `{"s":"ab"}`},
		{`{a: 1, a: 2}`, `{"a":2}`},
		{"\ufeff{a: 1}\u00a0", `{"a":1}`},
		{`{a: 1} trailing`, `{"a":1}`},
		{`{a: {b: {c: []}}}`, `{"a":{"b":{"c":[]}}}`},
	} {
		v, err := ParseJSON5([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil || string(b) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.in, b, err, c.want)
		}
	}
}

func TestParseJSON5Errors(t *testing.T) {
	for _, c := range []struct {
		in     string
		offset int
	}{
		{`{a 1}`, 3},
		{`{a: 1 b: 2}`, 6},
		{`{a: }`, 4},
		{`{a: 'x`, 4},
		{`{a: 01}`, 4},
		{`{a: NaN}`, 4},
		{`{a: -Infinity}`, 4},
		{`{a: 1e}`, 4},
		{`{a: '\1'}`, 5},
		{`{a: '\u12'}`, 5},
		{`{a: [1 2]}`, 7},
		{`{1: 2}`, 1},
		{`{a: /* x`, 4},
		{`{a: 1`, 5},
		{``, 0},
		{`nul`, 0},
	} {
		_, err := ParseJSON5([]byte(c.in))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != c.offset {
			t.Errorf("%q: err = %v, want a syntax error at %d", c.in, err, c.offset)
		}
	}
	deep := make([]byte, 0, 2*maxDepth+10)
	for i := 0; i < maxDepth+5; i++ {
		deep = append(deep, '[')
	}
	if _, err := ParseJSON5(deep); err == nil {
		t.Fatal("no error for nesting deeper than maxDepth")
	}
}

// FuzzParseJSON5: the parser never panics, and what it accepts is JSON
// that parses back (JSON is JSON5) to the same value.
func FuzzParseJSON5(f *testing.F) {
	for _, s := range []string{`{a: 1, 'b': [1, .5, 0x10,], /* c */ c: "x\u00e9"}`, "{s: 'a\\\nb'}", `[1, {"x": null}]`, `{a: -0xFF, b: +1e-3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseJSON5(b)
		if err != nil {
			return
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%q parsed to %#v, which does not marshal: %v", b, v, err)
		}
		w, err := ParseJSON5(j)
		if err != nil || !reflect.DeepEqual(normalize(v), normalize(w)) {
			t.Fatalf("%q → %s → %#v (%v)", b, j, w, err)
		}
	})
}

// normalize maps strings through JSON as Marshal does (invalid UTF-8
// becomes U+FFFD), so that a round trip compares equal.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	d.Decode(&out)
	return out
}

// TestParseJSON5ErrorText: the errors after a key, a key:value pair and an
// array element say what was expected.
func TestParseJSON5ErrorText(t *testing.T) {
	for in, want := range map[string]string{
		`{a 1}`:       `invalid character '1' after object key "a", expecting ':'`,
		`{a: 1 b: 2}`: `invalid character 'b' after object key:value pair, expecting ',' or '}'`,
		`{a: [1 2]}`:  `invalid character '2' after array element, expecting ',' or ']'`,
		`[1`:          `invalid end of input after array element, expecting ',' or ']'`,
	} {
		if _, err := ParseJSON5([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want it to contain %q", in, err, want)
		}
	}
}
